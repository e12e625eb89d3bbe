"""Paper 16's figures, one per phenomenon of the abstract in the skill-chain model (our reconstruction) and one for
the mean-field solution against the stochastic simulation: SFT and RL complementary (with the RL plateau), the
pretraining ceiling's power law (with the pretraining loss), the optimal allocation against data quality and
pretraining, RL's selective amplification of pretrained task skills, and theory against simulation.

Each function takes the pipeline's tables (:mod:`.experiment`) and returns a matplotlib figure."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from .summary import simulation_curves  # noqa: E402

__all__ = ["agreement", "allocation", "amplification", "ceiling", "complementarity"]

_STYLES = ("-", "--", ":", "-.")
_LABEL_BOX = {"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.8}


def _tokens(value: float) -> str:
    """A compute or budget in tokens, compactly: 1e+04 -> '1e4', 300 -> '300'."""
    value = float(value)
    if value <= 0 or not np.isfinite(value):
        return f"{value:g}"
    exponent = int(np.floor(np.log10(value)))
    mantissa = value / 10**exponent
    if exponent < 3:
        return f"{value:g}"
    return f"1e{exponent}" if np.isclose(mantissa, 1.0) else f"{mantissa:g}e{exponent}"


def _log_line(x, y):
    """Least-squares ``log y = a + b log x``: (slope b, intercept a)."""
    slope, intercept = np.polyfit(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)), 1)
    return float(slope), float(intercept)


def complementarity(table: pd.DataFrame, plateau: pd.DataFrame):
    """One panel per pretraining compute: final task success of SFT alone, RL alone and the best SFT -> RL split
    against the post-training budget (the best split's SFT share written beside it, the gain over the better single
    stage shaded), with the SFT-alone limit (``rho^L`` when every task skill was pretrained) dashed. Last panel:
    RL alone from the pretrained model, updates to task success 1/2 against the chain length (log scale)."""
    bases = sorted(table["base_compute"].unique())
    n = len(bases)
    fig, axes = plt.subplots(1, n + 1, figsize=(3.3 * n + 3.0, 3.6), gridspec_kw={"width_ratios": [1] * n + [0.9]})
    for i, (ax, base) in enumerate(zip(axes, bases)):
        part = table[table["base_compute"] == base].sort_values("budget")
        budget = part["budget"].to_numpy()
        single = np.maximum(part["sft_only"], part["rl_only"])
        ax.fill_between(budget, single, part["mixed"], color="C2", alpha=0.2, lw=0, label="gain of the split")
        ax.plot(budget, part["sft_only"], "o-", color="C0", ms=4, label="SFT only")
        ax.plot(budget, part["rl_only"], "s-", color="C1", ms=4, label="RL only")
        ax.plot(budget, part["mixed"], "^-", color="C2", ms=5, lw=2, label="best SFT→RL split")
        for b, m, f in zip(budget, part["mixed"], part["sft_share"]):
            ax.annotate(f"f*={f:.2f}", (b, m), xytext=(0, 6), textcoords="offset points", ha="center", fontsize=7,
                        color="C2", bbox=_LABEL_BOX)  # fmt: skip
        ax.axhline(float(part["sft_limit"].max()), ls="--", color="grey", lw=1, label=r"SFT limit $\rho^L$")
        ax.set_xscale("log")
        ax.set_ylim(0.0, 1.05)
        ax.margins(x=0.15)
        ax.set_xlabel("post-training budget B (tokens)")
        if i == 0:
            ax.set_ylabel("final task success P")
            ax.legend(fontsize=7, loc="upper left")
        ax.set_title(f"pretraining compute C = {_tokens(base)}", fontsize=9)
        ax.grid(alpha=0.3, lw=0.5)
    ax = axes[-1]
    plateau = plateau.sort_values("chain_length")
    reached = plateau[np.isfinite(plateau["updates_to_level"])]
    ax.plot(
        reached["chain_length"], reached["updates_to_level"], "o-", color="C1", label="RL alone: updates to P = 1/2"
    )
    ax.plot(plateau["chain_length"], plateau["plateau_scale"], ":", color="k",
            label=r"scale $1/(\eta_r L \bar P_0^{L-1})$")  # fmt: skip
    ax.set_yscale("log")
    ax.set_xticks(plateau["chain_length"].to_numpy())
    ax.set_xlabel("chain length L (steps per task)")
    ax.set_ylabel("RL updates")
    base = plateau["base_compute"].iloc[0] if "base_compute" in plateau else float("nan")
    ax.set_title(f"RL plateau (C = {_tokens(base)})", fontsize=9)
    ax.legend(fontsize=7, loc="upper left")
    ax.grid(alpha=0.3, lw=0.5, which="both")
    fig.tight_layout()
    return fig


def _main(table: pd.DataFrame) -> pd.DataFrame:
    """The rows flagged ``main`` (all rows of a table without the flag)."""
    return table[table["main"].astype(bool)] if "main" in table else table


def ceiling(table: pd.DataFrame, pretraining: pd.DataFrame):
    """Left: step failure ``1 - Pbar`` at the optimal split of the budget against the pretraining compute (log-log;
    filled points inside the fit window), the fitted line over the window and the model's predicted slope
    ``-2 (alpha_t - 1) / (alpha_t + 2 alpha)`` through the window's centre. Middle (where the table has the budget
    sweep): the step failure against the post-training budget per pretraining compute, in the model (solid) and
    without the pretraining gate (dashed), with the predicted budget slope. Right: the excess pretraining loss, its
    fit and the slope ``-(alpha - 1) / alpha``."""
    sweep = table[table["in_sweep"].astype(bool)] if "in_sweep" in table else table.iloc[0:0]
    if len(sweep):
        fig, (left, middle, right) = plt.subplots(1, 3, figsize=(15, 3.8))
        _budget_sweep(middle, table)
    else:
        fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    table = _main(table).sort_values("base_compute")
    inside, outside = table[table["in_window"]], table[~table["in_window"]]
    left.plot(inside["base_compute"], inside["step_failure"], "o", color="C0", label="optimal split, fit window")
    if len(outside):
        left.plot(outside["base_compute"], outside["step_failure"], "o", mfc="none", color="C0",
                  label="outside the window")  # fmt: skip
    fitted, predicted, r2 = (float(table[c].iloc[0]) for c in ("fitted_exponent", "predicted_exponent", "r2"))
    _, intercept = _log_line(inside["base_compute"], inside["step_failure"])
    x = np.geomspace(inside["base_compute"].min(), inside["base_compute"].max(), 50)
    left.plot(x, np.exp(intercept) * x**-fitted, "-", color="C0", lw=1.5,
              label=f"fit: slope {-fitted:.3f}, $R^2$ = {r2:.4f}")  # fmt: skip
    centre_x = np.exp(np.log(inside["base_compute"]).mean())
    centre_y = np.exp(np.log(inside["step_failure"]).mean())
    wide = np.geomspace(table["base_compute"].min(), table["base_compute"].max(), 50)
    left.plot(wide, centre_y * (wide / centre_x) ** -predicted, "--", color="k", lw=1,
              label=rf"predicted: $-2(\alpha_t-1)/(\alpha_t+2\alpha)$ = {-predicted:.3f}")  # fmt: skip
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xlabel("pretraining compute C (tokens)")
    left.set_ylabel(r"step failure $1-\bar P$ at the optimal split")
    budget = f", budget B = {_tokens(table['budget'].iloc[0])}" if "budget" in table else ""
    left.set_title(f"pretraining ceiling{budget}", fontsize=9)
    left.legend(fontsize=7, loc="lower left")
    left.grid(alpha=0.3, lw=0.5, which="both")

    pretraining = pretraining.sort_values("base_compute")
    c, loss = pretraining["base_compute"], pretraining["loss"]
    fitted, predicted, r2 = (float(pretraining[k].iloc[0]) for k in ("fitted_exponent", "predicted_exponent", "r2"))
    _, intercept = _log_line(c, loss)
    x = np.geomspace(c.min(), c.max(), 50)
    right.plot(c, loss, "o", color="C3", label="excess pretraining loss")
    right.plot(x, np.exp(intercept) * x**-fitted, "-", color="C3", lw=1.5,
               label=f"fit: slope {-fitted:.3f}, $R^2$ = {r2:.4f}")  # fmt: skip
    centre_x, centre_y = np.exp(np.log(c).mean()), np.exp(np.log(loss).mean())
    right.plot(x, centre_y * (x / centre_x) ** -predicted, "--", color="k", lw=1,
               label=rf"$-(\alpha-1)/\alpha$ = {-predicted:.3f}")  # fmt: skip
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("pretraining compute C (tokens)")
    right.set_ylabel(r"excess pretraining loss $L_{pt}(C)$")
    right.set_title("pretraining loss", fontsize=9)
    right.legend(fontsize=7, loc="lower left")
    right.grid(alpha=0.3, lw=0.5, which="both")
    fig.tight_layout()
    return fig


def _budget_sweep(ax, table: pd.DataFrame) -> None:
    """The ceiling's budget sweep: step failure against the budget per compute in the window, model and null."""
    rows = table[table["in_sweep"].astype(bool)]
    bases = sorted(rows["base_compute"].unique())
    colours = plt.cm.viridis(np.linspace(0.0, 0.85, len(bases)))
    for plasticity, style in (("pretrained", "o-"), ("full", "x--")):
        for colour, base in zip(colours, bases):
            part = rows[(rows["plasticity"] == plasticity) & (rows["base_compute"] == base)].sort_values("budget")
            ax.plot(part["budget"], part["step_failure"], style, color=colour, ms=3, lw=1)
    model = rows[rows["plasticity"] == "pretrained"]
    if len(model) and "predicted_budget_exponent" in rows:
        slope = float(rows["predicted_budget_exponent"].iloc[0])
        x = np.geomspace(model["budget"].min(), model["budget"].max(), 20)
        centre_x, centre_y = np.exp(np.log(model["budget"]).mean()), np.exp(np.log(model["step_failure"]).mean())
        ax.plot(x, centre_y * (x / centre_x) ** -slope, ":", color="k", lw=1.2,
                label=rf"predicted: $-(\alpha_t-1)/(\alpha_t+2\alpha)$ = {-slope:.3f}")  # fmt: skip
    handles = [Line2D([], [], color=c, marker="o", ms=3, label=f"C = {_tokens(b)}") for c, b in zip(colours, bases)]
    handles += [Line2D([], [], color="k", ls="-", label="model"),
                Line2D([], [], color="k", ls="--", marker="x", ms=3, label="without the pretraining gate"),
                Line2D([], [], color="k", ls=":", label="predicted budget slope")]  # fmt: skip
    ax.legend(handles=handles, fontsize=6, loc="lower left", ncol=2)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("post-training budget B (tokens)")
    ax.set_ylabel(r"step failure $1-\bar P$ at the optimal split")
    ax.set_title("ceiling across budgets", fontsize=9)
    ax.grid(alpha=0.3, lw=0.5, which="both")


