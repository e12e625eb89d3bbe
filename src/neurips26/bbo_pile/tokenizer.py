r"""Black-box-optimization trajectories to token ids and back (notes 05, 5.2).

Source format: bbo-pile's ``History.get_prompt`` with ``remove_names=True``
(``open_optformer/history.py``, syne-tune/bbo-pile at e3163a9), for continuous parameters::

    algorithm:RS,search-space:{type:UNI,min_value:0.0,max_value:1.0,linear_scale}{type:UNI,
    min_value:1e-05,max_value:10.0,log_scale},history:5,0*3|1,10*7|10,5*0|

(one line in the source). The search-space blocks follow each other with no separator. Within a
trial the parameters' bins are joined by ``,``, ``*`` precedes the objective's bin and ``|`` closes
the trial. A value is quantised with ``Q`` bins, ``q(x) = round((x - lo) / (hi - lo) * (Q - 1))``,
in log space for a ``log_scale`` parameter, and decoded as ``q / (Q - 1) * (hi - lo) + lo``;
rounding is half to even, like Python's ``round`` in the source. The objective (minimised) is
quantised per trajectory, ``y~_t = q(y_t; min y, max y)``, with ``max y += 1`` when all values are
equal.

Deliberate differences from bbo-pile (the notes' quick-scale adaptation):

* Tokens: a fixed vocabulary instead of the source's sentencepiece BPE (1069 pieces, padded to
  1185): one token per value bin ``0..Q-1``, per punctuation mark, per keyword, per algorithm name,
  and one per character of a header float (digits, ``-``, ``+``, ``.``, ``e``). A bin and a digit
  are different tokens even where they print alike (in bbo-pile the bin ``5`` and the ``5`` of
  ``-5.0`` are one user-defined piece). ``Q = 100`` at quick scale (the source uses 1000).
* Each trajectory is wrapped in ``<bos>`` ... ``<eos>`` (the source writes one trajectory per text
  line and streams the token ids with no separator); ``<pad>`` pads batches.
* Header floats are always written as Python's shortest round-trip ``repr`` of a float (``-5.0``,
  ``1e-05``) so that they decode exactly; the source prints the bound as syne-tune stores it.
* Only ``type:UNI`` parameters (no ``INT`` or ``CAT``); a log-scale parameter needs ``lo > 0`` and
  is quantised with ``log(x)`` (the source uses ``log(x + 1e-10)``).
* Bad inputs raise instead of writing a malformed line: ``x`` outside ``[lo, hi]`` (the source would
  write a bin outside ``0..Q-1``), fewer than two trials, an unknown algorithm. A trial whose
  objective is NaN or infinite is dropped and counted (the source would write ``nan``), and a
  trajectory with more than :data:`MAX_INVALID_FRACTION` of them is rejected (notes 5.9).
* ``y_norm="prefix"`` (an ablation): trial ``t``'s objective is quantised with the min/max over
  trials ``1..t`` only, the information available when it was proposed. ``"global"`` (the default)
  is the source's training-time quantisation over the whole trajectory. At inference the source
  re-encodes the current history with ``"global"`` before each proposal: do the same with
  :func:`quantise_y` and :func:`history_ids`.
* :func:`fit_context` keeps the header and the most recent whole trials when a prompt is longer than
  the model's context; the source's litgpt path left-truncates the token ids and silently loses the
  header.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

__all__ = [
    "FIT_POLICIES",
    "FORMAT",
    "MAX_INVALID_FRACTION",
    "SOURCE",
    "Y_NORMS",
    "Header",
    "TrialGrammar",
    "Vocabulary",
    "allowed_next",
    "decode_header",
    "decode_trajectory",
    "dequantise",
    "drop_nonfinite",
    "encode_trajectory",
    "fit_context",
    "header_ids",
    "history_ids",
    "make_vocabulary",
    "parse_trial",
    "quantise",
    "quantise_y",
    "trial_ids",
    "trial_length",
]

SOURCE = "syne-tune/bbo-pile@e3163a9cc3440e91eb1f0bec215369e8dcf68869 open_optformer/history.py"
Y_NORMS = ("global", "prefix")
FIT_POLICIES = ("recent", "reject")
MAX_INVALID_FRACTION = 0.2

FORMAT = (
    "bbo-pile's History.get_prompt(remove_names=True) text, one token per value bin, punctuation "
    "mark, keyword, algorithm name and header-float character: <bos>algorithm:{ALG},search-space:"
    "{type:UNI,min_value:{lo},max_value:{hi},linear_scale|log_scale}... ,history:"
    "{x_1^1},...,{x_1^d}*{y_1}|{x_2^1},...*{y_2}|...<eos>. Values in Q bins, "
    "q(x) = round((x - lo) / (hi - lo) * (Q - 1)) (log space for log_scale, half to even); the "
    "objective per trajectory with its min/max (max += 1 if constant); trials with non-finite y "
    "dropped; header floats in shortest round-trip digits."
)

SPECIALS = ("<pad>", "<bos>", "<eos>")
PUNCTUATION = (",", "*", "|", ":", "{", "}")
KEYWORDS = (
    "algorithm",
    "search-space",
    "type",
    "UNI",
    "min_value",
    "max_value",
    "linear_scale",
    "log_scale",
    "history",
)
FLOAT_CHARS = ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "-", "+", ".", "e")
# An algorithm name is one token, printed as is: nothing the format uses as punctuation, no spaces.
ALGORITHM_NAME = re.compile(r"[A-Za-z0-9_.+\-]+")
VOCABULARY_FORMAT = "neurips26.bbo_pile.vocabulary/1"


@dataclass(frozen=True)
class Vocabulary:
    """Token ids: ``<pad> <bos> <eos>``, the ``Q`` value bins (contiguous), punctuation, keywords,
    header-float characters, then one token per algorithm name. Build it with
    :func:`make_vocabulary`."""

    algorithms: tuple[str, ...]
    q: int
    tokens: tuple[str, ...] = field(init=False, repr=False)
    _symbols: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        algorithms = tuple(self.algorithms)
        if isinstance(self.q, bool) or not isinstance(self.q, int | np.integer):
            raise ValueError(f"Q must be an integer, got {self.q!r}")
        if self.q < 2:
            raise ValueError(f"Q must be at least 2 (two bins), got {self.q}")
        if not algorithms:
            raise ValueError("the vocabulary needs at least one algorithm name")
        for name in algorithms:
            if not isinstance(name, str) or not ALGORITHM_NAME.fullmatch(name):
                raise ValueError(
                    f"algorithm name {name!r} must be non-empty letters, digits or '_.+-' "
                    "(it is printed inside the format)"
                )
        if len(set(algorithms)) != len(algorithms):
            repeated = sorted({a for a in algorithms if algorithms.count(a) > 1})
            raise ValueError(f"algorithm names repeated: {repeated}")
        q = int(self.q)
        object.__setattr__(self, "algorithms", algorithms)
        object.__setattr__(self, "q", q)
        fixed = PUNCTUATION + KEYWORDS + FLOAT_CHARS
        tokens = SPECIALS + tuple(str(k) for k in range(q)) + fixed + algorithms
        object.__setattr__(self, "tokens", tokens)
        start = len(SPECIALS) + q
        object.__setattr__(self, "_symbols", {s: start + i for i, s in enumerate(fixed)})

    # special tokens and bins
    @property
    def size(self) -> int:
        return len(self.tokens)

    pad = 0
    bos = 1
    eos = 2
    bin_offset = len(SPECIALS)

    def bin(self, k: int) -> int:
        """The token id of value bin ``k`` in ``0..Q-1``."""
        if not 0 <= k < self.q or int(k) != k:
            raise ValueError(f"bin {k!r} outside 0..{self.q - 1}")
        return self.bin_offset + int(k)

    @property
    def bin_ids(self) -> np.ndarray:
        """The ``Q`` bin token ids, in bin order (contiguous)."""
        return np.arange(self.bin_offset, self.bin_offset + self.q, dtype=np.int64)

    # punctuation, keywords and header floats
    def symbol(self, text: str) -> int:
        """The id of a punctuation mark, keyword or header-float character (``","``, ``"history"``,
        ``"7"`` the digit, ...)."""
        try:
            return self._symbols[text]
        except KeyError:
            raise ValueError(f"{text!r} is not a symbol of the vocabulary (known: {sorted(self._symbols)})") from None

    @property
    def sep_x(self) -> int:
        """``,`` between values (and between header fields)."""
        return self._symbols[","]

    @property
    def sep_y(self) -> int:
        """``*`` before the objective's bin."""
        return self._symbols["*"]

    @property
    def sep_trial(self) -> int:
        """``|`` closing a trial."""
        return self._symbols["|"]

    @property
    def colon(self) -> int:
        return self._symbols[":"]

    @property
    def lbrace(self) -> int:
        return self._symbols["{"]

    @property
    def rbrace(self) -> int:
        return self._symbols["}"]

    @property
    def float_char_ids(self) -> np.ndarray:
        """Ids of the header-float characters ``0-9 - + . e``."""
        return np.array([self._symbols[c] for c in FLOAT_CHARS], dtype=np.int64)

    # algorithms
    def algorithm(self, name: str) -> int:
        """The token id of an algorithm name."""
        try:
            return self.size - len(self.algorithms) + self.algorithms.index(name)
        except ValueError:
            raise ValueError(f"unknown algorithm {name!r}; known: {list(self.algorithms)}") from None

    @property
    def algorithm_ids(self) -> np.ndarray:
        return np.arange(self.size - len(self.algorithms), self.size, dtype=np.int64)

    def algorithm_name(self, token: int) -> str:
        first = self.size - len(self.algorithms)
        if not first <= token < self.size:
            raise ValueError(f"token {token!r} is not an algorithm name")
        return self.algorithms[int(token) - first]

    # text
    def decode_text(self, ids, skip_special: bool = True) -> str:
        """The text of ``ids``; with ``skip_special`` the pad/bos/eos tokens are left out, so an
        encoded trajectory prints as bbo-pile's ``get_prompt`` string."""
        ids = _as_ids(ids, self)
        if skip_special:
            ids = ids[ids >= len(SPECIALS)]
        return "".join(self.tokens[i] for i in ids.tolist())

    def to_json(self) -> str:
        return json.dumps(
            {
                "format": VOCABULARY_FORMAT,
                "q": self.q,
                "algorithms": list(self.algorithms),
                "size": self.size,
                "tokens": list(self.tokens),
            }
        )

    @classmethod
    def from_json(cls, text: str | Mapping) -> Vocabulary:
        """Rebuild a vocabulary saved by :meth:`to_json`; refuses one whose token layout differs
        from this code's (ids would silently mean other tokens)."""
        data = json.loads(text) if isinstance(text, str | bytes) else dict(text)
        if data.get("format") != VOCABULARY_FORMAT:
            raise ValueError(f"not a saved vocabulary: format {data.get('format')!r}, expected {VOCABULARY_FORMAT!r}")
        vocab = cls(tuple(data["algorithms"]), data["q"])
        if list(vocab.tokens) != list(data["tokens"]):
            raise ValueError("saved vocabulary's token layout differs from this tokenizer's")
        return vocab


