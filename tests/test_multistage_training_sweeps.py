"""Paper 16 (multistage training): sweeps over budget, allocation, data quality and pretraining; the optimal
allocation against brute force."""

import numpy as np
import pytest

from neurips26.multistage_training.model import Allocation, ModelParams, zero_shot_success
from neurips26.multistage_training.sweeps import allocation_table, optimal_allocation, simplex_grid, success, sweep

SMALL = ModelParams(n_skills=60, chain_length=4)


def test_optimal_share_beats_a_fine_brute_force_grid():
    budget, base = 1e4, 300.0
    shares = np.linspace(0, 1, 201)
    brute = np.array([success(SMALL, budget, Allocation.post_training(f), base) for f in shares])
    best = optimal_allocation(SMALL, budget, base, n_grid=10)
    assert 0.05 < shares[brute.argmax()] < 0.95  # an interior optimum: the refinement is exercised
    assert best.success >= brute.max() - 1e-9
    assert best.allocation.sft == pytest.approx(shares[brute.argmax()], abs=0.006)
    assert best.success >= best.grid_success
    assert best.success == pytest.approx(success(SMALL, budget, best.allocation, base))


def test_optimal_simplex_point_beats_a_brute_force_simplex_grid():
    params = SMALL.replace(n_skills=30)
    budget, base = 2e4, 20.0
    points = simplex_grid(24)
    brute = np.array([success(params, budget, Allocation(*x), base) for x in points])
    best = optimal_allocation(params, budget, base, n_grid=8, include_pretrain=True)
    assert 0 < points[brute.argmax()][0] < 0.5  # some pretraining pays: an interior point of the simplex
    assert best.success >= brute.max() - 1e-6
    assert np.allclose([best.allocation.pretrain, best.allocation.sft], points[brute.argmax()][:2], atol=0.05)


def test_unrefined_optimum_is_the_grid_argmax():
    best = optimal_allocation(SMALL, 1e4, 300.0, n_grid=4, refine=False)
    values = [success(SMALL, 1e4, Allocation.post_training(f), 300.0) for f in (0, 0.25, 0.5, 0.75, 1)]
    assert best.success == max(values) and best.allocation.sft == [0, 0.25, 0.5, 0.75, 1][int(np.argmax(values))]


def test_zero_budget_optimum_is_the_pretrained_model():
    best = optimal_allocation(SMALL, 0.0, 300.0, n_grid=4)
    assert best.success == pytest.approx(zero_shot_success(SMALL, 300.0))


def test_simplex_grid_covers_the_simplex():
    points = simplex_grid(6)
    assert len(points) == 7 * 8 // 2
    assert np.allclose(points.sum(axis=1), 1.0) and points.min() >= 0
    assert len({tuple(p) for p in points}) == len(points)


def test_sweep_covers_every_setting_and_agrees_with_single_runs():
    table = sweep(SMALL, [0.0, 5e3], [0.0, 0.5, 1.0], [30.0, 3e3], demo_qualities=[0.7, 0.95], chain_lengths=[2, 4])
    assert len(table) == 2 * 3 * 2 * 2 * 2
    row = table.query("budget == 5e3 and sft_share == 0.5 and base_compute == 3e3 and demo_quality == 0.7")
    row = row.query("chain_length == 2")
    expected = success(SMALL.replace(demo_quality=0.7, chain_length=2), 5e3, Allocation.post_training(0.5), 3e3)
    assert row["success"].item() == pytest.approx(expected)
    # zero budget: every share gives the pretrained model, whatever the demonstration quality
    assert table.query("budget == 0").groupby(["base_compute", "chain_length"])["success"].nunique().max() == 1
    # SFT alone gains from better demonstrations; RL alone does not see them
    sft_only = table.query("budget == 5e3 and sft_share == 1.0").groupby("demo_quality")["success"].mean()
    rl_only = table.query("budget == 5e3 and sft_share == 0.0").groupby("demo_quality")["success"].mean()
    assert sft_only[0.95] > sft_only[0.7] and rl_only[0.95] == pytest.approx(rl_only[0.7])


def test_allocation_table_gives_one_optimum_per_setting():
    table = allocation_table(SMALL, [1e4], [30.0, 3e3], demo_qualities=[0.7, 0.95], reward_noises=[0.0, 0.2], n_grid=5)
    assert len(table) == 2 * 2 * 2
    assert np.allclose(table[["pretrain_share", "sft_share", "rl_share"]].sum(axis=1), 1.0)
    assert (table["success"] >= table["grid_success"]).all()


def test_bad_sweep_inputs_are_refused():
    with pytest.raises(ValueError, match="budget must be a finite number >= 0"):
        sweep(SMALL, [-1.0], [0.5], [10.0])
    with pytest.raises(ValueError, match=r"sft_share must be a finite number in \[0, 1\]"):
        sweep(SMALL, [1.0], [1.5], [10.0])
    with pytest.raises(ValueError, match="order must be one of"):
        sweep(SMALL, [1.0], [0.5], [10.0], order="ppo")
    with pytest.raises(ValueError, match="ModelParams.demo_quality must be a finite number"):
        sweep(SMALL, [1.0], [0.5], [10.0], demo_qualities=[1.5])
    with pytest.raises(ValueError, match="n_grid must be an integer >= 1"):
        optimal_allocation(SMALL, 1.0, n_grid=0)


def test_an_interior_optimum_excludes_both_single_stages():
    budget, base = 1e4, 300.0
    free = optimal_allocation(SMALL, budget, base, n_grid=10)
    inside = optimal_allocation(SMALL, budget, base, n_grid=10, interior=True)
    assert 0 < free.allocation.sft < 1 and inside.success == pytest.approx(free.success, abs=1e-6)
    ends = optimal_allocation(SMALL, 30.0, 3.0, n_grid=4, interior=True)
    assert 1 / 8 <= ends.allocation.sft <= 7 / 8
    with pytest.raises(ValueError, match="interior needs"):
        optimal_allocation(SMALL, budget, base, n_grid=1, interior=True)
