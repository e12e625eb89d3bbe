"""Figure: colour transfer by the barycentric map of the RA-OT plan vs the Sinkhorn plan."""

from neurips26.common.runtime import start_job

log = start_job(snakemake)  # noqa: F821 (injected by Snakemake)

import torch  # noqa: E402

from neurips26.amortized_ot.costs import cost_matrix  # noqa: E402
from neurips26.amortized_ot.metrics import potentials_from_f  # noqa: E402
from neurips26.amortized_ot.plots import colour_transfer_figure, save_figure  # noqa: E402
from neurips26.amortized_ot.sinkhorn import plan  # noqa: E402
from neurips26.common.io import load_npz  # noqa: E402

N_ROWS = 3

eps = float(snakemake.params.task["eps"])  # noqa: F821
pairs = load_npz(snakemake.input.pairs)  # noqa: F821
truth = load_npz(snakemake.input.ground_truth)  # noqa: F821
pred = load_npz(snakemake.input.ra)  # noqa: F821

k = min(N_ROWS, len(pairs["x"]))
x, a, y, b = (pairs[key][:k] for key in ("x", "a", "y", "b"))
cost = cost_matrix(x, y, "sqeuclidean")
a_t, b_t = torch.as_tensor(a, dtype=torch.float64), torch.as_tensor(b, dtype=torch.float64)
f, g = potentials_from_f(pred["f_hat"][:k], a, b, cost, eps)
pi_pred = plan(f, g, a_t, b_t, cost, eps).numpy()
f_ref, g_ref = torch.as_tensor(truth["f"][:k]), torch.as_tensor(truth["g"][:k])
pi_ref = plan(f_ref, g_ref, a_t, b_t, cost, eps).numpy()
log.info("colour transfer on %d pairs (eps %g); reference converged: %s", k, eps, truth["converged"][:k])

fig = colour_transfer_figure(pairs["crops"][:k], x, y, pi_pred, pi_ref, n_rows=N_ROWS)
save_figure(fig, snakemake.output[0])  # noqa: F821
log.info("wrote %s", snakemake.output[0])  # noqa: F821
