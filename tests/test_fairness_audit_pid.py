"""Paper 06: the Williams-Beer I_min decomposition against the classic hand-computed gates (XOR, AND, COPY, a
redundant bit, a unique bit) and its identities on random tables."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.fairness_audit.pid import (
    imin_redundancy,
    joint_table,
    mutual_information_table,
    pid_from_samples,
    pid_imin,
    specific_information,
)

BIT = np.log(2.0)
S1, S2 = (v.ravel() for v in np.meshgrid([0, 1], [0, 1], indexing="ij"))  # the four equiprobable input pairs


def atoms_in_bits(t, s1=S1, s2=S2):
    pid = pid_from_samples(t, s1, s2)
    return {k: v / BIT for k, v in vars(pid).items()}


def test_xor_is_pure_synergy():
    atoms = atoms_in_bits(S1 ^ S2)
    assert atoms["redundancy"] == pytest.approx(0.0, abs=1e-12)
    assert atoms["unique_1"] == pytest.approx(0.0, abs=1e-12) and atoms["unique_2"] == pytest.approx(0.0, abs=1e-12)
    assert atoms["synergy"] == pytest.approx(1.0)


def test_and_gate_has_the_textbook_imin_values():
    atoms = atoms_in_bits(S1 & S2)
    mi_single = 1.5 - 0.75 * np.log2(3)  # I(T;S1) = h(1/4) - h(1/2) / 2 = 0.311 bits
    assert atoms["mutual_1"] == pytest.approx(mi_single)
    assert atoms["redundancy"] == pytest.approx(0.3113, abs=1e-4)
    assert atoms["unique_1"] == pytest.approx(0.0, abs=1e-12)
    assert atoms["synergy"] == pytest.approx(0.5)
    assert atoms["joint"] == pytest.approx(2 - 0.75 * np.log2(3))  # H(T) = h(1/4) = 0.811 bits


def test_copy_gate_shows_imin_crediting_independent_sources_with_redundancy():
    atoms = atoms_in_bits(2 * S1 + S2)  # T = (S1, S2), S1 and S2 independent
    assert atoms["joint"] == pytest.approx(2.0)
    assert atoms["redundancy"] == pytest.approx(1.0)  # I_min's known artefact (BROJA would give 0)
    assert atoms["synergy"] == pytest.approx(1.0)


def test_redundant_bit_is_pure_redundancy():
    bit = np.array([0, 1])
    atoms = atoms_in_bits(bit, bit, bit)
    assert atoms["redundancy"] == pytest.approx(1.0)
    assert atoms["unique_1"] == pytest.approx(0.0, abs=1e-12) and atoms["synergy"] == pytest.approx(0.0, abs=1e-12)


def test_unique_bit_belongs_to_its_source():
    atoms = atoms_in_bits(S1)
    assert atoms["unique_1"] == pytest.approx(1.0)
    assert atoms["redundancy"] == pytest.approx(0.0, abs=1e-12) and atoms["unique_2"] == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_atoms_are_non_negative_and_add_up_on_random_tables(seed):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(2 * 3 * 4, 0.5)).reshape(2, 3, 4)
    pid = pid_imin(p)
    assert min(pid.redundancy, pid.unique_1, pid.unique_2, pid.synergy) >= 0
    assert pid.redundancy + pid.unique_1 + pid.unique_2 + pid.synergy == pytest.approx(pid.joint)
    assert pid.redundancy + pid.unique_1 == pytest.approx(pid.mutual_1)
    assert pid.redundancy + pid.unique_2 == pytest.approx(pid.mutual_2)
    # the specific informations average to the mutual information, and the redundancy swaps with the sources
    p_t = p.sum(axis=(1, 2))
    assert p_t @ specific_information(p.sum(axis=2)) == pytest.approx(mutual_information_table(p.sum(axis=2)))
    assert imin_redundancy(p.transpose(0, 2, 1)) == pytest.approx(pid.redundancy)


def test_joint_table_counts_samples_and_tables_are_checked():
    table = joint_table(np.array([0, 0, 1, 1]), np.array([5, 5, 7, 5]), np.array([0, 1, 0, 0]))
    assert table.shape == (2, 2, 2) and table.sum() == pytest.approx(1.0)
    assert table[0, 0, 0] == table[0, 0, 1] == table[1, 1, 0] == table[1, 0, 0] == 0.25
    with pytest.raises(ValueError, match="sum to 1"):
        pid_imin(np.full((2, 2, 2), 0.2))
    with pytest.raises(ValueError, match="3 axes"):
        pid_imin(np.full((2, 2), 0.25))
    with pytest.raises(ValueError, match="equal length"):
        joint_table(np.zeros(3), np.zeros(3), np.zeros(4))
