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

Both fits see the training pairs a block at a time (PairFeatures): at paper scale the design matrix of
all pairs (5,000 digit pairs x 784 atoms x 16,416 columns at L = 512: 515 GB) and their cost matrices (17 to 64 GB)
cannot be held at once. RA-OT accumulates the normal equations block by block; OA-OT sums the semi-dual and its
gradient over the blocks at every L-BFGS evaluation, from the features (RBF basis and sliced potentials) without the
design matrix (f = rho c_0 + sum_k rho_k phi B_k).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from neurips26.amortized_ot.costs import cost_matrix
from neurips26.amortized_ot.measures import MeasureError, check_positive
from neurips26.amortized_ot.sinkhorn import aligned_blocks, c_transform, chunks, plan, semi_dual
from neurips26.amortized_ot.sliced import directions as sliced_directions
from neurips26.amortized_ot.sliced import sliced_potentials
from neurips26.common import loop

# prediction builds the design matrix of at most this many entries at a time (a cache-sized block)
DESIGN_ENTRIES = 2**17
# the fits take the training pairs in blocks of at most this many entries of design matrix or of cost matrix (512 MB
# of float64; paper scale: 5 digit pairs at L = 512, 8 sphere pairs at L = 128), as the ground truth does
FIT_ENTRIES = 2**26
# OA-OT holds the features and cost matrices of all training pairs in memory up to this many entries (2 GB of
# float64: every quick-scale fit); beyond, each block's features are written once to a temporary folder and read
# back at every evaluation, and its cost matrix is rebuilt (computing the sliced potentials again would cost ~50x
# the objective)
FEATURE_CACHE_ENTRIES = 2**28


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


def normal_equations(design: np.ndarray, f_star: np.ndarray, a: np.ndarray, n_pairs: int):
    """Gram matrix D^T W D and right-hand side D^T W f* of RA-OT's least squares over the pairs of `design`, with
    weights a_pj / n_pairs (n_pairs: the pairs of the whole fit, so that blocks of pairs add up)."""
    flat = design.reshape(-1, design.shape[-1])
    w = a.reshape(-1) / n_pairs
    return flat.T @ (flat * w[:, None]), flat.T @ (w * f_star.reshape(-1))


def solve_ridge(gram: np.ndarray, rhs: np.ndarray, ridge: float) -> np.ndarray:
    """argmin_B of the least squares whose normal equations are (gram, rhs), plus ridge * mean diag(gram) |B|^2.
    The ridge is added to the diagonal in place (`gram` is overwritten): no second gram-sized array (2.2 GB at
    L = 512), the same numbers as adding ridge * scale * I."""
    scale = np.trace(gram) / len(gram)
    gram.flat[:: len(gram) + 1] += ridge * scale
    return np.linalg.solve(gram, rhs)


def fit_regression(design: np.ndarray, f_star: np.ndarray, a: np.ndarray, ridge: float) -> np.ndarray:
    """RA-OT: argmin_B mean_p sum_j a_pj (f*_pj - D_pj B)^2 + ridge |B|^2 (closed form)."""
    if ridge < 0:
        raise MeasureError(f"ridge must be >= 0, got {ridge}")
    return solve_ridge(*normal_equations(design, f_star, a, design.shape[0]), ridge)


