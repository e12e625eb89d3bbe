r"""Evaluation of paper 17's fitted models beyond the reconstruction metrics (:mod:`.metrics`): the latent-space
uncertainty map and the structured posterior's dependence on U.

* :func:`latent_grid_std`: the predictive standard deviation of ``f`` (q(U) integrated, no noise) on a grid of
  latent points, averaged over outputs, the "uncertainty map"; with more than two latent dimensions the grid spans
  the two of largest ARD precision, the others at 0;
* :func:`grid_table`: that map on a grid around the training latents, with its Spearman correlation to the distance
  from the data;
* :func:`latent_dependence`: how much the structured posterior's latent means move with U (with or without the
  inner steps);
* :func:`qu_breadth`: how broad the fitted q(U) is, relative to the noise (:func:`.metrics.qu_breadth`).
"""

from __future__ import annotations

import numpy as np
import torch

from .elbo import inducing_covariance
from .models import MeanFieldGPLVM, StructuredGPLVM
from .psi import se_ard

__all__ = ["grid_axes", "grid_table", "latent_dependence", "latent_grid_std", "qu_breadth"]


def _frozen(model: MeanFieldGPLVM) -> dict:
    return dict(z=model.z.detach(), m=model.m.detach(), chol_s=model.chol_s().detach(),
                variance=model.log_variance.exp().detach(), alpha=model.log_alpha.exp().detach(),
                beta=model.log_beta.exp().detach())  # fmt: skip


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


def grid_table(model: MeanFieldGPLVM, train_mu: torch.Tensor, size: int) -> tuple[np.ndarray, dict]:
    """The uncertainty map: a ``size`` x ``size`` grid over the training latents' range (padded by half of it on
    every side, so that the map reaches away from the data) in the two most relevant latent dimensions, the
    predictive sd of f there, and each grid point's distance to the nearest training latent mean (the grid's other
    latent coordinates are 0). Returns (Spearman correlation of sd with distance, columns of the grid table)."""
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
    dist = torch.cdist(grid, train_mu).min(1).values.numpy()  # in the whole latent space (the other axes at 0)
    rho = float(spearmanr(sd, dist).statistic)
    return rho, {"gx": gx.reshape(-1).numpy(), "gy": gy.reshape(-1).numpy(), "sd": sd, "distance": dist,
                 "axis_x": i, "axis_y": j}  # fmt: skip


@torch.no_grad()
def latent_dependence(model: MeanFieldGPLVM, y: torch.Tensor, mask: torch.Tensor, draws: int,
                      generator: torch.Generator, inner_steps: int | None = None) -> float:  # fmt: skip
    """How much the structured posterior uses its dependence on U: the standard deviation over ``draws`` draws
    U ~ q(U) of the latent mean ``mu(y_n, U)``, averaged over points and dimensions, divided by the mean posterior sd
    ``sqrt(s)``. ``inner_steps`` overrides the model's (0: the encoder's own dependence, without the inner steps
    that climb each point's bound given the draw). NaN for a mean-field model (it has no dependence to measure)."""
    if not isinstance(model, StructuredGPLVM):
        return float("nan")
    chol = model.chol_s()
    mus, sds = [], []
    for _ in range(draws):
        u = model.m + torch.einsum("dij,dj->di", chol, torch.randn(model.m.shape, dtype=y.dtype, generator=generator))
        mu, s = model.latent_given_u(y, mask, u, inner_steps=inner_steps)
        mus.append(mu)
        sds.append(s.sqrt())
    return float(torch.stack(mus).std(0).mean() / torch.stack(sds).mean())


@torch.no_grad()
def qu_breadth(model: MeanFieldGPLVM, mu: torch.Tensor) -> float:
    """:func:`.metrics.qu_breadth` of a fitted model at its latent means ``mu``."""
    from .metrics import qu_breadth as breadth

    fixed = _frozen(model)
    k = inducing_covariance(fixed["z"], fixed["variance"], fixed["alpha"])
    a = torch.linalg.solve(k, se_ard(mu, fixed["z"], fixed["variance"], fixed["alpha"]).T).T
    return breadth(a.numpy(), fixed["chol_s"].numpy(), float(1 / fixed["beta"]))