def make_vocabulary(algorithms: Sequence[str], q: int) -> Vocabulary:
    """The vocabulary for these algorithm names and ``Q`` value bins."""
    return Vocabulary(tuple(algorithms), q)


class Header(NamedTuple):
    algorithm: str
    lo: np.ndarray
    hi: np.ndarray
    log_scale: np.ndarray


def trial_length(d: int) -> int:
    """Tokens per trial: ``d`` bins, ``d - 1`` commas, ``*``, the objective's bin and ``|``."""
    return 2 * _check_d(d) + 2


# quantisation


def quantise(x, lo, hi, q: int, log_scale=None) -> np.ndarray:
    """Bins ``round((x - lo) / (hi - lo) * (Q - 1))`` of ``x`` (last axis of length ``d``), in log
    space where ``log_scale``. A value outside ``[lo, hi]`` (or not finite) raises, naming it."""
    lo, hi, log = _check_space(lo, hi, log_scale)
    q = _check_q(q)
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 0 or x.shape[-1] != lo.size:
        raise ValueError(
            f"x has shape {x.shape} but the search space has d={lo.size} dimensions (x's last axis must have length d)"
        )
    bad = ~np.isfinite(x) | (x < lo) | (x > hi)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        j = where[-1]
        at = f"trial {where[0]}, coordinate {j}" if x.ndim == 2 else f"index {where}"
        raise ValueError(
            f"x outside [lo, hi] at {at}: x={x[where]!r}, range [{lo[j]!r}, {hi[j]!r}] "
            f"({int(bad.sum())} value(s) outside in all)"
        )
    a, b, v = _warp(lo, log), _warp(hi, log), _warp(x, log)
    bins = np.rint((v - a) / (b - a) * (q - 1)).astype(np.int64)
    return np.clip(bins, 0, q - 1, out=bins)  # only float rounding can step outside