def allocation(table: pd.DataFrame):
    """Left: the optimal SFT share of the post-training budget against the demonstrations' quality ``rho``: a line
    per pretraining compute (colour), the reward noise ``eps_r`` as the line style (the model's k rollouts). Right
    (where the table has the k sweep): the optimal SFT share against k per pretraining compute (colour) and rho
    (line style), at the sweep's reward noise."""
    swept = table[~table["main"].astype(bool)] if "main" in table else table.iloc[0:0]
    full = table
    table = _main(table)
    bases = sorted(table["base_compute"].unique())
    noises = sorted(table["reward_noise"].unique())
    colours = plt.cm.viridis(np.linspace(0.0, 0.85, len(bases)))
    if len(swept):
        fig, (ax, right) = plt.subplots(1, 2, figsize=(11.5, 4.0))
        _rollouts(right, full, swept["reward_noise"].iloc[0], dict(zip(bases, colours)))
    else:
        fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for colour, base in zip(colours, bases):
        for j, noise in enumerate(noises):
            part = table[(table["base_compute"] == base) & (table["reward_noise"] == noise)].sort_values("demo_quality")
            ax.plot(part["demo_quality"], part["sft_share"], marker="o", ms=3, ls=_STYLES[j % len(_STYLES)],
                    color=colour)  # fmt: skip
    handles = [Line2D([], [], color=c, marker="o", ms=3, label=f"C = {_tokens(b)}") for c, b in zip(colours, bases)]
    handles += [Line2D([], [], color="k", ls=_STYLES[j % len(_STYLES)], label=rf"$\epsilon_r$ = {noise:g}")
                for j, noise in enumerate(noises)]  # fmt: skip
    ax.legend(handles=handles, fontsize=7, loc="upper left", ncol=2)
    ax.set_ylim(0.0, 1.0)
    ax.set_xlabel(r"demonstration quality $\rho$ (fraction of correct demonstrated steps)")
    ax.set_ylabel(r"optimal SFT share $f^*$ of the budget")
    title = "optimal SFT→RL allocation"
    if "budget" in table:
        title += f", budget B = {_tokens(table['budget'].iloc[0])}"
    if "chain_length" in table:
        title += f", L = {int(table['chain_length'].iloc[0])}"
    if "rollouts" in table:
        title += f", k = {int(table['rollouts'].iloc[0])}"
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3, lw=0.5)
    fig.tight_layout()
    return fig


