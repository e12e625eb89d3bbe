"""Gather paper 06's results: coalition values, Shapley attributions, true bias, the validation table (Spearman of
each measure with the true gaps), the DPI check, the (data set, feature set) pairs of measure and true bias, the
feature-selection experiment and a summary of the data sets."""

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.fairness_audit.artifacts import read_metas, read_rankings, read_results
from neurips26.fairness_audit.measure_validation import analysis_tables

inp, out, params = snakemake.input, snakemake.output, snakemake.params
seed = params.seed
log = start_job(snakemake, seed=seed)
tables = analysis_tables(
    read_results(inp.coalitions),
    read_results(inp.true_bias),
    read_metas(inp.meta),
    read_rankings(inp.rankings),
    params.shapley,
    params.n_boot,
    params.k_max,
    seed,
)
table = tables["validation"]
log.info(
    "validation (CE, aligned):\n%s",
    table[(table["estimator"] == "ce") & table["aligned"]][["measure", "gap", "spearman", "n_pairs"]].to_string(),
)
prov = job_provenance(snakemake, seed)
for name, frame in tables.items():
    write_parquet(frame, out[name], prov)
