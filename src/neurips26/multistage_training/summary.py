"""The tables paper 16's report and figures render besides the claims: one compact table per phenomenon of the
abstract in the skill-chain model (our reconstruction) with its key numbers, the RL plateau, the pretraining loss, and
the stochastic simulation set beside the mean-field solution."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .claims import AGREEMENT_ALPHA
from .evaluation import amplification_summary, bonferroni_quantile, budget_scaling, monotone_violation, share_spans

__all__ = ["claim_numbers", "report_tables", "simulation_curves"]


def _get(obj, name: str):
    """`obj.name` or `obj[name]` (Snakemake's Params and plain dicts alike)."""
    return obj[name] if isinstance(obj, dict) else getattr(obj, name)


def _whole(frame: pd.DataFrame, columns) -> pd.DataFrame:
    """Budget and compute columns as integers where every value is whole (so a table prints 100000, not 1e+05)."""
    frame = frame.copy()
    for column in columns:
        values = frame[column].to_numpy(dtype=float)
        if np.all(np.isfinite(values)) and np.all(values == np.round(values)):
            frame[column] = values.astype(np.int64)
    return frame


def simulation_curves(simulation: pd.DataFrame) -> pd.DataFrame:
    """Per (config, update): the simulated success averaged over seeds with its standard error (each seed's runs
    independent: ``sqrt(sum se^2) / seeds``), the mean-field value, the compute spent and the gap sim - theory."""
    grouped = simulation.groupby(["config", "update", "stage"], sort=False)
    curves = grouped.agg(
        compute=("compute", "first"),
        success_sim=("success_sim", "mean"),
        sum_var=("success_sim_se", lambda se: float((se**2).sum())),
        seeds=("seed", "nunique"),
        success_theory=("success_theory", "first"),
    ).reset_index()
    curves["success_sim_se"] = np.sqrt(curves.pop("sum_var")) / curves["seeds"]
    curves["gap"] = curves["success_sim"] - curves["success_theory"]
    return curves.sort_values(["config", "update"], kind="stable").reset_index(drop=True)


def _complementarity(table: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    best = table.loc[table["margin"].idxmax()]
    shown = _whole(table, ["budget", "base_compute"]).rename(
        columns={"base_compute": "C", "budget": "B", "sft_share": "f*", "mixed": "best split",
                 "interior_share": "interior f", "sft_limit": "SFT limit", "margin_null": "margin (null)"}
    )  # fmt: skip
    columns = ["B", "C", "sft_only", "rl_only", "f*", "best split", "interior f", "margin", "margin (null)"]
    shown = shown[[c for c in columns if c in shown.columns] + ["SFT limit"]]  # the null's margin where there is one
    numbers = {
        "max_gain": float(best["margin"]),
        "max_gain_budget": float(best["budget"]),
        "max_gain_compute": float(best["base_compute"]),
        "max_gain_share": float(best["interior_share"]),
        "settings_with_gain": int((table["margin"] > 0).sum()),
        "settings": int(len(table)),
    }
    return shown, numbers


def _plateau(table: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    table = table.sort_values("chain_length").reset_index(drop=True)
    tau = table["updates_to_level"]
    shown = pd.DataFrame(
        {
            "L": table["chain_length"],
            "initial step success": table["initial_step_success"],
            "RL updates to P = 1/2": tau,
            "x previous L": tau / tau.shift(1),
            "notes' scale 1/(eta_r L Pbar0^(L-1))": table["plateau_scale"],
        }
    )
    if "updates_to_level_null" in table:  # the null model without the pretraining gate (C7's null)
        shown["without the gate"] = table["updates_to_level_null"]
    numbers = {
        "plateau_first_length": int(table["chain_length"].iloc[0]),
        "plateau_last_length": int(table["chain_length"].iloc[-1]),
        "plateau_ratio": float(tau.iloc[-1] / tau.iloc[0]),
    }
    return shown, numbers


def _main(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["main"].astype(bool)] if "main" in table else table


def _budget_sweep(table: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """The ceiling's budget sweep: rows (model, C), a column per budget with the step failure, and the fits."""
    rows = table[table["in_sweep"].astype(bool)]
    wide = rows.pivot_table(index=["plasticity", "base_compute"], columns="budget", values="step_failure",
                            aggfunc="first")  # fmt: skip
    wide.columns = [f"1 - Pbar (B = {b:,.0f})" for b in wide.columns]
    wide = wide.reset_index().rename(columns={"base_compute": "C"})
    wide["plasticity"] = wide["plasticity"].map({"pretrained": "model", "full": "without the gate"})
    numbers = {"budget_predicted": float(table["predicted_budget_exponent"].iloc[0])}
    for plasticity, key in (("pretrained", "budget"), ("full", "null_budget")):
        found = budget_scaling(table, plasticity)
        part = rows[rows["plasticity"] == plasticity]
        budgets = sorted(part["budget"].unique())
        # a budget with fewer than 3 computes has no exponent of its own (the claims say so): NaN here
        exponents = [found.get(f"compute_exponent_{b:g}", float("nan")) for b in budgets]
        ends = part.sort_values("base_compute").groupby("budget")["step_failure"].agg(["first", "last"])
        gaps = ends["first"] - ends["last"]
        numbers |= {
            f"{key}_exponent": found["budget_exponent"],
            f"{key}_compute_exponent": found["compute_exponent"],
            f"{key}_r2": found["r2"],
            f"{key}_first_compute_exponent": exponents[0],
            f"{key}_last_compute_exponent": exponents[-1],
            f"{key}_ratio": exponents[-1] / exponents[0] if exponents[0] > 0 else 0.0,
            f"{key}_exponents": ", ".join(f"{e:.3f} (B = {b:,.0f})" for b, e in zip(budgets, exponents)),
            f"{key}_first_gap": float(gaps.iloc[0]),
            f"{key}_last_gap": float(gaps.iloc[-1]),
            f"{key}_gaps": ", ".join(f"{g:.3g} (B = {b:,.0f})" for b, g in gaps.items()),
        }
    inside = rows["base_compute"]
    numbers |= {
        "sweep_budgets": ", ".join(f"{b:,.0f}" for b in sorted(rows["budget"].unique())),
        "sweep_low_compute": float(inside.min()),
        "sweep_high_compute": float(inside.max()),
    }
    return _whole(wide, ["C"]), numbers


def _ceiling(table: pd.DataFrame, pretraining: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    table = _main(table).sort_values("base_compute")
    shown = _whole(table, ["base_compute"]).rename(columns={"base_compute": "C", "sft_share": "f*"})[
        ["C", "f*", "success", "step_failure", "task_failure", "in_window"]
    ]
    first = table.iloc[0]
    fitted, predicted = float(first["fitted_exponent"]), float(first["predicted_exponent"])
    loss = pretraining.sort_values("base_compute")
    loss_first = loss.iloc[0]
    numbers = {
        "ceiling_fitted": fitted,
        "ceiling_predicted": predicted,
        "ceiling_error": fitted / predicted - 1.0,
        "ceiling_r2": float(first["r2"]),
        "ceiling_points": int(first["fit_points"]),
        "loss_fitted": float(loss_first["fitted_exponent"]),
        "loss_predicted": float(loss_first["predicted_exponent"]),
        "loss_error": float(loss_first["fitted_exponent"] / loss_first["predicted_exponent"] - 1.0),
        "loss_r2": float(loss_first["r2"]),
    }
    loss_shown = _whole(loss, ["base_compute"]).rename(columns={"base_compute": "C", "loss": "excess loss"})
    return shown, loss_shown[["C", "excess loss"]], numbers


def _rollouts(table: pd.DataFrame) -> pd.DataFrame:
    """Rows (k, demo quality), a column per pretraining compute: the optimal SFT share at the k sweep's noise."""
    swept = table[~table["main"].astype(bool)]
    rows = table[table["reward_noise"] == swept["reward_noise"].iloc[0]]
    wide = rows.pivot_table(index=["rollouts", "demo_quality"], columns="base_compute", values="sft_share",
                            aggfunc="first")  # fmt: skip
    wide.columns = [f"f* (C = {c:g})" for c in wide.columns]
    return wide.reset_index().rename(columns={"rollouts": "k", "demo_quality": "rho"})


def _smallest_spans(table: pd.DataFrame) -> dict:
    """The smallest span of the optimal SFT share along rho and along the compute over every setting (k, reward
    noise and the other axis), overall and per k (C4's reading)."""
    along_rho = share_spans(table, ["rollouts", "reward_noise", "base_compute"])
    along_compute = share_spans(table, ["rollouts", "reward_noise", "demo_quality"])
    per_k = [
        f"{along_compute.xs(k, level='rollouts').min():.3f} at k = {k:g}" for k in sorted(table["rollouts"].unique())
    ]
    return {
        "allocation_min_span": float(min(along_rho.min(), along_compute.min())),
        "allocation_min_span_rho": float(along_rho.min()),
        "allocation_min_span_compute": float(along_compute.min()),
        "allocation_min_span_compute_k": float(along_compute.idxmin()[0]),
        "allocation_min_span_compute_rho": float(along_compute.idxmin()[2]),
        "allocation_spans_per_k": ", ".join(per_k),
    }


def _allocation(table: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """Rows (reward noise, demo quality), a column per pretraining compute: the optimal SFT share; and the smallest
    spans over every setting, the swept k included."""
    spans = _smallest_spans(table)
    table = _main(table)
    wide = table.pivot_table(index=["reward_noise", "demo_quality"], columns="base_compute", values="sft_share",
                             aggfunc="first")  # fmt: skip
    wide.columns = [f"f* (C = {c:g})" for c in wide.columns]
    wide = wide.reset_index().rename(columns={"reward_noise": "eps_r", "demo_quality": "rho"})
    numbers = {
        "allocation_min": float(table["sft_share"].min()),
        "allocation_max": float(table["sft_share"].max()),
        "allocation_span": float(table["sft_share"].max() - table["sft_share"].min()),
        # the largest step against the predicted direction: f* should rise with rho and fall with C
        "allocation_rho_violation": monotone_violation(
            table, "demo_quality", 1, within=("base_compute", "reward_noise")
        ),
        "allocation_c_violation": monotone_violation(
            table, "base_compute", -1, within=("demo_quality", "reward_noise")
        ),
        **spans,
    }
    return wide, numbers


def _amplification(table: pd.DataFrame, chain_length: int) -> tuple[pd.DataFrame, dict]:
    found = amplification_summary(table)
    task = table[table["task_relevant"]]
    weight = task["task_weight"] / task["task_weight"].sum()
    before = float((weight * task["success_before"]).sum()) ** chain_length
    after = float((weight * task["success_after"]).sum()) ** chain_length
    rows = [
        ("task skills (q_i > 0)", len(task)),
        ("task-irrelevant skills (q_i = 0)", int((~table["task_relevant"]).sum())),
        ("largest |Delta u| of a task-irrelevant skill", found["off_task_max_abs_delta_u"]),
        ("Spearman(Delta u / q, s) over task skills", found["spearman_gain_strength"]),
        ("mean step-success gain, strongest quarter of task skills by s", found["success_gain_strong"]),
        ("mean step-success gain, weakest quarter of task skills by s", found["success_gain_weak"]),
        ("task success P before RL", before),
        ("task success P after RL", after),
    ]
    if "spearman_logit_strength" in found:
        null_after = float((weight * task["success_after_null"]).sum()) ** chain_length
        rows += [
            ("Spearman(Delta z / q, s) over task skills", found["spearman_logit_strength"]),
            ("the same without the pretraining gate (null)", found["spearman_logit_strength_null"]),
            ("null: mean step-success gain, strongest quarter", found["success_gain_strong_null"]),
            ("null: mean step-success gain, weakest quarter", found["success_gain_weak_null"]),
            ("null: task success P after RL", null_after),
        ]
    shown = pd.DataFrame(rows, columns=["quantity", "value"]).astype({"value": object})
    numbers = {
        "off_task_max": found["off_task_max_abs_delta_u"],
        "amplification_spearman": found["spearman_gain_strength"],
        "success_before_rl": before,
        "success_after_rl": after,
        "logit_spearman": found.get("spearman_logit_strength", float("nan")),
        "logit_spearman_null": found.get("spearman_logit_strength_null", float("nan")),
    }
    return shown, numbers


def _agreement(simulation: pd.DataFrame, configs: dict) -> tuple[pd.DataFrame, dict]:
    curves = simulation_curves(simulation)
    spread = curves["success_sim_se"] > 0
    curves["z"] = (curves["gap"].abs() / curves["success_sim_se"].where(spread)).fillna(0.0)
    z_star = bonferroni_quantile(len(curves), AGREEMENT_ALPHA)
    curves["bound"] = curves["gap"].abs() + z_star * curves["success_sim_se"]
    rows = []
    for name in dict.fromkeys(simulation["config"]):
        part = curves[curves["config"] == name]
        worst = part.loc[part["gap"].abs().idxmax()]
        last = part.iloc[-1]
        run = configs.get(name, {})
        rows.append(
            {
                "config": name,
                "B": run.get("budget", float("nan")),
                "C": run.get("base_compute", float("nan")),
                "SFT share": run.get("sft_share", float("nan")),
                "seeds": int(part["seeds"].max()),
                "runs per seed": int(simulation.loc[simulation["config"] == name, "runs"].iloc[0]),
                "final P (sim)": float(last["success_sim"]),
                "final P (theory)": float(last["success_theory"]),
                "max gap": abs(float(worst["gap"])),
                "at compute": float(worst["compute"]),
                "its SE": float(worst["success_sim_se"]),
                "max gap / SE": float(part["z"].max()),
                "max abs(gap) + z* SE": float(part["bound"].max()),
                "mean gap (sim - theory)": float(part["gap"].mean()),
            }
        )
    table = _whole(pd.DataFrame(rows), ["B", "C", "at compute"])
    worst = table.loc[table["max gap / SE"].idxmax()]
    signed = table.set_index("config")["mean gap (sim - theory)"]
    numbers = {
        "agreement_gap": float(table["max gap"].max()),
        "agreement_z": float(worst["max gap / SE"]),
        "agreement_config": str(worst["config"]),
        "agreement_z_star": z_star,
        "agreement_points": len(curves),
        "agreement_bound": float(table["max abs(gap) + z* SE"].max()),
        "agreement_below": ", ".join(f"`{name}`" for name, gap in signed.items() if gap < 0) or "none",
        "agreement_above": ", ".join(f"`{name}`" for name, gap in signed.items() if gap > 0) or "none",
    }
    return table, numbers


def claim_numbers(claims: pd.DataFrame) -> dict:
    """What the report's sentences condition on: each claim's verdict, value, null value and threshold by id."""
    claims = claims.set_index("claim_id")
    return {
        "verdicts": claims["verdict"].to_dict(),
        "claim_values": claims["value"].to_dict(),
        "null_values": claims["null_value"].to_dict(),
        "thresholds": claims["threshold"].to_dict(),
    }


def report_tables(inp, params) -> dict:
    """The report's tables (DataFrames) and key numbers (floats, ints, names) from the pipeline's tables."""
    complementarity, comp_numbers = _complementarity(pd.read_parquet(inp.complementarity))
    plateau, plateau_numbers = _plateau(pd.read_parquet(inp.plateau))
    ceiling_rows = pd.read_parquet(inp.ceiling)
    ceiling, pretraining, ceiling_numbers = _ceiling(ceiling_rows, pd.read_parquet(inp.pretraining))
    sweep, sweep_numbers = _budget_sweep(ceiling_rows)
    allocation_rows = pd.read_parquet(inp.allocation)
    allocation, allocation_numbers = _allocation(allocation_rows)
    chain_length = int(_get(_get(params, "model"), "chain_length"))
    amplification, amp_numbers = _amplification(pd.read_parquet(inp.amplification), chain_length)
    configs = dict(_get(_get(params, "simulation"), "configs"))
    agreement, agreement_numbers = _agreement(pd.read_parquet(inp.simulation), configs)
    return {
        "complementarity_table": complementarity,
        "plateau_table": plateau,
        "ceiling_table": ceiling,
        "sweep_table": sweep,
        "pretraining_table": pretraining,
        "allocation_table": allocation,
        "rollouts_table": _rollouts(allocation_rows),
        "amplification_table": amplification,
        "agreement_table": agreement,
        **comp_numbers,
        **plateau_numbers,
        **ceiling_numbers,
        **sweep_numbers,
        **allocation_numbers,
        **amp_numbers,
        **agreement_numbers,
    }
