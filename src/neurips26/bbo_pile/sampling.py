r"""The trained decoder as an optimizer (bbo-pile's ``open_optformer/optformer_searcher.py``,
``OptFormerSearcher``) on black boxes, every run's token steps decoded as one batch. The imitation test
(likelihoods of real optimizers' trajectories) is in :mod:`.imitation`.

Per trial, as in ``OptFormerSearcher.suggest``:

1. the prompt is the header with the user-chosen algorithm token (OPT-RS imitates RS, OPT-CMA
   CMA-ES, ...) followed by the history so far, re-encoded before every proposal: the objective's
   bins use the min/max of the trials seen so far (the tokenizer's ``"global"`` quantisation of the
   prefix; future trials do not exist at inference);
2. one trial ``x^1,...,x^d*y|`` is sampled token by token at ``temperature``;
3. the values before ``*`` are dequantised to the configuration, the token after ``*`` is the
   predicted objective bin; with ``best_of = n`` the completion with the lowest predicted bin of n
   is kept (their ``n_sample_configurations``);
4. an undecodable completion is replaced by a uniformly random configuration and counted.

Constrained decoding (``constrained=True``, an adaptation of this reproduction, reported as such) masks
the logits with the tokenizer's :class:`TrialGrammar`, so every completion decodes; the paper's
litgpt path is unconstrained (its vLLM path uses an equivalent regex). With ``best_of = 1`` and
constrained decoding, generation stops after the last value: ``* y |`` cannot change the proposal.

Deliberate differences: many independent runs are decoded as one batch (right-padded prompts, one
prefill per trial and a key/value cache with per-row positions); each run draws its sampling
uniforms from its own numpy generator (``seed``), so a run's proposals do not depend on which runs
share its batch; the random fallback draws uniform bins (the configuration stays on the grid); a
trial whose objective is NaN or infinite is kept in the output but left out of later prompts
(the tokenizer cannot quantise it); a prompt longer than the context keeps its header and the most
recent trials (:func:`fit_context`) where the source left-truncates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from neurips26.common.validation import check_int, check_number

from .blackboxes import make_blackbox
from .catalog import BlackBoxSpec
from .grammar import TrialGrammar, fit_context, parse_trial
from .model import Decoder
from .tokenizer import dequantise, header_ids, history_ids, quantise_y
from .vocabulary import Vocabulary

__all__ = ["SampledTrajectory", "optimize_batch", "optimize_boxes", "optimize_with_model"]


@dataclass(frozen=True)
class SampledTrajectory:
    """One run of the model as an optimizer: ``x`` (T, d) evaluated configurations, ``y`` (T,)
    their objective values as ``f`` returned them, ``valid_decode`` (T,) whether the model's
    completion decoded (False: the configuration is the random fallback). Unlike
    ``optimizers.Trajectory.valid`` this says nothing about ``y`` being finite."""

    x: np.ndarray
    y: np.ndarray
    valid_decode: np.ndarray


class _Run:
    """State of one optimisation run: its search space, grammar, generator and history."""

    def __init__(self, vocab: Vocabulary, algorithm: str, problem: tuple, seed: int):
        if len(problem) not in (3, 4):
            raise ValueError("a problem is (f, lo, hi) or (f, lo, hi, log_scale)")
        self.f, lo, hi = problem[:3]
        self.log_scale = problem[3] if len(problem) == 4 else None
        self.header = header_ids(vocab, algorithm, lo, hi, self.log_scale)  # validates the space
        self.lo = np.atleast_1d(np.asarray(lo, dtype=np.float64))
        self.hi = np.atleast_1d(np.asarray(hi, dtype=np.float64))
        self.d = self.lo.size
        self.grammar = TrialGrammar(vocab, self.d)
        self.rng = np.random.default_rng(seed)
        self.bins: list[np.ndarray] = []
        self.y: list[float] = []
        self.valid: list[bool] = []

    def prompt(self, vocab: Vocabulary, context: int, reserve: int) -> np.ndarray:
        finite = np.isfinite(np.asarray(self.y, dtype=np.float64))
        if not finite.any():
            return fit_context(self.header, [], context, reserve=reserve)
        x_bins = np.asarray(self.bins, dtype=np.int64)[finite]
        y_bins = quantise_y(np.asarray(self.y)[finite], vocab.q, "global")
        trials = history_ids(vocab, x_bins, y_bins).reshape(len(y_bins), -1)
        return fit_context(self.header, list(trials), context, reserve=reserve)


def _sample(logits: np.ndarray, allowed: np.ndarray, rngs: list, temperature: float) -> np.ndarray:
    """One token per row from softmax(logits / temperature) restricted to ``allowed`` (R, V), by
    inverse CDF with one uniform from each row's generator (argmax when temperature is 0)."""
    scores = np.where(allowed, logits, -np.inf)
    if temperature == 0:
        return scores.argmax(axis=1)
    scores = (scores - scores.max(axis=1, keepdims=True)) / temperature
    cdf = np.cumsum(np.exp(scores), axis=1)
    u = np.array([rng.random() for rng in rngs]) * cdf[:, -1]
    last_allowed = allowed.shape[1] - 1 - allowed[:, ::-1].argmax(axis=1)
    return np.minimum((cdf <= u[:, None]).sum(axis=1), last_allowed)