def dequantise(bins, lo, hi, q: int, log_scale=None) -> np.ndarray:
    """Values ``bins / (Q - 1) * (hi - lo) + lo`` (in log space where ``log_scale``), clipped into
    ``[lo, hi]`` against float rounding of ``exp(log(hi))``. Bins outside ``0..Q-1`` raise."""
    lo, hi, log = _check_space(lo, hi, log_scale)
    q = _check_q(q)
    bins = np.asarray(bins)
    if not np.issubdtype(bins.dtype, np.integer):
        raise ValueError(f"bins must be integers, got dtype {bins.dtype}")
    if bins.ndim == 0 or bins.shape[-1] != lo.size:
        raise ValueError(f"bins have shape {bins.shape} but the search space has d={lo.size}")
    if bins.size and (bins.min() < 0 or bins.max() > q - 1):
        raise ValueError(f"bins outside 0..{q - 1}: found {bins.min()}..{bins.max()}")
    a, b = _warp(lo, log), _warp(hi, log)
    v = bins / (q - 1) * (b - a) + a
    return np.clip(np.where(log, np.exp(np.where(log, v, 0.0)), v), lo, hi)


def quantise_y(y, q: int, y_norm: str = "global") -> np.ndarray:
    """The objective's bins for one trajectory, with its own min/max: over all trials
    (``"global"``, bbo-pile) or over trials ``1..t`` for trial ``t`` (``"prefix"``). A constant
    range gets ``max += 1``, so a constant objective is bin 0. One trial is allowed here (a prompt's
    history may have one); :func:`encode_trajectory` requires two."""
    q = _check_q(q)
    if y_norm not in Y_NORMS:
        raise ValueError(f"unknown y_norm {y_norm!r}; expected one of {Y_NORMS}")
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D (one objective per trial), got shape {y.shape}")
    if not np.isfinite(y).all():
        raise ValueError("y has NaN or infinite values: drop those trials first (drop_nonfinite)")
    if y.size == 0:
        return np.zeros(0, dtype=np.int64)
    if y_norm == "global":
        low, high = y.min(), y.max()
    else:
        low, high = np.minimum.accumulate(y), np.maximum.accumulate(y)
    high = np.where(high == low, high + 1.0, high)
    span = high - low
    if not np.isfinite(span).all():
        raise ValueError("the objective's range overflows float64")
    span = np.where(span > 0, span, 1.0)  # |y| >= 2**53: max + 1 == max, all values equal
    bins = np.rint((y - low) / span * (q - 1)).astype(np.int64)
    return np.clip(bins, 0, q - 1, out=bins)


