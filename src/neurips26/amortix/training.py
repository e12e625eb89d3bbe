"""Behaviour cloning of scaffold completions, and RL fine-tuning with group-relative advantages (notes 7.2).

RL follows GRXForm's update with one PPO epoch (the ratio is 1, so the clipped objective is REINFORCE with a
baseline): loss = -(1 / (B G)) sum_{b,g} A_{b,g} sum_t log pi(a_t | s_t), i.e. normalised per trajectory,
not per token (Dr. GRPO); Adam, gradient norm clipped at 1; the checkpoint with the best greedy validation
score is kept.
"""

from __future__ import annotations

import copy
import logging
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch

from neurips26.amortix import environment as env
from neurips26.amortix.advantages import advantages
from neurips26.amortix.policy import GraphTransformerPolicy
from neurips26.amortix.rollout import Episode, StepRecord, rollout, step_log_probs
from neurips26.common.adam import Adam

log = logging.getLogger("neurips26.amortix")
ScoreFn = Callable[[list[str]], np.ndarray]  # canonical SMILES -> scores in [0, 1] (one oracle call each)


class NonFiniteLoss(RuntimeError):
    pass


def behaviour_cloning(policy: GraphTransformerPolicy, train: list[StepRecord], val: list[StepRecord], steps: int,
                      batch_size: int, lr: float, n_vocab: int, seed: int, eval_every: int = 50) -> list[dict]:
    """Teacher forcing: minimise -log pi(demonstrated action | state) over random batches of recorded states.
    Keeps the parameters with the lowest validation NLL; returns the log rows."""
    rng = np.random.default_rng(seed)
    optimiser = Adam(policy.parameters(), lr=lr)
    rows, best, best_state = [], np.inf, copy.deepcopy(policy.state_dict())
    start = time.perf_counter()
    for step in range(1, steps + 1):
        policy.train()
        batch = [train[i] for i in rng.choice(len(train), size=min(batch_size, len(train)), replace=False)]
        loss = -step_log_probs(policy, batch, n_vocab).mean()
        if not torch.isfinite(loss):
            raise NonFiniteLoss(f"behaviour cloning loss is {loss.item()} at step {step}")
        optimiser.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        optimiser.step()
        if step % eval_every == 0 or step == steps:
            val_nll = validation_nll(policy, val, n_vocab)
            rows.append({"step": step, "train_nll": loss.item(), "val_nll": val_nll,
                         "seconds": time.perf_counter() - start})
            log.info("pretrain step %d: train NLL %.3f, val NLL %.3f (%.0f s)", step, loss.item(), val_nll,
                     rows[-1]["seconds"])
            if val_nll < best:
                best, best_state = val_nll, copy.deepcopy(policy.state_dict())
    policy.load_state_dict(best_state)
    return rows


@torch.no_grad()
def validation_nll(policy: GraphTransformerPolicy, records: list[StepRecord], n_vocab: int, chunk: int = 512) -> float:
    policy.eval()
    total = sum(-step_log_probs(policy, records[i:i + chunk], n_vocab).sum().item()
                for i in range(0, len(records), chunk))
    return total / max(len(records), 1)


def episode_rewards(episodes: list[Episode], score: ScoreFn) -> tuple[np.ndarray, int]:
    """Oracle scores of valid, scaffold-retaining completions (one call each); 0 for the rest (no call)."""
    rewards = np.zeros(len(episodes))
    scored = [k for k, e in enumerate(episodes) if e.outcome.valid and e.outcome.retained]
    if scored:
        rewards[scored] = score([episodes[k].outcome.smiles for k in scored])
    return rewards, len(scored)


def policy_gradient_step(policy: GraphTransformerPolicy, optimiser: Adam, episodes: list[Episode], adv: np.ndarray,
                         n_vocab: int, grad_clip: float, where: str) -> float:
    """One update on -(1 / N) sum_i A_i log pi(trajectory_i); returns the gradient norm before clipping."""
    records = [r for e in episodes for r in e.steps]
    policy.train()
    log_p = step_log_probs(policy, records, n_vocab)
    owner = torch.tensor([k for k, e in enumerate(episodes) for _ in e.steps], device=log_p.device)
    per_episode = torch.zeros(len(episodes), device=log_p.device).index_add(0, owner, log_p)
    loss = -(torch.from_numpy(adv).float().to(log_p.device) * per_episode).sum() / len(episodes)
    if not torch.isfinite(loss):
        raise NonFiniteLoss(f"RL loss is {loss.item()} at {where}")
    optimiser.zero_grad()
    loss.backward()
    grad_norm = float(torch.nn.utils.clip_grad_norm_(policy.parameters(), grad_clip))
    optimiser.step()
    return grad_norm


@dataclass(frozen=True)
class RLSettings:
    steps: int
    batch_scaffolds: int
    group_size: int
    lr: float = 1e-4
    grad_clip: float = 1.0
    temperature: float = 1.0
    val_every: int = 5