def _rollouts(ax, table: pd.DataFrame, noise: float, colours: dict) -> None:
    """The optimal SFT share against the number of rollouts k per RL update, at one reward noise."""
    rows = table[table["reward_noise"] == noise]
    qualities = sorted(rows["demo_quality"].unique())
    for base, colour in colours.items():
        for j, quality in enumerate(qualities):
            part = rows[(rows["base_compute"] == base) & (rows["demo_quality"] == quality)].sort_values("rollouts")
            ax.plot(part["rollouts"], part["sft_share"], marker="o", ms=3, ls=_STYLES[j % len(_STYLES)], color=colour)
    handles = [Line2D([], [], color=c, marker="o", ms=3, label=f"C = {_tokens(b)}") for b, c in colours.items()]
    handles += [Line2D([], [], color="k", ls=_STYLES[j % len(_STYLES)], label=rf"$\rho$ = {q:g}")
                for j, q in enumerate(qualities)]  # fmt: skip
    ax.legend(handles=handles, fontsize=7, loc="upper left", ncol=2)
    ax.set_xscale("log", base=2)
    ax.set_ylim(0.0, 1.0)
    ax.set_xlabel("rollouts k per RL update (an update costs k L tokens)")
    ax.set_ylabel(r"optimal SFT share $f^*$")
    ax.set_title(rf"allocation against k ($\epsilon_r$ = {noise:g})", fontsize=9)
    ax.grid(alpha=0.3, lw=0.5, which="both")