def drop_nonfinite(x, y, max_invalid_fraction: float = MAX_INVALID_FRACTION):
    """``(x, y, n_dropped)`` without the trials whose objective is NaN or infinite. More than
    ``max_invalid_fraction`` of such trials, or an empty trajectory, raises."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"x must be 2-D (trials, dimensions), got shape {x.shape}")
    if y.ndim != 1 or y.shape[0] != x.shape[0]:
        raise ValueError(f"y must be 1-D with one value per trial: x {x.shape}, y {y.shape}")
    if y.size == 0:
        raise ValueError("empty trajectory (no trials)")
    finite = np.isfinite(y)
    n_dropped = int(y.size - finite.sum())
    if n_dropped > max_invalid_fraction * y.size:
        raise ValueError(
            f"{n_dropped} of {y.size} trials have a NaN or infinite objective "
            f"(more than {max_invalid_fraction:.0%}): trajectory rejected"
        )
    return x[finite], y[finite], n_dropped


# encoding


def header_ids(vocab: Vocabulary, algorithm: str, lo, hi, log_scale=None) -> np.ndarray:
    """``<bos>algorithm:{ALG},search-space:{...}...,history:``, the prompt before any trial."""
    lo, hi, log = _check_space(lo, hi, log_scale)
    s = vocab.symbol
    ids = [vocab.bos, s("algorithm"), s(":"), vocab.algorithm(algorithm), s(","), s("search-space")]
    ids.append(s(":"))
    for low, high, is_log in zip(lo.tolist(), hi.tolist(), log.tolist(), strict=True):
        ids += [s("{"), s("type"), s(":"), s("UNI"), s(","), s("min_value"), s(":")]
        ids += [s(c) for c in repr(float(low))]
        ids += [s(","), s("max_value"), s(":")]
        ids += [s(c) for c in repr(float(high))]
        ids += [s(","), s("log_scale" if is_log else "linear_scale"), s("}")]
    ids += [s(","), s("history"), s(":")]
    return np.array(ids, dtype=np.int64)


def history_ids(vocab: Vocabulary, x_bins, y_bins) -> np.ndarray:
    """The trials ``x^1,...,x^d*y|`` of ``(T, d)`` value bins and ``(T,)`` objective bins."""
    x_bins = _check_bins(x_bins, vocab.q, "x_bins")
    y_bins = _check_bins(y_bins, vocab.q, "y_bins")
    if x_bins.ndim != 2 or y_bins.shape != x_bins.shape[:1]:
        raise ValueError(f"x_bins must be (T, d) and y_bins (T,): got {x_bins.shape}, {y_bins.shape}")
    n, d = x_bins.shape
    _check_d(d)
    trials = np.empty((n, 2 * d + 2), dtype=np.int64)
    trials[:, 0 : 2 * d : 2] = vocab.bin_offset + x_bins
    trials[:, 1 : 2 * d - 1 : 2] = vocab.sep_x
    trials[:, 2 * d - 1] = vocab.sep_y
    trials[:, 2 * d] = vocab.bin_offset + y_bins
    trials[:, 2 * d + 1] = vocab.sep_trial
    return trials.ravel()


def trial_ids(vocab: Vocabulary, x_bins_row, y_bin: int) -> np.ndarray:
    """One trial ``x^1,...,x^d*y|`` from its ``d`` value bins and the objective's bin."""
    row = np.asarray(x_bins_row)
    if row.ndim != 1:
        raise ValueError(f"x_bins_row must be 1-D, got shape {row.shape}")
    return history_ids(vocab, row[None, :], np.asarray([y_bin]))


