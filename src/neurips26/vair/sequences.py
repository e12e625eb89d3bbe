"""Rendered items as the small model's padded id tensors, with loss targets and the positions the probes and the
patching read.

Two tasks, told apart by a task marker right after ``<bos>`` (a causal model must know from the start whether it
writes or reads a solution: the process regime puts a step label where a solve sequence puts the next step):

* solve: ``<bos> <solve> problem ... SOLUTION step ... ANSWER n`` and next-token targets ending in ``<eos>``; loss on
  every position from ``SOLUTION`` on (the solution, the answer and ``<eos>`` are predicted), each position weighted
  1 / (their number), so that every sequence weighs 1;
* grade: ``<bos> <grade> problem ... SOLUTION step ... ANSWER n <verdict>``: the target at ``<verdict>`` is the
  rubric token ``<G0>`` .. ``<G3>`` (weight 1); with step labels (process supervision) the target at each labelled
  step's result token (the word after its ``=``) is ``<ok>`` or ``<bad>``, the labelled steps together weighing
  ``step_weight``. No other position of a grade sequence carries a loss.

Sequences are left-aligned and right-padded with ``<pad>`` (id 0): a causal model's outputs at real positions do not
depend on the padding. Positions returned beside the ids (``-1`` where absent): ``answer`` (the final answer's number
word, after the last ``ANSWER``), ``last_solution`` (the last word of the rendered text, the paper's probe site,
arXiv 2606.01462), ``verdict`` (grade sequences), ``solution_start`` (the ``SOLUTION`` word) and ``step_ends``
(each step's result word, in step order).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np
import torch

from .vocabulary import (
    ANSWER_WORD,
    BOS,
    EOS,
    EQUALS,
    GRADE,
    NOT_AN_INTEGER,
    SOLUTION_WORD,
    SOLVE,
    STEP_BAD,
    STEP_OK,
    VERDICT,
    VERDICTS,
    Vocabulary,
)

__all__ = ["Sequences", "encode_grade", "encode_solve", "first_error_labels", "solve_prompts"]


@dataclass(frozen=True)
class Sequences:
    """N padded sequences: ``tokens``, next-token ``targets`` (0 where no loss), loss ``weights`` (float), ``lengths``
    and the positions of the module docstring, (N,) each but ``step_ends`` (N, max steps)."""

    tokens: torch.Tensor
    targets: torch.Tensor
    weights: torch.Tensor
    lengths: torch.Tensor
    answer: torch.Tensor
    last_solution: torch.Tensor
    verdict: torch.Tensor
    solution_start: torch.Tensor
    step_ends: torch.Tensor

    def __len__(self) -> int:
        return self.tokens.shape[0]

    @property
    def width(self) -> int:
        return self.tokens.shape[1]

    def select(self, index: torch.Tensor | Sequence[int]) -> Sequences:
        """The rows ``index`` (any leading shape: (S, B) indices give (S, B, ...) tensors)."""
        index = torch.as_tensor(index, dtype=torch.long)
        return Sequences(**{f.name: getattr(self, f.name)[index] for f in fields(self)})

    def padded(self, width: int) -> Sequences:
        """The same sequences right-padded to ``width`` positions (at least :attr:`width`)."""
        extra = width - self.width
        if extra < 0:
            raise ValueError(f"cannot pad {self.width} positions down to {width}")
        pad = torch.nn.functional.pad
        return Sequences(
            tokens=pad(self.tokens, (0, extra)),
            targets=pad(self.targets, (0, extra)),
            weights=pad(self.weights, (0, extra)),
            **{f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("tokens", "targets", "weights")},
        )

    @staticmethod
    def concatenate(parts: Sequence[Sequences]) -> Sequences:
        """The rows of ``parts`` one after another, padded to the widest; ``step_ends`` padded with -1."""
        width = max(p.width for p in parts)
        steps = max(p.step_ends.shape[1] for p in parts)
        parts = [p.padded(width) for p in parts]
        ends = [torch.nn.functional.pad(p.step_ends, (0, steps - p.step_ends.shape[1]), value=-1) for p in parts]
        names = [f.name for f in fields(Sequences) if f.name != "step_ends"]
        joined = {name: torch.cat([getattr(p, name) for p in parts]) for name in names}
        return Sequences(**joined, step_ends=torch.cat(ends))


def first_error_labels(n_steps: int, first_invalid_step: int) -> tuple[int, ...]:
    """Step labels under the first-error convention of process supervision (PRM800K, Lightman et al. 2023): steps
    before the first invalid one are valid (1), the first invalid step is invalid (0), later steps are unlabelled (-1);
    ``first_invalid_step`` -1 (valid reasoning) or ``n_steps`` (every step holds, only the stated answer disagrees
    with the last step: ``items.Item``) labels every step valid."""
    if n_steps < 0 or not -1 <= first_invalid_step <= n_steps:
        raise ValueError(
            f"first_invalid_step {first_invalid_step} is not -1 or one of the {n_steps} steps or past them"
        )
    if first_invalid_step in (-1, n_steps):
        return (1,) * n_steps
    return (1,) * first_invalid_step + (0,) + (-1,) * (n_steps - first_invalid_step - 1)


def _pad_rows(rows: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.array([len(r) for r in rows], dtype=np.int64)
    tokens = np.zeros((len(rows), int(lengths.max(initial=1))), dtype=np.int64)
    for i, row in enumerate(rows):
        tokens[i, : len(row)] = row
    return tokens, lengths


def _first(mask: np.ndarray, what: str, texts: Sequence[str]) -> np.ndarray:
    """Per row, the first column where ``mask`` holds; ValueError naming the rows without one."""
    found = mask.any(1)
    if not found.all():
        bad = np.flatnonzero(~found)[:5].tolist()
        raise ValueError(f"no {what} in rows {bad} (first: {texts[bad[0]][:80]!r})")
    return mask.argmax(1)


def _layout(vocab: Vocabulary, texts: Sequence[str], marker: str, suffix: list[int]) -> dict[str, np.ndarray]:
    """``<bos> marker text suffix`` padded, with the positions of the module docstring (numpy)."""
    if not len(texts):
        raise ValueError("no texts to encode")
    prefix = [vocab.id(BOS), vocab.id(marker)]
    tokens, lengths = _pad_rows([prefix + ids + suffix for ids in vocab.encode(texts)])
    columns = np.arange(tokens.shape[1])
    solution = _first(tokens == vocab.id(SOLUTION_WORD), SOLUTION_WORD, texts)
    last_answer = tokens.shape[1] - 1 - _first((tokens == vocab.id(ANSWER_WORD))[:, ::-1], ANSWER_WORD, texts)
    answer = last_answer + 1
    last_solution = lengths - 1 - len(suffix)
    answer_word = tokens[np.arange(len(texts)), np.minimum(answer, tokens.shape[1] - 1)]
    answer_value = vocab.integer_value(torch.from_numpy(answer_word))
    broken = (answer != last_solution) | (answer_value.numpy() == NOT_AN_INTEGER)
    if broken.any():
        bad = np.flatnonzero(broken)[:5].tolist()
        raise ValueError(f"rows {bad} do not end in 'ANSWER <integer>' (first: {texts[bad[0]][-80:]!r})")
    in_solution = (columns > solution[:, None]) & (columns < last_answer[:, None])
    rows, cols = np.nonzero((tokens == vocab.id(EQUALS)) & in_solution)
    counts = np.bincount(rows, minlength=len(texts))
    rank = np.arange(len(rows)) - np.repeat(np.cumsum(counts) - counts, counts)
    step_ends = np.full((len(texts), int(counts.max(initial=0))), -1, dtype=np.int64)
    step_ends[rows, rank] = cols + 1
    return {
        "tokens": tokens,
        "lengths": lengths,
        "answer": answer,
        "last_solution": last_solution,
        "solution_start": solution,
        "step_ends": step_ends,
        "step_counts": counts,
    }


def _sequences(layout: dict[str, np.ndarray], targets: np.ndarray, weights: np.ndarray, verdict: np.ndarray):
    t = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in layout.items() if k != "step_counts"}
    return Sequences(
        targets=torch.from_numpy(targets),
        weights=torch.from_numpy(weights.astype(np.float32)),
        verdict=torch.from_numpy(verdict),
        **t,
    )


def encode_solve(vocab: Vocabulary, texts: Sequence[str]) -> Sequences:
    """Solve sequences of rendered valid solutions (module docstring): teacher forcing on the solution, the answer
    and ``<eos>``."""
    layout = _layout(vocab, texts, SOLVE, [])
    tokens, lengths = layout["tokens"], layout["lengths"]
    targets = np.zeros_like(tokens)
    targets[:, :-1] = tokens[:, 1:]
    rows = np.arange(len(texts))
    targets[rows, lengths - 1] = vocab.id(EOS)
    columns = np.arange(tokens.shape[1])
    on = (columns >= layout["solution_start"][:, None]) & (columns < lengths[:, None])
    weights = on / on.sum(1, keepdims=True)
    targets[~on] = 0
    return _sequences(layout, targets, weights, np.full(len(texts), -1, dtype=np.int64))


def encode_grade(
    vocab: Vocabulary,
    texts: Sequence[str],
    grades: Sequence[int] | np.ndarray,
    step_labels: Sequence[Sequence[int]] | None = None,
    step_weight: float = 1.0,
) -> Sequences:
    """Grade sequences (module docstring) with target ``<G{grade}>`` at ``<verdict>``; ``step_labels`` (per text, one
    label per step: 1 valid, 0 invalid, -1 unlabelled) adds ``<ok>`` / ``<bad>`` targets at the steps' result words.
    ValueError when a text's number of ``=`` steps differs from its number of labels, or a grade is not 0-3."""
    grades = np.asarray(grades, dtype=np.int64)
    if grades.shape != (len(texts),) or ((grades < 0) | (grades >= len(VERDICTS))).any():
        raise ValueError(f"need one grade in 0..{len(VERDICTS) - 1} per text, got {grades.tolist()[:10]}")
    layout = _layout(vocab, texts, GRADE, [vocab.id(VERDICT)])
    tokens, lengths = layout["tokens"], layout["lengths"]
    rows = np.arange(len(texts))
    verdict = lengths - 1
    targets = np.zeros_like(tokens)
    weights = np.zeros(tokens.shape, dtype=np.float64)
    targets[rows, verdict] = vocab.verdict_ids.numpy()[grades]
    weights[rows, verdict] = 1.0
    if step_labels is not None:
        labels = _label_matrix(step_labels, layout["step_counts"], texts)
        ends = layout["step_ends"]
        labelled = labels >= 0
        n_labelled = labelled.sum(1, keepdims=True)
        r, k = np.nonzero(labelled)
        targets[r, ends[r, k]] = np.where(labels[r, k] == 1, vocab.id(STEP_OK), vocab.id(STEP_BAD))
        weights[r, ends[r, k]] = (step_weight / np.maximum(n_labelled, 1))[r, 0]
    return _sequences(layout, targets, weights, verdict)


