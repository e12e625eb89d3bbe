"""Predict the source potential f of every test pair, for every predictor of a task, timed per instance."""

from pathlib import Path

import numpy as np
import torch

from neurips26.amortized_ot import method
from neurips26.amortized_ot.baselines import load_metaot
from neurips26.amortized_ot.costs import cost_matrix
from neurips26.amortized_ot.data import TASK_COST
from neurips26.amortized_ot.experiment import pack, parse_name, unpack
from neurips26.amortized_ot.sinkhorn import c_transform
from neurips26.amortized_ot.sliced import directions, sliced_potentials
from neurips26.common.io import load_npz, save_npz
from neurips26.common.runtime import start_job
from neurips26.common.timing import timed

params, task = snakemake.params, snakemake.wildcards.task
log = start_job(snakemake, seed=params.seed)
pairs = load_npz(snakemake.input.pairs)
models = {Path(path).stem: path for path in snakemake.input.models}


def predictor(name, x, a, y, b):
    """A function computing f for the batch; model loading stays outside the timed call."""
    if parse_name(name, params.seed)[0] == "metaot":
        net = load_metaot(models[name], x, y)
        return lambda: net.predict(a, b)
    if name.startswith("sliced_mean"):
        theta = directions(int(name.split("_L")[1]), x.shape[2], params.seed)
        return lambda: method.sliced_mean_potential(sliced_potentials(x, a, y, b, theta)[0], x.shape[2])
    model = method.FittedModel.from_dict(load_npz(models[name]))
    return lambda: method.predict_f(model, x, a, y, b)


out = {}
for name, group in params.runs:
    p = unpack(pairs, group)
    x, a, y, b = (p[k] for k in "xayb")
    predict = predictor(name, x, a, y, b)

    def predict_and_recover():
        # plan recovery is part of the method: cost matrix and c-transform are timed too
        f_hat = predict()
        c_transform(torch.as_tensor(f_hat), torch.as_tensor(a), cost_matrix(x, y, TASK_COST[task]), params.eps)
        return f_hat

    f_hat, seconds = timed(predict_and_recover, repeats=1)
    per_instance = seconds / len(x)
    log.info("%s on %s: %d pairs, %.3f ms per instance", name, group, len(x), 1e3 * per_instance)
    out[f"{name}.{group}"] = {"f_hat": f_hat, "seconds_per_instance": np.array(per_instance)}
save_npz(snakemake.output[0], **pack(out))