def encode_trajectory(
    vocab: Vocabulary,
    algorithm: str,
    lo,
    hi,
    x,
    y,
    log_scale=None,
    y_norm: str = "global",
    *,
    max_invalid_fraction: float = MAX_INVALID_FRACTION,
    return_n_dropped: bool = False,
):
    """``<bos>`` header, the trials in order, ``<eos>``: one training sequence.

    ``x`` is ``(T, d)`` in the parameters' own units, ``y`` ``(T,)`` the objective (minimised).
    Trials with a non-finite objective are dropped first (``return_n_dropped=True`` returns
    ``(ids, n_dropped)``); at least two must remain for the objective's quantisation.
    """
    if y_norm not in Y_NORMS:
        raise ValueError(f"unknown y_norm {y_norm!r}; expected one of {Y_NORMS}")
    header = header_ids(vocab, algorithm, lo, hi, log_scale)
    _, y_kept, n_dropped = drop_nonfinite(x, y, max_invalid_fraction)
    if y_kept.size < 2:
        raise ValueError(
            f"{y_kept.size} trial(s) left after dropping {n_dropped} with a non-finite objective: "
            "the objective's quantisation needs at least 2"
        )
    x = np.asarray(x, dtype=np.float64)
    kept = np.isfinite(np.asarray(y, dtype=np.float64))
    space_lo = _check_space(lo, hi, log_scale)[0]
    if x.shape[1] != space_lo.size:
        raise ValueError(f"x has shape {x.shape} but the search space has d={space_lo.size} dimensions")
    # the kept trials' x are checked under their own trial numbers; a dropped trial's x is ignored
    x_bins = quantise(np.where(kept[:, None], x, space_lo), lo, hi, vocab.q, log_scale)[kept]
    body = history_ids(vocab, x_bins, quantise_y(y_kept, vocab.q, y_norm))
    ids = np.concatenate([header, body, [vocab.eos]])
    return (ids, n_dropped) if return_n_dropped else ids


