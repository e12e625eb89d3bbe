r"""The skill-chain model of multistage training: skills, pretraining, the policy, tasks, compute.

The paper (an analytically tractable model of multistage training) was not found: this is **our reconstruction**
(research notes, section 16.2), built from the quantization model of scaling (Michaud et al. 2023) for
pretraining and a mean-field policy-gradient picture of SFT and RL.

Model
=====
Skills ``i = 1..M`` have pretraining frequencies ``p_i = i^-alpha / sum_j j^-alpha``.

Pretraining with compute ``C`` (tokens) gives each skill a strength (its plasticity)::

    s_i(C) = max(1 - exp(-C p_i / n0), s_floor),      L_pt(C) = sum_i p_i exp(-C p_i / n0)  ~  C^-(alpha-1)/alpha

(the excess pretraining loss, without the floor).

A task is a chain of ``L`` steps whose skills are drawn i.i.d. from ``q``: ``q_i ∝ i^-alpha_task`` on the
task-relevant set ``S = {1, 1 + stride, 1 + 2 stride, ...}`` and ``q_i = 0`` off ``S``.

The policy solves a step of skill ``i`` with probability ``pi_i = sigmoid(z_i)``, ``z_i = z0 + s_i u_i``, with
``u_i = u0`` after pretraining. Post-training moves only ``u``, and ``dz_i / du_i = s_i``: a skill that
pretraining did not provide (``s_i = 0``) cannot be learned afterwards. This gate is the model's mechanism behind
the pretraining ceiling and RL's amplification of pretrained skills; ``plasticity = "full"`` removes it (the null
model of those claims): post-training then moves every logit at ``dz_i / du_i = 1``,
``z_i = z0 + s_i u0 + (u_i - u0)``, while pretraining still sets the starting success. A task succeeds when every
step does::

    P = E_task prod_j pi_{i_j} = Pbar^L,      Pbar = sum_k q_k pi_k.

Post-training (the mean-field rates are in :mod:`.dynamics`) spends a budget ``B`` of tokens: an SFT
demonstration costs ``c_s = L`` and an RL update (``k`` rollouts) costs ``c_r = k L (1 + gamma_gen)``.

Valid ranges (checked by :meth:`ModelParams.check`)
===================================================
- ``alpha > 1``: the Zipf frequencies stay summable as ``M -> inf`` (the model does not depend on the cut-off
  ``M``) and the pretraining-loss exponent ``(alpha - 1) / alpha`` is positive; at ``alpha <= 1`` there is no
  power law to speak of.
- ``alpha_task >= 0``: task frequencies are non-increasing in pretraining rank, the Zipf world in which frequent
  pretraining skills are also frequent task steps (our choice; ``alpha_task = 0`` is uniform on ``S``). ``q`` is
  normalised on the finite ``S`` for any such exponent; the ceiling's power law additionally needs
  ``alpha_task > 1`` and :func:`.evaluation.predicted_ceiling_exponent` checks that.
- ``0 <= rho <= 1`` (a fraction of correct demonstrated steps), ``0 <= eps_r < 1/2`` (at 1/2 the reward carries
  no information, above it the sign flips).

Choices where the notes are silent (ours)
=========================================
- ``S`` is every ``stride``-th skill by rank, so task-irrelevant skills sit at every pretraining frequency.
- Compute is counted in tokens for every stage, so one budget can be split between pretraining and
  post-training (:class:`Allocation`); a given pretrained base model enters as ``base_compute``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy.special import expit

from neurips26.common.validation import check_number, choice, integer, number, validate

__all__ = [
    "PLASTICITIES",
    "Allocation",
    "ModelParams",
    "StagePlan",
    "check_budget",
    "initial_u",
    "logits",
    "mean_step_success",
    "plasticity",
    "pretraining_loss",
    "rl_cost",
    "sft_cost",
    "skill_frequencies",
    "skill_strength",
    "stage_plan",
    "step_success",
    "task_distribution",
    "task_mask",
    "task_success",
    "zero_shot_success",
]

SUM_TOLERANCE = 1e-9
PLASTICITIES = ("pretrained", "full")  # dz/du = s (the model) or 1 (the null model without the pretraining gate)


@dataclass(frozen=True)
class ModelParams:
    """The model's parameters (module docstring); defaults are the quick-scale setting of the notes (16.6)."""

    n_skills: int = integer(1, default=500)
    alpha: float = number(1.0, low_open=True, default=1.5)
    alpha_task: float = number(0.0, default=1.5)
    task_stride: int = integer(1, default=2)
    n0: float = number(0.0, low_open=True, default=1.0)
    chain_length: int = integer(1, default=4)
    z0: float = number(default=-3.0)
    u0: float = number(default=3.0)
    s_floor: float = number(0.0, 1.0, default=0.0)
    sft_lr: float = number(0.0, low_open=True, default=0.05)
    rl_lr: float = number(0.0, low_open=True, default=0.05)
    demo_quality: float = number(0.0, 1.0, default=0.9)
    reward_noise: float = number(0.0, 0.5, high_open=True, default=0.0)
    rollouts: int = integer(1, default=4)
    gen_overhead: float = number(0.0, default=0.0)
    plasticity: str = choice(PLASTICITIES, default="pretrained")

    def __post_init__(self):
        self.check()

    def check(self) -> None:
        """ValueError naming the field when a parameter is out of its range (module docstring: valid ranges)."""
        validate(self)

    def replace(self, **changes) -> ModelParams:
        """A copy with `changes` applied (and checked)."""
        return replace(self, **changes)


