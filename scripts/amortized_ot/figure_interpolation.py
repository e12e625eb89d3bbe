"""Figure: displacement interpolation between test digits under the RA-OT plan."""

import torch

from neurips26.amortized_ot.costs import cost_matrix
from neurips26.amortized_ot.experiment import unpack
from neurips26.amortized_ot.metrics import potentials_from_f
from neurips26.amortized_ot.plots import displacement_interpolation_figure, save_figure
from neurips26.amortized_ot.sinkhorn import plan
from neurips26.common.io import load_npz
from neurips26.common.runtime import start_job

ROWS = 3
log = start_job(snakemake)
params = snakemake.params
eps, res = params.eps, params.res
pairs = unpack(load_npz(snakemake.input.pairs), "test")
f_hat = unpack(load_npz(snakemake.input.predictions), f"ra_L{params.projections}.test")["f_hat"]
x, a, y, b = (pairs[k][:ROWS] for k in "xayb")
cost = cost_matrix(x, y, "sqeuclidean")
f, g = potentials_from_f(f_hat[:ROWS], a, b, cost, eps)
pi = plan(f, g, torch.as_tensor(a), torch.as_tensor(b), cost, eps).numpy()
log.info("interpolating %d digit pairs on a %dx%d grid", len(x), res, res)
save_figure(displacement_interpolation_figure(x, a, y, b, pi, res, n_rows=ROWS), snakemake.output[0])
