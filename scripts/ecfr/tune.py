"""Paper 11's tuning pilot (neurips26.ecfr.tuning): every candidate teacher, widths and steps of the config's tuning
grid trained and scored on the synthetic set's tuning draw, which no claim scores; the table, and a summary naming
the pick and whether the config's scored settings are it."""

from pathlib import Path

import numpy as np

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.ecfr.training import prepare
from neurips26.ecfr.tuning import Candidate, pick, summary, tune

p = snakemake.params
seed = p.tuning["seed"]
log = start_job(snakemake, seed)


def load(path):
    arrays = np.load(path)
    rgb, depth = prepare(arrays["rgb"].astype(np.float32) / 255, arrays["depth"])
    return {"rgb": rgb, "depth": depth, "cls": arrays["cls"], "mask": arrays["mask"], "defect": arrays["defect"]}


train, test = load(snakemake.input.train), load(snakemake.input.test)
cfg = {"teacher": p.teacher, "model": p.model, "cfm": p.cfm, "train": p.train}
sigma = p.sigma * test["rgb"].shape[-1] / 256  # the reference's sigma 4 is at 256 pixels
table = tune(cfg, p.tuning, p.methods, train, test, sigma, p.aupro_limit, log.info)
best = pick(table)
log.info("pick: %s (mean class-mean I-AUROC over methods %.4f)", best.name, best["criterion"])
write_parquet(table, snakemake.output.table, job_provenance(snakemake, seed))
chosen = Candidate(p.teacher["source"], tuple(p.teacher["widths"]), p.train["steps"])
Path(snakemake.output.summary).write_text(summary(table, chosen, p.tuning["data_seed"], seed))
