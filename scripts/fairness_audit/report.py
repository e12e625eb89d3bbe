"""Write results/{scale}/fairness_audit/report.md: data sets, claims, the validation table (each measure against
the tuned MLP's true bias), the axiom table, the DPI bound, redundancy, feature selection, coalition throughput,
figures, runtimes and deviations."""

import pandas as pd

from neurips26.common.io import read_provenance, write_text
from neurips26.common.provenance import provenance_line
from neurips26.common.report import claims_markdown, closing_sections, markdown_table
from neurips26.common.runtime import start_job
from neurips26.fairness_audit.axioms import axiom_summary

inp, params = snakemake.input, snakemake.params
log = start_job(snakemake)
scale = snakemake.wildcards.scale
DROP = ["git_commit", "config_hash"]
claims, table, axioms, dpi, redundancy, selection, random_removal, datasets, coalitions = (
    pd.read_parquet(p).drop(columns=DROP, errors="ignore")
    for p in (
        inp.claims,
        inp.validation,
        inp.axioms,
        inp.dpi,
        inp.redundancy,
        inp.selection,
        inp.random_removal,
        inp.datasets,
        inp.coalitions,
    )
)
validation = table.pivot_table(
    index=["estimator", "measure", "notion", "family"], columns="gap", values="spearman"
).reset_index()
ci = table[table["aligned"]][["estimator", "measure", "gap", "spearman", "ci_low", "ci_high", "n_pairs"]]
summary = axiom_summary(axioms)
k1 = selection[selection["k"] == 1].groupby("ranking")[["delta_sp_gap", "delta_eo_gap", "delta_accuracy"]].mean()
dpi_summary = pd.DataFrame(
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
scm, tb, red, axioms_cfg = params.scm, params.true_bias, params.redundancy, params.axioms
text = f"""# Paper 06: information-theoretic measures for auditing unfairness bias in data (scale `{scale}`)

Data sets: the parametric linear SCM's scenario families {scm["scenarios"]} x seeds {scm["seeds"]}
({scm["random_draws"]} random draws from the prior; n = {scm["n"]}, d = {scm["d"]} features) and real data sets
{params.real_datasets or "none"}. Every coalition of features is valued once per data set and estimator
({params.estimators}) by the measures {params.measures}; Shapley values are {params.shapley_method}. The
"true bias" is that of an MLP tuned on validation log-loss over {len(tb["grid"])} configurations (max_iter
{tb["max_iter"]}, split {tb["split"]}), trained on the full feature set, every leave-one-out set, every singleton and
the removal sets of the selection rankings, with its SP gap, EO gap, I(Yhat; A) and I(Yhat; A | Y) on the test split.
Rerun: `snakemake -c2 results/{scale}/fairness_audit/report.md`.

## Claims

{claims_markdown(claims)}

## Validation: Spearman correlation of each measure with the true gaps

Over {int(ci["n_pairs"].max()) if len(ci) else 0} (data set, feature set) pairs; columns are the gap the measure is
compared with:

{markdown_table(validation)}

Aligned pairs (measure's notion = gap's notion) with bootstrap 95% intervals:

{markdown_table(ci)}

## Axiom table

Outcome of each measure on each property (pass: on every instance; fail: on none; holds_under_condition: on some),
instances of n = {axioms_cfg["n"]}, tolerance {axioms_cfg["tol"]} nats, estimator {axioms_cfg["estimator"]}:

{markdown_table(summary)}

## Data-processing bound: the baselines against every trained predictor

Share of the tuned predictors with I(Yhat; A) <= I(X_S; A) (and I(Yhat; A | Y) <= I(X_S; A | Y)) up to twice the
bootstrap standard error, and the largest excess (nats); claims C1a and C1b decide from the per-data-set shares:

{markdown_table(dpi_summary)}

## Redundancy: Shapley with an exact copy of {red["player"]} ({red["scenario"]}, every seed, {red["estimator"]})

{markdown_table(redundancy)}

## Feature selection

Mean change over data sets after removing the top feature of each ranking (k = 1), and the exact expectation of
removing one feature at random:

{markdown_table(k1.reset_index())}

{markdown_table(random_removal)}

## Data sets and coalition throughput (coalitions per second, all measures of a coalition together)

{markdown_table(datasets)}

{
    closing_sections(
        inp.figures,
        snakemake.output[0],
        inp.captions,
        params.benchmarks,
        inp.deviations,
        provenance_line(read_provenance(inp.claims)),
    )
}"""
write_text(snakemake.output[0], text)
log.info("report written, %d claims", len(claims))
