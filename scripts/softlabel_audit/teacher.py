"""Paper 15's teacher for the synthetic soft labels: one classifier trained on the original hard labels of the
training split (seed teacher.seed, apart from the scored seeds), its logits on the training items kept."""

import numpy as np

from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.runtime import start_job
from neurips26.softlabel_audit.artifacts import read_items, write_teacher
from neurips26.softlabel_audit.experiment import label_inputs, targets, teacher_logits
from neurips26.softlabel_audit.training import TrainSettings, members_grid, predict_proba, train_members

p = snakemake.params
seed = int(p.teacher["seed"])
log = start_job(snakemake, seed)
items = read_items(snakemake.input.item_set)
train = items.indices("train")
settings = loop.LoopSettings(checkpoint=loop.checkpoint_path(snakemake.output.teacher),
                             fingerprint=fingerprint(dict(p), list(snakemake.input)), name="teacher")  # fmt: skip
members = members_grid(["hard_orig"], [seed])
q = targets(["hard_orig"], label_inputs(items, train))
result = train_members(items.images[train], items.original[train], q, members, p.model, TrainSettings(**p.train),
                       settings)  # fmt: skip
probs = predict_proba(result, items.images[train])[0]
log.info("teacher (seed %d): training accuracy %.3f", seed, float(np.mean(probs.argmax(-1) == items.original[train])))
write_teacher(snakemake.output.teacher, teacher_logits(probs), seed)
loop.finish(settings)
