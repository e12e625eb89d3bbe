"""Paper 16 (multistage training): the skill-chain model's definitions, compute accounting and refusals."""

import dataclasses

import numpy as np
import pytest

from neurips26.multistage_training.model import (
    Allocation,
    ModelParams,
    initial_u,
    mean_step_success,
    pretraining_loss,
    rl_cost,
    sft_cost,
    skill_frequencies,
    skill_strength,
    stage_plan,
    step_success,
    task_distribution,
    task_mask,
    task_success,
    zero_shot_success,
)

SMALL = ModelParams(n_skills=40, chain_length=3, rollouts=3, gen_overhead=0.5)


def test_frequencies_are_zipf_and_normalised():
    p = skill_frequencies(SMALL)
    assert p.sum() == pytest.approx(1.0)
    assert p[0] / p[3] == pytest.approx(4**SMALL.alpha)


def test_task_distribution_lives_on_every_stride_th_skill_with_its_own_exponent():
    params = SMALL.replace(task_stride=3, alpha_task=2.0)
    q, mask = task_distribution(params), task_mask(params)
    assert np.flatnonzero(mask).tolist() == list(range(0, 40, 3))
    assert np.all(q[~mask] == 0) and q.sum() == pytest.approx(1.0)
    assert q[0] / q[3] == pytest.approx(4**2.0)  # ranks 1 and 4


def test_uniform_task_distribution_at_zero_exponent():
    q = task_distribution(SMALL.replace(alpha_task=0.0))
    assert np.allclose(q[q > 0], 1 / 20)


def test_strength_starts_at_zero_grows_with_compute_and_saturates():
    s = skill_strength(SMALL, [0.0, 10.0, 1e3, 1e8])
    assert s.shape == (4, 40)
    assert np.all(s[0] == 0) and np.all(np.diff(s, axis=0) >= 0) and np.allclose(s[-1], 1.0)
    assert np.all(np.diff(s[1]) < 0)  # frequent skills are learned first
    assert skill_strength(SMALL, 1.0)[0] == pytest.approx(1 - np.exp(-skill_frequencies(SMALL)[0] / SMALL.n0))


def test_strength_floor_applies():
    assert np.all(skill_strength(SMALL.replace(s_floor=0.2), 0.0) == 0.2)


def test_pretraining_loss_is_the_frequency_weighted_missing_strength():
    compute = np.array([0.0, 3.0, 300.0])
    expected = (1 - skill_strength(SMALL, compute)) @ skill_frequencies(SMALL)
    assert np.allclose(pretraining_loss(SMALL, compute), expected)
    assert pretraining_loss(SMALL, 0.0) == pytest.approx(1.0)


def test_task_success_is_mean_step_success_to_the_chain_length():
    rng = np.random.default_rng(0)
    s, u = rng.random(40), rng.normal(size=40) * 3
    pi = 1 / (1 + np.exp(-(SMALL.z0 + s * u)))
    assert np.allclose(step_success(SMALL, s, u), pi)
    assert mean_step_success(SMALL, s, u) == pytest.approx(pi @ task_distribution(SMALL))
    assert task_success(SMALL, s, u) == pytest.approx((pi @ task_distribution(SMALL)) ** 3)


def test_zero_shot_without_pretraining_is_the_bias_only_policy():
    assert zero_shot_success(SMALL, 0.0) == pytest.approx((1 / (1 + np.exp(3.0))) ** 3)
    assert np.all(initial_u(SMALL) == SMALL.u0)


def test_stage_plan_spends_exactly_the_budget():
    allocation = Allocation(0.2, 0.5, 0.3)
    plan = stage_plan(SMALL, 1200.0, allocation, base_compute=50.0)
    assert sft_cost(SMALL) == 3 and rl_cost(SMALL) == 3 * 3 * 1.5
    assert plan.pretrain_compute == pytest.approx(50 + 240)
    spent = plan.pretrain_compute - 50 + plan.sft_demos * sft_cost(SMALL) + plan.rl_updates * rl_cost(SMALL)
    assert spent == pytest.approx(1200.0)
    assert stage_plan(SMALL, 0.0, allocation).sft_demos == 0


