"""Predict the source potential f of every test pair, timed per instance (plan recovery included)."""

import time

import numpy as np
import torch

from neurips26.amortized_ot import method
from neurips26.amortized_ot.baselines import MetaOTPotential, check_fixed_support
from neurips26.amortized_ot.costs import cost_matrix
from neurips26.amortized_ot.data import TASK_COST
from neurips26.amortized_ot.sinkhorn import c_transform
from neurips26.amortized_ot.sliced import directions, sliced_potentials
from neurips26.common.io import load_npz, save_npz
from neurips26.common.runtime import start_job

log = start_job(snakemake)
pairs = load_npz(snakemake.input.pairs)
x, a, y, b = (pairs[k] for k in "xayb")
task, eps = snakemake.wildcards.task, snakemake.params.task["eps"]

if snakemake.rule == "amortized_ot_predict_metaot":
    saved = torch.load(snakemake.input.model, weights_only=False)
    check_fixed_support(saved["x"][None], saved["y"][None], x, y)
    net = MetaOTPotential(x.shape[1], y.shape[1], tuple(saved["hidden"])).double()
    net.load_state_dict(saved["state_dict"])
    net.eval()

    def predict():
        with torch.no_grad():
            return net(torch.as_tensor(a), torch.as_tensor(b)).numpy()
elif snakemake.rule == "amortized_ot_predict_sliced_mean":
    theta = directions(int(snakemake.wildcards.L), x.shape[2], snakemake.params.seed)

    def predict():
        return method.sliced_mean_potential(sliced_potentials(x, a, y, b, theta)[0], x.shape[2])
else:
    model = method.FittedModel.from_dict(load_npz(snakemake.input.model))

    def predict():
        return method.predict_f(model, x, a, y, b)

start = time.perf_counter()
f_hat = predict()
c_transform(torch.as_tensor(f_hat), torch.as_tensor(a), cost_matrix(x, y, TASK_COST[task]), eps)
per_instance = (time.perf_counter() - start) / len(x)
log.info("%s: %d pairs, %.3f ms per instance", snakemake.rule, len(x), 1e3 * per_instance)
save_npz(snakemake.output[0], f_hat=f_hat, seconds_per_instance=np.array(per_instance))
