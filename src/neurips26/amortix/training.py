"""Behaviour cloning of scaffold completions, and RL fine-tuning with group-relative advantages (arXiv:2602.12162).

RL follows GRXForm's update with one PPO epoch (the ratio is 1, so the clipped objective is REINFORCE with a
baseline): loss = -(1 / (B G)) sum_{b,g} A_{b,g} sum_t log pi(a_t | s_t), i.e. normalised per trajectory,
not per token (Dr. GRPO); Adam, gradient norm clipped at 1; the checkpoint with the best greedy validation
score is kept.

Pretraining and RL fine-tuning run in the common training loop (neurips26.common.loop: job device, divergence,
progress, checkpoints, resume, SIGTERM), one loop step per update (RL: one update of every seed of a job's seed
group, `reinforce_seeds`). Instance optimisation (`optimise_instance`: the per-instance RL baseline and PMO's
amortized run) is not a loop of its own: its rounds end when the oracle budget is spent or nothing new comes up,
not after a number of steps, and one run is short; the jobs that call it (neurips26.amortix.instances) make one
whole run one loop step, so they resume at run boundaries.
"""

from __future__ import annotations

import copy
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from neurips26.amortix import environment as env
from neurips26.amortix.advantages import advantages
from neurips26.amortix.policy import GraphTransformerPolicy
from neurips26.amortix.rollout import Episode, StepRecord, rollout, step_log_probs
from neurips26.common import loop
from neurips26.common.optim import Adam

log = logging.getLogger("neurips26.amortix")
ScoreFn = Callable[[list[str]], np.ndarray]  # canonical SMILES -> scores in [0, 1] (one oracle call each)
GRADIENT_CHUNK = 16  # episodes per backward of a policy-gradient step (one group of the paper's 16 completions)


def behaviour_cloning(
    policy: GraphTransformerPolicy,
    train: list[StepRecord],
    val: list[StepRecord],
    steps: int,
    batch_size: int,
    lr: float,
    n_vocab: int,
    seed: int,
    eval_every: int = 50,
    loop_settings: loop.LoopSettings | None = None,
) -> list[dict]:
    """Teacher forcing: minimise -log pi(demonstrated action | state) over random batches of recorded states.
    Keeps the parameters with the lowest validation NLL; returns the log rows. One loop step is one batch."""
    rng = np.random.default_rng(seed)
    optimiser = Adam(policy.parameters(), lr=lr)
    rows: list[dict] = []
    best = {"val_nll": np.inf, "weights": copy.deepcopy(policy.state_dict())}
    start = time.perf_counter()

    def step_fn(index: int) -> torch.Tensor:
        step = index + 1
        policy.train()
        batch = [train[i] for i in rng.choice(len(train), size=min(batch_size, len(train)), replace=False)]
        loss = -step_log_probs(policy, batch, n_vocab).mean()
        optimiser.zero_grad()
        loss.backward()
        if not _finite(loss):
            return loss  # the loop stops with Diverged, naming the first group with a non-finite gradient
        torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        optimiser.step()
        if step % eval_every == 0 or step == steps:
            val_nll = validation_nll(policy, val, n_vocab)
            rows.append(
                {"step": step, "train_nll": loss.item(), "val_nll": val_nll, "seconds": time.perf_counter() - start}
            )
            log.info(
                "pretrain step %d: train NLL %.3f, val NLL %.3f (%.0f s)",
                step,
                loss.item(),
                val_nll,
                rows[-1]["seconds"],
            )
            if val_nll < best["val_nll"]:
                best["val_nll"], best["weights"] = val_nll, copy.deepcopy(policy.state_dict())
        return loss

    state = {"policy": policy, "optimiser": optimiser, "rng": rng, "rows": rows, "best": best}
    loop.run_loop(step_fn, steps, state, loop_settings or loop.LoopSettings(name="pretrain"))
    policy.load_state_dict(best["weights"])
    return rows


def _finite(loss: torch.Tensor) -> bool:
    return math.isfinite(float(loss.detach()))


