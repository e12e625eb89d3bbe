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

Measured (numerical, not a proof): for the unanimous 3-cycle (``x = y = z = 1/2``) the threshold maximised
over references is 0.375 = 3/8, approached as ``ref(B) -> 0`` with ``ref(A) / ref(C) ≈ 3.79``; random
search over 20,000 pairwise matrices and Dirichlet(0.3) references for m = 3 and m = 4 found negative
sensitivities at beta = 0.35 and none at beta >= 0.4. With a uniform reference the 3-cycle family's
threshold is below 0.2.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq, minimize
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
        return float(grid[-1])  # still negative at the top of the grid
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
