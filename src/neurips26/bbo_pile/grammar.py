"""What the model is shown and may generate: prompts fitted to the model's context (the header and the most
recent whole trials), and the grammar ``v , ... , v * bin |`` of one trial as a state machine, whose logit
masks drive constrained decoding and which parses a completion. A value ``v`` is a bin for a ``UNI`` or
``INT`` parameter and a category token ``<0>`` ... ``<n-1>`` for a ``CAT`` parameter with ``n`` categories
(the mask is per parameter); without ``kinds`` every parameter is ``UNI``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from neurips26.common.validation import check_int

from .vocabulary import Vocabulary

__all__ = [
    "FIT_POLICIES",
    "TrialGrammar",
    "allowed_next",
    "check_kinds",
    "fit_context",
    "parse_trial",
    "trial_length",
]

FIT_POLICIES = ("recent", "reject")


def trial_length(d: int) -> int:
    """Tokens per trial: ``d`` bins, ``d - 1`` commas, ``*``, the objective's bin and ``|``."""
    return 2 * _check_d(d) + 2


def check_kinds(vocab: Vocabulary, d: int, kinds=None, n_categories=None) -> tuple[tuple[str, ...], np.ndarray]:
    """``(kinds, n_categories)`` of ``d`` parameters: ``kinds`` one of ``UNI INT CAT`` each (default all
    ``UNI``), ``n_categories`` the category count of each CAT parameter (0 elsewhere; 1 to the vocabulary's
    :attr:`~.vocabulary.Vocabulary.n_categories`). A type the vocabulary lacks raises."""
    d = _check_d(d)
    if kinds is None:
        if n_categories is not None and np.any(np.asarray(n_categories)):
            raise ValueError("n_categories given without kinds")
        return ("UNI",) * d, np.zeros(d, dtype=np.int64)
    kinds = tuple(str(k) for k in kinds)
    if len(kinds) != d:
        raise ValueError(f"kinds has {len(kinds)} entries for d={d} parameters")
    missing = sorted({k for k in kinds if not vocab.has_type(k)})
    if missing:
        raise ValueError(
            f"parameter types {missing} are not in the vocabulary's parameter_types {list(vocab.parameter_types)}"
        )
    counts = np.zeros(d, dtype=np.int64) if n_categories is None else np.asarray(n_categories).astype(np.int64)
    if counts.shape != (d,):
        raise ValueError(f"n_categories has shape {counts.shape}, expected ({d},)")
    for j, kind in enumerate(kinds):
        if kind == "CAT" and not 1 <= counts[j] <= vocab.n_categories:
            raise ValueError(f"parameter {j} (CAT) has {counts[j]} categories; 1 to {vocab.n_categories} are allowed")
        if kind != "CAT" and counts[j]:
            raise ValueError(f"parameter {j} ({kind}) has n_categories {counts[j]}; only CAT parameters have some")
    return kinds, counts


def fit_context(
    ids_header, trials: Sequence[np.ndarray], context: int, policy: str = "recent", reserve: int = 0
) -> np.ndarray:
    """The prompt ``header + trials`` within ``context - reserve`` tokens (``reserve``: room left
    for the completion). ``"recent"`` keeps the header and the most recent whole trials that fit;
    ``"reject"`` raises when they do not all fit. A header alone too long always raises: the
    source's left truncation would drop it silently."""
    if policy not in FIT_POLICIES:
        raise ValueError(f"unknown policy {policy!r}; expected one of {FIT_POLICIES}")
    if reserve < 0 or context - reserve < 1:
        raise ValueError(f"context {context} minus reserve {reserve} leaves no room for a prompt")
    header = np.asarray(ids_header, dtype=np.int64).ravel()
    trials = [np.asarray(t, dtype=np.int64).ravel() for t in trials]
    budget = context - reserve
    if header.size > budget:
        raise ValueError(
            f"header alone is {header.size} tokens, longer than the context of {context} tokens"
            + (f" minus {reserve} reserved" if reserve else "")
        )
    lengths = np.array([t.size for t in trials], dtype=np.int64)
    total = header.size + int(lengths.sum())
    if total > budget:
        if policy == "reject":
            raise ValueError(
                f"prompt of {total} tokens is longer than the context of {context} tokens"
                + (f" minus {reserve} reserved" if reserve else "")
            )
        recent = np.cumsum(lengths[::-1])  # tokens of the last 1, 2, ... trials
        n_kept = int(np.searchsorted(recent, budget - header.size, side="right"))
        trials = trials[len(trials) - n_kept :]
    return np.concatenate([header, *trials]) if trials else header


