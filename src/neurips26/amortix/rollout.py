"""Sampling completions of many scaffolds at once, and the log-probabilities of recorded actions.

All live episodes advance together: one transformer pass per decoration step encodes every live state, and
the three action levels are read from the same embeddings (GraphXForm). Each step is recorded (features,
masks, action) so that training can recompute its log-probability with gradients in one batched pass.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from neurips26.amortix import environment as env
from neurips26.amortix.features import GraphFeatures, collate, state_features
from neurips26.amortix.policy import GraphTransformerPolicy, batch_tensors, device_of, masked_log_softmax


@dataclass(frozen=True)
class StepRecord:
    """One decision: the state's features, the three masks, and the action (anchor 0 = STOP, else atom + 1)."""

    features: GraphFeatures
    anchor_mask: np.ndarray
    target_mask: np.ndarray
    order_mask: np.ndarray
    anchor: int
    target: int
    order: int


@dataclass
class Episode:
    scaffold_index: int
    steps: list[StepRecord]
    outcome: env.Outcome | None = None


def record_masks(state: env.State, anchor: int, target: int, order: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The masks of the three levels for a given action (level 2 and 3 are empty after STOP)."""
    anchor_mask = env.level1_mask(state)
    if anchor == env.STOP:
        return anchor_mask, np.zeros(0, dtype=bool), np.zeros(3, dtype=bool)
    return anchor_mask, env.level2_mask(state, anchor), env.level3_mask(state, anchor, target)


def _sample(
    log_probs: torch.Tensor, allowed: torch.Tensor, greedy: bool, generator: torch.Generator | None
) -> torch.Tensor:
    """Draws on the CPU (the generator lives there, so a seed gives the same samples on any device), among the
    choices `allowed` (a CPU mask). Masked choices already have probability exp(NEG) = 0, so applying the mask
    again changes no draw; it keeps the draws legal when the values come back from a device without them (the
    fake GPU of the placement tests)."""
    log_probs = log_probs.float().cpu()
    if greedy:
        return torch.where(allowed, log_probs, float("-inf")).argmax(dim=-1)
    return torch.multinomial(log_probs.exp() * allowed, 1, generator=generator).squeeze(-1)


def _pad_masks(masks: list[np.ndarray], width: int, device: torch.device | str = "cpu") -> torch.Tensor:
    out = np.zeros((len(masks), width), dtype=bool)
    for k, m in enumerate(masks):
        out[k, : len(m)] = m
    return torch.from_numpy(out).to(device)


@torch.no_grad()
def rollout(
    policy: GraphTransformerPolicy,
    scaffolds: list[env.Scaffold],
    repeats: int,
    config: env.EnvConfig,
    element_index: dict[str, int],
    temperature: float = 1.0,
    greedy: bool = False,
    generator: torch.Generator | None = None,
) -> list[Episode]:
    """`repeats` completions of every scaffold (episode k belongs to scaffold k // repeats)."""
    policy.eval()
    device = device_of(policy)
    states = [env.initial_state(s, config) for s in scaffolds for _ in range(repeats)]
    episodes = [Episode(k // repeats, []) for k in range(len(states))]
    n_vocab = len(config.decoration_vocab)
    while True:
        live = [k for k, s in enumerate(states) if not s.done]
        if not live:
            break
        features = [state_features(states[k], element_index) for k in live]
        batch = collate(features)
        h = policy.encode(batch_tensors(batch, device))
        width = batch.nodes.shape[1]
        anchor_masks = [env.level1_mask(states[k]) for k in live]
        allowed = _pad_masks(anchor_masks, width)
        anchor = _sample(
            masked_log_softmax(policy.anchor_logits(h), allowed.to(device), temperature), allowed, greedy, generator
        )
        building = (anchor > 0).nonzero().squeeze(-1)
        target = torch.zeros_like(anchor)
        order = torch.zeros_like(anchor)
        target_masks: dict[int, np.ndarray] = {}
        order_masks: dict[int, np.ndarray] = {}
        if len(building):
            rows = building.tolist()
            atoms = anchor[building] - 1
            masks2 = [env.level2_mask(states[live[r]], int(a)) for r, a in zip(rows, atoms.tolist())]
            on_device = building.to(device), atoms.to(device)
            allowed = _pad_masks(masks2, n_vocab + width - 1)
            t = _sample(
                masked_log_softmax(
                    policy.target_logits(h[on_device[0]], on_device[1]), allowed.to(device), temperature
                ),
                allowed,
                greedy,
                generator,
            )
            masks3 = [
                env.level3_mask(states[live[r]], int(a), int(x)) for r, a, x in zip(rows, atoms.tolist(), t.tolist())
            ]
            allowed = _pad_masks(masks3, 3)
            o = _sample(
                masked_log_softmax(
                    policy.order_logits(h[on_device[0]], on_device[1], t.to(device)), allowed.to(device), temperature
                ),
                allowed,
                greedy,
                generator,
            )
            target[building], order[building] = t, o
            target_masks = dict(zip(rows, masks2))
            order_masks = dict(zip(rows, masks3))
        for r, k in enumerate(live):
            a, t, o = int(anchor[r]), int(target[r]), int(order[r])
            episodes[k].steps.append(
                StepRecord(
                    features[r],
                    anchor_masks[r],
                    target_masks.get(r, np.zeros(0, bool)),
                    order_masks.get(r, np.zeros(3, bool)),
                    a,
                    t,
                    o,
                )
            )
            if a == 0:
                env.step(states[k], env.STOP)
            else:
                env.step(states[k], a - 1, t, o + 1)
    for episode, state in zip(episodes, states):
        episode.outcome = env.finish(state)
    return episodes


def demonstration_records(
    scaffold: env.Scaffold, actions: list[tuple[int, int, int]], config: env.EnvConfig, element_index: dict[str, int]
) -> list[StepRecord]:
    """Replay a demonstration through the environment, recording each state and action for behaviour cloning."""
    state = env.initial_state(scaffold, config)
    records = []
    for atom, target, order in actions:
        masks = record_masks(state, atom, target, order)
        records.append(
            StepRecord(
                state_features(state, element_index),
                *masks,
                0 if atom == env.STOP else atom + 1,
                target,
                max(order - 1, 0),
            )
        )
        env.step(state, atom, target, order) if atom != env.STOP else env.step(state, env.STOP)
    return records


def step_log_probs(policy: GraphTransformerPolicy, records: list[StepRecord], n_vocab: int) -> torch.Tensor:
    """log pi(action | state) of every record, with gradients, in one batched pass."""
    device = device_of(policy)
    batch = collate([r.features for r in records])
    width = batch.nodes.shape[1]
    h = policy.encode(batch_tensors(batch, device))
    anchor = torch.tensor([r.anchor for r in records], device=device)
    log_p = masked_log_softmax(policy.anchor_logits(h), _pad_masks([r.anchor_mask for r in records], width, device))
    total = log_p.gather(1, anchor[:, None]).squeeze(1)
    rows = [k for k, r in enumerate(records) if r.anchor > 0]  # steps that built something (not STOP)
    if rows:
        building = torch.tensor(rows, device=device)
        atoms = anchor[building] - 1
        target = torch.tensor([records[r].target for r in rows], device=device)
        order = torch.tensor([records[r].order for r in rows], device=device)
        log_t = masked_log_softmax(
            policy.target_logits(h[building], atoms),
            _pad_masks([records[r].target_mask for r in rows], n_vocab + width - 1, device),
        )
        log_o = masked_log_softmax(
            policy.order_logits(h[building], atoms, target),
            _pad_masks([records[r].order_mask for r in rows], 3, device),
        )
        extra = log_t.gather(1, target[:, None]).squeeze(1) + log_o.gather(1, order[:, None]).squeeze(1)
        total = total.index_add(0, building, extra)
    return total