def _label_matrix(step_labels: Sequence[Sequence[int]], counts: np.ndarray, texts: Sequence[str]) -> np.ndarray:
    if len(step_labels) != len(texts):
        raise ValueError(f"{len(step_labels)} step label lists for {len(texts)} texts")
    sizes = np.array([len(s) for s in step_labels])
    wrong = np.flatnonzero(sizes != counts)
    if len(wrong):
        i = int(wrong[0])
        raise ValueError(
            f"text {i} has {counts[i]} steps ('=' words) but {sizes[i]} step labels (rows {wrong[:5].tolist()})"
        )
    labels = np.full((len(texts), int(counts.max(initial=0))), -1, dtype=np.int64)
    for i, row in enumerate(step_labels):
        labels[i, : len(row)] = row
    if not np.isin(labels, (-1, 0, 1)).all():
        raise ValueError("step labels must be 1 (valid), 0 (invalid) or -1 (unlabelled)")
    return labels


def solve_prompts(vocab: Vocabulary, texts: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
    """The prompts ``<bos> <solve> problem ... SOLUTION`` of rendered items (what follows ``SOLUTION`` is cut),
    right-padded (N, T), and their lengths (N,): the input of greedy solving."""
    layout = _layout(vocab, texts, SOLVE, [])
    lengths = layout["solution_start"] + 1
    tokens = layout["tokens"][:, : int(lengths.max())].copy()
    tokens[np.arange(tokens.shape[1])[None, :] >= lengths[:, None]] = 0
    return torch.from_numpy(tokens), torch.from_numpy(lengths)
