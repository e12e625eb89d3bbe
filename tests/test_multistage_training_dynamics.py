"""Paper 16 (multistage training): the SFT closed form and the RL ODE against numerical integration, fixed points,
limits of the pipeline."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.special import expit, logit

from neurips26.multistage_training.dynamics import (
    pipeline_trajectory,
    post_train,
    rl_path,
    rl_rate,
    rl_single_step_logits,
    rl_time_to_success,
    run_pipeline,
    sft_limit,
    sft_logits,
    sft_path,
    sft_rate,
)
from neurips26.multistage_training.model import (
    Allocation,
    ModelParams,
    initial_u,
    mean_step_success,
    rl_cost,
    skill_strength,
    step_success,
    task_distribution,
    task_success,
    zero_shot_success,
)

SMALL = ModelParams(n_skills=30, chain_length=3, sft_lr=0.1, rl_lr=0.2, demo_quality=0.8)


def euler(rhs, y0, t_end, steps):
    """Fine-step explicit Euler, the reference integrator."""
    y, dt = np.array(y0, dtype=float), t_end / steps
    for _ in range(steps):
        y = y + dt * rhs(y)
    return y


@pytest.mark.parametrize("rho", [0.0, 0.3, 0.8, 1.0])
def test_sft_closed_form_matches_tight_ode_solution(rho):
    rate = np.array([0.05, 0.7, 2.0])
    z_init = np.array([-3.0, 1.0, 6.0])
    tau = np.array([0.0, 0.5, 4.0, 40.0])
    closed = sft_logits(rho, rate, z_init, tau[:, None])
    for j in range(3):
        ode = solve_ivp(
            lambda t, z, j=j: rate[j] * (rho - expit(z)), (0, 40), [z_init[j]], t_eval=tau, rtol=1e-11, atol=1e-12
        )
        assert np.allclose(closed[:, j], ode.y[0], atol=1e-8)


def test_sft_closed_form_matches_fine_step_euler():
    rate, z_init, rho = np.array([0.3, 1.5]), np.array([-3.0, 4.0]), 0.7
    reference = euler(lambda z: rate * (rho - expit(z)), z_init, 5.0, 50_000)
    assert np.allclose(sft_logits(rho, rate, z_init, 5.0), reference, atol=1e-4)


def test_sft_closed_form_reaches_and_keeps_the_fixed_point():
    rho = 0.8
    assert np.all(sft_logits(rho, 1.0, logit(rho), [0.0, 1.0, 1e6]) == logit(rho))
    assert sft_logits(rho, 1.0, -3.0, 1e5) == pytest.approx(logit(rho), abs=1e-12)
    path = sft_logits(rho, 1.0, [-3.0, 5.0], np.linspace(0, 20, 50)[:, None])
    assert np.all(np.diff(path[:, 0]) >= 0) and np.all(path[:, 0] <= logit(rho))  # approaches from below
    assert np.all(np.diff(path[:, 1]) <= 0) and np.all(path[:, 1] >= logit(rho))  # and from above, never crossing


def test_sft_path_drives_every_task_skill_to_rho_and_success_to_rho_to_the_l():
    strength = skill_strength(SMALL, 1e4)
    u = sft_path(SMALL, strength, initial_u(SMALL), 1e7)
    pi = step_success(SMALL, strength, u)
    q = task_distribution(SMALL)
    assert np.allclose(pi[q > 0], 0.8, atol=1e-6)
    assert task_success(SMALL, strength, u) == pytest.approx(0.8**3, abs=1e-6)
    assert sft_limit(SMALL, strength) == pytest.approx(0.8**3)
    assert np.all(u[q == 0] == SMALL.u0)  # off-task skills are untouched


def test_sft_path_drift_is_the_sft_rate_at_the_start():
    strength = skill_strength(SMALL, 100.0)
    u0 = initial_u(SMALL)
    h = 1e-4
    drift = (sft_path(SMALL, strength, u0, h) - u0) / h
    assert np.allclose(drift, sft_rate(SMALL, strength, u0), rtol=1e-3, atol=1e-9)


def test_rl_ode_matches_the_single_step_closed_form():
    params = SMALL.replace(chain_length=1, n_skills=12)
    strength = skill_strength(params, 30.0)
    tau = np.array([0.0, 10.0, 200.0, 3000.0])
    u = rl_path(params, strength, initial_u(params), tau)
    rate = params.rl_lr * task_distribution(params) * strength**2
    z_closed = rl_single_step_logits(rate, params.z0 + strength * params.u0, tau[:, None])
    assert np.allclose(params.z0 + strength * u, z_closed, atol=1e-6)


def test_rl_ode_matches_fine_step_euler_for_the_coupled_chain():
    strength = skill_strength(SMALL, 300.0)
    u0 = initial_u(SMALL)
    reference = euler(lambda u: rl_rate(SMALL, strength, u), u0, 400.0, 40_000)
    assert np.allclose(rl_path(SMALL, strength, u0, 400.0), reference, atol=2e-4)


def test_rl_rate_is_the_outcome_policy_gradient_by_enumeration():
    """Exact expectation over a 2-skill, L=2 model by enumerating tasks and actions."""
    params = ModelParams(n_skills=2, task_stride=1, chain_length=2, rl_lr=1.0, reward_noise=0.1)
    strength, u = np.array([0.9, 0.4]), np.array([1.0, 2.0])
    q, pi = task_distribution(params), step_success(params, strength, u)
    grad = np.zeros(2)
    for i in range(2):
        for j in range(2):
            for a in range(2):
                for b in range(2):
                    prob = q[i] * q[j] * (pi[i] if a else 1 - pi[i]) * (pi[j] if b else 1 - pi[j])
                    reward = 0.1 + 0.8 * (a and b)  # expected flipped reward
                    score = np.zeros(2)
                    score[i] += a - pi[i]
                    score[j] += b - pi[j]
                    grad += prob * reward * score * strength
    assert np.allclose(rl_rate(params, strength, u), grad)


def test_reward_noise_only_rescales_rl_time():
    strength = skill_strength(SMALL, 300.0)
    noisy = rl_path(SMALL.replace(reward_noise=0.2), strength, initial_u(SMALL), 500.0)
    clean = rl_path(SMALL, strength, initial_u(SMALL), 500.0 * 0.6)
    assert np.allclose(noisy, clean, atol=1e-6)


def test_rl_has_no_data_quality_ceiling_and_leaves_off_task_skills_alone():
    strength = skill_strength(SMALL, 1e4)
    u = rl_path(SMALL, strength, initial_u(SMALL), [0.0, 1e3, 1e5])
    p = task_success(SMALL, strength, u)
    assert np.all(np.diff(p) > 0) and p[-1] > 0.95 > SMALL.demo_quality**3
    assert np.all(u[:, task_distribution(SMALL) == 0] == SMALL.u0)


def test_without_pretraining_post_training_changes_nothing():
    result = run_pipeline(SMALL, 1e4, Allocation.post_training(0.5), base_compute=0.0)
    assert np.all(result.u == SMALL.u0)
    assert result.success == pytest.approx(zero_shot_success(SMALL, 0.0))


def test_plateau_time_is_when_success_reaches_the_level():
    strength = skill_strength(SMALL, 300.0)
    tau = rl_time_to_success(SMALL, strength, initial_u(SMALL), level=0.5)
    assert 0 < tau < np.inf
    reached = task_success(SMALL, strength, rl_path(SMALL, strength, initial_u(SMALL), tau))
    assert reached == pytest.approx(0.5, abs=1e-6)
    assert rl_time_to_success(SMALL, strength, initial_u(SMALL), level=1e-6) == 0.0
    assert rl_time_to_success(SMALL, strength, initial_u(SMALL), level=0.5, tau_max=1.0) == np.inf


def test_zero_budget_gives_the_pretrained_model():
    result = run_pipeline(SMALL, 0.0, Allocation.post_training(0.3), base_compute=500.0)
    assert np.all(result.u == SMALL.u0)
    assert result.success == pytest.approx(zero_shot_success(SMALL, 500.0))


def test_all_budget_to_one_stage_is_that_stage_alone_in_either_order():
    budget, base = 3000.0, 500.0
    strength = skill_strength(SMALL, base)
    sft_only = sft_path(SMALL, strength, initial_u(SMALL), budget / SMALL.chain_length)
    rl_only = rl_path(SMALL, strength, initial_u(SMALL), budget / rl_cost(SMALL))
    for order in ("sft_rl", "rl_sft", "joint"):
        sft_run = run_pipeline(SMALL, budget, Allocation.post_training(1.0), base, order)
        rl_run = run_pipeline(SMALL, budget, Allocation.post_training(0.0), base, order)
        assert np.allclose(sft_run.u, sft_only, atol=1e-6)  # the joint ODE against the closed form
        assert np.allclose(rl_run.u, rl_only, atol=1e-6)


def test_all_budget_to_pretraining_is_zero_shot_at_the_larger_compute():
    result = run_pipeline(SMALL, 2000.0, Allocation(1.0, 0.0, 0.0), base_compute=100.0)
    assert result.plan.pretrain_compute == 2100.0
    assert result.success == pytest.approx(zero_shot_success(SMALL, 2100.0))


def test_order_matters_when_both_stages_run():
    args = (SMALL, 3000.0, Allocation.post_training(0.5), 500.0)
    assert run_pipeline(*args, order="sft_rl").success != pytest.approx(run_pipeline(*args, order="rl_sft").success)


def test_trajectory_ends_at_the_pipeline_result_and_spends_the_budget():
    args = (SMALL, 3000.0, Allocation.post_training(0.4), 500.0)
    for order, first in (("sft_rl", "sft"), ("rl_sft", "rl")):
        traj = pipeline_trajectory(*args, order=order, n_points=7)
        assert traj["compute"].iloc[0] == 0 and traj["compute"].iloc[-1] == pytest.approx(3000.0)
        assert traj["success"].iloc[-1] == pytest.approx(run_pipeline(*args, order=order).success)
        assert traj["stage"].iloc[0] == first
    strength = skill_strength(SMALL, 500.0)
    assert traj["step_success"].iloc[0] == pytest.approx(float(mean_step_success(SMALL, strength, initial_u(SMALL))))


def test_bad_orders_and_times_are_refused():
    strength = skill_strength(SMALL, 10.0)
    with pytest.raises(ValueError, match="order must be one of"):
        post_train(SMALL, strength, initial_u(SMALL), 1.0, 1.0, order="rl_only")
    with pytest.raises(ValueError, match="sft_demos must be a finite number >= 0"):
        post_train(SMALL, strength, initial_u(SMALL), -1.0, 1.0)
    with pytest.raises(ValueError, match="SFT time must be >= 0"):
        sft_path(SMALL, strength, initial_u(SMALL), -1.0)
    with pytest.raises(ValueError, match="RL times must be >= 0 and non-decreasing"):
        rl_path(SMALL, strength, initial_u(SMALL), [2.0, 1.0])
    with pytest.raises(ValueError, match="trajectories are for sequential orders"):
        pipeline_trajectory(SMALL, 10.0, Allocation.post_training(0.5), order="joint")


@pytest.mark.parametrize("rho", [0.3, 1.0])
def test_sft_closed_form_of_the_null_model_matches_its_ode(rho):
    """Without the pretraining gate the logits move at dz/du = 1: the closed form (rate eta L q) against the ODE of
    sft_rate, and a skill pretraining never touched (s = 0) is learned too."""
    null = SMALL.replace(plasticity="full", demo_quality=rho)
    strength = skill_strength(null, 1.0)
    assert strength.min() < 0.02  # rare skills barely pretrained
    u0 = initial_u(null)
    closed = sft_path(null, strength, u0, 400.0)
    ode = solve_ivp(lambda t, u: sft_rate(null, strength, u), (0, 400.0), u0, rtol=1e-10, atol=1e-12).y[:, -1]
    assert np.allclose(closed, ode, atol=1e-6)
    task = task_distribution(null) > 0
    gated = sft_path(SMALL.replace(demo_quality=rho), strength, u0, 400.0)
    rare = task & (strength < 0.02)
    assert rare.any() and np.all(np.abs(closed - u0)[rare] > 10 * np.abs(gated - u0)[rare])
    assert sft_limit(null, np.zeros(null.n_skills)) == pytest.approx(rho**null.chain_length)


def test_rl_rate_of_the_null_model_drops_the_strength_factor():
    null = SMALL.replace(plasticity="full")
    strength = skill_strength(SMALL, 100.0)
    u = initial_u(SMALL)
    gated, free = rl_rate(SMALL, strength, u), rl_rate(null, strength, u)
    task = task_distribution(SMALL) > 0
    assert np.allclose(gated[task], (strength * free)[task]) and np.all(free[~task] == 0)