# decoding


def decode_header(vocab: Vocabulary, ids) -> tuple[Header, int]:
    """The header of ``ids`` (a leading ``<bos>`` is optional) and the position after ``history:``.
    Malformed headers raise, naming the position and what was expected."""
    ids = _as_ids(ids, vocab)
    s = vocab.symbol
    pos = 1 if ids.size and ids[0] == vocab.bos else 0

    def expect(token: int, what: str) -> None:
        nonlocal pos
        if pos >= ids.size or ids[pos] != token:
            got = repr(vocab.tokens[ids[pos]]) if pos < ids.size else "the end"
            raise ValueError(f"malformed header at token {pos}: expected {what!r}, got {got}")
        pos += 1

    def number() -> float:
        nonlocal pos
        start = pos
        while pos < ids.size and ids[pos] in float_ids:
            pos += 1
        text = "".join(vocab.tokens[i] for i in ids[start:pos].tolist())
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"malformed number {text!r} at token {start} of the header") from None

    float_ids = set(vocab.float_char_ids.tolist())
    for word in ("algorithm", ":"):
        expect(s(word), word)
    if pos >= ids.size or ids[pos] not in set(vocab.algorithm_ids.tolist()):
        raise ValueError(f"malformed header at token {pos}: expected an algorithm name")
    algorithm = vocab.algorithm_name(int(ids[pos]))
    pos += 1
    for word in (",", "search-space", ":"):
        expect(s(word), word)
    lo, hi, log = [], [], []
    while pos < ids.size and ids[pos] == vocab.lbrace:
        pos += 1
        for word in ("type", ":", "UNI", ",", "min_value", ":"):
            expect(s(word), word)
        lo.append(number())
        for word in (",", "max_value", ":"):
            expect(s(word), word)
        hi.append(number())
        expect(s(","), ",")
        if pos < ids.size and ids[pos] in (s("linear_scale"), s("log_scale")):
            log.append(bool(ids[pos] == s("log_scale")))
            pos += 1
        else:
            raise ValueError(f"malformed header at token {pos}: expected linear_scale or log_scale")
        expect(vocab.rbrace, "}")
    if not lo:
        raise ValueError(f"malformed header at token {pos}: expected '{{' (no parameter)")
    for word in (",", "history", ":"):
        expect(s(word), word)
    lo_, hi_, log_ = _check_space(lo, hi, log)
    return Header(algorithm, lo_, hi_, log_), pos


def decode_trajectory(vocab: Vocabulary, ids):
    """``(algorithm, lo, hi, x_bins (T, d), y_bins (T,))`` from an encoded trajectory or prompt
    (``<bos>`` and a final ``<eos>``, then padding, are optional). The scales are in
    :func:`decode_header`. Anything but whole, well-formed trials after the header raises."""
    ids = _as_ids(ids, vocab)
    header, pos = decode_header(vocab, ids)
    rest = ids[pos:]
    n_pad = int(np.argmax(rest[::-1] != vocab.pad)) if (rest != vocab.pad).any() else rest.size
    rest = rest[: rest.size - n_pad]
    if rest.size and rest[-1] == vocab.eos:
        rest = rest[:-1]
    d = header.lo.size
    length = trial_length(d)
    if rest.size % length:
        raise ValueError(f"history of {rest.size} tokens is not a whole number of {length}-token trials (d={d})")
    trials = rest.reshape(-1, length)
    ok = TrialGrammar(vocab, d).masks[np.arange(length), trials]
    if not ok.all():
        t, k = (int(i) for i in np.argwhere(~ok)[0])
        raise ValueError(
            f"malformed trial {t}: token {vocab.tokens[trials[t, k]]!r} at position {k} of "
            f"{length} (token {pos + t * length + k} of the sequence)"
        )
    x_bins = trials[:, 0 : 2 * d : 2] - vocab.bin_offset
    y_bins = trials[:, 2 * d] - vocab.bin_offset
    return header.algorithm, header.lo, header.hi, x_bins, y_bins