def test_post_training_allocation():
    assert Allocation.post_training(0.25) == Allocation(0.0, 0.25, 0.75)


def test_params_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        SMALL.alpha = 2.0


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"alpha": 1.0}, "ModelParams.alpha must be a finite number > 1"),
        ({"alpha": 0.5}, "ModelParams.alpha must be a finite number > 1"),
        ({"alpha_task": -0.5}, "ModelParams.alpha_task must be a finite number >= 0"),
        ({"demo_quality": 1.2}, r"ModelParams.demo_quality must be a finite number in \[0, 1\]"),
        ({"reward_noise": 0.5}, r"ModelParams.reward_noise must be a finite number in \[0, 0.5\)"),
        ({"n_skills": 0}, "ModelParams.n_skills must be an integer >= 1"),
        ({"chain_length": 0}, "ModelParams.chain_length must be an integer >= 1"),
        ({"rollouts": 0}, "ModelParams.rollouts must be an integer >= 1"),
        ({"n0": 0.0}, "ModelParams.n0 must be a finite number > 0"),
        ({"sft_lr": -1.0}, "ModelParams.sft_lr must be a finite number > 0"),
        ({"s_floor": 1.5}, r"ModelParams.s_floor must be a finite number in \[0, 1\]"),
        ({"gen_overhead": -0.1}, "ModelParams.gen_overhead must be a finite number >= 0"),
        ({"z0": float("nan")}, "ModelParams.z0 must be a finite number"),
        ({"plasticity": "none"}, r"ModelParams.plasticity must be one of \['pretrained', 'full'\]"),
    ],
)
def test_bad_parameters_are_refused_naming_the_field(changes, message):
    with pytest.raises(ValueError, match=message):
        ModelParams(**changes)


@pytest.mark.parametrize(
    ("fractions", "message"),
    [
        ((-0.1, 0.6, 0.5), r"Allocation.pretrain must be a finite number in \[0, 1\], got -0.1"),
        ((0.0, 1.2, -0.2), r"Allocation.sft must be a finite number in \[0, 1\], got 1.2"),
        ((0.2, 0.2, 0.2), "Allocation fractions must sum to 1"),
        ((0.5, 0.5, 0.5), "Allocation fractions must sum to 1"),
    ],
)
def test_bad_allocations_are_refused(fractions, message):
    with pytest.raises(ValueError, match=message):
        Allocation(*fractions)


def test_bad_share_budget_and_compute_are_refused():
    with pytest.raises(ValueError, match=r"sft_share must be a finite number in \[0, 1\]"):
        Allocation.post_training(1.5)
    with pytest.raises(ValueError, match="budget must be a finite number >= 0, got -1.0"):
        stage_plan(SMALL, -1.0, Allocation.post_training(0.5))
    with pytest.raises(ValueError, match="budget must be a finite number >= 0"):
        stage_plan(SMALL, float("inf"), Allocation.post_training(0.5))
    with pytest.raises(ValueError, match="base_compute must be a finite number >= 0"):
        stage_plan(SMALL, 10.0, Allocation.post_training(0.5), base_compute=-5.0)
    with pytest.raises(ValueError, match="pretraining compute must be finite and >= 0"):
        skill_strength(SMALL, [1.0, -2.0])
    with pytest.raises(ValueError, match="pretraining compute must be finite and >= 0"):
        pretraining_loss(SMALL, -2.0)


def test_the_null_model_without_the_pretraining_gate_starts_alike_and_moves_every_logit_at_unit_rate():
    from neurips26.multistage_training.model import logits, plasticity, step_success

    null = SMALL.replace(plasticity="full")
    strength = np.array([0.0, 0.3, 1.0])
    assert np.array_equal(plasticity(SMALL, strength), strength) and np.all(plasticity(null, strength) == 1.0)
    start = np.full(3, SMALL.u0)
    assert np.allclose(step_success(null, strength, start), step_success(SMALL, strength, start))  # same start
    moved = start + 0.5
    assert np.allclose(logits(null, strength, moved) - logits(null, strength, start), 0.5)  # dz/du = 1
    assert np.allclose(logits(SMALL, strength, moved) - logits(SMALL, strength, start), 0.5 * strength)  # dz/du = s