@dataclass(frozen=True)
class PairFeatures:
    """Training pairs (x, a) -> (y, b) and the functional model's directions and RBFs: the features rho(x) (P, n, K)
    and phi (P, n, L), and so the design matrix, of one block of pairs at a time: at most `budget` entries of design
    matrix (n x K (L + 1) per pair) or of cost matrix (n x m), in whole chunks of the OA-OT objective
    (sinkhorn.aligned_blocks)."""

    x: np.ndarray
    a: np.ndarray
    y: np.ndarray
    b: np.ndarray
    theta: np.ndarray
    centres: np.ndarray
    bandwidth: float
    budget: int = FIT_ENTRIES

    @property
    def width(self) -> int:
        """Columns of the design matrix, K (L + 1)."""
        return len(self.centres) * (len(self.theta) + 1)

    @property
    def blocks(self) -> list[slice]:
        return aligned_blocks(len(self.x), self.x.shape[1], self.y.shape[1], self.budget, self.width)

    def features(self, part: slice) -> tuple[np.ndarray, np.ndarray]:
        """rho(x) and the sliced potentials phi of the pairs `part`."""
        phi, _ = sliced_potentials(self.x[part], self.a[part], self.y[part], self.b[part], self.theta)
        return rbf_basis(self.x[part], self.centres, self.bandwidth), phi

    def __iter__(self) -> Iterator[tuple[slice, np.ndarray, np.ndarray]]:
        for part in self.blocks:
            yield (part, *self.features(part))


def fit_regression_blocks(features: PairFeatures, f_star: np.ndarray, ridge: float) -> np.ndarray:
    """fit_regression on the design of `features`, its normal equations accumulated a block of pairs at a time:
    memory is the K (L + 1) square Gram matrix and one block, whatever the number of pairs; the same coefficients
    to rounding (the sums over pairs are grouped by block)."""
    if ridge < 0:
        raise MeasureError(f"ridge must be >= 0, got {ridge}")
    gram = rhs = None
    for part, basis, phi in features:
        block = normal_equations(design_matrix(basis, phi), f_star[part], features.a[part], len(features.a))
        if gram is None:
            gram, rhs = block
        else:
            gram += block[0]
            rhs += block[1]
    return solve_ridge(gram, rhs, ridge)


def functional_f(basis: torch.Tensor, phi: torch.Tensor, coef: torch.Tensor) -> torch.Tensor:
    """design_matrix(basis, phi) @ coef without the design matrix: rho c_0 + sum_k rho_k (phi B_k), where
    coef = [c_0 (K), B (K x L, row-major)] in design_matrix's column order."""
    K = basis.shape[-1]
    return basis @ coef[:K] + ((phi @ coef[K:].reshape(K, -1).T) * basis).sum(-1)


class _BlockStore:
    """The features and cost matrix of every block of `features`, kept in memory, or (`folder`) the features saved
    to a folder once and read back, and the cost matrices rebuilt, one block at a time."""

    def __init__(self, features: PairFeatures, cost_kind: str, folder: str | None):
        self.features, self.cost_kind, self.folder, self.kept = features, cost_kind, folder, []
        # the sum of the squared design entries, sum_k rho_k^2 (1 + |phi|^2) per atom, chunk by chunk (for the
        # ridge's scale: the same sum whatever the blocks)
        self.squares = 0.0
        for i, (part, basis, phi) in enumerate(features):
            for sub in chunks(len(basis), basis.shape[1], features.y.shape[1]):
                self.squares += float(((basis[sub] ** 2).sum(-1) * (1 + (phi[sub] ** 2).sum(-1))).sum())
            if folder is None:
                self.kept.append((basis, phi, self._cost(part)))
            else:
                np.save(Path(folder) / f"basis_{i}.npy", basis)
                np.save(Path(folder) / f"phi_{i}.npy", phi)

    def _cost(self, part: slice) -> torch.Tensor:
        return cost_matrix(self.features.x[part], self.features.y[part], self.cost_kind)

    def __iter__(self) -> Iterator[tuple[slice, np.ndarray, np.ndarray, torch.Tensor]]:
        for i, part in enumerate(self.features.blocks):
            if self.folder is None:
                yield (part, *self.kept[i])
            else:
                folder = Path(self.folder)
                yield part, np.load(folder / f"basis_{i}.npy"), np.load(folder / f"phi_{i}.npy"), self._cost(part)


