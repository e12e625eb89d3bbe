r"""Stochastic simulation of post-training in the skill-chain model (finite samples; our reconstruction, notes 16.2).

Independent runs advance together (arrays of shape ``(runs, M)``), all drawn from one generator seeded by
``seed``, so a (seed, runs) pair always gives the same numbers.

- **SFT update**: a minibatch of ``batch`` demonstrations; each has ``L`` step skills drawn from ``q`` and each
  demonstrated step is correct with probability ``rho``. The per-step cross-entropy gradient is summed:
  ``Delta u_i = eta_s s_i sum_{steps of skill i} (y - pi_i)``. In expectation this is ``batch`` times the
  mean-field drift of :func:`.dynamics.sft_rate` (an Euler step of ``batch`` demonstrations).
- **RL update**: ``k`` rollouts, each on its own task; a step succeeds with probability ``pi``, the outcome reward
  is 1 when all ``L`` steps do, flipped with probability ``eps_r``. REINFORCE with the leave-one-out mean reward as
  baseline (0 when ``k = 1``), averaged over rollouts:
  ``Delta u_i = eta_r s_i / k sum_m (R_m - b_m) sum_{steps of skill i in m} (a - pi_i)``. The baseline does not
  depend on rollout ``m``'s own actions, so the expectation is exactly :func:`.dynamics.rl_rate` (one update).
  The notes' baseline ``mean(R)`` including the rollout itself would scale the expected update by
  ``(k - 1) / k``; we use leave-one-out so that the simulation and the ODE describe the same model.

A pipeline spends ``floor(sft_demos / batch)`` SFT updates and ``floor(rl_updates)`` RL updates of its plan
(:func:`.model.stage_plan`). Success is recorded exactly from the current parameters (``Pbar(u)^L``);
:func:`monte_carlo_success` estimates it from sampled tasks instead.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from neurips26.common.validation import check_int

from .model import (
    Allocation,
    ModelParams,
    initial_u,
    mean_step_success,
    plasticity,
    rl_cost,
    sft_cost,
    skill_strength,
    stage_plan,
    step_success,
    task_distribution,
)

__all__ = ["monte_carlo_success", "rl_update", "sft_update", "simulate_pipeline", "simulate_stages"]

STAGES = ("sft", "rl")


def _draw_skills(params: ModelParams, rng: np.random.Generator, shape) -> np.ndarray:
    """Step skills drawn i.i.d. from ``q`` (indices into the M skills), of shape `shape`."""
    q = task_distribution(params)
    support = np.flatnonzero(q)
    cdf = np.cumsum(q[support])
    picks = np.searchsorted(cdf / cdf[-1], rng.random(shape), side="right")
    return support[np.minimum(picks, support.size - 1)]


def _per_skill(values: np.ndarray, skills: np.ndarray, n_skills: int) -> np.ndarray:
    """Sum `values` (runs, ...) into their skills: an array (runs, M)."""
    runs = values.shape[0]
    flat = (np.arange(runs).reshape((runs,) + (1,) * (values.ndim - 1)) * n_skills + skills).ravel()
    return np.bincount(flat, weights=values.ravel(), minlength=runs * n_skills).reshape(runs, n_skills)


def sft_update(params: ModelParams, strength, u: np.ndarray, batch: int, rng: np.random.Generator) -> np.ndarray:
    """One SFT minibatch of `batch` noisy demonstrations for every run (rows of `u`)."""
    runs = u.shape[0]
    skills = _draw_skills(params, rng, (runs, batch, params.chain_length))
    pi = np.take_along_axis(step_success(params, strength, u), skills.reshape(runs, -1), axis=1).reshape(skills.shape)
    labels = rng.random(skills.shape) < params.demo_quality
    return u + params.sft_lr * plasticity(params, strength) * _per_skill(labels - pi, skills, params.n_skills)


def rl_update(params: ModelParams, strength, u: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One REINFORCE update (``k`` rollouts, leave-one-out baseline, flipped rewards) for every run."""
    runs, k = u.shape[0], params.rollouts
    skills = _draw_skills(params, rng, (runs, k, params.chain_length))
    pi = np.take_along_axis(step_success(params, strength, u), skills.reshape(runs, -1), axis=1).reshape(skills.shape)
    actions = rng.random(skills.shape) < pi
    reward = actions.all(axis=-1) ^ (rng.random((runs, k)) < params.reward_noise)
    reward = reward.astype(float)
    baseline = (reward.sum(axis=1, keepdims=True) - reward) / (k - 1) if k > 1 else np.zeros_like(reward)
    score = (reward - baseline)[..., None] * (actions - pi)
    return u + params.rl_lr / k * plasticity(params, strength) * _per_skill(score, skills, params.n_skills)


