"""What the model is shown and may generate: prompts fitted to the model's context (the header and the most
recent whole trials), and the grammar ``bin , ... , bin * bin |`` of one trial as a state machine, whose logit
masks drive constrained decoding and which parses a completion."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from neurips26.common.validation import check_int

from .vocabulary import Vocabulary

__all__ = ["FIT_POLICIES", "TrialGrammar", "allowed_next", "fit_context", "parse_trial", "trial_length"]

FIT_POLICIES = ("recent", "reject")


def trial_length(d: int) -> int:
    """Tokens per trial: ``d`` bins, ``d - 1`` commas, ``*``, the objective's bin and ``|``."""
    return 2 * _check_d(d) + 2


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
    """The grammar ``bin , bin , ... , bin * bin |`` of one trial with ``d`` values, as a state
    machine: the state is the position in the trial, ``0`` before its first token and
    ``2 d + 2`` once ``|`` is read. ``masks[state]`` is the boolean logit mask of a state."""

    def __init__(self, vocab: Vocabulary, d: int):
        self.vocab = vocab
        self.d = _check_d(d)
        self.length = trial_length(d)
        masks = np.zeros((self.length, vocab.size), dtype=bool)
        masks[0 : 2 * d + 1 : 2, vocab.bin_offset : vocab.bin_offset + vocab.q] = True
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
            expected = (
                "a value bin"
                if self.masks[state, self.vocab.bin_offset]
                else repr(self.vocab.tokens[self._allowed[state][0]])
            )
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


def allowed_next(vocab: Vocabulary, d: int, position_in_trial: int) -> np.ndarray:
    """The token ids allowed at ``position_in_trial`` (0-based) of a trial with ``d`` values."""
    return TrialGrammar(vocab, d).allowed(position_in_trial)


def parse_trial(vocab: Vocabulary, ids, d: int, require_end: bool = True):
    """``(x_bins (d,), y_bin)`` of a generated trial, or ``None`` if it is not exactly one
    well-formed trial (wrong count, a separator misplaced, a non-bin token where a bin belongs).
    With ``require_end=False`` the closing ``|`` may be missing (the source generates
    ``2 d + 1`` tokens on its litgpt path)."""
    grammar = TrialGrammar(vocab, d)
    ids = np.asarray(ids).ravel()
    if not require_end and ids.size == grammar.length - 1:
        ids = np.append(ids, vocab.sep_trial)
    if not grammar.accepts(ids):
        return None
    return ids[0 : 2 * d : 2] - vocab.bin_offset, int(ids[2 * d] - vocab.bin_offset)


def _check_d(d) -> int:
    return int(check_int("d", d, 1))
