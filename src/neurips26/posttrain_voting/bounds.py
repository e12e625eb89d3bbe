r"""The regularisation bound below which NLHF violates monotonicity, computed numerically.

No closed form is derived here. What we derive: at the equilibrium ``pi = softmax(log ref + Q pi / beta)``
(:mod:`nlhf`), raising ``P[a, b]`` by ``d`` (and lowering ``P[b, a]``; a lift of ``a`` over ``b`` by a voter
of weight ``d``) moves the policy by ``d pi = (beta I - C Q)^{-1} C (E_ab - E_ba) pi d`` with
``C = diag(pi) - pi pi^T`` (implicit differentiation; the matrix is invertible because ``C Q`` has a purely
imaginary spectrum). Monotonicity at the margin needs ``d pi_a >= 0``. For large ``beta``,
``d pi_a ≈ pi_a pi_b d / beta > 0``, so violations live at small ``beta``.

* :func:`lift_sensitivity`: ``d pi_a / d P[a, b]`` for a batch of profiles, references and pairs.
* :func:`sensitivity_threshold`: the largest ``beta`` on a log grid with a negative sensitivity, refined by
  bisection (the *infinitesimal* threshold of one profile, reference and pair).
* :func:`discrete_threshold`: the same for a concrete one-voter lift (:func:`axioms.check_monotonicity`),
  the *empirical* threshold a search can observe.
* :func:`cycle_family_bound`: the maximum of the infinitesimal threshold over the witness family of 3-cycles
  ``P[A,B] = 1/2 + x, P[B,C] = 1/2 + y, P[C,A] = 1/2 + z`` with a uniform reference, lifting ``A`` over ``B``
  (the ML analysis: in a cycle, strengthening ``A > B`` moves maximal-lottery mass from ``A`` to ``C``).
* :func:`max_threshold_over_reference`: the threshold maximised over the reference for one ``P``.
* :func:`realisable_bound`: the bound itself. ``P`` ranges over the pairwise matrices a profile can produce (the
  convex hull of the ``m!`` strict rankings' matrices: weights on the rankings, never a free matrix) and the
  reference over the simplex; at each beta the scale-free sensitivity ``beta (d pi_a / d P[a, b]) / (pi_a pi_b)``
  (-> 1 as beta grows) is minimised by batched finite-difference Adam from random starts, and the bound is the
  largest beta at which the minimum is negative (a wide log grid, then bisection). Hitting the grid's top raises.
* :func:`is_realisable`: whether a pairwise matrix is a mixture of strict rankings (a linear program).
* :func:`directed_search`: the discrete one-voter lift's certified NLHF drop maximised over the reference
  (Nelder-Mead) and the profile's counts (one-voter moves), from the bound's witness.

Measured (numerical, not a proof): over realisable matrices the minimum of the scale-free sensitivity is
``1 - 1/(8 beta)`` for m = 3 and m = 4, so the bound is 1/8. An earlier version maximised over the free matrix
``cycle_pairwise(1/2, 1/2, 1/2)``, which no profile produces (every voter would rank A>B, B>C and C>A), and got 3/8.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq, linprog, minimize
from scipy.special import softmax

from neurips26.posttrain_voting.axioms import check_monotonicity
from neurips26.posttrain_voting.nlhf import nlhf_equilibrium
from neurips26.posttrain_voting.profiles import Profile
from neurips26.posttrain_voting.rules import RULES

BETA_GRID = np.geomspace(1e-4, 10.0, 61)


def lift_sensitivity(P, ref, beta: float, a: int, b: int) -> np.ndarray:
    """``d pi_a / d P[a, b]`` at the NLHF equilibrium (batched over leading dimensions of ``P`` and ``ref``)."""
    pi = nlhf_equilibrium(P, ref, beta).policy
    m = pi.shape[-1]
    Q = np.asarray(P, float) - 0.5
    C = pi[..., :, None] * np.eye(m) - pi[..., :, None] * pi[..., None, :]
    dQ_pi = np.zeros_like(pi)
    dQ_pi[..., a] = pi[..., b]
    dQ_pi[..., b] = -pi[..., a]
    rhs = np.einsum("...ij,...j->...i", C, dQ_pi)
    dpi = np.linalg.solve(beta * np.eye(m) - C @ Q, rhs[..., None])[..., 0]
    return dpi[..., a]


def _last_crossing(values: np.ndarray, grid: np.ndarray, fn) -> float:
    """Largest root of ``fn`` where ``values`` (``fn`` on ``grid``) turn from negative to >= 0; 0 if never negative."""
    neg = np.flatnonzero(values < 0)
    if neg.size == 0:
        return 0.0
    k = neg[-1]
    if k == len(grid) - 1:
        raise ValueError(f"still negative at the top of the beta grid ({grid[-1]:g}): widen the grid")
    return float(brentq(fn, grid[k], grid[k + 1], xtol=1e-12, rtol=1e-10))


def sensitivity_threshold(P, ref, a: int, b: int, grid: np.ndarray = BETA_GRID) -> float:
    """Largest ``beta`` with ``d pi_a / d P[a, b] < 0`` (0.0 when non-negative on the whole grid)."""
    values = np.array([lift_sensitivity(P, ref, g, a, b) for g in grid])
    return _last_crossing(values, grid, lambda g: float(lift_sensitivity(P, ref, g, a, b)))


def discrete_threshold(profile: Profile, ref, grid: np.ndarray = BETA_GRID, tol: float = 0.0) -> float:
    """Largest ``beta`` at which some one-voter lift in ``profile`` lowers the lifted candidate's NLHF probability."""
    rule = RULES["nlhf"]

    def margin(g):
        return check_monotonicity(rule, profile, ref, g, tol=tol).margin - tol

    values = np.array([margin(g) for g in grid])
    return _last_crossing(-values, grid, lambda g: -margin(g))