def simulate_stages(
    params: ModelParams,
    strength,
    stages,
    seed: int,
    runs: int = 1,
    batch: int = 1,
    record_every: int = 1,
    u_init=None,
) -> tuple[pd.DataFrame, np.ndarray]:
    """Run `stages` (a sequence of ``("sft" | "rl", n_updates)``) on `runs` independent runs.

    Returns the trajectory (rows: run, stage, update, compute, success, step_success; update 0 of the first stage
    and every `record_every`-th update and each stage's last one) and the final ``u`` (runs, M). ``compute`` counts
    post-training tokens (``batch`` demonstrations cost ``batch L``, an RL update ``k L (1 + gamma_gen)``).
    """
    check_int("seed", seed, 0)
    check_int("runs", runs, 1)
    check_int("batch", batch, 1)
    check_int("record_every", record_every, 1)
    for stage, n_updates in stages:
        if stage not in STAGES:
            raise ValueError(f"stage must be one of {list(STAGES)}, got {stage!r}")
        check_int(f"{stage} updates", n_updates, 0)
    rng = np.random.default_rng(seed)
    strength = np.asarray(strength, dtype=float)
    u = np.tile(initial_u(params) if u_init is None else np.asarray(u_init, dtype=float), (runs, 1))
    rows, spent, total = [], 0.0, 0

    def record(stage: str) -> None:
        pbar = mean_step_success(params, strength, u)
        rows.append(
            pd.DataFrame(
                {
                    "run": np.arange(runs),
                    "stage": stage,
                    "update": total,
                    "compute": spent,
                    "success": pbar**params.chain_length,
                    "step_success": pbar,
                }
            )
        )

    record(stages[0][0] if stages else "none")
    for stage, n_updates in stages:
        cost = batch * sft_cost(params) if stage == "sft" else rl_cost(params)
        for step in range(1, n_updates + 1):
            u = sft_update(params, strength, u, batch, rng) if stage == "sft" else rl_update(params, strength, u, rng)
            spent, total = spent + cost, total + 1
            if step % record_every == 0 or step == n_updates:
                record(stage)
    return pd.concat(rows, ignore_index=True), u


def simulate_pipeline(
    params: ModelParams,
    budget,
    allocation: Allocation,
    seed: int,
    base_compute=0.0,
    order: str = "sft_rl",
    runs: int = 1,
    batch: int = 1,
    record_every: int = 1,
) -> tuple[pd.DataFrame, np.ndarray]:
    """The stochastic counterpart of :func:`.dynamics.run_pipeline` for a sequential order (module docstring)."""
    if order not in ("sft_rl", "rl_sft"):
        raise ValueError(f"the simulation runs sequential orders ('sft_rl', 'rl_sft'), got {order!r}")
    plan = stage_plan(params, budget, allocation, base_compute)
    check_int("batch", batch, 1)
    stages = [("sft", int(plan.sft_demos // batch)), ("rl", int(plan.rl_updates))]
    if order == "rl_sft":
        stages.reverse()
    strength = skill_strength(params, plan.pretrain_compute)
    return simulate_stages(params, strength, stages, seed, runs, batch, record_every)


def monte_carlo_success(params: ModelParams, strength, u, n_tasks: int, rng: np.random.Generator) -> float:
    """Fraction of `n_tasks` sampled tasks (``L`` steps from ``q``, each solved with probability ``pi``) solved by
    the policy ``u`` (one run): an unbiased estimate of ``Pbar^L``."""
    check_int("n_tasks", n_tasks, 1)
    skills = _draw_skills(params, rng, (n_tasks, params.chain_length))
    pi = step_success(params, strength, u)[skills]
    return float((rng.random(skills.shape) < pi).all(axis=1).mean())
