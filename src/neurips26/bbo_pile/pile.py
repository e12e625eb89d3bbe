r"""Reader of the published BBO-Pile dataset (Hugging Face ``synetune/bbo-pile``): its text lines, one
trajectory per line, into this reproduction's token ids (:mod:`.tokenizer`).

A line is what bbo-pile's ``History.get_prompt`` writes with ``remove_names=True``
(``open_optformer/history.py``; files compiled by ``generate_training_data/compile_data.py``, one
trajectory per line, syne-tune/bbo-pile at e3163a9cc3440e91eb1f0bec215369e8dcf68869), e.g. the README's::

    algorithm:REA,search-space:{type:INT,min_value:8,max_value:64,log_scale}...{type:UNI,min_value:0.0,
    max_value:0.6,linear_scale}...{type:CAT,categories:[0,1]},history:0,0,0,500,0,<1>,<1>,<1>,<3>*159|...

(one line in the file). What the reader does with a line:

* The header is copied token for token: the algorithm name (one token; it must be one of the vocabulary's
  algorithms), each parameter's type, its bounds' characters exactly as the source printed them (``8``,
  ``0.0``, ``1e-05``: Python's ``str`` of what syne-tune stored, not re-printed) and its scale; a CAT
  parameter's list must be exactly ``[0,1,...,n-1]`` (the source writes category indices) and every CAT
  block must follow the UNI/INT blocks (the source puts categorical parameters last).
* Values: a UNI or INT value is a bin ``0..999`` (the source quantises with ``Q = 1000``; INT uses the
  same bins as UNI); a CAT value is ``<k>`` with ``k < n``. The objective's bin is the source's
  (quantised over the whole trajectory when the file was written): it is mapped as it is, not quantised
  again. When the vocabulary's ``Q`` differs from 1000 every bin ``b`` is re-binned to
  ``round(b / 999 * (Q - 1))`` (half to even).
* Each trajectory is wrapped in ``<bos>`` ... ``<eos>``, like the generated ones.

Refused lines are counted by reason, in two classes:

* malformed: the line breaks the grammar (a missing field, a parameter name, a value that is not a bin or
  not a category of its parameter, a bin outside ``0..999`` such as the ``1000`` of files written before
  bbo-pile's v0.5 fix, a category list that is not ``0..n-1``, no trial). Up to ``max_malformed`` are
  skipped; one more raises, naming the file, the line numbers and the reasons.
* skipped: well-formed lines this reproduction cannot hold: more categories than the vocabulary's
  :data:`~.vocabulary.MAX_CATEGORIES` (the source's tokenizer has ``<0>`` ... ``<14>`` only), a bound
  that is not a finite number, an empty range (``lo == hi``) or a log scale with ``lo <= 0`` (our
  tokenizer's checks), or a trajectory longer than the model's context (our packing keeps whole
  trajectories; the source streams token ids and cuts blocks anywhere). They are counted, never fatal.

An algorithm name that is not in the vocabulary is collected with its count; :func:`check_algorithms`
(a fast first pass) and :func:`read_pile` refuse the file then, naming every unknown name, its count and its
first line, so that the config's list can be completed before anything is encoded.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

import numpy as np
import pandas as pd

from .tokenizer import history_ids, typed_header_ids
from .vocabulary import ALGORITHM_NAME, MAX_CATEGORIES, Vocabulary

__all__ = [
    "SOURCE_Q",
    "MalformedLine",
    "PileLine",
    "PileReading",
    "SkippedLine",
    "check_algorithms",
    "encode_line",
    "parse_line",
    "read_pile",
]

SOURCE = "syne-tune/bbo-pile@e3163a9cc3440e91eb1f0bec215369e8dcf68869 open_optformer/history.py"
SOURCE_Q = 1000  # History(num_numeric_tokens=1000) in generate_training_data/load_data.py
MAX_LISTED = 10  # line numbers named in an error

_BOUND = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?"
_LINE = re.compile(r"algorithm:([^,]*),search-space:(.*?),history:(.*)", re.S)
_BLOCK = re.compile(
    rf"\{{type:(UNI|INT),min_value:({_BOUND}),max_value:({_BOUND}),(log_scale|linear_scale)\}}"
    r"|\{type:CAT,categories:\[([0-9,]*)\]\}"
)
_NUMBER = re.compile(r"\d+")
_BIN = r"(?:0|[1-9]\d*)"


class MalformedLine(ValueError):
    """A line that breaks the format (counted against ``max_malformed``)."""


class SkippedLine(ValueError):
    """A well-formed line this reproduction cannot hold (counted, never fatal)."""


class PileLine(NamedTuple):
    """One parsed line: ``kinds`` per parameter, the bounds' text (``""`` for CAT), ``log_scale``,
    ``n_categories`` (0 but for CAT), ``x`` ``(T, d)`` source bins or category indices, ``y`` ``(T,)``
    source bins."""

    algorithm: str
    kinds: tuple[str, ...]
    lo_text: tuple[str, ...]
    hi_text: tuple[str, ...]
    log_scale: tuple[bool, ...]
    n_categories: tuple[int, ...]
    x: np.ndarray
    y: np.ndarray


def _short(text: str, n: int = 60) -> str:
    return repr(text if len(text) <= n else text[:n] + "...")


def parse_line(text: str, max_categories: int = MAX_CATEGORIES) -> PileLine:
    """Parse one line (trailing whitespace ignored). Raises :class:`MalformedLine` or
    :class:`SkippedLine` with the reason."""
    text = text.rstrip()
    if text.startswith("benchmark:") or "{name:" in text:
        raise MalformedLine("names in the line (the dataset is written with remove_names=True)")
    match = _LINE.fullmatch(text)
    if match is None:
        raise MalformedLine(f"expected 'algorithm:<name>,search-space:{{...}}...,history:...', got {_short(text)}")
    algorithm, space, history = match.groups()
    if not ALGORITHM_NAME.fullmatch(algorithm):
        raise MalformedLine(f"algorithm name {algorithm!r} is not letters, digits or '_.+-'")
    kinds, lo, hi, log, counts = [], [], [], [], []
    pos = 0
    for block in _BLOCK.finditer(space):
        if block.start() != pos:
            break
        pos = block.end()
        numeric_kind, low, high, scale, categories = block.groups()
        if numeric_kind is None:
            listed = categories.split(",")
            if listed != [str(k) for k in range(len(listed))]:
                raise MalformedLine(f"parameter {len(kinds)}: categories [{categories}] are not 0,1,...,n-1")
            kinds.append("CAT")
            lo.append("")
            hi.append("")
            log.append(False)
            counts.append(len(listed))
            continue
        if "CAT" in kinds:
            raise MalformedLine(f"parameter {len(kinds)}: a {numeric_kind} block after a CAT block")
        kinds.append(numeric_kind)
        lo.append(low)
        hi.append(high)
        log.append(scale == "log_scale")
        counts.append(0)
    if pos != len(space) or not kinds:
        raise MalformedLine(f"search space: parameter {len(kinds)} is not a UNI/INT/CAT block: {_short(space[pos:])}")
    d = len(kinds)
    if not history.endswith("|"):
        raise MalformedLine("history does not end with '|' (no trial, or a truncated line)")
    if not _history_pattern(tuple(k == "CAT" for k in kinds)).fullmatch(history):
        trial_re = _trial_pattern(tuple(k == "CAT" for k in kinds))
        for t, trial in enumerate(history[:-1].split("|")):
            if not trial_re.fullmatch(trial + "|"):
                raise MalformedLine(
                    f"trial {t}: {_short(trial)} is not {d} value(s) "
                    f"({','.join('<k>' if k == 'CAT' else 'bin' for k in kinds)}) then '*' and a bin"
                )
        raise MalformedLine("history is not a sequence of trials")  # pragma: no cover (split agrees)
    numbers = np.array(_NUMBER.findall(history), dtype=np.int64).reshape(-1, d + 1)
    x, y = numbers[:, :d], numbers[:, d]
    is_cat = np.array([k == "CAT" for k in kinds])
    limit = np.where(is_cat, np.asarray(counts), SOURCE_Q)
    bad = x >= limit
    if bad.any():
        t, j = (int(i) for i in np.argwhere(bad)[0])
        what = f"category <{x[t, j]}> of a parameter with {counts[j]}" if is_cat[j] else f"bin {x[t, j]} outside 0..999"
        raise MalformedLine(f"trial {t}, parameter {j}: {what}")
    if (y >= SOURCE_Q).any():
        t = int(np.argmax(y >= SOURCE_Q))
        raise MalformedLine(f"trial {t}: objective bin {y[t]} outside 0..999")
    if max(counts) > max_categories:
        j = int(np.argmax(counts))
        raise SkippedLine(f"more than {max_categories} categories (parameter {j} has {counts[j]})")
    for j in np.flatnonzero(~is_cat).tolist():
        a, b = float(lo[j]), float(hi[j])
        if not (np.isfinite(a) and np.isfinite(b)):
            raise SkippedLine(f"parameter {j}: bound not finite ({lo[j]}, {hi[j]})")
        if a >= b:
            raise SkippedLine(f"parameter {j}: empty range (min_value {lo[j]} >= max_value {hi[j]})")
        if log[j] and a <= 0:
            raise SkippedLine(f"parameter {j}: log scale with min_value {lo[j]} <= 0")
    return PileLine(algorithm, tuple(kinds), tuple(lo), tuple(hi), tuple(log), tuple(counts), x, y)


@lru_cache(maxsize=4096)
def _trial_pattern(is_cat: tuple[bool, ...]) -> re.Pattern:
    values = ",".join(f"<{_BIN}>" if c else _BIN for c in is_cat)
    return re.compile(rf"{values}\*{_BIN}\|")


@lru_cache(maxsize=4096)
def _history_pattern(is_cat: tuple[bool, ...]) -> re.Pattern:
    return re.compile(rf"(?:{_trial_pattern(is_cat).pattern})+")


def rebin(bins: np.ndarray, q: int) -> np.ndarray:
    """Source bins ``0..999`` as bins ``0..q-1``: ``round(b / 999 * (q - 1))``, half to even; the identity
    for ``q = 1000``."""
    bins = np.asarray(bins, dtype=np.int64)
    if q == SOURCE_Q:
        return bins
    return np.rint(bins * ((q - 1) / (SOURCE_Q - 1))).astype(np.int64)


def encode_line(vocab: Vocabulary, line: PileLine) -> np.ndarray:
    """``<bos>`` header, trials, ``<eos>`` of a parsed line (values re-binned to the vocabulary's ``Q``)."""
    is_cat = np.array([k == "CAT" for k in line.kinds])
    x = np.where(is_cat, line.x, rebin(line.x, vocab.q))
    header = typed_header_ids(
        vocab, line.algorithm, line.kinds, line.lo_text, line.hi_text, line.log_scale, line.n_categories
    )
    body = history_ids(vocab, x, rebin(line.y, vocab.q), line.kinds, line.n_categories)
    return np.concatenate([header, body, [vocab.eos]])


@dataclass
class PileReading:
    """What :func:`read_pile` read: the token ids of the kept lines and the counts."""

    source: str
    sequences: list[np.ndarray] = field(default_factory=list)
    lines: int = 0
    blank: int = 0
    malformed: list[tuple[int, str]] = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)
    unknown: Counter = field(default_factory=Counter)
    kept: Counter = field(default_factory=Counter)  # trajectories per algorithm
    tokens: Counter = field(default_factory=Counter)  # tokens per algorithm

    def stats(self, split: str) -> pd.DataFrame:
        """One row per algorithm, in the corpus's stats layout (family ``bbo_pile``); lines refused for any
        reason are ``rejected`` on a row of their own (optimizer ``(refused)``)."""
        rows = [
            {
                "split": split,
                "family": "bbo_pile",
                "optimizer": name,
                "trajectories": int(self.kept[name]),
                "rejected": 0,
                "dropped_trials": 0,
                "tokens": int(self.tokens[name]),
            }
            for name in sorted(self.kept)
        ]
        refused = len(self.malformed) + sum(self.skipped.values()) + sum(self.unknown.values())
        if refused:
            rows.append(
                {
                    "split": split,
                    "family": "bbo_pile",
                    "optimizer": "(refused)",
                    "trajectories": refused,
                    "rejected": refused,
                    "dropped_trials": 0,
                    "tokens": 0,
                }
            )
        return pd.DataFrame(rows)

    def summary(self) -> str:
        """One paragraph of counts for the log."""
        skipped = ", ".join(f"{n} {reason}" for reason, n in self.skipped.most_common()) or "none"
        return (
            f"{self.source}: {self.lines} lines, {sum(self.kept.values())} kept ({sum(self.tokens.values())} tokens), "
            f"{len(self.malformed)} malformed, {self.blank} blank, skipped: {skipped}"
        )


