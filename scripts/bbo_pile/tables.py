"""Paper 05's tables: normalised regret of the real optimizers and of the model (the evaluation run per condition
and decoding, and claim B3's model seeds, named `model:{condition}:constrained@{run}:seed{k}`) on the held-out
boxes, the regret table (evaluation run only), each training run's final point and the scaling fit on the compute
frontier (with the largest-compute run held out), validity of decoded trials, dataset statistics and throughput."""

import re

import pandas as pd

from neurips26.bbo_pile import evaluation
from neurips26.bbo_pile.scaling import scaling_summary
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

params, inp, out = snakemake.params, snakemake.input, snakemake.output
log = start_job(snakemake)
boxes = pd.read_parquet(inp.blackboxes)
held = set(boxes.loc[boxes["split"] == "eval", "bb_id"])
evaluated = set(pd.concat([pd.read_parquet(p, columns=["bb_id"]) for p in inp.optimized])["bb_id"])
generated = pd.concat([pd.read_parquet(p) for p in inp.trajectories], ignore_index=True)
real = generated[generated["bb_id"].isin(held & evaluated)].rename(columns={"optimizer": "method"})
models = pd.concat([pd.read_parquet(p) for p in inp.optimized], ignore_index=True)
models["method"] = "model:" + models["condition"] + ":" + models["decoding"]
for path in inp.seed_optimized:  # .../seeds/{run}/seed{k}/optimize/{condition}_constrained.parquet
    run, k = re.search(r"/seeds/([^/]+)/seed(\d+)/optimize/", path).groups()
    seeded = pd.read_parquet(path)
    seeded["method"] = [evaluation.seed_method(c, run, int(k)) for c in seeded["condition"]]
    models = pd.concat([models, seeded], ignore_index=True)
trials = pd.concat(
    [real[["bb_id", "method", "seed", "trial", "y"]], models[["bb_id", "method", "seed", "trial", "y"]]],
    ignore_index=True,
)
regret = evaluation.normalized_regret(trials, pd.read_parquet(inp.reference))
excluded = evaluation.excluded_boxes(regret)
log.info(
    "regret on %d held-out boxes (%d left out: RS's first value at f*): %s",
    regret["bb_id"].nunique(),
    len(excluded),
    excluded,
)
budget = params.budget
evaluation_run = regret[~regret["method"].str.contains("@", regex=False)]
table_regret = evaluation.regret_table(evaluation_run, horizons=sorted({1, budget // 4, budget // 2, budget}))
validity = evaluation.validity_table(models)
training = pd.concat([pd.read_parquet(p) for p in inp.training], ignore_index=True)
runs, scaling = scaling_summary(training)
fit = scaling.iloc[0]
log.info(
    "scaling: L = %.4g C^%.4f (R^2 %.3f, %d frontier points); held-out %s off by %.1f%%",
    fit["a"],
    fit["b"],
    fit["r2"],
    fit["frontier"],
    fit["holdout_run"],
    100 * fit["holdout_rel_error"],
)
throughput = pd.concat([pd.read_parquet(p) for p in inp.throughput], ignore_index=True)
stats = pd.read_parquet(inp.stats)
data = stats.merge(throughput[["family", "optimizer", "evaluations_per_s"]], on=["family", "optimizer"], how="left")
prov = job_provenance(snakemake)
write_parquet(regret, out.regret, prov)
write_parquet(table_regret, out.table_regret, prov)
write_parquet(scaling, out.scaling, prov)
write_parquet(runs, out.runs, prov)
write_parquet(validity, out.validity, prov)
write_parquet(data, out.data, prov)
write_parquet(throughput, out.throughput, prov)
