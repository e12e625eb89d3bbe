r"""Sampling walks from the trained generator (AnalogToBi, Kim et al. 2026, arXiv 2603.08720, Sec. 3.2 and 4.1;
reference ``GPT_Inference_Grammar.py``): every row of a batch starts from its prompt (its circuit-type token, or
``VSS`` without type conditioning) and draws one token per step at ``temperature`` from the model's next-token
distribution, restricted by the grammar (:class:`.grammar.State`) when decoding is grammar-guided. A row ends at its
first ``TRUNCATE``; a row still open after ``max_len`` tokens is kept as not terminated (the paper counts it as
invalid).

``model=None`` is the sanity baseline: i.i.d. standard-normal logits at each step instead of a model, under the
grammar, so that what the grammar alone guarantees can be told apart from what the model learns. Uniform choices
never close a circuit (the grammar admits a fresh device at every net and the walk cannot bind every pin it opens),
so the baseline adds one length rule, drawn per walk by the caller: a target device count (``target_devices``, from
the training circuits of the requested type: the data's size distribution). Among the grammar's allowed tokens it
then draws uniformly from

* before the walk holds its target: every allowed token, the unused indices of a device family counting as one
  choice (the lowest of them; the grammar admits every unused index alike);
* once it holds its target: no fresh device (unless the grammar offers nothing else), and, where some allowed
  tokens bind a still-unbound pin or complete an open device, only those (an edge or device that binds new pins of a
  device of the walk; a net already in the walk, one of its internal nets touching a single device first, rather
  than a new internal net);
* ``TRUNCATE``, allowed as soon as the grammar allows it (on ``VSS``, the graph complete): the only choice once the
  walk holds its target, one of the choices before.

Without target device counts the target is one device, which ends most walks with one-device circuits.

Each batch draws its uniforms from one numpy generator seeded by ``seed`` (same seed, same walks). Deliberate
difference: the reference decodes one circuit at a time; we decode a batch in lockstep with a key/value cache.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch

from .grammar import State
from .model import GPT
from .netlist import FAMILIES, PASSIVE
from .tokens import END, Vocabulary, edge_family, kind_of, split_device

__all__ = ["SampledWalk", "sample_walks"]


@dataclass(frozen=True)
class SampledWalk:
    prompt: tuple[str, ...]
    tokens: tuple[str, ...]  # the whole walk, prompt included, up to and including TRUNCATE when terminated
    terminated: bool


def _binds(state: State, last: list[str], token: str) -> bool:
    """Whether ``token`` after the walk's last tokens ``last`` binds a still-unbound pin of a device of the walk (an
    edge or device that connects new pins), or, for a net, lands where the walk's devices can close (a net of the walk:
    an internal one touching a single device, or a rail or port already in the walk)."""
    kind, prev = kind_of(token), last[-1]
    if kind == "edge" and kind_of(prev) == "net":
        return any(prev not in state.labels_of[d] and state._fresh(d, token)
                   for f in edge_family(token) for d in state.used.get(f, ()) if not _complete(state, d))  # fmt: skip
    if kind == "device":
        return token in state.labels_of and last[-2] not in state.labels_of[token]
    if kind == "edge":
        return token not in state.labels_of.get(prev, {}).values()
    if kind == "net":
        return token in state.devices_on and not (token.startswith("NET") and len(state.devices_on[token]) > 1)
    return False


def _takes(state: State, device: str, edge: str, net: str) -> bool:
    walked = state.labels_of[device].get(net)
    return walked == edge if walked is not None else state._fresh(device, edge)


def _complete(state: State, device: str) -> bool:
    family = split_device(device)[0]
    if family in PASSIVE:
        return len(state.nets_of.get(device, ())) == 2
    return state.bound.get(device, set()) == set(FAMILIES[family])


def _random_baseline_choices(state: State, tokens: list[str], target_devices: int = 1) -> list[str]:
    """The random baseline's choices among the grammar's allowed ``tokens`` for a walk of ``target_devices`` devices
    (module docstring)."""
    full = len(state.labels_of) >= target_devices
    if END in tokens and full:
        return [END]
    out, fresh = [], set()
    for t in tokens:
        parsed = split_device(t)
        if parsed is None or t in state.labels_of:
            out.append(t)
        elif parsed[0] not in fresh:
            fresh.add(parsed[0])
            out.append(t)
    if not full:
        return out
    known = [t for t in out if split_device(t) is None or t in state.labels_of]
    last = state.tokens[-1]
    if kind_of(last) == "net":  # edges that a device of the walk can take here (not only a fresh one)
        known = [t for t in known if t == END or any(_takes(state, d, t, last) for f in edge_family(t)
                                                     for d in state.used.get(f, ()))]  # fmt: skip
    out = known or out
    binding = [t for t in out if _binds(state, state.tokens, t)]
    if kind_of(out[0]) == "net":  # a dangling internal net first: only the walk's own devices can close it
        dangling = [t for t in binding if t.startswith("NET")]
        binding = dangling or binding
    return binding or out


def _draw(logits: np.ndarray, allowed: np.ndarray | None, rng: np.random.Generator, temperature: float) -> np.ndarray:
    """One token per row from softmax(logits / temperature) restricted to ``allowed`` (B, V) where given."""
    z = logits.astype(np.float64) / temperature
    if allowed is not None:
        z = np.where(allowed, z, -np.inf)
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    cdf = np.cumsum(p, axis=1)
    u = rng.random(len(z)) * cdf[:, -1]
    picks = (cdf <= u[:, None]).sum(axis=1)  # the first index whose cumulative mass exceeds u (never a masked one)
    return np.minimum(picks, z.shape[1] - 1)


def sample_walks(
    model: GPT | None,
    vocab: Vocabulary,
    prompts: list[list[str]],
    *,
    max_len: int,
    temperature: float = 0.7,
    grammar: bool = True,
    typed: bool = True,
    seed: int = 0,
    batch_size: int = 64,
    target_devices: list[int] | None = None,
) -> tuple[list[SampledWalk], float]:
    """Walks for ``prompts`` (every prompt of one length) and the seconds spent. ``model=None``: random logits
    (module docstring; ``target_devices``: the device count after which a walk opens no device and closes);
    ``grammar``: mask every step with the grammar, which needs the bipartite vocabulary."""
    if target_devices is not None and (model is not None or len(target_devices) != len(prompts)):
        raise ValueError("target_devices are for the random baseline (model=None), one per prompt")
    if model is None and not grammar:
        raise ValueError("random logits without the grammar would sample noise; the baseline needs grammar=True")
    if not prompts or len({len(p) for p in prompts}) != 1 or not prompts[0]:
        raise ValueError("prompts must be non-empty token lists of one length")
    if max_len <= len(prompts[0]):
        raise ValueError(f"max_len {max_len} leaves no room after prompts of {len(prompts[0])} tokens")
    if model is not None and max_len > model.config.context:
        raise ValueError(f"max_len {max_len} exceeds the model's context {model.config.context}")
    ids = {t: i for i, t in enumerate(vocab.tokens)}
    end = ids[END]
    rng = np.random.default_rng(seed)
    began = time.perf_counter()
    walks: list[SampledWalk] = []
    targets = target_devices if target_devices is not None else [1] * len(prompts)
    for start in range(0, len(prompts), batch_size):
        walks += _batch(model, vocab, ids, end, prompts[start : start + batch_size], max_len, temperature,
                        grammar, typed, rng, targets[start : start + batch_size])  # fmt: skip
    return walks, time.perf_counter() - began


def _batch(model, vocab, ids, end, prompts, max_len, temperature, grammar, typed, rng, targets) -> list[SampledWalk]:
    size, width = len(prompts), len(vocab)
    rows = [list(p) for p in prompts]
    states = None
    if grammar:
        states = [State(typed=typed, vocab=vocab) for _ in prompts]
        for state, prompt in zip(states, prompts):
            for token in prompt:
                state.advance(token)
    open_ = np.ones(size, dtype=bool)
    cache = model.new_cache(size, max_len) if model is not None else None
    device = model.device if model is not None else None
    # the prompt's tokens through the cache (every prompt has the same length)
    logits = None
    for position in range(len(prompts[0])):
        if model is not None:
            token = torch.tensor([ids[r[position]] for r in rows], device=device)
            logits = model.decode_step(token, position, cache).float().cpu().numpy()
    for position in range(len(prompts[0]), max_len):
        if model is None:
            logits = rng.standard_normal((size, width))
        allowed = None
        if states is not None:
            allowed = np.zeros((size, width), dtype=bool)
            for i in np.flatnonzero(open_):
                tokens = states[i].allowed()
                if model is None:
                    tokens = _random_baseline_choices(states[i], tokens, targets[i])
                allowed[i, [ids[t] for t in tokens]] = True
            allowed[~open_, end] = True
        picks = _draw(logits, allowed, rng, temperature if model is not None else 1.0)
        picks[~open_] = end
        for i in np.flatnonzero(open_):
            token = vocab.tokens[picks[i]]
            rows[i].append(token)
            if states is not None:
                states[i].advance(token)
            if picks[i] == end:
                open_[i] = False
        if not open_.any() or position == max_len - 1:
            break
        if model is not None:
            logits = model.decode_step(torch.as_tensor(picks, device=device), position, cache).float().cpu().numpy()
    return [SampledWalk(tuple(p), tuple(r), r[-1] == END) for p, r in zip(prompts, rows)]
