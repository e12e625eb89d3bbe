"""Score every run of one dataset of paper 11: the anomaly maps of its seed's test images (each run's unified model,
or its class's model), then image AUROC, pixel AUROC and AUPRO per class, their class mean and per defect type; the
maps of a few examples (one per defect type and a normal image) of each method's first seed for the figure."""

import numpy as np
import pandas as pd
import torch

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.ecfr.evaluation import run_metrics
from neurips26.ecfr.experiment import score_run
from neurips26.ecfr.names import SAME_MODAL_NULL
from neurips26.ecfr.training import prepare

p = snakemake.params
dataset = snakemake.wildcards.dataset
log = start_job(snakemake)
teacher = torch.load(snakemake.input.teacher, weights_only=True)
cfg = {"teacher": p.teacher, "model": p.model, "cfm": p.cfm}


def load_test(path):
    """A run's test set (each seed draws its own synthetic set), prepared, and the examples the figure shows: the
    k-th defect type (normal images first) on the k-th class, where it has one."""
    test = np.load(path)
    rgb, depth = prepare(test["rgb"].astype(np.float32) / 255, test["depth"])
    cls, defect = test["cls"], test["defect"]
    classes, picks = list(dict.fromkeys(cls.tolist())), []
    for k, d in enumerate(dict.fromkeys(defect.tolist())):
        hits = np.flatnonzero((defect == d) & (cls == classes[k % len(classes)]))
        picks.append(int(hits[0] if len(hits) else np.flatnonzero(defect == d)[0]))
    return test, rgb, depth, picks[: p.evaluate["examples"]]


first_seed = min(s for _, _, s in p.runs)
rows, examples, loaded = [], {}, {}
for (method, setting, seed), path, test_path in zip(p.runs, snakemake.input.models, snakemake.input.tests):
    if test_path not in loaded:
        loaded[test_path] = load_test(test_path)
    test, rgb, depth, picks = loaded[test_path]
    cls, defect, masks = test["cls"], test["defect"], test["mask"]
    sigma = p.evaluate["sigma"] * rgb.shape[-1] / 256  # the reference's sigma 4 is at 256 pixels
    states = torch.load(path, weights_only=True)["states"]
    maps = score_run(method, states, rgb, depth, cls, cfg, teacher, sigma)
    for row in run_metrics(maps, masks, cls, defect, p.evaluate["aupro_limit"]):
        rows.append({"dataset": dataset, "method": method, "setting": setting, "seed": seed, **row})
    mean = next(r for r in rows[::-1] if r["name"] == "mean")
    log.info("%s %s seed %d: class-mean I-AUROC %.4f, P-AUROC %.4f, AUPRO %.4f", method, setting, seed,
             mean["i_auroc"], mean["p_auroc"], mean["aupro"])  # fmt: skip
    if seed == first_seed and method != SAME_MODAL_NULL:  # the null's refit looks as same_modal does
        examples[f"{method}_{setting}"] = maps[picks]
        shown = {"rgb": test["rgb"][picks], "depth": test["depth"][picks], "mask": masks[picks], "cls": cls[picks],
                 "defect": defect[picks]}  # fmt: skip
write_parquet(pd.DataFrame(rows), snakemake.output.evaluation, job_provenance(snakemake))
np.savez(snakemake.output.examples, **shown, **examples)
