"""Paper 05's tables: normalised regret of the real optimizers and of the model (the evaluation run per condition
and decoding, and claim B3's model seeds, named `model:{condition}:constrained@{run}:seed{k}`) on the held-out
boxes, the regret table (evaluation run only), each training run's final point and the scaling fit on the compute
frontier (with the largest-compute run held out), validity of decoded trials, dataset statistics and throughput."""

import pandas as pd

from neurips26.bbo_pile.regret import excluded_boxes
from neurips26.bbo_pile.summary import model_seed_of, read_tables, result_tables, seed_rows
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

params, inp, out = snakemake.params, snakemake.input, snakemake.output
log = start_job(snakemake)
tables = result_tables(
    pd.read_parquet(inp.blackboxes),
    pd.read_parquet(inp.reference),
    read_tables(inp.trajectories),
    read_tables(inp.optimized),
    [(*model_seed_of(path), pd.read_parquet(path)) for path in inp.seed_optimized],
    seed_rows(read_tables(inp.training), params.seed),  # a seed group's log holds its other seeds too
    pd.read_parquet(inp.stats),
    read_tables(inp.throughput),
    params.budget,
)
regret, fit = tables["regret"], tables["scaling"].iloc[0]
excluded = excluded_boxes(regret)
log.info(
    "regret on %d held-out boxes (%d left out: RS's first value at f*): %s",
    regret["bb_id"].nunique(),
    len(excluded),
    excluded,
)
log.info(
    "scaling: L = %.4g C^%.4f (R^2 %.3f, %d frontier points); held-out %s off by %.1f%%",
    fit["a"],
    fit["b"],
    fit["r2"],
    fit["frontier"],
    fit["holdout_run"],
    100 * fit["holdout_rel_error"],
)
prov = job_provenance(snakemake)
for name, table in tables.items():
    write_parquet(table, out[name], prov)