@torch.no_grad()
def validation_nll(policy: GraphTransformerPolicy, records: list[StepRecord], n_vocab: int, chunk: int = 512) -> float:
    policy.eval()
    total = sum(
        -step_log_probs(policy, records[i : i + chunk], n_vocab).sum().item() for i in range(0, len(records), chunk)
    )
    return total / max(len(records), 1)


def episode_rewards(episodes: list[Episode], score: ScoreFn) -> tuple[np.ndarray, int]:
    """Oracle scores of valid, scaffold-retaining completions (one call each); 0 for the rest (no call)."""
    rewards = np.zeros(len(episodes))
    scored = [k for k, e in enumerate(episodes) if e.outcome.valid and e.outcome.retained]
    if scored:
        rewards[scored] = score([episodes[k].outcome.smiles for k in scored])
    return rewards, len(scored)


def policy_gradient_step(
    policy: GraphTransformerPolicy,
    optimiser: Adam,
    episodes: list[Episode],
    adv: np.ndarray,
    n_vocab: int,
    grad_clip: float,
    chunk: int = GRADIENT_CHUNK,
) -> tuple[torch.Tensor, float]:
    """One update on -(1 / N) sum_i A_i log pi(trajectory_i); returns the loss and the gradient norm before
    clipping. A non-finite loss leaves the weights untouched (its gradients stay, for the divergence report).

    The gradient is accumulated over groups of `chunk` episodes (the same gradient up to float summation order), so
    the backward holds one group's activations: at paper scale 10 scaffolds x 16 completions of up to 40 decisions
    through the 512-wide, 10-layer policy held about 97 GB at once (the rehearsal's count), past an 80 GB GPU."""
    policy.train()
    optimiser.zero_grad()
    weights = torch.from_numpy(np.asarray(adv)).float()
    total = None
    for start in range(0, len(episodes), chunk):
        group = episodes[start : start + chunk]
        log_p = step_log_probs(policy, [r for e in group for r in e.steps], n_vocab)
        owner = torch.tensor([k for k, e in enumerate(group) for _ in e.steps], device=log_p.device)
        per_episode = torch.zeros(len(group), device=log_p.device).index_add(0, owner, log_p)
        loss = -(weights[start : start + len(group)].to(log_p.device) * per_episode).sum() / len(episodes)
        loss.backward()
        total = loss.detach() if total is None else total + loss.detach()
    if total is None or not _finite(total):
        return total, math.nan
    grad_norm = float(torch.nn.utils.clip_grad_norm_(policy.parameters(), grad_clip))
    optimiser.step()
    return total, grad_norm


@dataclass(frozen=True)
class RLSettings:
    steps: int
    batch_scaffolds: int
    group_size: int
    lr: float = 1e-4
    grad_clip: float = 1.0
    temperature: float = 1.0
    val_every: int = 5


def greedy_score(
    policy: GraphTransformerPolicy,
    scaffolds: list[env.Scaffold],
    score: ScoreFn,
    config: env.EnvConfig,
    element_index: dict[str, int],
) -> tuple[float, int]:
    """Mean score of one greedy completion per scaffold (invalid counts 0), and the oracle calls it took."""
    episodes = rollout(policy, scaffolds, 1, config, element_index, greedy=True)
    rewards, calls = episode_rewards(episodes, score)
    return float(rewards.mean()), calls


def reinforce(
    policy: GraphTransformerPolicy,
    train: list[env.Scaffold],
    val: list[env.Scaffold],
    score: ScoreFn,
    variant: str,
    settings: RLSettings,
    config: env.EnvConfig,
    element_index: dict[str, int],
    seed: int,
    loop_settings: loop.LoopSettings | None = None,
) -> list[dict]:
    """RL fine-tuning of one policy: `reinforce_seeds` with one seed. Leaves the best-validation parameters in
    `policy` and returns one log row per step."""
    return reinforce_seeds(
        [policy], train, val, score, variant, settings, config, element_index, [seed], loop_settings
    )[0]