def _skip_reason(reason: str) -> str:
    """The reason without the line's own numbers, to count alike lines together."""
    reason = re.sub(r"^parameter \d+: ", "", reason)
    reason = re.sub(r" \(.*\)$", "", reason)
    return re.sub(r"min_value \S+ <= 0", "min_value <= 0", reason)


def _unknown_error(source: str, unknown: Counter, first: dict[str, int], vocab: Vocabulary) -> ValueError:
    names = "; ".join(f"{name!r}: {n} line(s), first at line {first[name]}" for name, n in unknown.most_common())
    return ValueError(
        f"{source}: {sum(unknown.values())} line(s) name algorithms outside the vocabulary ({names}); known: "
        f"{list(vocab.algorithms)}. Add them to the config's pile.algorithms to train on them"
    )


def check_algorithms(lines: Iterable[str], vocab: Vocabulary, source: str = "<lines>") -> Counter:
    """A fast first pass: the count of lines per algorithm name (the text between ``algorithm:`` and the
    first comma); names outside the vocabulary raise, with their counts and first line numbers. Lines
    that do not start with ``algorithm:`` are left to :func:`read_pile`."""
    counts, first = Counter(), {}
    for number, text in enumerate(lines, start=1):
        if not text.startswith("algorithm:"):
            continue
        name = text[10 : text.find(",", 10)] if "," in text else text[10:].rstrip()
        counts[name] += 1
        first.setdefault(name, number)
    unknown = Counter({n: c for n, c in counts.items() if n not in vocab.algorithms})
    if unknown:
        raise _unknown_error(source, unknown, first, vocab)
    return counts


