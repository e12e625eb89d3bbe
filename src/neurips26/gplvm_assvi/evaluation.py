r"""Held-out evaluation of paper 17's models: latents of new points, their bound, the latent-space uncertainty map,
and the distance of reconstructions to the true manifold.

* :func:`infer_latents`: a free mean-field model has no encoder, so the ``q(x_*)`` of held-out points is fitted to
  their observed entries with everything else frozen (Titsias & Lawrence 2010, sec. 4; GPy's ``infer_newX``),
  started at the latent mean of the nearest training point (distance over the observed entries);
* :func:`test_bound`: the per-point part of the bound for held-out points (expected log-likelihood of their
  observed entries minus ``KL(q(x_*))``), averaged over points; the structured model's is a Monte Carlo estimate;
* :func:`latent_grid_std`: the predictive standard deviation of ``f`` (q(U) integrated, no noise) on a grid of
  latent points, averaged over outputs, the "uncertainty map"; with more than two latent dimensions the grid spans
  the two of largest ARD precision, the others at 0;
* :func:`manifold_distance`: the mean Euclidean distance of reconstructions to a dense sample of the true manifold.
"""

from __future__ import annotations

import numpy as np
import torch

from neurips26.common.optim import Adam

from .elbo import elbo_terms, inducing_covariance, structured_elbo
from .models import MeanFieldGPLVM, StructuredGPLVM
from .psi import se_ard

__all__ = ["grid_axes", "infer_latents", "latent_grid_std", "manifold_distance", "test_bound"]


def _frozen(model: MeanFieldGPLVM) -> dict:
    return dict(z=model.z.detach(), m=model.m.detach(), chol_s=model.chol_s().detach(),
                variance=model.log_variance.exp().detach(), alpha=model.log_alpha.exp().detach(),
                beta=model.log_beta.exp().detach())  # fmt: skip


def infer_latents(model: MeanFieldGPLVM, y_train: torch.Tensor, mask_train: torch.Tensor, y: torch.Tensor,
                  mask: torch.Tensor, steps: int, lr: float) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """(mu, s) of held-out points ``y`` (NaN where ``mask`` is False) for a free mean-field model."""
    if model.amortized:
        raise ValueError("an amortized model reads held-out latents from its encoder; infer_latents is for free ones")
    if steps < 1:
        raise ValueError(f"latent inference needs at least one step, got {steps}")
    fill = torch.nanmean(torch.where(mask_train, y_train, torch.nan), 0)
    train = torch.where(mask_train, y_train, fill)
    test = torch.where(mask, y, fill)
    dist = (((test[:, None, :] - train[None]) ** 2) * mask[:, None, :]).sum(-1)  # observed entries only
    nearest = dist.argmin(1)
    mu = model.mu.detach()[nearest].clone().requires_grad_(True)
    log_s = model.log_s.detach()[nearest].clone().requires_grad_(True)
    fixed = _frozen(model)
    optimiser = Adam([mu, log_s], lr)
    for _ in range(steps):
        terms = elbo_terms(y, mask, mu, log_s.exp(), **fixed)
        loss = -(terms["likelihood"] - terms["kl_x"])
        mu.grad = log_s.grad = None
        loss.backward()
        optimiser.step()
    return mu.detach(), log_s.detach().exp()


@torch.no_grad()
def test_bound(model: MeanFieldGPLVM, y: torch.Tensor, mask: torch.Tensor, latents=None, samples: int = 32,
               generator: torch.Generator | None = None) -> float:  # fmt: skip
    """Mean over held-out points of their part of the bound (module docstring); ``latents`` for a free model."""
    fixed = _frozen(model)
    if isinstance(model, StructuredGPLVM):
        kl_u = structured_elbo(y[:0], mask[:0], lambda u: model.latent_given_u(y[:0], mask[:0], u), samples=1,
                               generator=generator, **fixed)  # fmt: skip
        total = structured_elbo(y, mask, lambda u: model.latent_given_u(y, mask, u), samples=samples,
                                generator=generator, **fixed)  # fmt: skip
        return float(total - kl_u) / len(y)
    mu, s = latents if latents is not None else model.latent(y, mask)
    terms = elbo_terms(y, mask, mu, s, **fixed)
    return float(terms["likelihood"] - terms["kl_x"]) / len(y)


def grid_axes(model: MeanFieldGPLVM) -> tuple[int, int]:
    """The two latent dimensions of largest ARD precision (the most relevant), in increasing index order."""
    alpha = model.log_alpha.detach().exp()
    if len(alpha) < 2:
        return (0, 0)
    return tuple(sorted(torch.argsort(alpha, descending=True)[:2].tolist()))