@dataclass
class _SeedRun:
    """One seed's RL run: its policy, optimiser, scaffold order (`rng`), sampling stream (`generator`), log rows,
    best validation checkpoint and counts (oracle calls, and `seconds`: the time of its own steps)."""

    seed: int
    policy: GraphTransformerPolicy
    optimiser: Adam
    rng: np.random.Generator
    generator: torch.Generator
    rows: list[dict]
    best: dict
    counts: dict

    def states(self) -> dict:
        """What a checkpoint holds of this run, under names that carry its seed."""
        names = ("policy", "optimiser", "rng", "generator", "rows", "best", "counts")
        return {f"{name}_s{self.seed}": getattr(self, name) for name in names}


def reinforce_seeds(
    policies: list[GraphTransformerPolicy],
    train: list[env.Scaffold],
    val: list[env.Scaffold],
    score: ScoreFn,
    variant: str,
    settings: RLSettings,
    config: env.EnvConfig,
    element_index: dict[str, int],
    seeds: list[int],
    loop_settings: loop.LoopSettings | None = None,
) -> list[list[dict]]:
    """RL fine-tuning of one policy per seed in one loop (one job trains a group of seeds); returns each seed's log
    rows and leaves its best-validation parameters in its policy.

    Seeds share nothing but the scaffolds and the score function: each has its own policy (each starts from the
    policy it is given), Adam state, scaffold order (numpy generator seeded with its seed), sampling stream (torch
    generator seeded with its seed) and best checkpoint, and one loop step runs one update of every seed, seed
    after seed, with the same operations as a run of that seed alone: every seed's result is bit-identical to its
    single-seed run (tests/test_amortix_seed_groups.py). Why not one forward pass over the seeds (a stacked
    ensemble): profile of one quick seed (20 steps, CPU time, one thread): policy passes 46 % (forward 28 %,
    backward 18 %, Adam and clipping under 1 %), the oracle 35 % (RDKit's QED and SA, ECFP4, the forests), the
    environment 16 % (RDKit sanitisation and substructure check 9 %, masks, features, steps, draws). The passes
    are compute-bound: encoding 192 states (3 seeds x 64) took 87 ms against 28 ms for 64, and the vmapped
    ensemble (torch.func) was slower than three separate passes and cannot backpropagate into the attention bias
    (its scaled_dot_product_attention falls back to a kernel without a gradient for attn_mask). The rest is per
    molecule. Stacking would buy nothing and break bit-identity (other kernels, other padding); 3 seeds in one job
    took 2.9x the CPU time of one seed's job before this change (288 s against 100 s, run side by side).
    The score function may be shared, with a cache (objectives.Scorer(cache=True)):
    a molecule's score does not depend on the batch it is scored in, and each seed counts its own oracle calls
    (`episode_rewards`), so a cache changes no seed's result.

    The first loop step also scores each starting policy on validation (the one to beat). A non-finite loss of any
    seed stops the whole run (Diverged names the first group with a non-finite gradient, e.g. `policy_s1.blocks`).
    """
    if len(policies) != len(seeds) or not seeds:
        raise ValueError(f"need one policy per seed, got {len(policies)} policies for seeds {list(seeds)}")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds repeat: {list(seeds)}")
    runs = [
        _SeedRun(
            seed,
            policy,
            Adam(policy.parameters(), lr=settings.lr),
            np.random.default_rng(seed),
            torch.Generator().manual_seed(seed),
            [],
            {"score": -np.inf, "weights": None, "step": 0},
            {"calls": 0, "val_calls": 0, "seconds": 0.0},
        )
        for seed, policy in zip(seeds, policies)
    ]
    n_vocab = len(config.decoration_vocab)

    def seed_step(run: _SeedRun, index: int) -> torch.Tensor:
        step = index + 1
        start = time.perf_counter()
        policy, best, counts = run.policy, run.best, run.counts
        if index == 0:
            best["score"], counts["val_calls"] = greedy_score(policy, val, score, config, element_index)
            best["weights"] = copy.deepcopy(policy.state_dict())
        chosen = run.rng.choice(len(train), size=min(settings.batch_scaffolds, len(train)), replace=False)
        episodes = rollout(
            policy,
            [train[i] for i in chosen],
            settings.group_size,
            config,
            element_index,
            temperature=settings.temperature,
            generator=run.generator,
        )
        rewards, spent = episode_rewards(episodes, score)
        counts["calls"] += spent
        grid = rewards.reshape(len(chosen), settings.group_size)
        adv = advantages(grid, variant).ravel()
        loss, grad_norm = policy_gradient_step(policy, run.optimiser, episodes, adv, n_vocab, settings.grad_clip)
        if not _finite(loss):
            return loss  # the loop stops with Diverged, naming the first group with a non-finite gradient
        row = {
            "step": step,
            "variant": variant,
            "reward_mean": float(rewards.mean()),
            "reward_best": float(rewards.max()),
            "group_std": float(grid.std(axis=1).mean()),
            "advantage_std": float(adv.std()),
            "grad_norm": grad_norm,
            "valid": float(np.mean([e.outcome.valid for e in episodes])),
            "oracle_calls": counts["calls"],
            "val_score": np.nan,
        }
        if step % settings.val_every == 0 or step == settings.steps:
            row["val_score"], spent = greedy_score(policy, val, score, config, element_index)
            counts["val_calls"] += spent
            if row["val_score"] > best["score"]:
                best.update(score=row["val_score"], weights=copy.deepcopy(policy.state_dict()), step=step)
        counts["seconds"] += time.perf_counter() - start
        row["seconds"] = counts["seconds"]
        if not math.isnan(row["val_score"]):
            log.info(
                "%s seed %d step %d: reward %.3f, valid %.2f, val %.3f, %d calls (%.0f s)",
                variant,
                run.seed,
                step,
                row["reward_mean"],
                row["valid"],
                row["val_score"],
                counts["calls"],
                row["seconds"],
            )
        row["val_oracle_calls"] = counts["val_calls"]
        row["best_step"] = best["step"]
        run.rows.append(row)
        return loss

    def step_fn(index: int) -> torch.Tensor:
        losses = []
        for run in runs:
            loss = seed_step(run, index)
            if not _finite(loss):
                return loss
            losses.append(loss.detach())
        return torch.stack(losses).sum()

    state = {name: obj for run in runs for name, obj in run.states().items()}
    loop.run_loop(step_fn, settings.steps, state, loop_settings or loop.LoopSettings(name=f"rl {variant}"))
    for run in runs:
        if run.best["weights"] is not None:
            run.policy.load_state_dict(run.best["weights"])
    return [run.rows for run in runs]