def fit_dual(
    features: PairFeatures,
    cost_kind: str,
    eps: float,
    ridge: float,
    max_iter: int,
    init: np.ndarray | None = None,
    cache_entries: int = FEATURE_CACHE_ENTRIES,
) -> tuple[np.ndarray, list[float]]:
    """OA-OT: maximise mean_p D_eps(f_p, c-transform(f_p)) - ridge |B|^2 with L-BFGS, f_p = D_p B the functional
    model on the pairs of `features`, with the ground cost `cost_kind`.

    Needs no ground-truth potentials. Returns the coefficients (on the CPU) and the objective per outer step.
    The solve runs on the job's device (loop.job_device()). Every evaluation sums the semi-dual and its gradient
    over the blocks of pairs (PairFeatures.blocks) and, inside each, over cache-sized chunks; the features and costs
    are held in memory if they have at most `cache_entries` entries in all, else a block at a time (_BlockStore):
    the same chunks in the same order either way, so the same numbers.
    """
    check_positive(eps, "eps")
    if ridge < 0:
        raise MeasureError(f"ridge must be >= 0, got {ridge}")
    P, n, m = len(features.x), features.x.shape[1], features.y.shape[1]
    in_memory = P * n * (len(features.centres) + len(features.theta) + m) <= cache_entries
    with tempfile.TemporaryDirectory(prefix="oa_ot_features_") as folder:
        store = _BlockStore(features, cost_kind, None if in_memory else folder)
        return _lbfgs_semi_dual(store, eps, ridge, max_iter, init)


def _lbfgs_semi_dual(store: _BlockStore, eps, ridge, max_iter, init) -> tuple[np.ndarray, list[float]]:
    features = store.features
    P = len(features.x)
    device = loop.job_device()
    scale = store.squares / (P * features.x.shape[1] * features.width)  # the mean squared design entry
    start = np.zeros(features.width) if init is None else init
    coef = torch.tensor(start, dtype=torch.float64, device=device, requires_grad=True)
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
        for part, basis, phi, cost in store:
            a, b = features.a[part], features.b[part]
            for sub in chunks(*cost.shape):
                basis_t, phi_t, a_t, b_t = (torch.as_tensor(v[sub]).to(device) for v in (basis, phi, a, b))
                f = functional_f(basis_t, phi_t, coef)
                chunk_loss = -semi_dual(f, a_t, b_t, cost[sub].to(device), eps).sum() / P
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
    cost_kind: str | None,
    n_projections: int,
    n_basis: int,
    ridge: float,
    seed: int,
    eps: float | None = None,
    max_iter: int | None = None,
    log=None,
    budget: int = FIT_ENTRIES,
) -> tuple[FittedModel, np.ndarray]:
    """Fit RA-OT (`kind` 'ra': least squares on the ground-truth potentials `f_star`) or OA-OT ('oa': the
    entropic semi-dual with the ground cost `cost_kind`, `eps` and at most `max_iter` L-BFGS iterations) on training
    pairs, a block of at most `budget` design or cost entries at a time. Directions and RBF centres are drawn from
    `seed`. Returns the model and the OA-OT objective trace (empty for RA-OT)."""
    theta = sliced_directions(n_projections, x.shape[2], seed)
    centres, bandwidth = rbf_centres(x, n_basis, seed)
    features = PairFeatures(x, a, y, b, theta, centres, bandwidth, budget)
    if log is not None:
        log.info(
            "%s: %d pairs of %d atoms, %d design columns, %d blocks",
            kind,
            len(x),
            x.shape[1],
            features.width,
            len(features.blocks),
        )
    if kind == "ra":
        coef, trace = fit_regression_blocks(features, f_star, ridge), []
    elif kind == "oa":
        coef, trace = fit_dual(features, cost_kind, eps, ridge, max_iter)
        if log is not None:
            log.info("OA-OT semi-dual: %.6f -> %.6f in %d evaluations", trace[0], trace[-1], len(trace))
    else:
        raise ValueError(f"unknown fitted model {kind!r}; choose 'ra' or 'oa'")
    return FittedModel(theta, centres, bandwidth, coef), np.asarray(trace)
