"""Figure: supply, demand and the Sinkhorn vs RA-OT potential on the sphere (test pair 0)."""

from neurips26.common.runtime import start_job

log = start_job(snakemake)  # noqa: F821 (injected by Snakemake)

import numpy as np  # noqa: E402

from neurips26.amortized_ot.costs import cost_matrix  # noqa: E402
from neurips26.amortized_ot.metrics import potentials_from_f, weighted_rmse  # noqa: E402
from neurips26.amortized_ot.plots import save_figure, sphere_figure  # noqa: E402
from neurips26.common.io import load_npz  # noqa: E402

PAIR = 0

eps = float(snakemake.params.task["eps"])  # noqa: F821
pairs = load_npz(snakemake.input.pairs)  # noqa: F821
truth = load_npz(snakemake.input.ground_truth)  # noqa: F821
pred = load_npz(snakemake.input.ra)  # noqa: F821

sl = slice(PAIR, PAIR + 1)
x, a, y, b = (pairs[key][sl] for key in ("x", "a", "y", "b"))
cost = cost_matrix(x, y, "sqgeodesic")
f, _ = potentials_from_f(pred["f_hat"][sl], a, b, cost, eps)
f_pred, f_true = f.numpy()[0], truth["f"][PAIR]
rmse = float(weighted_rmse(f_pred, f_true, a[0]))
log.info("sphere pair %d: %d points, eps %g, a-weighted RMSE(f) %.4g", PAIR, x.shape[1], eps, rmse)
if not np.allclose(x[0], y[0]):
    log.warning("supply and demand supports differ; plotting both on the supply points")

fig = sphere_figure(x[0], a[0], b[0], f_true, f_pred)
save_figure(fig, snakemake.output[0])  # noqa: F821
log.info("wrote %s", snakemake.output[0])  # noqa: F821