@dataclass(frozen=True)
class Allocation:
    """Fractions of one compute budget given to pretraining, SFT and RL: each in [0, 1], summing to 1."""

    pretrain: float
    sft: float
    rl: float

    def __post_init__(self):
        self.check()

    def check(self) -> None:
        for name in ("pretrain", "sft", "rl"):
            check_number(name, getattr(self, name), 0.0, 1.0, who="Allocation")
        total = self.pretrain + self.sft + self.rl
        if abs(total - 1.0) > SUM_TOLERANCE:
            raise ValueError(
                f"Allocation fractions must sum to 1, got {self.pretrain!r} + {self.sft!r} + {self.rl!r} = {total!r}"
            )

    @classmethod
    def post_training(cls, sft_share: float) -> Allocation:
        """The whole budget to post-training, a share `sft_share` of it to SFT and the rest to RL."""
        check_number("sft_share", sft_share, 0.0, 1.0)
        return cls(0.0, float(sft_share), 1.0 - float(sft_share))


@dataclass(frozen=True)
class StagePlan:
    """What a budget buys: pretraining tokens, SFT demonstrations and RL updates (real numbers, mean-field)."""

    pretrain_compute: float
    sft_demos: float
    rl_updates: float


def check_budget(name: str, value) -> float:
    """`value` as a float when it is a finite number >= 0; ValueError naming `name` otherwise."""
    return float(check_number(name, value, 0.0))


def skill_frequencies(params: ModelParams) -> np.ndarray:
    """Pretraining frequencies ``p_i ∝ i^-alpha`` of skills ``i = 1..M`` (sum 1)."""
    weights = np.arange(1, params.n_skills + 1, dtype=float) ** -params.alpha
    return weights / weights.sum()


def task_mask(params: ModelParams) -> np.ndarray:
    """Boolean mask of the task-relevant skills ``S`` (ranks ``1, 1 + stride, ...``)."""
    return np.arange(params.n_skills) % params.task_stride == 0


def task_distribution(params: ModelParams) -> np.ndarray:
    """Step-skill distribution ``q``: ``∝ i^-alpha_task`` on ``S``, 0 off it (sum 1)."""
    ranks = np.arange(1, params.n_skills + 1, dtype=float)
    weights = np.where(task_mask(params), ranks**-params.alpha_task, 0.0)
    return weights / weights.sum()