@torch.no_grad()
def latent_grid_std(model: MeanFieldGPLVM, grid: torch.Tensor) -> torch.Tensor:
    """(G,) predictive sd of f at latent points ``grid`` (G, Q): ``sqrt(k** - a^T k + a^T S_d a)`` averaged over
    outputs ``d``, with ``a = K_MM^-1 k(Z, x*)``."""
    fixed = _frozen(model)
    k = inducing_covariance(fixed["z"], fixed["variance"], fixed["alpha"])
    kxz = se_ard(grid, fixed["z"], fixed["variance"], fixed["alpha"])
    a = torch.linalg.solve(k, kxz.T).T
    base = fixed["variance"] - (a * kxz).sum(1)
    la = torch.einsum("gm,dmk->gdk", a, fixed["chol_s"])
    var = base[:, None] + (la**2).sum(-1)
    return var.clamp_min(0).sqrt().mean(1)


def manifold_distance(points: np.ndarray, surface: np.ndarray) -> float:
    """Mean distance of each row of ``points`` to its nearest row of ``surface`` (a dense sample of the manifold)."""
    from scipy.spatial import cKDTree

    if points.shape[1] != surface.shape[1]:
        raise ValueError(f"points have {points.shape[1]} columns, the manifold {surface.shape[1]}")
    return float(cKDTree(surface).query(points)[0].mean())


def score(means: np.ndarray, variances: np.ndarray, data: dict, reconstruction: np.ndarray,
          surface: np.ndarray | None) -> dict:  # fmt: skip
    """The reconstruction metrics of one run on the hidden entries of its dataset (``data``: the arrays of
    :func:`.data.build_dataset`): RMSE, NLPD (with and without the noise in the predictive variance, as the
    reference's ``evaluate_gp_metrics.py`` leaves it out: ``noise`` is then subtracted by the caller), 95% coverage,
    and the distance of the reconstructions to the true manifold (NaN without one)."""
    from .metrics import coverage, nlpd, rmse

    hidden = ~data["mask"]
    truth = data["y_full"]
    return {
        "rmse": rmse(means, truth, hidden),
        "nlpd": nlpd(means, variances, truth, hidden),
        "coverage": coverage(means, variances, truth, hidden),
        "manifold_distance": manifold_distance(reconstruction, surface) if surface is not None else float("nan"),
        "hidden_entries": int(hidden.sum()),
    }


def grid_table(model: MeanFieldGPLVM, train_mu: torch.Tensor, size: int) -> tuple[np.ndarray, dict]:
    """The uncertainty map: a ``size`` x ``size`` grid over the training latents' range (padded by half of it on
    every side, so that the map reaches away from the data) in the two most relevant latent dimensions, the
    predictive sd of f there, and each grid point's distance to the nearest training latent mean (in those two
    dimensions, the others at 0). Returns (Spearman correlation of sd with distance, columns of the grid table)."""
    from scipy.stats import spearmanr

    i, j = grid_axes(model)
    pts = train_mu[:, [i, j]]
    low, high = pts.min(0).values, pts.max(0).values
    pad = 0.5 * (high - low)
    axes = [torch.linspace(float(low[k] - pad[k]), float(high[k] + pad[k]), size, dtype=train_mu.dtype) for k in (0, 1)]
    gx, gy = torch.meshgrid(*axes, indexing="xy")
    grid = torch.zeros(size * size, train_mu.shape[1], dtype=train_mu.dtype)
    grid[:, i], grid[:, j] = gx.reshape(-1), gy.reshape(-1)
    sd = latent_grid_std(model, grid).numpy()
    dist = torch.cdist(grid[:, [i, j]], pts).min(1).values.numpy()
    rho = float(spearmanr(sd, dist).statistic)
    return rho, {"gx": gx.reshape(-1).numpy(), "gy": gy.reshape(-1).numpy(), "sd": sd, "distance": dist,
                 "axis_x": i, "axis_y": j}  # fmt: skip


@torch.no_grad()
def latent_dependence(model: MeanFieldGPLVM, y: torch.Tensor, mask: torch.Tensor, draws: int,
                      generator: torch.Generator) -> float:  # fmt: skip
    """How much the structured posterior uses its dependence on U: the standard deviation over ``draws`` draws
    U ~ q(U) of the latent mean ``mu(y_n, U)``, averaged over points and dimensions, divided by the mean posterior sd
    ``sqrt(s)``. 0 for a mean-field model (NaN is returned: it has no dependence to measure)."""
    if not isinstance(model, StructuredGPLVM):
        return float("nan")
    chol = model.chol_s()
    mus, sds = [], []
    for _ in range(draws):
        u = model.m + torch.einsum("dij,dj->di", chol, torch.randn(model.m.shape, dtype=y.dtype, generator=generator))
        mu, s = model.latent_given_u(y, mask, u)
        mus.append(mu)
        sds.append(s.sqrt())
    return float(torch.stack(mus).std(0).mean() / torch.stack(sds).mean())
