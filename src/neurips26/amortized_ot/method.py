"""RA-OT and OA-OT: a concurrent functional linear model on sliced potentials (arXiv:2604.15114).

f_p(x_j) = beta_0(x_j) + sum_l beta_l(x_j) phi_{p,l}(theta_l^T x_j),  beta_l(x) = sum_k B_lk rho_k(x),
with rho_k Gaussian RBFs on the domain (K = 1 means constant coefficients). The parameter count
K (L + 1) does not depend on the number of atoms. RA-OT fits B by weighted ridge least squares on
Sinkhorn potentials; OA-OT maximises the entropic semi-dual over the training pairs instead.

The OA-OT fit backpropagates but does not use the shared training loop (common.loop.run_loop), nor does
RA-OT: they are solver fits, not training over steps. RA-OT is one closed-form solve of the normal equations.
OA-OT is one deterministic full-batch L-BFGS solve (a single `LBFGS.step` of up to `oa.max_iter` iterations
with a strong-Wolfe line search and its own tolerance stops): there are no minibatches, no random draws and no
learning rate, and cutting it into loop steps of one iteration each would restart the line search and the
tolerance checks at every step and change the result. A killed fit is rerun from the start and gives the same
coefficients. The design matrix (sliced potentials, RBFs) is numpy, built on the CPU; the OA-OT solve runs on
the job's device (loop.job_device()), as every training does: the CPU, since the profile gives the fit rules no GPU.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from neurips26.amortized_ot.measures import MeasureError, check_positive
from neurips26.amortized_ot.sinkhorn import c_transform, chunks, plan, semi_dual
from neurips26.amortized_ot.sliced import directions as sliced_directions
from neurips26.amortized_ot.sliced import sliced_potentials
from neurips26.common import loop

# prediction builds the design matrix of at most this many entries at a time (a cache-sized block)
DESIGN_ENTRIES = 2**17


def rbf_centres(points: np.ndarray, n_basis: int, seed: int) -> tuple[np.ndarray, float]:
    """K RBF centres by k-means on training atoms, bandwidth = median distance between centres."""
    if n_basis < 1:
        raise MeasureError(f"number of basis functions K must be >= 1, got {n_basis}")
    unique = np.unique(points.reshape(-1, points.shape[-1]).round(8), axis=0)
    if n_basis == 1:
        return unique.mean(axis=0, keepdims=True), 1.0
    if len(unique) < n_basis:
        raise MeasureError(f"K = {n_basis} basis functions need at least {n_basis} distinct atoms, got {len(unique)}")
    from sklearn.cluster import KMeans

    rng = np.random.default_rng(seed)
    sample = unique[rng.choice(len(unique), size=min(len(unique), 5000), replace=False)]
    centres = KMeans(n_clusters=n_basis, n_init=4, random_state=seed).fit(sample).cluster_centers_
    dists = np.linalg.norm(centres[:, None] - centres[None], axis=-1)
    return centres, float(np.median(dists[np.triu_indices(n_basis, 1)]))


def rbf_basis(points: np.ndarray, centres: np.ndarray, bandwidth: float) -> np.ndarray:
    """rho_k(x) for points (..., d) -> (..., K); the constant 1 when K = 1."""
    if len(centres) == 1:
        return np.ones(points.shape[:-1] + (1,))
    sq = ((points[..., None, :] - centres) ** 2).sum(-1)
    return np.exp(-sq / (2 * bandwidth**2))


def design_matrix(basis: np.ndarray, phi: np.ndarray) -> np.ndarray:
    """Rows [rho(x), rho(x) (x) phi(x)] -> (P, n, K (L + 1))."""
    P, n, K = basis.shape
    inter = (basis[..., :, None] * phi[..., None, :]).reshape(P, n, -1)
    return np.concatenate([basis, inter], axis=-1)


def fit_regression(design: np.ndarray, f_star: np.ndarray, a: np.ndarray, ridge: float) -> np.ndarray:
    """RA-OT: argmin_B mean_p sum_j a_pj (f*_pj - D_pj B)^2 + ridge |B|^2 (closed form)."""
    if ridge < 0:
        raise MeasureError(f"ridge must be >= 0, got {ridge}")
    P = design.shape[0]
    flat = design.reshape(-1, design.shape[-1])
    w = a.reshape(-1) / P
    gram = flat.T @ (flat * w[:, None])
    rhs = flat.T @ (w * f_star.reshape(-1))
    scale = np.trace(gram) / len(gram)
    return np.linalg.solve(gram + ridge * scale * np.eye(len(gram)), rhs)


def fit_dual(
    design: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    cost: torch.Tensor,
    eps: float,
    ridge: float,
    max_iter: int,
    init: np.ndarray | None = None,
) -> tuple[np.ndarray, list[float]]:
    """OA-OT: maximise mean_p D_eps(f_p, c-transform(f_p)) - ridge |B|^2 with L-BFGS.

    Needs no ground-truth potentials. Returns the coefficients (on the CPU) and the objective per outer step.
    The solve runs on the job's device (loop.job_device()).
    """
    check_positive(eps, "eps")
    if ridge < 0:
        raise MeasureError(f"ridge must be >= 0, got {ridge}")
    device = loop.job_device()
    D = torch.as_tensor(design, dtype=torch.float64).to(device)
    a_t, b_t = (torch.as_tensor(v, dtype=torch.float64).to(device) for v in (a, b))
    cost = cost.to(device)
    start = np.zeros(D.shape[-1]) if init is None else init
    coef = torch.tensor(start, dtype=torch.float64, device=device, requires_grad=True)
    scale = float((D**2).mean())
    optimiser = torch.optim.LBFGS(
        [coef],
        lr=1.0,
        max_iter=max_iter,
        history_size=20,
        line_search_fn="strong_wolfe",
        tolerance_grad=1e-10,
        tolerance_change=1e-12,
    )
    trace: list[float] = []

    def closure():
        # the mean semi-dual is accumulated chunk by chunk (same gradient, cache-sized temporaries)
        optimiser.zero_grad()
        total = 0.0
        for part in chunks(*cost.shape):
            chunk_loss = -semi_dual(D[part] @ coef, a_t[part], b_t[part], cost[part], eps).sum() / D.shape[0]
            chunk_loss.backward()
            total += float(chunk_loss.detach())
        penalty = ridge * scale * (coef**2).sum()
        penalty.backward()
        total += float(penalty.detach())
        trace.append(-total)
        return torch.tensor(total)

    optimiser.step(closure)
    if not np.isfinite(trace[-1]):
        raise FloatingPointError("OA-OT objective became NaN or inf; lower the step or raise eps")
    return coef.detach().cpu().numpy(), trace


def predict_potential(design: np.ndarray, coef: np.ndarray) -> np.ndarray:
    return design @ coef


def functional_potential(basis: np.ndarray, phi: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """design_matrix(basis, phi) @ coef, built and multiplied a few pairs at a time: the same numbers
    (each entry is the same row-times-coefficients product), without the (P, n, K (L + 1)) design of all
    pairs at once, which is far larger than the cache (54 MB for 50 colour pairs at L = 32)."""
    P, n, K = basis.shape
    parts = chunks(P, n, K * (phi.shape[-1] + 1), DESIGN_ENTRIES)
    return np.concatenate([predict_potential(design_matrix(basis[p], phi[p]), coef) for p in parts])


def sliced_mean_potential(phi: np.ndarray, dim: int) -> np.ndarray:
    """Ablation without regression: f = d * mean_l phi_l, since E_theta |theta^T z|^2 = |z|^2 / d."""
    return dim * phi.mean(axis=-1)


@dataclass(frozen=True)
class FittedModel:
    """What a fitted RA/OA model needs at prediction time: directions, RBF basis and coefficients."""

    theta: np.ndarray  # (L, d)
    centres: np.ndarray  # (K, d)
    bandwidth: float
    coef: np.ndarray  # (K (L + 1),)

    def as_dict(self) -> dict[str, np.ndarray]:
        return {"theta": self.theta, "centres": self.centres, "bandwidth": np.array(self.bandwidth), "coef": self.coef}

    @classmethod
    def from_dict(cls, d: dict[str, np.ndarray]) -> FittedModel:
        return cls(d["theta"], d["centres"], float(d["bandwidth"]), d["coef"])


def functional_design(x, a, y, b, theta, centres, bandwidth) -> np.ndarray:
    """Design matrix of the functional model for a batch of pairs (sliced potentials x RBFs)."""
    phi, _ = sliced_potentials(x, a, y, b, theta)
    return design_matrix(rbf_basis(x, centres, bandwidth), phi)


def predict_f(model: FittedModel, x, a, y, b) -> np.ndarray:
    """Predicted source potential f at the source atoms of every pair, (P, n), all pairs in one call: the
    sliced potentials of all pairs and directions at once, then the functional model a block of pairs at a
    time (functional_potential). Each pair's f does not depend on the other pairs of the batch."""
    if model.theta.shape[1] != x.shape[2]:
        raise MeasureError(
            f"dimension mismatch: the model was fitted in R^{model.theta.shape[1]}, atoms are in R^{x.shape[2]}"
        )
    phi, _ = sliced_potentials(x, a, y, b, model.theta)
    return functional_potential(rbf_basis(x, model.centres, model.bandwidth), phi, model.coef)


