"""Figures of paper 12 from its summary tables (matplotlib, Agg)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from neurips26.common.figures import save_figure  # noqa: E402, F401 (the scripts save through it)

RULE_LABELS = {
    "d_tracking": "D-Tracking",
    "c_tracking": "C-Tracking",
    "ratio": "ratio (ours)",
    "ratio_incremental": "ratio, incremental",
    "uniform": "uniform",
    "lucb": "LUCB-MCTS",
    "oracle": "oracle weights",
}


def _no_data(text: str) -> Figure:
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.text(0.5, 0.5, text, ha="center", va="center", color="grey")
    ax.set_axis_off()
    return fig


def _rules(frame: pd.DataFrame) -> list[str]:
    return [r for r in RULE_LABELS if r in set(frame["rule"])]


def sample_complexity(summary: pd.DataFrame) -> Figure:
    """Mean stopping time (bars, log scale, 10-90% quantile whiskers) per rule and instance, one panel per
    delta, with T* ln(1/delta) as black ticks."""
    if summary.empty:
        return _no_data("no runs")
    deltas = sorted(summary["delta"].unique(), reverse=True)
    instances = list(dict.fromkeys(summary.sort_values("t_star")["instance"]))
    rules = _rules(summary)
    fig, axes = plt.subplots(
        len(deltas), 1, figsize=(max(6.0, 0.9 * len(instances) * len(rules) / 3), 3.2 * len(deltas)), squeeze=False
    )
    width = 0.8 / len(rules)
    x = np.arange(len(instances))
    for ax, delta in zip(axes[:, 0], deltas):
        rows = summary[summary["delta"] == delta].set_index(["rule", "instance"])
        for i, rule in enumerate(rules):
            values = [rows["mean_tau"].get((rule, inst), np.nan) for inst in instances]
            low = [rows["q10_tau"].get((rule, inst), np.nan) for inst in instances]
            high = [rows["q90_tau"].get((rule, inst), np.nan) for inst in instances]
            err = np.abs(np.array([np.subtract(values, low), np.subtract(high, values)]))
            ax.bar(
                x + (i - (len(rules) - 1) / 2) * width,
                values,
                width,
                label=RULE_LABELS[rule],
                yerr=err,
                error_kw={"elinewidth": 0.6, "capsize": 1.5},
            )
        bound = summary[summary["delta"] == delta].groupby("instance")["t_star"].first().reindex(instances)
        ax.scatter(x, bound * np.log(1 / delta), marker="_", s=300, color="black", zorder=3, label="T* ln(1/delta)")
        ax.set_yscale("log")
        ax.set_xticks(x, instances)
        ax.set_ylabel("stopping time (pulls)")
        ax.set_title(f"delta = {delta:g}", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    axes[0, 0].legend(fontsize=7, ncol=min(4, len(rules) + 1))
    fig.suptitle("Sample complexity per rule and instance (instances by increasing T*)", fontsize=11)
    fig.tight_layout()
    return fig


def error_rates(summary: pd.DataFrame) -> Figure:
    """Error rate (with Clopper-Pearson 95% intervals) against delta per rule; the line y = delta."""
    if summary.empty:
        return _no_data("no runs")
    fig, ax = plt.subplots(figsize=(6.0, 4.2))
    deltas = np.sort(summary["delta"].unique())
    rules = _rules(summary)
    for i, rule in enumerate(rules):
        rows = summary[summary["rule"] == rule]
        pooled = rows.groupby("delta").agg(
            errors=("errors", "sum"), runs=("runs", "sum"), low=("cp_low", "min"), high=("cp_high", "max")
        )
        rate = pooled["errors"] / pooled["runs"]
        shift = 1 + 0.04 * (i - len(rules) / 2)
        ax.errorbar(
            pooled.index * shift,
            rate,
            yerr=[rate - np.minimum(rate, pooled["low"]), pooled["high"] - rate],
            marker="o",
            capsize=3,
            label=RULE_LABELS[rule],
            linestyle="none",
        )
    ax.plot(deltas, deltas, color="black", linestyle="--", label="error = delta")
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=1e-3)
    ax.set_xlabel("delta")
    ax.set_ylabel("error rate (pooled over instances)")
    ax.set_title("delta-correctness: errors over all instances (bars: worst per-instance 95% CP)", fontsize=10)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def per_round_cost(cost: pd.DataFrame, slopes: pd.DataFrame) -> Figure:
    """Node operations and wall time per round against K (log-log; medians over repeats), with the fitted slopes."""
    if cost.empty:
        return _no_data("no cost measurements")
    fig, axes = plt.subplots(1, 2, figsize=(10.0, 4.0))
    slope = slopes.set_index("rule")
    for rule in _rules(cost):
        rows = cost[cost["rule"] == rule].groupby("n_leaves", as_index=False).median(numeric_only=True)
        for ax, column, key in (
            (axes[0], "ops_per_round", "ops_slope"),
            (axes[1], "microseconds_per_round", "wall_seconds_slope"),
        ):
            ax.plot(
                rows["n_leaves"],
                rows[column],
                marker="o",
                label=f"{RULE_LABELS[rule]} (slope {slope.loc[rule, key]:.2f})",
            )
    for ax, label in zip(axes, ("node operations per round", "microseconds per round")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("number of leaves K")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8)
    fig.suptitle(
        "Per-round cost: linear in K for full recomputation, logarithmic for the incremental ratio rule", fontsize=11
    )
    fig.tight_layout()
    return fig


def normalised_times(summary: pd.DataFrame) -> Figure:
    """tau / (T* ln(1/delta)) against T* per rule, one marker per delta (the asymptotic-optimality trend)."""
    if summary.empty:
        return _no_data("no runs")
    fig, ax = plt.subplots(figsize=(6.0, 4.2))
    markers = dict(zip(sorted(summary["delta"].unique(), reverse=True), "os^vD"))
    colours = dict(zip(_rules(summary), plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    for (rule, delta), rows in summary.groupby(["rule", "delta"]):
        ax.scatter(
            rows["t_star"],
            rows["tau_over_tstar_log"],
            marker=markers[delta],
            color=colours[rule],
            label=f"{RULE_LABELS[rule]}, delta {delta:g}",
            s=25,
        )
    ax.axhline(1.0, color="black", linestyle="--", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("T* (characteristic time)")
    ax.set_ylabel("mean tau / (T* ln(1/delta))")
    ax.set_title("Stopping time relative to the lower bound's rate", fontsize=10)
    ax.legend(fontsize=6, ncol=2)
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    return fig
