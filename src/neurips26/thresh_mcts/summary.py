"""The tables paper 12's report shows, built from its results: the instances, mean stopping times and errors per
rule (one column per rule), the per-round cost and its slopes, the two implementation checks in numbers, and the
full summary. Rendered by workflow/report/thresh_mcts/report.md.j2."""

from __future__ import annotations

import pandas as pd

PROVENANCE = ["git_commit", "config_hash", "seed"]
INSTANCE_COLUMNS = ["id", "kind", "depth", "branching", "n_leaves", "theta", "value", "gap", "t_star"]


def per_rule(summary: pd.DataFrame, value: str) -> pd.DataFrame:
    """One row per (instance, delta), one column per rule, holding `value` from the summary."""
    return summary.pivot_table(index=["instance", "delta"], columns="rule", values=value).reset_index()


def check_numbers(equivalence: pd.DataFrame, lp_check: pd.DataFrame) -> dict:
    """The checks' headline numbers: identical runs of the incremental and the full ratio rule (M6) and the DP's
    largest relative error against the LP (M7)."""
    return {
        "identical": int(equivalence["identical"].sum()),
        "runs": len(equivalence),
        "pulls": int(equivalence["rounds"].sum()),
        "lp_trees": len(lp_check),
        "lp_max_error": float(lp_check["relative_error"].max()),
    }


def report_tables(
    instances: pd.DataFrame,
    summary: pd.DataFrame,
    slopes: pd.DataFrame,
    cost: pd.DataFrame,
    equivalence: pd.DataFrame,
    lp_check: pd.DataFrame,
) -> dict:
    """Every table of the report, provenance columns dropped, by the names the template uses."""
    instances, summary, slopes, cost = (
        frame.drop(columns=PROVENANCE, errors="ignore") for frame in (instances, summary, slopes, cost)
    )
    return {
        "instances": instances[INSTANCE_COLUMNS],
        "tau": per_rule(summary, "mean_tau"),
        "errors": per_rule(summary, "errors"),
        "null_errors": per_rule(summary, "null_errors") if "null_errors" in summary else None,
        "cost": cost,
        "slopes": slopes,
        "checks": check_numbers(equivalence, lp_check),
        "summary": summary,
    }