def skill_strength(params: ModelParams, compute) -> np.ndarray:
    """``s_i(C) = max(1 - exp(-C p_i / n0), s_floor)``, shape ``np.shape(compute) + (M,)``."""
    compute = np.asarray(compute, dtype=float)
    if np.any(~np.isfinite(compute)) or np.any(compute < 0):
        raise ValueError(f"pretraining compute must be finite and >= 0, got {compute!r}")
    strength = -np.expm1(-compute[..., None] * skill_frequencies(params) / params.n0)
    return np.maximum(strength, params.s_floor)


def pretraining_loss(params: ModelParams, compute) -> np.ndarray:
    """Excess pretraining loss ``L_pt(C) = sum_i p_i exp(-C p_i / n0)`` (no floor), shaped like `compute`."""
    compute = np.asarray(compute, dtype=float)
    if np.any(~np.isfinite(compute)) or np.any(compute < 0):
        raise ValueError(f"pretraining compute must be finite and >= 0, got {compute!r}")
    p = skill_frequencies(params)
    return np.exp(-compute[..., None] * p / params.n0) @ p


def plasticity(params: ModelParams, strength) -> np.ndarray:
    """``dz_i / du_i`` in post-training: the pretrained strength ``s_i``, or 1 with ``plasticity = "full"``."""
    strength = np.asarray(strength, dtype=float)
    return strength if params.plasticity == "pretrained" else np.ones_like(strength)


def logits(params: ModelParams, strength, u) -> np.ndarray:
    """Per-skill logits ``z_i = z0 + s_i u_i`` in the model; ``z0 + s_i u0 + (u_i - u0)`` in the null model without
    the pretraining gate (broadcasting `strength` and `u`)."""
    strength, u = np.asarray(strength, dtype=float), np.asarray(u, dtype=float)
    if params.plasticity == "pretrained":
        return params.z0 + strength * u
    return params.z0 + strength * params.u0 + (u - params.u0)


def step_success(params: ModelParams, strength, u) -> np.ndarray:
    """Per-skill step success ``pi_i = sigmoid(z_i)`` (:func:`logits`), broadcasting `strength` and `u`."""
    return expit(logits(params, strength, u))


def mean_step_success(params: ModelParams, strength, u) -> np.ndarray:
    """``Pbar = sum_k q_k pi_k`` over the last axis."""
    return step_success(params, strength, u) @ task_distribution(params)


def task_success(params: ModelParams, strength, u) -> np.ndarray:
    """Task success ``P = Pbar^L`` over the last axis."""
    return mean_step_success(params, strength, u) ** params.chain_length


def sft_cost(params: ModelParams) -> float:
    """Tokens per SFT demonstration, ``c_s = L``."""
    return float(params.chain_length)


def rl_cost(params: ModelParams) -> float:
    """Tokens per RL update, ``c_r = k L (1 + gamma_gen)``."""
    return params.rollouts * params.chain_length * (1.0 + params.gen_overhead)


def stage_plan(params: ModelParams, budget, allocation: Allocation, base_compute=0.0) -> StagePlan:
    """Split `budget` tokens by `allocation`; pretraining gets ``base_compute`` (a given base model) on top."""
    budget = check_budget("budget", budget)
    base_compute = check_budget("base_compute", base_compute)
    allocation.check()
    return StagePlan(
        pretrain_compute=base_compute + allocation.pretrain * budget,
        sft_demos=allocation.sft * budget / sft_cost(params),
        rl_updates=allocation.rl * budget / rl_cost(params),
    )


def initial_u(params: ModelParams) -> np.ndarray:
    """``u_i = u0`` for every skill: the policy right after pretraining."""
    return np.full(params.n_skills, params.u0)


def zero_shot_success(params: ModelParams, compute) -> float:
    """Task success of the pretrained model (no post-training) at pretraining compute `compute`."""
    return float(task_success(params, skill_strength(params, compute), initial_u(params)))