def cycle_pairwise(x: float, y: float, z: float) -> np.ndarray:
    """3-cycle ``A > B > C > A`` with margins ``x, y, z`` in (0, 1/2]: ``P[A,B] = 1/2 + x`` etc."""
    return np.array([[0.5, 0.5 + x, 0.5 - z], [0.5 - x, 0.5, 0.5 + y], [0.5 + z, 0.5 - y, 0.5]])


def cycle_family_bound(n_grid: int = 12) -> tuple[float, tuple[float, float, float]]:
    """Max over margins ``x, y, z`` on a grid in (0, 1/2] of the threshold for lifting A over B, uniform ref."""
    margins = np.linspace(0.5 / n_grid, 0.5, n_grid)
    ref = np.full(3, 1 / 3)
    best = (0.0, (0.0, 0.0, 0.0))
    for x in margins:
        for y in margins:
            for z in margins:
                t = sensitivity_threshold(cycle_pairwise(x, y, z), ref, 0, 1)
                if t > best[0]:
                    best = (t, (float(x), float(y), float(z)))
    return best


def max_threshold_over_reference(
    P, a: int, b: int, starts: np.ndarray, grid: np.ndarray = BETA_GRID, max_iter: int = 200
) -> tuple[float, np.ndarray]:
    """Maximise :func:`sensitivity_threshold` over the reference (Nelder-Mead on logits, last logit fixed at 0)
    from each row of ``starts`` (shape (k, m - 1)); returns the best threshold and its reference."""
    P = np.asarray(P, float)

    def negative(z):
        return -sensitivity_threshold(P, softmax(np.r_[z, 0.0]), a, b, grid)

    runs = [minimize(negative, z0, method="Nelder-Mead", options={"maxiter": max_iter}) for z0 in np.atleast_2d(starts)]
    best = min(runs, key=lambda r: r.fun)
    return float(-best.fun), softmax(np.r_[best.x, 0.0])


# ---------------------------------------------------------------- the bound over realisable profiles

LOGIT_LIMIT = 12.0  # logits of ranking weights and reference are squashed into [-12, 12] (weights >= ~e-24)


def ranking_matrices(m: int) -> np.ndarray:
    """The pairwise matrices of the ``m!`` strict rankings, shape (m!, m, m)."""
    from neurips26.posttrain_voting.axioms import _prefer
    from neurips26.posttrain_voting.profiles import all_strict_rankings

    return _prefer(all_strict_rankings(m)).astype(float)


