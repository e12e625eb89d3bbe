"""Paper 15's classifiers: one per label condition and seed, the seeds and conditions trained together as one batch
of members (same-seed members share their initialisation and data order), on the training split; their test
predictions and training dynamics kept."""

from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.softlabel_audit.artifacts import Runs, read_items, read_teacher, write_runs
from neurips26.softlabel_audit.experiment import label_inputs, targets
from neurips26.softlabel_audit.training import TrainSettings, members_grid, predict_proba, train_members

p = snakemake.params
log = start_job(snakemake, min(p.seeds))
items = read_items(snakemake.input.item_set)
train, test = items.indices("train"), items.indices("test")
logits = read_teacher(snakemake.input.teacher) if "teacher" in snakemake.input.keys() else None
inputs = label_inputs(items, train, logits, p.labels["epsilon"], p.labels["temperature"])
per_condition = targets(p.conditions, inputs)
members = members_grid(p.conditions, p.seeds)
q = per_condition.repeat(len(p.seeds), axis=0)  # condition-major, as members_grid
settings = loop.LoopSettings(checkpoint=loop.checkpoint_path(snakemake.output.runs),
                             fingerprint=fingerprint(dict(p), list(snakemake.input)), name="train")  # fmt: skip
result = train_members(items.images[train], items.original[train], q, members, p.model, TrainSettings(**p.train),
                       settings)  # fmt: skip
probs = predict_proba(result, items.images[test])
dyn = result.dynamics
write_runs(snakemake.output.runs, Runs(members, probs, dyn.gold_prob, dyn.correct))
write_parquet(result.log.assign(dataset=snakemake.wildcards.dataset), snakemake.output.log_table,
              job_provenance(snakemake, min(p.seeds)))  # fmt: skip
loop.finish(settings)
