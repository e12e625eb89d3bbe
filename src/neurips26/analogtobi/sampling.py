r"""Sampling walks from the trained generator (AnalogToBi, Kim et al. 2026, arXiv 2603.08720, Sec. 3.2 and 4.1;
reference ``GPT_Inference_Grammar.py``): every row of a batch starts from its prompt (its circuit-type token, or
``VSS`` without type conditioning) and draws one token per step at ``temperature`` from the model's next-token
distribution, restricted by the grammar (:class:`.grammar.State`) when decoding is grammar-guided. A row ends at its
first ``TRUNCATE``; a row still open after ``max_len`` tokens is kept as not terminated (the paper counts it as
invalid).

``model=None`` is the sanity baseline: i.i.d. standard-normal logits at each step instead of a model, under the
grammar, so that what the grammar alone guarantees can be told apart from what the model learns. So that it can
close a circuit at all, the unused indices of a device family count as one choice (the lowest of them; the grammar
admits every unused index alike, and with one logit each a random walk keeps opening new devices), and it ends the
walk as soon as the grammar allows ``TRUNCATE`` once the walk has reached its target length (``target_lengths``, one
per prompt, drawn by the caller from the training walks of the requested type: the data's length distribution;
``TRUNCATE`` is masked before it, unless nothing else is allowed; after it, no new device is opened where the grammar
offers one already in the walk, so that the walk closes). Without target lengths it ends as soon as the
grammar allows, which makes mostly one-device circuits.

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
from .tokens import END, Vocabulary, split_device

__all__ = ["SampledWalk", "sample_walks"]


@dataclass(frozen=True)
class SampledWalk:
    prompt: tuple[str, ...]
    tokens: tuple[str, ...]  # the whole walk, prompt included, up to and including TRUNCATE when terminated
    terminated: bool


def _random_baseline_choices(state: State, tokens: list[str], long_enough: bool = True) -> list[str]:
    """The random baseline's choices among the grammar's: ``TRUNCATE`` alone when allowed and the walk is
    ``long_enough``, never before unless it is the only choice; devices of the walk and the lowest unused index of
    each family (module docstring)."""
    if END in tokens:
        if long_enough or len(tokens) == 1:
            return [END]
        tokens = [t for t in tokens if t != END]
    out, fresh = [], set()
    for t in tokens:
        parsed = split_device(t)
        if parsed is None or t in state.labels_of:
            out.append(t)
        elif parsed[0] not in fresh:
            fresh.add(parsed[0])
            out.append(t)
    if long_enough:  # past its length, the walk closes with the devices it has where the grammar lets it
        known = [t for t in out if split_device(t) is None or t in state.labels_of]
        out = known or out
    return out


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
    target_lengths: list[int] | None = None,
) -> tuple[list[SampledWalk], float]:
    """Walks for ``prompts`` (every prompt of one length) and the seconds spent. ``model=None``: random logits
    (module docstring; ``target_lengths``: the walk length, prompt and ``TRUNCATE`` included, before which it does not
    end); ``grammar``: mask every step with the grammar, which needs the bipartite vocabulary."""
    if target_lengths is not None and (model is not None or len(target_lengths) != len(prompts)):
        raise ValueError("target_lengths are for the random baseline (model=None), one per prompt")
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
    targets = target_lengths if target_lengths is not None else [0] * len(prompts)
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
                    tokens = _random_baseline_choices(states[i], tokens, len(rows[i]) + 1 >= targets[i])
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