@torch.no_grad()
def _propose(
    model: Decoder,
    vocab: Vocabulary,
    runs: list[_Run],
    context: int,
    constrained: bool,
    temperature: float,
    best_of: int,
) -> list[np.ndarray]:
    """The tokens of one completion per (run, replica) row, rows ordered run by run."""
    rows = [run for run in runs for _ in range(best_of)]
    reserve = max(run.grammar.length for run in runs)
    prompts = [run.prompt(vocab, context, reserve) for run in rows]
    lengths = np.array([p.size for p in prompts])
    tokens = np.full((len(rows), lengths.max()), vocab.pad, dtype=np.int64)
    for r, p in enumerate(prompts):
        tokens[r, : p.size] = p
    stop = [run.grammar.length if (best_of > 1 or not constrained) else 2 * run.d - 1 for run in rows]
    logits, cache = model.prefill(
        torch.from_numpy(tokens).to(model.device), reserve, torch.from_numpy(lengths - 1).to(model.device)
    )
    generated = np.full((len(rows), max(stop)), vocab.pad, dtype=np.int64)
    done = np.zeros(len(rows), dtype=bool)
    produced = np.zeros(len(rows), dtype=np.int64)
    for k in range(max(stop)):
        active = np.array([k < s for s in stop]) & ~done
        allowed = np.zeros((len(rows), vocab.size), dtype=bool)
        for r in np.flatnonzero(active):
            if constrained:
                allowed[r] = rows[r].grammar.masks[k]
            else:
                allowed[r] = True
        allowed[~active, vocab.pad] = True
        forced = allowed.sum(axis=1) == 1
        draw = active & ~forced
        picked = np.where(forced, allowed.argmax(axis=1), vocab.pad)
        if draw.any():
            picked[draw] = _sample(
                logits[:, : vocab.size].double().cpu().numpy()[draw],
                allowed[draw],
                [rows[r].rng for r in np.flatnonzero(draw)],
                temperature,
            )
        generated[active, k] = picked[active]
        produced += active
        if not constrained:  # '|' closes an unconstrained completion early, as the source's EOS
            done |= active & (picked == vocab.sep_trial)
        if k + 1 < max(stop) and (active & ~done).any():
            position = torch.from_numpy(lengths + k).to(model.device)
            logits = model.decode_step(torch.from_numpy(picked).to(model.device), position, cache)
    return [generated[r, : produced[r]] for r in range(len(rows))]


