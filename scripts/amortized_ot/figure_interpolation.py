"""Figure: displacement interpolation between test digits under the RA-OT plan."""

from neurips26.common.runtime import start_job

log = start_job(snakemake)  # noqa: F821 (injected by Snakemake)

import torch  # noqa: E402

from neurips26.amortized_ot.costs import cost_matrix  # noqa: E402
from neurips26.amortized_ot.metrics import potentials_from_f  # noqa: E402
from neurips26.amortized_ot.plots import displacement_interpolation_figure, save_figure  # noqa: E402
from neurips26.amortized_ot.sinkhorn import plan  # noqa: E402
from neurips26.common.io import load_npz  # noqa: E402

N_ROWS = 3

task = snakemake.params.task  # noqa: F821
eps, res = float(task["eps"]), int(task["train_res"])
pairs = load_npz(snakemake.input.pairs)  # noqa: F821
pred = load_npz(snakemake.input.ra)  # noqa: F821

k = min(N_ROWS, len(pairs["x"]))
x, a, y, b = (pairs[key][:k] for key in ("x", "a", "y", "b"))
cost = cost_matrix(x, y, "sqeuclidean")
f, g = potentials_from_f(pred["f_hat"][:k], a, b, cost, eps)
a_t, b_t = torch.as_tensor(a, dtype=torch.float64), torch.as_tensor(b, dtype=torch.float64)
pi = plan(f, g, a_t, b_t, cost, eps).numpy()
log.info("interpolating %d digit pairs on a %dx%d grid (eps %g), plan mass %s", k, res, res, eps, pi.sum((1, 2)))

fig = displacement_interpolation_figure(x, a, y, b, pi, res, n_rows=N_ROWS)
save_figure(fig, snakemake.output[0])  # noqa: F821
log.info("wrote %s", snakemake.output[0])  # noqa: F821
