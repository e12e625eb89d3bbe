"""The NLHF equilibrium solver: brute force on 2-3 candidates, the maximal-lottery limit, certificates, failure."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq

from neurips26.posttrain_voting.nlhf import NLHFNotConverged, duality_gap, nlhf_equilibrium
from neurips26.posttrain_voting.profiles import coval_like, pairwise_matrix
from neurips26.posttrain_voting.rules import maximal_lottery


def test_two_candidates_against_scalar_root():
    """m=2: pi_A = sigmoid(log(ref_A/ref_B) + (P_AB - 1/2)(pi_A + pi_B... )/beta) reduces to one equation in pi_A."""
    P = np.array([[0.5, 0.7], [0.3, 0.5]])
    ref = np.array([0.3, 0.7])
    beta = 0.2

    def f(p):  # fixed point: logit pi_A = logit ref_A + ((Q pi)_A - (Q pi)_B) / beta, Q pi = 0.2 (1-p, -p)
        return np.log(p / (1 - p)) - np.log(0.3 / 0.7) - 0.2 * ((1 - p) + p) / beta

    p = brentq(f, 1e-9, 1 - 1e-9, xtol=1e-14)
    assert nlhf_equilibrium(P, ref, beta).policy[0] == pytest.approx(p, abs=1e-10)


def test_three_candidates_against_grid_maximin():
    """Brute force: the equilibrium maximises -gap over a 1/400 grid of the simplex (gap >= 0, zero only there)."""
    P = np.array([[0.5, 0.8, 0.3], [0.2, 0.5, 0.65], [0.7, 0.35, 0.5]])
    ref = np.array([0.5, 0.2, 0.3])
    beta = 0.15
    k = 400
    i, j = np.meshgrid(np.arange(1, k), np.arange(1, k), indexing="ij")
    keep = i + j < k
    grid = np.stack([i[keep], j[keep], k - i[keep] - j[keep]], -1) / k
    gaps = duality_gap(grid, np.broadcast_to(P - 0.5, (len(grid), 3, 3)), np.log(ref), beta)
    best = grid[np.argmin(gaps)]
    res = nlhf_equilibrium(P, ref, beta)
    assert np.abs(res.policy - best).max() <= 1.5 / k
    assert res.gap < 1e-12 and res.distance_bound < 1e-5


def test_small_beta_approaches_maximal_lottery():
    rng = np.random.default_rng(2)
    P = np.stack([pairwise_matrix(coval_like(rng, n=17)) for _ in range(20)])
    ref = rng.dirichlet(np.ones(4) * 2, size=20)
    ml = maximal_lottery(P)
    errs = [np.abs(nlhf_equilibrium(P, ref, b).policy - ml).max() for b in (1e-2, 1e-3, 1e-4)]
    assert errs[2] < 1e-2 and errs[0] > errs[1] > errs[2]


def test_large_beta_returns_the_reference_and_solvers_agree():
    rng = np.random.default_rng(3)
    P = np.stack([pairwise_matrix(coval_like(rng)) for _ in range(5)])
    ref = rng.dirichlet(np.ones(4), size=5)
    assert np.abs(nlhf_equilibrium(P, ref, 1e4).policy - ref).max() < 1e-4
    newton = nlhf_equilibrium(P, ref, 0.3).policy
    eg = nlhf_equilibrium(P, ref, 0.3, solver="extragradient", max_iter=5000).policy
    assert np.abs(newton - eg).max() < 1e-9


def test_gap_is_positive_off_equilibrium():
    P = np.array([[0.5, 0.8], [0.2, 0.5]])
    ref = np.array([0.5, 0.5])
    assert duality_gap(np.array([0.5, 0.5]), P - 0.5, np.log(ref), 0.1) > 1e-3


def test_unconverged_solver_raises_named_error_or_flags():
    P = np.array([[0.5, 0.8, 0.3], [0.2, 0.5, 0.65], [0.7, 0.35, 0.5]])
    ref = np.full(3, 1 / 3)
    with pytest.raises(NLHFNotConverged, match="missed"):
        nlhf_equilibrium(P, ref, 1e-3, solver="extragradient", max_iter=3)
    res = nlhf_equilibrium(P, ref, 1e-3, solver="extragradient", max_iter=3, strict=False)
    assert not res.converged.any() and res.gap.max() > 1e-10