def optimise_instance(
    policy: GraphTransformerPolicy,
    scaffold: env.Scaffold,
    scorer,
    group_size: int,
    budget: int,
    lr: float,
    config: env.EnvConfig,
    element_index: dict[str, int],
    seed: int,
    learn: bool = True,
    temperature: float = 1.0,
) -> list[dict]:
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
        episodes = rollout(
            policy, [scaffold], group_size, config, element_index, temperature=temperature, generator=generator
        )
        usable = [e.outcome.smiles for e in episodes if e.outcome.valid and e.outcome.retained]
        fresh = scorer.new_molecules(usable)
        remaining = budget - scorer.calls
        if len(fresh) > remaining:  # the budget ends inside this group: score what it allows, no update
            scored = scorer(fresh[:remaining])
            rows.extend(
                {"call": scorer.calls - remaining + i + 1, "smiles": s, "score": v, "round": round_}
                for i, (s, v) in enumerate(zip(fresh[:remaining], scored))
            )
            break
        before = scorer.calls
        rewards, _ = episode_rewards(episodes, scorer)
        rows.extend(
            {"call": before + i + 1, "smiles": s, "score": v, "round": round_}
            for i, (s, v) in enumerate(scorer.log[before:])
        )
        stale = 0 if fresh else stale + 1
        if learn:
            loss, _ = policy_gradient_step(
                policy, optimiser, episodes, advantages(rewards[None, :], "drgrpo").ravel(), n_vocab, 1.0
            )
            if not _finite(loss):
                where = loop.first_non_finite(loop.parameter_groups({"policy": policy}))
                raise loop.Diverged(round_, where, float(loss), f"instance optimisation of {scaffold.smiles}")
        if scorer.calls >= budget or stale >= 20:  # spent, or 20 groups in a row brought nothing new
            break
    return rows
