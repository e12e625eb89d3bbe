"""Figures of paper 19 (matplotlib, and RDKit's grid drawing for molecules)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from rdkit import Chem  # noqa: E402
from rdkit.Chem import Draw  # noqa: E402

VARIANT_COLOURS = {"drgrpo": "tab:blue", "grpo": "tab:green", "global": "tab:orange", "none": "tab:red"}


def training_curves(logs: pd.DataFrame, window: int = 5):
    """Mean training reward per step (running mean over `window` steps, seeds as thin lines) and the greedy
    validation score, per advantage variant."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    for (variant, seed), log in logs.groupby(["variant", "seed"]):
        colour = VARIANT_COLOURS.get(variant, "grey")
        smooth = log["reward_mean"].rolling(window, min_periods=1).mean()
        left.plot(log["step"], smooth, color=colour, label=f"{variant} s{seed}")
        val = log.dropna(subset=["val_score"])
        right.plot(val["step"], val["val_score"], "o-", color=colour, label=f"{variant} s{seed}", ms=3)
    left.set(xlabel="RL step", ylabel=f"mean reward (running mean, {window} steps)", title="training reward")
    right.set(xlabel="RL step", ylabel="greedy validation score", title="validation scaffolds")
    left.legend(fontsize=7)
    fig.tight_layout()
    return fig


def decoration_bars(decoration: pd.DataFrame):
    """Score and success rate per method, on all test scaffolds and on the baselines' subset."""
    sets = decoration["scaffold_set"].unique()
    fig, axes = plt.subplots(
        1,
        len(sets),
        figsize=(6 * len(sets), 0.35 * decoration.groupby("scaffold_set").size().max() + 1.5),
        squeeze=False,
    )
    for ax, scaffold_set in zip(axes[0], sets):
        rows = decoration[decoration["scaffold_set"] == scaffold_set]
        y = np.arange(len(rows))
        ax.barh(y, rows["score"], color="tab:blue", label="mean score")
        ax.barh(y, rows["success_rate"], height=0.35, color="tab:orange", label="success rate")
        labels = [f"{m} [{c:g} calls]" for m, c in zip(rows["method"], rows["oracle_calls_inference"].round(1))]
        ax.set_yticks(y, labels, fontsize=7)
        ax.invert_yaxis()
        ax.set(xlabel="score / success rate", title=f"{scaffold_set} scaffolds ({int(rows['scaffolds'].iloc[0])})")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def best_of_k(table: pd.DataFrame):
    """Best-of-K score of the pretrained policy's samples, with each fine-tuned policy's single-shot score."""
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    pretrained = table[table["policy"] == "pretrained"]
    ax.plot(pretrained["k"], pretrained["score"], "o-", color="black", label="pretrained best-of-K")
    for policy, rows in table[table["policy"] != "pretrained"].groupby("policy"):
        colour = VARIANT_COLOURS.get(policy.split("_s")[0], "grey")
        ax.axhline(rows["single_shot"].iloc[0], color=colour, ls="--", label=f"{policy} single shot (0 calls)")
    ax.set(xscale="log", xlabel="K (oracle calls per scaffold)", ylabel="mean best score on test scaffolds")
    ax.set_xticks(pretrained["k"], [str(k) for k in pretrained["k"]])
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def pmo_curves(calls: pd.DataFrame, top_k: int):
    """Running top-k mean against oracle calls, per method (one line per seed, one colour per method), one panel
    per oracle."""
    calls = calls if "seed" in calls.columns else calls.assign(seed=0)
    oracles = sorted(calls["oracle"].unique())
    colours = {m: f"C{i}" for i, m in enumerate(sorted(calls["method"].unique()))}
    fig, axes = plt.subplots(1, len(oracles), figsize=(5 * len(oracles), 3.6), squeeze=False)
    for ax, oracle in zip(axes[0], oracles):
        for (method, seed), run in calls[calls["oracle"] == oracle].groupby(["method", "seed"]):
            scores = run.sort_values("call")["score"].to_numpy()
            running = [np.sort(scores[: i + 1])[-top_k:].mean() for i in range(len(scores))]
            first = seed == calls.loc[calls["method"] == method, "seed"].min()
            ax.plot(np.arange(1, len(scores) + 1), running, color=colours[method], label=method if first else None)
        ax.set(xlabel="oracle calls", ylabel=f"top-{top_k} mean", title=oracle)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def molecule_grid(samples: dict[str, pd.DataFrame], policies: list[str], scaffolds: int = 6):
    """A PIL image: for the first test scaffolds, the scaffold and each policy's single-shot decoration, with its
    score, one row per scaffold."""
    names = [n for n in policies if n in samples]
    first = samples[names[0]]
    chosen = list(dict.fromkeys(first.loc[first["mode"] == "greedy", "scaffold"]))[:scaffolds]
    mols, legends = [], []
    for scaffold in chosen:
        mols.append(Chem.MolFromSmiles(scaffold))
        legends.append("scaffold")
        for name in names:
            row = samples[name][(samples[name]["scaffold"] == scaffold) & (samples[name]["mode"] == "greedy")].iloc[0]
            mols.append(Chem.MolFromSmiles(row["smiles"]) if row["valid"] else None)
            legends.append(f"{name}: {row['score']:.3f}")
    return Draw.MolsToGridImage(mols, molsPerRow=len(names) + 1, subImgSize=(220, 180), legends=legends)