def _unpack(z: np.ndarray, W: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Parameters (..., m! + m - 1) -> (P, ref, ranking weights)."""
    k = W.shape[0]
    z = LOGIT_LIMIT * np.tanh(z / LOGIT_LIMIT)
    w = softmax(z[..., :k], axis=-1)
    P = np.nan_to_num(np.clip(np.einsum("...k,kab->...ab", w, W), 0.0, 1.0), nan=0.5)
    ref = softmax(np.concatenate([z[..., k:], np.zeros(z.shape[:-1] + (1,))], -1), axis=-1)
    return P, ref, w


def scaled_sensitivity(P, ref, beta: float, a: int = 0, b: int = 1) -> np.ndarray:
    """``beta (d pi_a / d P[a, b]) / (pi_a pi_b)``: the sign of :func:`lift_sensitivity`, free of the vanishing scale
    ``pi_a pi_b`` (it tends to 1 as beta grows)."""
    pi = nlhf_equilibrium(P, ref, beta).policy
    return beta * lift_sensitivity(P, ref, beta, a, b) / (pi[..., a] * pi[..., b])


def _finite(f: np.ndarray) -> np.ndarray:
    return np.where(np.isfinite(f), f, 1e3)  # an underflowed pi_a pi_b (NaN) is no evidence of a violation


def min_sensitivity(W: np.ndarray, beta: float, starts: np.ndarray, steps: int, lr: float = 0.3, h: float = 1e-4):
    """Minimise :func:`scaled_sensitivity` over ranking weights and reference (batched finite-difference Adam from
    every row of ``starts``); returns (minimum, its parameters)."""
    z = np.array(starts, float)
    d = z.shape[-1]
    mom, var = np.zeros_like(z), np.zeros_like(z)
    shifts = np.eye(d) * h
    for t in range(1, steps + 1):
        points = np.concatenate([z[:, None, :], z[:, None, :] + shifts[None]], 1)
        f = _finite(scaled_sensitivity(*_unpack(points, W)[:2], beta))
        g = (f[:, 1:] - f[:, :1]) / h
        mom, var = 0.9 * mom + 0.1 * g, 0.999 * var + 0.001 * g * g
        z = z - lr * (mom / (1 - 0.9**t)) / (np.sqrt(var / (1 - 0.999**t)) + 1e-8)
    f = _finite(scaled_sensitivity(*_unpack(z, W)[:2], beta))
    i = int(np.argmin(f))
    return float(f[i]), z[i]


def realisable_bound(m: int, rng: np.random.Generator, starts: int, steps: int, grid: np.ndarray, bisect: int):
    """The largest beta at which some realisable ``P`` and reference give a negative lift sensitivity (module
    docstring): the last negative point of ``grid``, then ``bisect`` halvings. Returns (bound, witness dict with
    the ranking weights, ``P`` and reference at the largest negative beta found). Raises when the top of the grid
    is still negative."""
    W = ranking_matrices(m)
    z0 = rng.normal(0.0, 2.0, (starts, W.shape[0] + m - 1))
    grid = np.sort(np.asarray(grid, float))
    found = None
    for k in range(len(grid) - 1, -1, -1):  # from the top: the first negative point is the last crossing
        v, z = min_sensitivity(W, float(grid[k]), z0, steps)
        if v < 0:
            found = (k, z)
            break
    if found is None:
        return 0.0, {}
    k, best = found
    if k == len(grid) - 1:
        raise ValueError(f"realisable_bound: still negative at the top of the beta grid ({grid[-1]:g}): widen it")
    low, high = float(grid[k]), float(grid[k + 1])
    for _ in range(bisect):
        mid = float(np.sqrt(low * high))
        v, z = min_sensitivity(W, mid, z0, steps)
        if v < 0:
            low, best = mid, z
        else:
            high = mid
    P, ref, w = _unpack(best, W)
    return low, {"m": m, "weights": w.tolist(), "P": P.tolist(), "ref": ref.tolist(), "beta": low, "upper": high}


def is_realisable(P, tol: float = 1e-9) -> bool:
    """Whether ``P`` is a mixture of strict rankings' pairwise matrices (linear feasibility, to ``tol``)."""
    P = np.asarray(P, float)
    W = ranking_matrices(P.shape[-1])
    k = W.shape[0]
    off = ~np.eye(P.shape[-1], dtype=bool)
    A = W[:, off].T  # (pairs, k)
    # minimise the L1 residual of sum_k w_k W_k = P with sum w = 1, w >= 0
    n = A.shape[0]
    c = np.r_[np.zeros(k), np.ones(2 * n)]
    A_eq = np.r_[np.c_[A, np.eye(n), -np.eye(n)], np.r_[np.ones(k), np.zeros(2 * n)][None]]
    res = linprog(c, A_eq=A_eq, b_eq=np.r_[P[off], 1.0], bounds=[(0, None)] * (k + 2 * n), method="highs")
    return bool(res.status == 0 and res.fun <= tol)


def _certified_drop(profile: Profile, ref, beta: float, tol: float) -> float:
    return check_monotonicity(RULES["nlhf"], profile, ref, beta, tol=tol).margin


def directed_search(starts: list[Profile], refs, beta: float, max_iter: int, moves: int, tol: float):
    """Maximise the certified NLHF monotonicity drop (:func:`axioms.check_monotonicity`) at ``beta`` over the
    reference (Nelder-Mead on its logits, floored at 1e-9) and the counts (``moves`` rounds of adding or removing one
    voter of one ranking, kept when the drop grows), from each profile of ``starts`` and each reference of ``refs``.
    Returns (best certified drop, its profile, its reference)."""

    def ref_of(z):
        r = softmax(np.r_[LOGIT_LIMIT * np.tanh(z / LOGIT_LIMIT), 0.0]) + 1e-9
        return r / r.sum()

    best = (-np.inf, None, None)
    for profile, ref0 in [(p, r) for p in starts for r in np.atleast_2d(refs)]:
        z = np.log(np.clip(np.asarray(ref0, float), 1e-9, None))
        z = z[:-1] - z[-1]
        for _ in range(max(moves, 0) + 1):
            res = minimize(lambda x, p=profile: -_certified_drop(p, ref_of(x), beta, tol), z, method="Nelder-Mead",
                           options={"maxiter": max_iter, "xatol": 1e-6, "fatol": 1e-14})  # fmt: skip
            z, value = res.x, -res.fun
            if value > best[0]:
                best = (value, profile, ref_of(z))
            if moves <= 0:
                break
            improved, current = False, profile
            for k in range(len(current.counts)):
                for step in (1.0, -1.0):
                    counts = current.counts.copy()
                    counts[k] += step
                    if counts[k] < 0 or counts.sum() < 2:
                        continue
                    keep = counts > 0
                    other = Profile(current.levels[keep], counts[keep])
                    v = _certified_drop(other, ref_of(z), beta, tol)
                    if v > value:
                        profile, value, improved = other, v, True
            if not improved:
                break
    return best
