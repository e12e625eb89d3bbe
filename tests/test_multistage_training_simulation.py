"""Paper 16 (multistage training): the stochastic simulation agrees with the mean-field dynamics in expectation."""

import numpy as np
import pytest

from neurips26.multistage_training.dynamics import rl_path, rl_rate, run_pipeline, sft_path, sft_rate
from neurips26.multistage_training.model import (
    Allocation,
    ModelParams,
    initial_u,
    skill_strength,
    task_distribution,
    task_success,
)
from neurips26.multistage_training.simulation import (
    monte_carlo_success,
    rl_update,
    sft_update,
    simulate_pipeline,
    simulate_stages,
)

SMALL = ModelParams(n_skills=20, chain_length=3, sft_lr=0.02, rl_lr=0.05, demo_quality=0.85, rollouts=4)
Z = 4.0  # standard errors allowed between a simulation mean and the mean-field value


def within_standard_errors(samples, expected, atol=1e-4):
    """Mean over axis 0 within Z standard errors (plus `atol` for the mean-field discretisation) of `expected`."""
    mean = samples.mean(axis=0)
    se = samples.std(axis=0, ddof=1) / np.sqrt(samples.shape[0])
    return np.all(np.abs(mean - expected) <= Z * se + atol), np.max(np.abs(mean - expected) / (se + 1e-300))


PLASTICITY = pytest.mark.parametrize("plasticity", ["pretrained", "full"])  # the model, and the null without the gate


@PLASTICITY
def test_one_rl_update_is_unbiased_for_the_rl_rate(plasticity):
    params = SMALL.replace(reward_noise=0.15, rl_lr=1.0, plasticity=plasticity)
    strength = skill_strength(params, 200.0)
    u = initial_u(params) + np.linspace(0, 2, params.n_skills)
    start = np.tile(u, (40_000, 1))
    delta = rl_update(params, strength, start, np.random.default_rng(1)) - start
    ok, worst = within_standard_errors(delta, rl_rate(params, strength, u), atol=0.0)
    assert ok, f"worst deviation {worst:.1f} standard errors"


def test_the_notes_mean_baseline_would_be_detected_as_biased():
    """Guard on the test above: a (k-1)/k-scaled drift is many standard errors away."""
    params = SMALL.replace(rl_lr=1.0)
    strength = skill_strength(params, 200.0)
    u = initial_u(params)
    start = np.tile(u, (40_000, 1))
    delta = rl_update(params, strength, start, np.random.default_rng(1)) - start
    ok, _ = within_standard_errors(delta[:, :3], rl_rate(params, strength, u)[:3] * 3 / 4, atol=0.0)
    assert not ok


@PLASTICITY
def test_one_sft_update_is_unbiased_for_batch_times_the_sft_rate(plasticity):
    params = SMALL.replace(plasticity=plasticity)
    strength = skill_strength(params, 200.0)
    u = initial_u(params)
    start = np.tile(u, (20_000, 1))
    delta = sft_update(params, strength, start, 5, np.random.default_rng(2)) - start
    ok, worst = within_standard_errors(delta, 5 * sft_rate(params, strength, u), atol=0.0)
    assert ok, f"worst deviation {worst:.1f} standard errors"


def test_sft_simulation_follows_the_closed_form():
    strength = skill_strength(SMALL, 300.0)
    traj, _ = simulate_stages(SMALL, strength, [("sft", 300)], seed=3, runs=40, batch=2, record_every=100)
    demos = traj["update"].unique() * 2
    expected = task_success(SMALL, strength, sft_path(SMALL, strength, initial_u(SMALL), demos))
    samples = traj.pivot(index="run", columns="update", values="success").to_numpy()
    ok, worst = within_standard_errors(samples, expected, atol=1e-3)
    assert ok, f"worst deviation {worst:.1f} standard errors"


def test_rl_simulation_follows_the_ode_with_noisy_rewards():
    params = SMALL.replace(reward_noise=0.1)
    strength = skill_strength(params, 300.0)
    traj, _ = simulate_stages(params, strength, [("rl", 600)], seed=4, runs=40, record_every=200)
    updates = traj["update"].unique()
    expected = task_success(params, strength, rl_path(params, strength, initial_u(params), updates))
    samples = traj.pivot(index="run", columns="update", values="success").to_numpy()
    assert expected[-1] > expected[0] + 0.05  # the comparison covers real movement
    ok, worst = within_standard_errors(samples, expected, atol=1e-3)
    assert ok, f"worst deviation {worst:.1f} standard errors"


def test_pipeline_simulation_ends_near_the_mean_field_pipeline():
    args = (SMALL, 2400.0, Allocation.post_training(0.5))
    traj, u = simulate_pipeline(*args, seed=5, base_compute=300.0, runs=30, batch=2, record_every=1000)
    final = traj[traj["update"] == traj["update"].max()]
    assert final["compute"].iloc[0] == pytest.approx(2400.0)
    assert set(traj["stage"]) == {"sft", "rl"}
    ok, worst = within_standard_errors(final["success"].to_numpy()[:, None], run_pipeline(*args, 300.0).success, 1e-3)
    assert ok, f"worst deviation {worst:.1f} standard errors"
    assert np.all(u[:, task_distribution(SMALL) == 0] == SMALL.u0)  # off-task skills never move


def test_same_seed_same_numbers_other_seed_other_numbers():
    strength = skill_strength(SMALL, 300.0)
    stages = [("sft", 20), ("rl", 20)]
    first, u1 = simulate_stages(SMALL, strength, stages, seed=7, runs=3)
    again, u2 = simulate_stages(SMALL, strength, stages, seed=7, runs=3)
    other, u3 = simulate_stages(SMALL, strength, stages, seed=8, runs=3)
    assert first.equals(again) and np.array_equal(u1, u2)
    assert not np.array_equal(u1, u3)


def test_monte_carlo_success_estimates_the_task_success():
    strength = skill_strength(SMALL, 300.0)
    u = initial_u(SMALL) + 1.0
    estimate = monte_carlo_success(SMALL, strength, u, 40_000, np.random.default_rng(9))
    exact = float(task_success(SMALL, strength, u))
    assert abs(estimate - exact) <= Z * np.sqrt(exact * (1 - exact) / 40_000)


def test_zero_updates_record_the_start_only():
    strength = skill_strength(SMALL, 300.0)
    traj, u = simulate_stages(SMALL, strength, [("sft", 0), ("rl", 0)], seed=0, runs=2)
    assert len(traj) == 2 and np.all(u == SMALL.u0)
    assert traj["success"].iloc[0] == pytest.approx(float(task_success(SMALL, strength, initial_u(SMALL))))


def test_bad_simulation_inputs_are_refused():
    strength = skill_strength(SMALL, 300.0)
    with pytest.raises(ValueError, match="stage must be one of"):
        simulate_stages(SMALL, strength, [("ppo", 3)], seed=0)
    with pytest.raises(ValueError, match="rl updates must be an integer >= 0"):
        simulate_stages(SMALL, strength, [("rl", -1)], seed=0)
    with pytest.raises(ValueError, match="runs must be an integer >= 1"):
        simulate_stages(SMALL, strength, [("rl", 1)], seed=0, runs=0)
    with pytest.raises(ValueError, match="the simulation runs sequential orders"):
        simulate_pipeline(SMALL, 10.0, Allocation.post_training(0.5), seed=0, order="joint")
    with pytest.raises(ValueError, match="budget must be a finite number >= 0"):
        simulate_pipeline(SMALL, -10.0, Allocation.post_training(0.5), seed=0)