def amplification(table: pd.DataFrame):
    """Left: RL's change of ``u`` per task occurrence (``Delta u_i / q_i``) against the pretrained strength ``s_i``
    for the task skills, and ``Delta u_i`` of the task-irrelevant skills (0) in another colour (symlog axis).
    Right: the step success of each task skill before and after RL, by pretraining rank."""
    task, off = table[table["task_relevant"]], table[~table["task_relevant"]]
    ratio = task["delta_u"] / task["task_weight"]
    off_max = float(off["delta_u"].abs().max()) if len(off) else 0.0
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    left.scatter(task["strength"], ratio, s=8, color="C0", label=r"task skills ($q_i > 0$): $\Delta u_i / q_i$")
    left.scatter(off["strength"], off["delta_u"], s=10, marker="x", lw=0.6, color="C3",
                 label=rf"task-irrelevant ($q_i = 0$): $\Delta u_i$, max $|\Delta u_i|$ = {off_max:.1g}")  # fmt: skip
    if (table["strength"] > 0).all():
        left.set_xscale("log")
    positive = ratio[ratio > 0]
    floor = 10.0 ** np.floor(np.log10(positive.min())) if len(positive) else 1.0
    left.set_yscale("symlog", linthresh=floor)
    left.set_ylim(-0.5 * floor, 3.0 * max(float(ratio.max()) if len(ratio) else floor, floor))
    left.axhline(0.0, color="grey", lw=0.5)
    left.set_xlabel(r"pretrained strength $s_i$")
    left.set_ylabel(r"RL's change $\Delta u_i$ (per task occurrence)")
    updates = f" after {table['rl_updates'].iloc[0]:g} RL updates" if "rl_updates" in table else ""
    left.set_title(f"selective amplification{updates}", fontsize=9)
    left.legend(fontsize=7, loc="upper left")
    left.grid(alpha=0.3, lw=0.5, which="both")

    task = task.sort_values("rank")
    right.plot(task["rank"], task["success_before"], "-", color="grey", label="before RL (pretrained)")
    right.plot(task["rank"], task["success_after"], "-", color="C0", lw=1.5, label="after RL")
    if "success_after_null" in task:
        right.plot(task["rank"], task["success_after_null"], "--", color="C1", lw=1,
                   label="after RL without the pretraining gate")  # fmt: skip
    right.set_xscale("log")
    right.set_ylim(0.0, 1.02)
    right.set_xlabel("pretraining rank i of the task skill (1 = most frequent)")
    right.set_ylabel(r"step success $\pi_i$")
    base = f" (C = {_tokens(table['base_compute'].iloc[0])})" if "base_compute" in table else ""
    right.set_title(f"task skills before and after RL{base}", fontsize=9)
    right.legend(fontsize=7, loc="upper right")
    right.grid(alpha=0.3, lw=0.5, which="both")
    fig.tight_layout()
    return fig