def predict_plan(model: FittedModel, x, a, y, b, cost: torch.Tensor, eps: float) -> np.ndarray:
    """The plan recovered from predicted potentials: g by the c-transform, so the nu-marginal is exact."""
    f = torch.as_tensor(predict_f(model, x, a, y, b))
    a_t, b_t = torch.as_tensor(a, dtype=torch.float64), torch.as_tensor(b, dtype=torch.float64)
    g = c_transform(f, a_t, cost, eps)
    return plan(f, g, a_t, b_t, cost, eps).numpy()


def fit_model(
    kind: str,
    x: np.ndarray,
    a: np.ndarray,
    y: np.ndarray,
    b: np.ndarray,
    f_star: np.ndarray,
    cost: torch.Tensor | None,
    n_projections: int,
    n_basis: int,
    ridge: float,
    seed: int,
    eps: float | None = None,
    max_iter: int | None = None,
    log=None,
) -> tuple[FittedModel, np.ndarray]:
    """Fit RA-OT (`kind` 'ra': least squares on the ground-truth potentials `f_star`) or OA-OT ('oa': the
    entropic semi-dual with `cost`, `eps` and at most `max_iter` L-BFGS iterations) on training pairs.
    Directions and RBF centres are drawn from `seed`. Returns the model and the OA-OT objective trace (empty
    for RA-OT)."""
    theta = sliced_directions(n_projections, x.shape[2], seed)
    centres, bandwidth = rbf_centres(x, n_basis, seed)
    design = functional_design(x, a, y, b, theta, centres, bandwidth)
    if log is not None:
        log.info("%s: %d pairs, design %s", kind, len(x), design.shape)
    if kind == "ra":
        coef, trace = fit_regression(design, f_star, a, ridge), []
    elif kind == "oa":
        coef, trace = fit_dual(design, a, b, cost, eps, ridge, max_iter)
        if log is not None:
            log.info("OA-OT semi-dual: %.6f -> %.6f in %d evaluations", trace[0], trace[-1], len(trace))
    else:
        raise ValueError(f"unknown fitted model {kind!r}; choose 'ra' or 'oa'")
    return FittedModel(theta, centres, bandwidth, coef), np.asarray(trace)