def greedy_score(policy: GraphTransformerPolicy, scaffolds: list[env.Scaffold], score: ScoreFn,
                 config: env.EnvConfig, element_index: dict[str, int]) -> tuple[float, int]:
    """Mean score of one greedy completion per scaffold (invalid counts 0), and the oracle calls it took."""
    episodes = rollout(policy, scaffolds, 1, config, element_index, greedy=True)
    rewards, calls = episode_rewards(episodes, score)
    return float(rewards.mean()), calls


def reinforce(policy: GraphTransformerPolicy, train: list[env.Scaffold], val: list[env.Scaffold], score: ScoreFn,
              variant: str, settings: RLSettings, config: env.EnvConfig, element_index: dict[str, int],
              seed: int) -> list[dict]:
    """RL fine-tuning; leaves the best-validation parameters in `policy` and returns one log row per step."""
    rng = np.random.default_rng(seed)
    generator = torch.Generator().manual_seed(seed)
    optimiser = Adam(policy.parameters(), lr=settings.lr)
    n_vocab = len(config.decoration_vocab)
    best, val_calls = greedy_score(policy, val, score, config, element_index)
    best_state, best_step = copy.deepcopy(policy.state_dict()), 0
    rows, calls, start = [], 0, time.perf_counter()
    for step in range(1, settings.steps + 1):
        chosen = rng.choice(len(train), size=min(settings.batch_scaffolds, len(train)), replace=False)
        episodes = rollout(policy, [train[i] for i in chosen], settings.group_size, config, element_index,
                           temperature=settings.temperature, generator=generator)
        rewards, spent = episode_rewards(episodes, score)
        calls += spent
        grid = rewards.reshape(len(chosen), settings.group_size)
        adv = advantages(grid, variant).ravel()
        grad_norm = policy_gradient_step(policy, optimiser, episodes, adv, n_vocab, settings.grad_clip,
                                         f"step {step} ({variant})")
        row = {"step": step, "variant": variant, "reward_mean": float(rewards.mean()),
               "reward_best": float(rewards.max()), "group_std": float(grid.std(axis=1).mean()),
               "advantage_std": float(adv.std()), "grad_norm": grad_norm,
               "valid": float(np.mean([e.outcome.valid for e in episodes])), "oracle_calls": calls,
               "val_score": np.nan, "seconds": time.perf_counter() - start}
        if step % settings.val_every == 0 or step == settings.steps:
            row["val_score"], spent = greedy_score(policy, val, score, config, element_index)
            val_calls += spent
            if row["val_score"] > best:
                best, best_state, best_step = row["val_score"], copy.deepcopy(policy.state_dict()), step
            log.info("%s step %d: reward %.3f, valid %.2f, val %.3f, %d calls (%.0f s)", variant, step,
                     row["reward_mean"], row["valid"], row["val_score"], calls, row["seconds"])
        row["val_oracle_calls"] = val_calls
        row["best_step"] = best_step
        rows.append(row)
    policy.load_state_dict(best_state)
    return rows


def optimise_instance(policy: GraphTransformerPolicy, scaffold: env.Scaffold, scorer, group_size: int, budget: int,
                      lr: float, config: env.EnvConfig, element_index: dict[str, int], seed: int,
                      learn: bool = True, temperature: float = 1.0) -> list[dict]:
    """Instance optimisation from one start scaffold until `budget` oracle calls: sample groups of completions,
    score them and (with `learn`) take a Dr. GRPO step on the group (per-instance RL; PMO's amortized run);
    without `learn` it is plain sampling from the policy (best-of-K / PMO's random baseline).
    Returns one row per oracle call in call order (call, smiles, score, round)."""
    generator = torch.Generator().manual_seed(seed)
    optimiser = Adam(policy.parameters(), lr=lr) if learn else None
    n_vocab = len(config.decoration_vocab)
    rows: list[dict] = []
    stale = 0
    for round_ in range(1, 100 * budget + 1):
        episodes = rollout(policy, [scaffold], group_size, config, element_index, temperature=temperature,
                           generator=generator)
        usable = [e.outcome.smiles for e in episodes if e.outcome.valid and e.outcome.retained]
        fresh = scorer.new_molecules(usable)
        remaining = budget - scorer.calls
        if len(fresh) > remaining:  # the budget ends inside this group: score what it allows, no update
            scored = scorer(fresh[:remaining])
            rows.extend({"call": scorer.calls - remaining + i + 1, "smiles": s, "score": v, "round": round_}
                        for i, (s, v) in enumerate(zip(fresh[:remaining], scored)))
            break
        before = scorer.calls
        rewards, _ = episode_rewards(episodes, scorer)
        rows.extend({"call": before + i + 1, "smiles": s, "score": v, "round": round_}
                    for i, (s, v) in enumerate(scorer.log[before:]))
        stale = 0 if fresh else stale + 1
        if learn:
            policy_gradient_step(policy, optimiser, episodes, advantages(rewards[None, :], "drgrpo").ravel(),
                                 n_vocab, 1.0, f"round {round_} on {scaffold.smiles}")
        if scorer.calls >= budget or stale >= 20:  # spent, or 20 groups in a row brought nothing new
            break
    return rows
