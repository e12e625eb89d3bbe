"""The tables paper 06's report shows, built from the pipeline's results: the validation table (Spearman of each
measure with each true gap) and its aligned rows with bootstrap intervals, the axiom summary, the data-processing
bound over the trained predictors, and the first step of the feature-selection experiment."""

from __future__ import annotations

import pandas as pd

from .artifacts import PROVENANCE_COLUMNS
from .axioms import axiom_summary

__all__ = ["aligned_intervals", "dpi_summary", "first_removal", "report_tables", "validation_pivot"]

ALIGNED_COLUMNS = ["estimator", "measure", "gap", "spearman", "ci_low", "ci_high", "n_pairs"]
SELECTION_DELTAS = ["delta_sp_gap", "delta_eo_gap", "delta_accuracy"]


def validation_pivot(validation: pd.DataFrame) -> pd.DataFrame:
    """One row per (estimator, measure, notion, family), one Spearman column per true gap."""
    return validation.pivot_table(
        index=["estimator", "measure", "notion", "family"], columns="gap", values="spearman"
    ).reset_index()


def aligned_intervals(validation: pd.DataFrame) -> pd.DataFrame:
    """The rows whose measure's notion is the gap's notion, with their bootstrap intervals and pair counts."""
    return validation[validation["aligned"]][ALIGNED_COLUMNS]


def dpi_summary(dpi: pd.DataFrame) -> pd.DataFrame:
    """One row: the number of predictors, the share within each data-processing bound and the largest excess."""
    return pd.DataFrame(
        [
            {
                "predictors": len(dpi),
                "share_sp_bound_holds": dpi["holds_sp"].mean(),
                "share_eo_bound_holds": dpi["holds_eo"].mean(),
                "max_excess_sp": dpi["excess_sp"].max(),
                "max_excess_eo": dpi["excess_eo"].max(),
            }
        ]
    )


def first_removal(selection: pd.DataFrame) -> pd.DataFrame:
    """Mean change over data sets of the gaps and accuracy after removing each ranking's top feature (k = 1)."""
    return selection[selection["k"] == 1].groupby("ranking")[SELECTION_DELTAS].mean().reset_index()


def report_tables(inp, params) -> dict:
    """Everything the report template shows besides the claims and the closing sections, read from the report
    rule's inputs (``validation``, ``axioms``, ``dpi``, ``redundancy``, ``selection``, ``random_removal``,
    ``datasets``)."""
    validation, axioms, dpi, redundancy, selection, random_removal, datasets = (
        pd.read_parquet(p).drop(columns=list(PROVENANCE_COLUMNS), errors="ignore")
        for p in (
            inp.validation,
            inp.axioms,
            inp.dpi,
            inp.redundancy,
            inp.selection,
            inp.random_removal,
            inp.datasets,
        )
    )
    aligned = aligned_intervals(validation)
    return {
        "validation": validation_pivot(validation),
        "aligned": aligned,
        "n_pairs": int(aligned["n_pairs"].max()) if len(aligned) else 0,
        "axioms": axiom_summary(axioms),
        "dpi": dpi_summary(dpi),
        "redundancy": redundancy,
        "first_removal": first_removal(selection),
        "random_removal": random_removal,
        "datasets": datasets,
    }
