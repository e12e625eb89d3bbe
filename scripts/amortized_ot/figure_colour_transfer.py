"""Figure: colour transfer by the barycentric map of the RA-OT plan vs the Sinkhorn plan."""

import torch

from neurips26.amortized_ot.costs import cost_matrix
from neurips26.amortized_ot.experiment import unpack
from neurips26.amortized_ot.metrics import potentials_from_f
from neurips26.amortized_ot.plots import colour_transfer_figure, save_figure
from neurips26.amortized_ot.sinkhorn import plan
from neurips26.common.io import load_npz
from neurips26.common.runtime import start_job

ROWS = 3
log = start_job(snakemake)
params = snakemake.params
eps = params.eps
pairs = unpack(load_npz(snakemake.input.pairs), "test")
truth = unpack(load_npz(snakemake.input.ground_truth), "test")
f_hat = unpack(load_npz(snakemake.input.predictions), f"ra_L{params.projections}.test")["f_hat"]
x, a, y, b = (pairs[k][:ROWS] for k in "xayb")
a_t, b_t = torch.as_tensor(a), torch.as_tensor(b)
cost = cost_matrix(x, y, "sqeuclidean")
f, g = potentials_from_f(f_hat[:ROWS], a, b, cost, eps)
pi_pred = plan(f, g, a_t, b_t, cost, eps).numpy()
pi_ref = plan(torch.as_tensor(truth["f"][:ROWS]), torch.as_tensor(truth["g"][:ROWS]), a_t, b_t, cost, eps).numpy()
log.info("colour transfer on %d pairs; reference converged: %s", len(x), truth["converged"][:ROWS])
save_figure(colour_transfer_figure(pairs["crops"][:ROWS], x, y, pi_pred, pi_ref, n_rows=ROWS), snakemake.output[0])
