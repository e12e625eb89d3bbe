"""Paper 15's classifiers of one dataset: first, where a condition learns from a teacher's soft labels, the teacher (one
classifier on the original hard labels, seed teacher.seed apart from the scored seeds; its logits on the training
items are those labels); then one classifier per label condition and seed, the seeds and conditions trained together
as one batch of members (same-seed members share their initialisation and data order), on the training split. Their
test predictions and training dynamics are kept. One job, so that the teacher shares the members' torch start-up."""

from pathlib import Path

import numpy as np

from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.softlabel_audit.artifacts import Runs, read_items, write_runs
from neurips26.softlabel_audit.experiment import label_inputs, needs_teacher, targets, teacher_logits
from neurips26.softlabel_audit.training import TrainSettings, members_grid, predict_proba, train_members

p, out = snakemake.params, snakemake.output
log = start_job(snakemake, min(p.seeds))
items = read_items(snakemake.input.item_set)
train, test = items.indices("train"), items.indices("test")
images, gold, settings = items.images[train], items.original[train], TrainSettings(**p.train)
key = fingerprint(dict(p), list(snakemake.input))
loops = []
logits = None
if needs_teacher(p.conditions):
    seed = int(p.teacher["seed"])
    loops.append(loop.LoopSettings(checkpoint=loop.checkpoint_path(Path(out.runs).with_name("teacher.npz")),
                                   fingerprint=key, name="teacher"))  # fmt: skip
    teacher = train_members(images, gold, targets(["hard_orig"], label_inputs(items, train)),
                            members_grid(["hard_orig"], [seed]), p.model, settings, loops[-1])  # fmt: skip
    probs = predict_proba(teacher, images)[0]
    log.info("teacher (seed %d): training accuracy %.3f", seed, float(np.mean(probs.argmax(-1) == gold)))
    logits = teacher_logits(probs)
inputs = label_inputs(items, train, logits, p.labels["epsilon"], p.labels["temperature"])
members = members_grid(p.conditions, p.seeds)
q = targets(p.conditions, inputs).repeat(len(p.seeds), axis=0)  # condition-major, as members_grid
loops.append(loop.LoopSettings(checkpoint=loop.checkpoint_path(out.runs), fingerprint=key, name="train"))
result = train_members(images, gold, q, members, p.model, settings, loops[-1])
dyn = result.dynamics
write_runs(out.runs, Runs(members, predict_proba(result, items.images[test]), dyn.gold_prob, dyn.correct))
write_parquet(result.log.assign(dataset=snakemake.wildcards.dataset), out.log_table,
              job_provenance(snakemake, min(p.seeds)))  # fmt: skip
for settings_of_run in loops:
    loop.finish(settings_of_run)
