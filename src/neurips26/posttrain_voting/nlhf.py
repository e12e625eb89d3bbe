r"""The NLHF voting rule: Nash equilibrium of the KL-regularised preference game (Munos et al. 2023).

Game: ``max_pi min_pi' P(pi > pi') - beta KL(pi || ref) + beta KL(pi' || ref)`` with
``P(pi > pi') = pi^T P pi'``. Writing ``Q = P - 1/2`` (antisymmetric, ``pi^T P pi' = 1/2 + pi^T Q pi'``) the
game is symmetric zero-sum, its unique equilibrium is symmetric, and best responses give the fixed point
``pi = softmax(log ref + Q pi / beta)``.

Certificate (our derivation). For a candidate ``pi`` the duality gap of the profile ``(pi, pi)`` is
``gap(pi) = max_x V(x, pi) - min_y V(pi, y) = 2 beta [log sum_y ref(y) exp((Q pi)_y / beta) + KL(pi || ref)]``,
zero exactly at the equilibrium. ``-gap / 2`` is ``beta``-strongly concave in the L1 norm (Pinsker), so
``||pi - pi*||_1 <= sqrt(gap / beta)``: the solver reports this bound.

Solvers (:data:`SOLVERS`):

* ``newton`` (default): damped Newton on the payoff vector ``v = Q pi / beta``, solving
  ``H(v) = v - Q softmax(log ref + v) / beta = 0``. Its Jacobian ``I - Q C / beta`` (``C = diag(s) - s s^T``)
  has eigenvalues ``1 - i mu`` with ``mu`` real (``C^{1/2} Q C^{1/2}`` is antisymmetric), so it is never
  singular and Newton with backtracking on ``||H||^2`` converges. Continuation for small ``beta``: solve at
  ``max(beta, 0.1) / 4^k`` down to ``beta``, each warm-started from the last. Batched over profiles.
* ``extragradient``: entropic mirror-prox with the KL term in the prox step (Nash-MD-like),
  ``log h ∝ (log pi + eta Q pi + eta beta log ref) / (1 + eta beta)``, then the same with ``Q h``; linear rate
  ``1 / (1 + eta beta)``, slow for small ``beta``; kept as an independent cross-check.

Convergence: the fixed-point residual ``||pi - softmax(log ref + Q pi / beta)||_1 <= tol`` (default 1e-10)
and ``gap <= gap_tol`` (default 1e-10). A profile that misses either raises :class:`NLHFNotConverged`
(with ``strict=False`` it is returned flagged in ``converged`` instead, never silently).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp, softmax

from neurips26.common.validation import check_choice, check_int
from neurips26.posttrain_voting.checks import check_beta, check_pairwise, check_reference

STEPS = 0.5 ** np.arange(20)


class NLHFNotConverged(RuntimeError):
    """The NLHF solver missed its residual or duality-gap tolerance on at least one profile."""


@dataclass(frozen=True)
class NLHFResult:
    """Equilibrium ``policy`` (..., m) with its certificate: fixed-point ``residual``, duality ``gap``,
    ``distance_bound = sqrt(gap / beta)`` on ``||policy - pi*||_1``, ``converged`` mask and ``iterations``."""

    policy: np.ndarray
    residual: np.ndarray
    gap: np.ndarray
    distance_bound: np.ndarray
    converged: np.ndarray
    iterations: int


def duality_gap(pi: np.ndarray, Q: np.ndarray, log_ref: np.ndarray, beta: float) -> np.ndarray:
    """``2 beta [log sum ref exp(Q pi / beta) + KL(pi || ref)]`` (>= 0, zero at the equilibrium)."""
    payoff = np.einsum("...ab,...b->...a", Q, pi) / beta
    logpi = np.log(np.clip(pi, 1e-300, None))
    kl = np.where(pi > 0, pi * (logpi - log_ref), 0.0).sum(-1)
    return np.maximum(2 * beta * (logsumexp(log_ref + payoff, axis=-1) + kl), 0.0)


def fixed_point_residual(pi, Q, log_ref, beta) -> np.ndarray:
    """``||pi - softmax(log ref + Q pi / beta)||_1``."""
    best = softmax(log_ref + np.einsum("...ab,...b->...a", Q, pi) / beta, axis=-1)
    return np.abs(pi - best).sum(-1)


def _newton(Q, log_ref, beta, max_iter, tol):
    # continuation: solve at beta_k = max(beta, 0.1) / 4^k down to beta, warm-starting v * beta_prev / beta_k
    ladder = [max(beta, 0.1) / 4.0**k for k in range(40) if max(beta, 0.1) / 4.0**k > beta] + [beta]
    v = np.zeros(log_ref.shape)
    used = 0
    for prev, b in zip([ladder[0]] + ladder[:-1], ladder):
        v, it = _newton_at(Q, log_ref, b, max_iter - used, tol, v * prev / b)
        used += it
    return softmax(log_ref + v, axis=-1), used


def _newton_at(Q, log_ref, beta, max_iter, tol, v):
    m = Q.shape[-1]

    def h(v):
        return v - np.einsum("...ab,...b->...a", Q, softmax(log_ref + v, axis=-1)) / beta

    for it in range(1, max(max_iter, 0) + 1):
        hv = h(v)
        if np.abs(hv).max() < max(tol * 1e-2, 8 * np.finfo(float).eps * (1 + np.abs(v).max())):
            return v, it
        s = softmax(log_ref + v, axis=-1)
        C = s[..., :, None] * np.eye(m) - s[..., :, None] * s[..., None, :]
        J = np.eye(m) - Q @ C / beta
        step = np.linalg.solve(J, -hv[..., None])[..., 0]
        trials = v[None] + STEPS.reshape((-1,) + (1,) * v.ndim) * step[None]
        merit = (h(trials) ** 2).sum(-1)
        better = merit < (hv**2).sum(-1)[None] * (1 - 1e-4 * STEPS.reshape((-1,) + (1,) * (v.ndim - 1)))
        first = np.where(better.any(0), better.argmax(0), len(STEPS) - 1)
        v = np.take_along_axis(trials, first[None, ..., None], axis=0)[0]
    return v, max(max_iter, 0)


def _extragradient(Q, log_ref, beta, max_iter, tol, eta: float = 1.0):
    logpi = log_ref.copy()
    for it in range(1, max_iter + 1):
        pi = np.exp(logpi)
        logh = (logpi + eta * np.einsum("...ab,...b->...a", Q, pi) + eta * beta * log_ref) / (1 + eta * beta)
        logh -= logsumexp(logh, axis=-1, keepdims=True)
        new = (logpi + eta * np.einsum("...ab,...b->...a", Q, np.exp(logh)) + eta * beta * log_ref) / (1 + eta * beta)
        new -= logsumexp(new, axis=-1, keepdims=True)
        if np.abs(np.exp(new) - pi).sum(-1).max() < tol * 1e-2:
            return np.exp(new), it
        logpi = new
    return np.exp(logpi), max_iter


SOLVERS = {"newton": _newton, "extragradient": _extragradient}


def nlhf_equilibrium(
    P,
    ref,
    beta: float,
    solver: str = "newton",
    tol: float = 1e-10,
    gap_tol: float = 1e-10,
    max_iter: int = 200,
    strict: bool = True,
) -> NLHFResult:
    """The regularised Nash equilibrium for pairwise matrices ``P`` (..., m, m) and references (..., m)."""
    P = check_pairwise(P, "nlhf")
    ref = check_reference(ref, P.shape[-1], "nlhf")
    beta = check_beta(beta, "nlhf")
    check_choice("solver", solver, SOLVERS, who="nlhf")
    check_int("max_iter", max_iter, 1, who="nlhf")
    shape = np.broadcast_shapes(P.shape[:-1], ref.shape)
    Q = np.broadcast_to(P - 0.5, shape + (shape[-1],))
    log_ref = np.broadcast_to(np.log(ref), shape)
    pi, iterations = SOLVERS[solver](Q, log_ref, beta, max_iter, tol)
    residual = fixed_point_residual(pi, Q, log_ref, beta)
    gap = duality_gap(pi, Q, log_ref, beta)
    converged = (residual <= tol) & (gap <= gap_tol)
    if strict and not converged.all():
        bad = np.flatnonzero(~converged.reshape(-1))
        raise NLHFNotConverged(
            f"nlhf ({solver}, beta={beta:g}) missed tol={tol:g}/gap_tol={gap_tol:g} on {bad.size} profile(s) "
            f"after {iterations} iterations: worst residual {residual.max():.2e}, worst gap {gap.max():.2e}"
        )
    return NLHFResult(pi, residual, gap, np.sqrt(gap / beta), converged, iterations)