class TrialGrammar:
    """The grammar ``v , v , ... , v * bin |`` of one trial with ``d`` values, as a state
    machine: the state is the position in the trial, ``0`` before its first token and
    ``2 d + 2`` once ``|`` is read. ``masks[state]`` is the boolean logit mask of a state. A value is a
    bin, or for a ``CAT`` parameter (``kinds``) one of its ``n_categories`` category tokens."""

    def __init__(self, vocab: Vocabulary, d: int, kinds=None, n_categories=None):
        self.vocab = vocab
        self.d = _check_d(d)
        self.kinds, self.n_categories = check_kinds(vocab, self.d, kinds, n_categories)
        self.length = trial_length(d)
        masks = np.zeros((self.length, vocab.size), dtype=bool)
        masks[0 : 2 * d + 1 : 2, vocab.bin_offset : vocab.bin_offset + vocab.q] = True
        for j, kind in enumerate(self.kinds):
            if kind == "CAT":
                masks[2 * j] = False
                first = vocab.category_offset
                masks[2 * j, first : first + self.n_categories[j]] = True
        masks[1 : 2 * d - 1 : 2, vocab.sep_x] = True
        masks[2 * d - 1, vocab.sep_y] = True
        masks[2 * d + 1, vocab.sep_trial] = True
        masks.flags.writeable = False
        self.masks = masks
        self._allowed = tuple(np.flatnonzero(m) for m in masks)
        for a in self._allowed:
            a.flags.writeable = False

    initial_state = 0

    def _check_state(self, state: int) -> int:
        if not 0 <= state < self.length:
            raise ValueError(f"state {state!r} outside 0..{self.length - 1} (a complete trial has no next token)")
        return int(state)

    def allowed(self, state: int) -> np.ndarray:
        """The token ids allowed next (read-only)."""
        return self._allowed[self._check_state(state)]

    def advance(self, state: int, token: int) -> int:
        """The state after ``token``; a token not allowed raises, naming it."""
        state = self._check_state(state)
        if not (0 <= token < self.vocab.size and self.masks[state, token]):
            got = repr(self.vocab.tokens[token]) if 0 <= token < self.vocab.size else token
            if self.masks[state, self.vocab.bin_offset]:
                expected = "a value bin"
            elif state % 2 == 0 and state < 2 * self.d:
                expected = f"a category <0>..<{self.n_categories[state // 2] - 1}>"
            else:
                expected = repr(self.vocab.tokens[self._allowed[state][0]])
            raise ValueError(f"token {got} at position {state} of a trial: expected {expected}")
        return state + 1

    def is_complete(self, state: int) -> bool:
        return state == self.length

    def accepts(self, ids) -> bool:
        """Whether ``ids`` is exactly one well-formed trial."""
        ids = np.asarray(ids).ravel()
        if ids.size != self.length or not np.issubdtype(ids.dtype, np.integer):
            return False
        if ids.min() < 0 or ids.max() >= self.vocab.size:
            return False
        return bool(self.masks[np.arange(self.length), ids].all())


def allowed_next(vocab: Vocabulary, d: int, position_in_trial: int, kinds=None, n_categories=None) -> np.ndarray:
    """The token ids allowed at ``position_in_trial`` (0-based) of a trial with ``d`` values."""
    return TrialGrammar(vocab, d, kinds, n_categories).allowed(position_in_trial)


def parse_trial(vocab: Vocabulary, ids, d: int, require_end: bool = True, kinds=None, n_categories=None):
    """``(x_bins (d,), y_bin)`` of a generated trial, or ``None`` if it is not exactly one
    well-formed trial (wrong count, a separator misplaced, a non-bin token where a bin belongs).
    A CAT parameter's entry of ``x_bins`` is its category index. With ``require_end=False`` the
    closing ``|`` may be missing (the source generates ``2 d + 1`` tokens on its litgpt path)."""
    grammar = TrialGrammar(vocab, d, kinds, n_categories)
    ids = np.asarray(ids).ravel()
    if not require_end and ids.size == grammar.length - 1:
        ids = np.append(ids, vocab.sep_trial)
    if not grammar.accepts(ids):
        return None
    return value_indices(vocab, ids[0 : 2 * d : 2], grammar.kinds), int(ids[2 * d] - vocab.bin_offset)


def value_indices(vocab: Vocabulary, value_ids, kinds) -> np.ndarray:
    """The bins (UNI/INT) or category indices (CAT) of value token ids (last axis: the ``d`` parameters)."""
    value_ids = np.asarray(value_ids, dtype=np.int64)
    is_cat = np.array([k == "CAT" for k in kinds], dtype=bool)
    if not is_cat.any():
        return value_ids - vocab.bin_offset
    return value_ids - np.where(is_cat, vocab.category_offset, vocab.bin_offset)


def _check_d(d) -> int:
    return int(check_int("d", d, 1))