# prompts and constrained decoding


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


# validation helpers


def _check_q(q) -> int:
    if isinstance(q, bool) or not isinstance(q, int | np.integer) or q < 2:
        raise ValueError(f"Q must be an integer of at least 2, got {q!r}")
    return int(q)


def _check_d(d) -> int:
    if isinstance(d, bool) or not isinstance(d, int | np.integer) or d < 1:
        raise ValueError(f"d must be a positive integer, got {d!r}")
    return int(d)


def _check_space(lo, hi, log_scale):
    lo = np.atleast_1d(np.asarray(lo, dtype=np.float64))
    hi = np.atleast_1d(np.asarray(hi, dtype=np.float64))
    if lo.ndim != 1 or lo.shape != hi.shape:
        raise ValueError(f"lo and hi must be 1-D of the same length, got shapes {lo.shape}, {hi.shape}")
    if lo.size == 0:
        raise ValueError("the search space has no dimension")
    for name, v in (("lo", lo), ("hi", hi)):
        if not np.isfinite(v).all():
            j = int(np.flatnonzero(~np.isfinite(v))[0])
            raise ValueError(f"{name} is not finite at coordinate {j}: {v[j]!r}")
    if (lo >= hi).any():
        j = int(np.flatnonzero(lo >= hi)[0])
        raise ValueError(f"lo >= hi at coordinate {j}: lo={lo[j]!r}, hi={hi[j]!r}")
    if log_scale is None:
        log = np.zeros(lo.size, dtype=bool)
    else:
        log = np.asarray(log_scale)
        if log.dtype != bool and not np.isin(log, (0, 1)).all():
            raise ValueError(f"log_scale must be booleans, got {log_scale!r}")
        log = np.broadcast_to(log.astype(bool), lo.shape) if log.ndim == 0 else log.astype(bool)
        if log.shape != lo.shape:
            raise ValueError(f"log_scale has shape {log.shape}, the search space d={lo.size}")
    if (log & (lo <= 0)).any():
        j = int(np.flatnonzero(log & (lo <= 0))[0])
        raise ValueError(f"log scale needs lo > 0, coordinate {j} has lo={lo[j]!r}")
    return lo, hi, log


def _check_bins(bins, q: int, name: str) -> np.ndarray:
    bins = np.asarray(bins)
    if bins.size == 0:
        return bins.astype(np.int64)
    if not np.issubdtype(bins.dtype, np.integer):
        raise ValueError(f"{name} must be integers, got dtype {bins.dtype}")
    if bins.min() < 0 or bins.max() > q - 1:
        raise ValueError(f"{name} outside 0..{q - 1}: found {bins.min()}..{bins.max()}")
    return bins.astype(np.int64)


def _as_ids(ids, vocab: Vocabulary) -> np.ndarray:
    ids = np.asarray(ids)
    if ids.ndim != 1:
        raise ValueError(f"token ids must be 1-D, got shape {ids.shape}")
    if ids.size == 0:
        return ids.astype(np.int64)
    if not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"token ids must be integers, got dtype {ids.dtype}")
    if ids.min() < 0 or ids.max() >= vocab.size:
        raise ValueError(f"token ids outside 0..{vocab.size - 1}: found {ids.min()}..{ids.max()}")
    return ids.astype(np.int64)


def _warp(v, log: np.ndarray) -> np.ndarray:
    """``log(v)`` on the log-scale coordinates, ``v`` elsewhere (no log of a non-positive bound)."""
    return np.where(log, np.log(np.where(log, v, 1.0)), v)
