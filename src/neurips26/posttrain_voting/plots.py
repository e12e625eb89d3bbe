"""Paper 14's figures: violation frequency against beta per rule and axiom, staged against joint discrepancy
against beta, and the NLHF monotonicity search against the computed bound."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import NullFormatter  # noqa: E402


def violations(axioms: pd.DataFrame):
    """One panel per axiom: the violation frequency against beta per reference-dependent rule (seeds pooled), the
    reference-free rules as horizontal lines."""
    names = list(dict.fromkeys(axioms["axiom"]))
    fig, axes = plt.subplots(1, max(len(names), 1), figsize=(3.2 * max(len(names), 1), 3.0), squeeze=False)
    for ax, axiom in zip(axes[0], names):
        rows = axioms[axioms["axiom"] == axiom]
        for rule, group in rows.groupby("rule", sort=False):
            if group["beta"].isna().all():
                ax.axhline((~group["holds"]).mean(), ls="--", lw=1, label=rule)
                continue
            freq = (~group["holds"]).groupby(group["beta"]).mean()
            ax.plot(freq.index, freq.to_numpy(), marker="o", label=rule)
        ax.set_xscale("log"), ax.set_title(axiom.replace("_", " ")), ax.set_xlabel("beta")
        ax.xaxis.set_minor_formatter(NullFormatter())  # log ticks between decades overlapped
        ax.set_ylim(-0.03, 1.03)
    axes[0][0].set_ylabel("violation frequency"), axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def staged(axioms: pd.DataFrame):
    """Mean staged-vs-joint discrepancy (and the commutativity gap) against beta per rule."""
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.0), squeeze=False)
    for ax, axiom in zip(axes[0], ("staged_vs_joint", "commutativity")):
        rows = axioms[(axioms["axiom"] == axiom) & axioms["beta"].notna()]
        for rule, group in rows.groupby("rule", sort=False):
            mean = group.groupby("beta")["magnitude"].mean()
            ax.plot(mean.index, np.maximum(mean.to_numpy(), 1e-17), marker="o", label=rule)
        ax.set_xscale("log"), ax.set_yscale("log"), ax.set_xlabel("beta")
        ax.xaxis.set_minor_formatter(NullFormatter())  # log ticks between decades overlapped
        ax.set_title("staged vs joint" if axiom == "staged_vs_joint" else "staged A,B vs B,A")
        ax.set_ylabel("mean max |difference|")
        if rows.size:
            ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def threshold(table: pd.DataFrame):
    """Share of searched profiles whose NLHF (and DPO) monotonicity is violated against beta, with the bound."""
    fig, axes = plt.subplots(1, 1, figsize=(4.5, 3.2), squeeze=False)
    ax = axes[0][0]
    search = table[table["kind"] == "search"]
    for rule, group in search.groupby("rule", sort=False):
        share = group.groupby("beta").apply(lambda g: g["violations"].sum() / g["draws"].sum())
        ax.plot(share.index, share.to_numpy(), marker="o", label=rule)
    bound = table.loc[table["kind"] == "bound", "threshold"]
    if len(bound):
        ax.axvline(float(bound.max()), color="k", ls="--", lw=1, label=f"bound {float(bound.max()):.3f}")
    for t in table.loc[table["kind"] == "refined", "threshold"]:
        ax.axvline(t, color="grey", lw=0.5)
    ax.set_xscale("log"), ax.set_xlabel("beta"), ax.set_ylabel("share of profiles violating monotonicity")
    ax.xaxis.set_minor_formatter(NullFormatter())  # log ticks between decades overlapped
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
