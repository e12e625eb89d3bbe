"""Paper 15's classifiers of one dataset: first, where a condition learns from a teacher's soft labels, the teachers
(one classifier on the original hard labels per scored seed s, seed teacher.seed + s, batched; each one's logits on
the training items are the synthetic labels of seed s's members); then one classifier per label condition and seed,
the seeds and conditions trained together as one batch of members (same-seed members share their initialisation and
data order), on the training split. The smoothing epsilon and the teachers' temperatures are matched, where the
config says "matched", to the human soft labels' mean entropy on the training items. Their test predictions, training
dynamics and what each member was trained on (target entropies, whether the target's mode is the original label, the
settings) are kept. One job, so that the teachers share the members' torch start-up."""

from pathlib import Path

import numpy as np

from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.softlabel_audit.artifacts import Runs, read_items, write_runs
from neurips26.softlabel_audit.experiment import (
    label_inputs,
    member_targets,
    needs_teacher,
    targets,
    teacher_logits,
    teacher_seeds,
)
from neurips26.softlabel_audit.labels import NEEDS_TEACHER, entropy
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
    seeds = teacher_seeds(p.teacher, p.seeds)
    loops.append(loop.LoopSettings(checkpoint=loop.checkpoint_path(Path(out.runs).with_name("teacher.npz")),
                                   fingerprint=key, name="teacher"))  # fmt: skip
    hard = targets(["hard_orig"], label_inputs(items, train)).repeat(len(seeds), axis=0)
    teacher = train_members(images, gold, hard, members_grid(["hard_orig"], seeds), p.model, settings, loops[-1])
    probs = predict_proba(teacher, images)
    for seed, prob in zip(seeds, probs):
        log.info("teacher (seed %d): training accuracy %.3f", seed, float(np.mean(prob.argmax(-1) == gold)))
    logits = np.stack([teacher_logits(prob) for prob in probs])
q, label_settings, human_entropy = member_targets(p.conditions, p.seeds, items, train, p.labels, logits)
for seed, (eps, temperature) in zip(p.seeds, label_settings):
    log.info("seed %d: label smoothing epsilon %.4f, teacher temperature %.4f (human soft labels' mean training "
             "entropy %.4f nats)", seed, eps, temperature, human_entropy)  # fmt: skip
members = members_grid(p.conditions, p.seeds)
loops.append(loop.LoopSettings(checkpoint=loop.checkpoint_path(out.runs), fingerprint=key, name="train"))
result = train_members(images, gold, q, members, p.model, settings, loops[-1])
dyn = result.dynamics
seed_index = {int(s): i for i, s in enumerate(p.seeds)}
eps = np.array([label_settings[seed_index[m.seed]][0] if m.condition == "label_smooth" else np.nan for m in members])
temp = np.array([label_settings[seed_index[m.seed]][1] if m.condition in NEEDS_TEACHER else np.nan for m in members])
on_original = q[:, np.arange(len(gold)), gold] >= q.max(axis=-1)
write_runs(out.runs, Runs(members, predict_proba(result, items.images[test]), dyn.gold_prob, dyn.correct,
                          entropy(q), on_original, eps, temp, human_entropy))  # fmt: skip
write_parquet(result.log.assign(dataset=snakemake.wildcards.dataset), out.log_table,
              job_provenance(snakemake, min(p.seeds)))  # fmt: skip
for settings_of_run in loops:
    loop.finish(settings_of_run)
