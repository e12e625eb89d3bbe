"""Score every run of one dataset of paper 11: the anomaly maps of the test images (each run's unified model, or its
class's model), then image AUROC, pixel AUROC and AUPRO per class, their class mean and per defect type; the maps of
a few examples (one per defect type and a normal image) of each method's first seed for the figure."""

import numpy as np
import pandas as pd
import torch

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.ecfr.evaluation import run_metrics
from neurips26.ecfr.experiment import score_run
from neurips26.ecfr.training import prepare

p = snakemake.params
dataset = snakemake.wildcards.dataset
log = start_job(snakemake)
test = np.load(snakemake.input.test)
rgb, depth = prepare(test["rgb"].astype(np.float32) / 255, test["depth"])
cls, defect, masks = test["cls"], test["defect"], test["mask"]
teacher = torch.load(snakemake.input.teacher, weights_only=True)
cfg = {"teacher": p.teacher, "model": p.model, "cfm": p.cfm}
sigma = p.evaluate["sigma"] * rgb.shape[-1] / 256  # the reference's sigma 4 is at 256 pixels
picks = list(dict.fromkeys([int(np.flatnonzero(defect == d)[0]) for d in dict.fromkeys(defect.tolist())]))
picks = picks[: p.evaluate["examples"]]
first_seed = min(s for _, _, s in p.runs)
rows, examples = [], {}
for (method, setting, seed), path in zip(p.runs, snakemake.input.models):
    states = torch.load(path, weights_only=True)["states"]
    maps = score_run(method, states, rgb, depth, cls, cfg, teacher, sigma)
    for row in run_metrics(maps, masks, cls, defect, p.evaluate["aupro_limit"]):
        rows.append({"dataset": dataset, "method": method, "setting": setting, "seed": seed, **row})
    mean = next(r for r in rows[::-1] if r["name"] == "mean")
    log.info("%s %s seed %d: class-mean I-AUROC %.4f, P-AUROC %.4f, AUPRO %.4f", method, setting, seed,
             mean["i_auroc"], mean["p_auroc"], mean["aupro"])  # fmt: skip
    if seed == first_seed:
        examples[f"{method}_{setting}"] = maps[picks]
write_parquet(pd.DataFrame(rows), snakemake.output.evaluation, job_provenance(snakemake))
np.savez(snakemake.output.examples, rgb=test["rgb"][picks], depth=test["depth"][picks], mask=masks[picks],
         cls=cls[picks], defect=defect[picks], **examples)  # fmt: skip