def read_pile(
    lines: Iterable[str],
    vocab: Vocabulary,
    context: int,
    max_malformed: int = 0,
    source: str = "<lines>",
    refuse_unknown: bool = True,
) -> PileReading:
    """The token ids of every line of ``lines`` (a file's lines; numbered from 1) that parses, fits the
    ``context`` and names a known algorithm, with the counts (:class:`PileReading`). More than
    ``max_malformed`` malformed lines raise at the first one too many, naming the lines and reasons; with
    ``refuse_unknown`` lines naming algorithms outside the vocabulary raise at the end (all counted)."""
    if max_malformed < 0:
        raise ValueError(f"max_malformed must be >= 0, got {max_malformed}")
    reading = PileReading(source)
    first_unknown: dict[str, int] = {}
    for number, text in enumerate(lines, start=1):
        reading.lines += 1
        if not text.strip():
            reading.blank += 1
            continue
        try:
            line = parse_line(text)
        except MalformedLine as error:
            reading.malformed.append((number, str(error)))
            if len(reading.malformed) > max_malformed:
                listed = "; ".join(f"line {n}: {why}" for n, why in reading.malformed[:MAX_LISTED])
                raise ValueError(
                    f"{source}: {len(reading.malformed)} malformed lines, more than the {max_malformed} "
                    f"tolerated (pile.max_malformed): {listed}"
                ) from None
            continue
        except SkippedLine as error:
            reading.skipped[_skip_reason(str(error))] += 1
            continue
        if line.algorithm not in vocab.algorithms:
            reading.unknown[line.algorithm] += 1
            first_unknown.setdefault(line.algorithm, number)
            continue
        missing = sorted(set(line.kinds) - set(vocab.parameter_types))
        if missing:
            raise ValueError(
                f"{source} line {number}: parameters of type {missing}, which the vocabulary lacks "
                f"(tokenizer.parameter_types: {list(vocab.parameter_types)})"
            )
        ids = encode_line(vocab, line)
        if ids.size > context:
            reading.skipped[f"longer than the context of {context} tokens"] += 1
            continue
        reading.sequences.append(ids)
        reading.kept[line.algorithm] += 1
        reading.tokens[line.algorithm] += int(ids.size)
    if refuse_unknown and reading.unknown:
        raise _unknown_error(source, reading.unknown, first_unknown, vocab)
    return reading
