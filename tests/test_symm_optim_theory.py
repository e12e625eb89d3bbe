"""Symmetry checks of the symm_optim update directions in float64 (the paper's Section 3; checks S1-S3)."""

from __future__ import annotations

import pytest
import torch

from neurips26.symm_optim import theory
from neurips26.symm_optim.directions import muon_direction, newton_schulz, polar, right_polar_direction

GROUPS = ("left_perm", "right_perm", "left_orth", "right_orth", "shift")


@pytest.fixture(scope="module")
def table():
    return theory.equivariance_table(seed=0)


def test_table_covers_every_direction_and_group(table):
    assert len(table) == len(theory.DIRECTIONS) * len(GROUPS)
    assert {r["optimizer"] for r in table} == set(theory.DIRECTIONS)


def test_expected_symmetries_hold_to_1e10(table):
    bad = [r for r in table if r["expected"] and not r["rel_err"] < 1e-10]
    assert not bad, bad


def test_broken_symmetries_deviate(table):
    bad = [r for r in table if not r["expected"] and not r["rel_err"] > 1e-3]
    assert not bad, bad


@pytest.mark.parametrize("name", ["adam", "sign"])
@pytest.mark.parametrize("group", ["left_orth", "right_orth"])
def test_coordinatewise_updates_break_orthogonal_equivariance(name, group):
    gen = torch.Generator().manual_seed(3)
    m = torch.randn(16, 6, generator=gen, dtype=torch.float64)
    assert theory.equivariance_error(theory.DIRECTIONS[name], m, group, gen) > 0.3  # claim S2


def test_hybrid_is_not_left_orthogonal_equivariant():
    gen = torch.Generator().manual_seed(4)
    m = torch.randn(32, 8, generator=gen, dtype=torch.float64)
    assert theory.equivariance_error(theory.DIRECTIONS["hybrid"], m, "left_orth", gen) > 1e-2
    assert theory.equivariance_error(theory.DIRECTIONS["hybrid"], m, "right_orth", gen) < 1e-10


def test_repo_nu_breaks_right_rotations_but_trace_nu_does_not():
    gen = torch.Generator().manual_seed(5)
    m = torch.randn(20, 6, generator=gen, dtype=torch.float64)
    assert theory.equivariance_error(right_polar_direction, m, "right_orth", gen) < 1e-10
    assert theory.equivariance_error(theory.DIRECTIONS["right_polar_repo_nu"], m, "right_orth", gen) > 1e-3


def test_newton_schulz_is_equivariant_and_approximately_polar():
    gen = torch.Generator().manual_seed(6)
    m = torch.randn(12, 20, generator=gen, dtype=torch.float64)
    for group in ("left_orth", "right_orth"):
        assert theory.equivariance_error(newton_schulz, m, group, gen) < 1e-10
    sv = torch.linalg.svdvals(newton_schulz(m))
    assert float(sv.min()) > 0.5 and float(sv.max()) < 1.5  # NS is approximate, not exact
    assert theory.relative_deviation(newton_schulz(m), polar(m)) < 0.5
    # Muon's tall-matrix scale
    tall = m.T.contiguous()
    assert torch.allclose(muon_direction(tall, exact=True), polar(tall) * (20 / 12) ** 0.5)


def test_diagonal_lifting_identity_and_adam_limit():
    gen = torch.Generator().manual_seed(7)
    g = torch.randn(6, 4, generator=gen, dtype=torch.float64)
    assert theory.diagonal_lifting_error(g) < 1e-12  # claim S3
    assert theory.adam_sign_limit_error(g) == 0.0
    assert theory.polar_singular_value_error(polar, g) < 1e-6
    with pytest.raises(ValueError, match="zero entries"):
        theory.diagonal_lifting_error(torch.zeros(2, 2, dtype=torch.float64))


def test_checks_refuse_non_float64_or_non_matrix():
    gen = torch.Generator().manual_seed(0)
    with pytest.raises(ValueError, match="float64"):
        theory.equivariance_error(polar, torch.randn(3, 3), "left_orth", gen)
    with pytest.raises(ValueError, match="2-D"):
        theory.diagonal_lifting_error(torch.randn(3, dtype=torch.float64))
    with pytest.raises(ValueError, match="group"):
        theory.equivariance_error(polar, torch.randn(3, 3, dtype=torch.float64), "rotation", gen)


def test_random_group_elements_are_orthogonal():
    gen = torch.Generator().manual_seed(8)
    q = theory.random_orthogonal(7, gen)
    p = theory.random_permutation(7, gen)
    eye = torch.eye(7, dtype=torch.float64)
    assert torch.allclose(q @ q.T, eye, atol=1e-12)
    assert torch.equal(p @ p.T, eye) and torch.equal(p.sum(0), torch.ones(7, dtype=torch.float64))
