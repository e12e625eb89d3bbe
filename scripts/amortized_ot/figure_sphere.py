"""Figure: supply, demand and the Sinkhorn vs RA-OT potential on the sphere (first test pair)."""

from neurips26.amortized_ot.costs import cost_matrix
from neurips26.amortized_ot.experiment import unpack
from neurips26.amortized_ot.metrics import potentials_from_f
from neurips26.amortized_ot.plots import save_figure, sphere_figure
from neurips26.common.io import load_npz
from neurips26.common.runtime import start_job

log = start_job(snakemake)
params = snakemake.params
pairs = unpack(load_npz(snakemake.input.pairs), "test")
truth = unpack(load_npz(snakemake.input.ground_truth), "test")
f_hat = unpack(load_npz(snakemake.input.predictions), f"ra_L{params.projections}.test")["f_hat"]
x, a, y, b = (pairs[k][:1] for k in "xayb")
f, _ = potentials_from_f(f_hat[:1], a, b, cost_matrix(x, y, "sqgeodesic"), params.eps)
if not truth["converged"][0]:
    log.warning("the ground truth of this pair did not converge (marginal error %.3g)", truth["marginal_error"][0])
save_figure(sphere_figure(x[0], a[0], b[0], truth["f"][0], f.numpy()[0]), snakemake.output[0])
