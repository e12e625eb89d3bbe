"""Paper 15's metrics of one dataset's runs (accuracy, ECE, KL to the human labels, seed disagreement, cartography's
rank correlation with human uncertainty) and the data maps of the training items."""

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.softlabel_audit.artifacts import read_items, read_runs
from neurips26.softlabel_audit.evaluation import cartography_frame, evaluate

p = snakemake.params.evaluate
log = start_job(snakemake)
items = read_items(snakemake.input.item_set)
runs = read_runs(snakemake.input.runs)
dataset = snakemake.wildcards.dataset
metrics = evaluate(items, runs.members, runs.test_probs, runs.gold_prob, runs.correct, p["bins"],
                   p["difficult_quantile"], runs.trained)  # fmt: skip
maps = cartography_frame(items, runs.members, runs.gold_prob, runs.correct)
log.info("%d metric rows, %d data-map rows", len(metrics), len(maps))
write_parquet(metrics.assign(dataset=dataset), snakemake.output.metrics, job_provenance(snakemake))
write_parquet(maps.assign(dataset=dataset), snakemake.output.cartography, job_provenance(snakemake))