def optimize_batch(
    model: Decoder,
    vocab: Vocabulary,
    algorithm: str,
    problems: Sequence[tuple],
    seeds: Sequence[int],
    budget: int,
    *,
    context: int | None = None,
    constrained: bool = True,
    temperature: float = 1.0,
    best_of: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> list[SampledTrajectory]:
    """Run the model as an optimizer with ``budget`` trials on each problem ``(f, lo, hi)`` (or
    ``(f, lo, hi, log_scale)``), run i seeded by ``seeds[i]``, all runs' token steps decoded as one
    batch (see the module docstring). ``f`` maps configurations (n, d) to objective values (n,)
    (minimised). ``context`` defaults to the model's. ``progress(done, budget)`` is called after each trial of
    every run. Returns one :class:`SampledTrajectory` per problem."""
    if len(problems) != len(seeds) or not problems:
        raise ValueError(f"give one seed per problem: {len(problems)} problems, {len(seeds)} seeds")
    check_int("budget", budget, 1)
    check_int("best_of", best_of, 1)
    check_number("temperature", temperature, 0.0)
    context = model.config.context if context is None else int(context)
    if context > model.config.context:
        raise ValueError(f"context {context} exceeds the model's context {model.config.context}")
    vocab.algorithm(algorithm)  # unknown algorithm: raises, naming it
    if model.config.vocab_size < vocab.size:
        raise ValueError(f"the model has {model.config.vocab_size} token ids, the vocabulary {vocab.size}")
    runs = [_Run(vocab, algorithm, problem, int(seed)) for problem, seed in zip(problems, seeds)]
    was_training = model.training
    model.eval()
    try:
        for trial in range(budget):
            completions = _propose(model, vocab, runs, context, constrained, temperature, best_of)
            for i, run in enumerate(runs):
                parsed = []
                for tokens in completions[i * best_of : (i + 1) * best_of]:
                    if constrained and tokens.size == 2 * run.d - 1:  # stopped after the last value
                        parsed.append((tokens[0::2] - vocab.bin_offset, 0))
                    else:
                        parsed.append(parse_trial(vocab, tokens, run.d))
                decoded = [p for p in parsed if p is not None]
                if decoded:
                    bins = min(decoded, key=lambda p: p[1])[0]  # first of the lowest predicted bin
                else:
                    bins = run.rng.integers(0, vocab.q, run.d)
                x = dequantise(bins, run.lo, run.hi, vocab.q, run.log_scale)
                y = np.asarray(run.f(x[None, :]), dtype=np.float64).ravel()
                if y.size != 1:
                    raise ValueError(f"f returned {y.size} values for one configuration")
                run.bins.append(np.asarray(bins, dtype=np.int64))
                run.y.append(float(y[0]))
                run.valid.append(bool(decoded))
            if progress is not None:
                progress(trial + 1, budget)
    finally:
        model.train(was_training)
    return [
        SampledTrajectory(
            x=dequantise(np.asarray(run.bins), run.lo, run.hi, vocab.q, run.log_scale),
            y=np.asarray(run.y),
            valid_decode=np.asarray(run.valid),
        )
        for run in runs
    ]


def optimize_with_model(
    model: Decoder,
    vocab: Vocabulary,
    algorithm: str,
    f: Callable[[np.ndarray], np.ndarray],
    lo,
    hi,
    budget: int,
    seed: int,
    *,
    log_scale=None,
    **options,
) -> SampledTrajectory:
    """One run of :func:`optimize_batch` (the same proposals as that run inside a batch)."""
    problem = (f, lo, hi) if log_scale is None else (f, lo, hi, log_scale)
    return optimize_batch(model, vocab, algorithm, [problem], [seed], budget, **options)[0]


def optimize_boxes(
    model: Decoder,
    vocab: Vocabulary,
    condition: str,
    boxes: pd.DataFrame,
    eval_seeds: Sequence[int],
    seed: int,
    budget: int,
    *,
    constrained: bool,
    **options,
) -> pd.DataFrame:
    """The model conditioned on ``condition`` as an optimizer on every catalog row of ``boxes`` x ``eval_seeds``
    (run ``(box, k)`` seeded by ``1000 seed + k``), all runs in one batch: one row per trial (``bb_id``,
    ``condition``, ``decoding``, ``seed`` = k, ``trial``, ``x``, ``y``, ``valid_decode``). ``options`` go to
    :func:`optimize_batch` (``context``, ``temperature``, ``best_of``, ``progress``)."""
    problems, seeds, ids = [], [], []
    for record in boxes.to_dict("records"):
        spec = BlackBoxSpec.from_record(record)
        for k in eval_seeds:
            problems.append((make_blackbox(spec), list(spec.lo), list(spec.hi)))
            seeds.append(seed * 1000 + k)
            ids.append((spec.bb_id, k))
    runs = optimize_batch(model, vocab, condition, problems, seeds, budget, constrained=constrained, **options)
    decoding = "constrained" if constrained else "free"
    return pd.DataFrame(
        [
            {
                "bb_id": bb_id,
                "condition": condition,
                "decoding": decoding,
                "seed": k,
                "trial": t,
                "x": run.x[t].tolist(),
                "y": float(run.y[t]),
                "valid_decode": bool(run.valid_decode[t]),
            }
            for (bb_id, k), run in zip(ids, runs)
            for t in range(len(run.y))
        ]
    )
