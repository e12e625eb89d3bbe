"""Paper 05's tables: normalised regret of the real optimizers and of the model (per condition and decoding) on
the held-out boxes, the regret table, each training run's final point and the scaling fit on the compute
frontier (with the largest-compute run held out), validity of decoded trials, dataset statistics and throughput."""

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from neurips26.bbo_pile import evaluation
from neurips26.bbo_pile.scaling import compute_frontier, fit_power_law, holdout_check
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

cfg, inp, out = snakemake.params.config, snakemake.input, snakemake.output
log = start_job(snakemake)
boxes = pd.read_parquet(inp.blackboxes)
held = set(boxes.loc[boxes["split"] == "eval", "bb_id"])
evaluated = set(pd.concat([pd.read_parquet(p, columns=["bb_id"]) for p in inp.optimized])["bb_id"])
generated = pd.concat([pd.read_parquet(p) for p in inp.trajectories], ignore_index=True)
real = generated[generated["bb_id"].isin(held & evaluated)].rename(columns={"optimizer": "method"})
models = pd.concat([pd.read_parquet(p) for p in inp.optimized], ignore_index=True)
models["method"] = "model:" + models["condition"] + ":" + models["decoding"]
trials = pd.concat([real[["bb_id", "method", "seed", "trial", "y"]], models[["bb_id", "method", "seed", "trial", "y"]]],
                   ignore_index=True)
regret = evaluation.normalized_regret(trials, pd.read_parquet(inp.reference))
excluded = evaluation.excluded_boxes(regret)
log.info("regret on %d held-out boxes (%d left out: RS's first value at f*): %s", regret["bb_id"].nunique(),
         len(excluded), excluded)
budget = cfg["budget"]
table_regret = evaluation.regret_table(regret, horizons=sorted({1, budget // 4, budget // 2, budget}))
validity = models.groupby(["method", "decoding"], as_index=False).agg(trials=("valid_decode", "size"),
                                                                      valid=("valid_decode", "sum"))
training = pd.concat([pd.read_parquet(p) for p in inp.training], ignore_index=True)
finals = training.loc[training.groupby("run")["flops"].idxmax()]
runs = finals[["run", "model", "parameters", "tokens", "flops", "val_loss", "tokens_per_s"]].copy()
frontier = compute_frontier(training[["run", "flops", "val_loss"]], points="all")
law = fit_power_law(frontier["flops"], frontier["val_loss"])
runs["frontier"] = runs["run"].isin(set(frontier["run"]))
held_out = holdout_check(training[["run", "flops", "val_loss"]])
scaling = pd.DataFrame([{"a": law.a, "b": law.b, "r2": law.r2, "frontier": len(frontier), "runs": len(runs),
                         "spearman": float(spearmanr(runs["flops"], runs["val_loss"])[0]) if len(runs) > 2 else np.nan,
                         "holdout_run": held_out["holdout"], "holdout_a": held_out["a"], "holdout_b": held_out["b"],
                         "holdout_predicted": held_out["predicted_loss"], "holdout_actual": held_out["final_loss"],
                         "holdout_rel_error": abs(held_out["relative_error"])}])
log.info("scaling: L = %.4g C^%.4f (R^2 %.3f, %d frontier points); held-out %s off by %.1f%%", law.a, law.b,
         law.r2, len(frontier), held_out["holdout"], 100 * abs(held_out["relative_error"]))
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