def agreement(simulation: pd.DataFrame):
    """Per simulated configuration (columns): top, the simulated task success (mean over seeds, band +-2 standard
    errors) and the mean-field solution against the compute spent, the SFT -> RL switch dotted; bottom, their
    difference with the same band."""
    curves = simulation_curves(simulation)
    configs = list(dict.fromkeys(simulation["config"]))
    fig, axes = plt.subplots(2, len(configs), figsize=(3.6 * len(configs), 5.0), squeeze=False, sharex="col",
                             gridspec_kw={"height_ratios": [2.2, 1]})  # fmt: skip
    runs = int(simulation["runs"].iloc[0]) if "runs" in simulation else None
    for j, conf in enumerate(configs):
        part = curves[curves["config"] == conf]
        top, bottom = axes[0, j], axes[1, j]
        x, mean, se = part["compute"], part["success_sim"], part["success_sim_se"]
        seeds = int(part["seeds"].max())
        plural = "s" if seeds != 1 else ""
        label = f"simulation ({seeds} seed{plural}" + (f" × {runs} runs)" if runs else ")")
        top.fill_between(x, mean - 2 * se, mean + 2 * se, color="C0", alpha=0.3, lw=0)
        top.plot(x, mean, color="C0", lw=1.5, label=f"{label} ± 2 SE")
        top.plot(x, part["success_theory"], "--", color="k", lw=1, label="mean field (ODE)")
        bottom.fill_between(x, part["gap"] - 2 * se, part["gap"] + 2 * se, color="C0", alpha=0.3, lw=0)
        bottom.plot(x, part["gap"], color="C0", lw=1)
        bottom.axhline(0.0, color="k", lw=0.8, ls="--")
        rl = part[(part["stage"] == "rl")]
        sft = part[(part["stage"] == "sft") & (part["update"] > 0)]
        if len(rl) and len(sft):
            for ax in (top, bottom):
                ax.axvline(float(sft["compute"].max()), color="grey", ls=":", lw=1)
            top.annotate("SFT → RL", (float(sft["compute"].max()), 0.02), xytext=(3, 0), textcoords="offset points",
                         fontsize=7, color="grey")  # fmt: skip
        worst = part.loc[part["gap"].abs().idxmax()]
        top.set_title(f"{conf}: max |sim − theory| = {abs(worst['gap']):.4f}", fontsize=9)
        top.set_ylim(0.0, 1.0)
        top.grid(alpha=0.3, lw=0.5)
        bottom.grid(alpha=0.3, lw=0.5)
        bottom.set_xlabel("post-training compute (tokens)")
        if j == 0:
            top.set_ylabel("task success P")
            bottom.set_ylabel("sim − theory")
            top.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    return fig
