r"""The serialisation format: black-box-optimization trajectories to token ids and back, values to bins.

The vocabulary is in :mod:`.vocabulary`; the grammar of one trial and prompts fitted to a context are in
:mod:`.grammar`.

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

Deliberate differences from bbo-pile (adaptations of this reproduction, most for small scales):

* Tokens: a fixed vocabulary instead of the source's sentencepiece BPE (1069 pieces, padded to
  1185): one token per value bin ``0..Q-1``, per punctuation mark, per keyword, per algorithm name,
  and one per character of a header float (digits, ``-``, ``+``, ``.``, ``e``). A bin and a digit
  are different tokens even where they print alike (in bbo-pile the bin ``5`` and the ``5`` of
  ``-5.0`` are one user-defined piece). ``Q = 100`` at quick scale (the source uses 1000).
* Each trajectory is wrapped in ``<bos>`` ... ``<eos>`` (the source writes one trajectory per text
  line and streams the token ids with no separator); ``<pad>`` pads batches.
* Header floats are always written as Python's shortest round-trip ``repr`` of a float (``-5.0``,
  ``1e-05``) so that they decode exactly; the source prints the bound as syne-tune stores it.
* The generated data have only ``type:UNI`` parameters; a log-scale parameter needs ``lo > 0`` and
  is quantised with ``log(x)`` (the source uses ``log(x + 1e-10)``). ``INT`` and ``CAT`` parameters
  (``{type:INT,min_value:..,max_value:..,log_scale|linear_scale}`` with the same bins as UNI,
  ``{type:CAT,categories:[0,1,...,n-1]}`` with trial values ``<k>``) come only from BBO-Pile's own text
  (:mod:`.pile`) and need a vocabulary built with those ``parameter_types``; their headers are written by
  :func:`typed_header_ids`, with the bounds' characters as the source printed them.
* Bad inputs raise instead of writing a malformed line: ``x`` outside ``[lo, hi]`` (the source would
  write a bin outside ``0..Q-1``), fewer than two trials, an unknown algorithm. A trial whose
  objective is NaN or infinite is dropped and counted (the source would write ``nan``), and a
  trajectory with more than :data:`MAX_INVALID_FRACTION` of them is rejected (:func:`too_many_invalid`,
  this reproduction's rule, used wherever trajectories are selected).
* ``y_norm="prefix"`` (an ablation): trial ``t``'s objective is quantised with the min/max over
  trials ``1..t`` only, the information available when it was proposed. ``"global"`` (the default)
  is the source's training-time quantisation over the whole trajectory. At inference the source
  re-encodes the current history with ``"global"`` before each proposal: do the same with
  :func:`quantise_y` and :func:`history_ids`.
* :func:`.grammar.fit_context` keeps the header and the most recent whole trials when a prompt is longer than
  the model's context; the source's litgpt path left-truncates the token ids and silently loses the
  header.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from neurips26.common.validation import check_int

from .grammar import TrialGrammar, check_kinds, trial_length, value_indices
from .vocabulary import FLOAT_CHARS, Vocabulary, token_ids

__all__ = [
    "FORMAT",
    "MAX_INVALID_FRACTION",
    "SOURCE",
    "Y_NORMS",
    "Header",
    "decode_header",
    "decode_trajectory",
    "dequantise",
    "drop_nonfinite",
    "encode_trajectory",
    "header_ids",
    "typed_header_ids",
    "history_ids",
    "quantise",
    "quantise_y",
    "too_many_invalid",
    "trial_ids",
]

SOURCE = "syne-tune/bbo-pile@e3163a9cc3440e91eb1f0bec215369e8dcf68869 open_optformer/history.py"
Y_NORMS = ("global", "prefix")
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


class Header(NamedTuple):
    """A decoded header; ``kinds`` (``UNI``/``INT``/``CAT`` per parameter) and ``n_categories`` (per
    parameter, 0 but for CAT) are set by :func:`decode_header`. A CAT parameter's ``lo``/``hi`` are NaN."""

    algorithm: str
    lo: np.ndarray
    hi: np.ndarray
    log_scale: np.ndarray
    kinds: tuple[str, ...] | None = None
    n_categories: np.ndarray | None = None


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


def too_many_invalid(n_invalid: int, n_trials: int, max_fraction: float = MAX_INVALID_FRACTION) -> bool:
    """Whether a trajectory with ``n_invalid`` of ``n_trials`` trials invalid (a NaN or infinite objective) is
    rejected: more than ``max_fraction`` (20%) of them. The one statement of the rule, used by the corpus, the
    imitation test's selection and the optimizers' trajectories."""
    return n_invalid > max_fraction * n_trials


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
    if too_many_invalid(n_dropped, y.size, max_invalid_fraction):
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


def typed_header_ids(vocab: Vocabulary, algorithm: str, kinds, lo_text, hi_text, log_scale, n_categories) -> np.ndarray:
    """The header of a search space with UNI, INT and CAT parameters, the bounds written with the characters
    given (``lo_text``/``hi_text``, strings of ``0-9 - + . e``, as bbo-pile printed them; ignored for CAT):
    ``{type:UNI|INT,min_value:{lo},max_value:{hi},linear_scale|log_scale}`` or
    ``{type:CAT,categories:[0,1,...,n-1]}`` per parameter. The vocabulary must have the types used."""
    kinds, counts = check_kinds(vocab, len(kinds), kinds, n_categories)
    s = vocab.symbol
    ids = [vocab.bos, s("algorithm"), s(":"), vocab.algorithm(algorithm), s(","), s("search-space")]
    ids.append(s(":"))
    for j, kind in enumerate(kinds):
        ids += [s("{"), s("type"), s(":"), s(kind), s(",")]
        if kind == "CAT":
            ids += [s("categories"), s(":"), s("[")]
            for k in range(int(counts[j])):
                ids += ([s(",")] if k else []) + [s(c) for c in str(k)]
            ids += [s("]"), s("}")]
            continue
        for field, text in (("min_value", lo_text[j]), ("max_value", hi_text[j])):
            text = str(text)
            if not text or any(c not in FLOAT_CHARS for c in text):
                raise ValueError(f"parameter {j}: bound {text!r} is not made of the characters {''.join(FLOAT_CHARS)}")
            ids += [s(field), s(":"), *(s(c) for c in text), s(",")]
        ids += [s("log_scale" if log_scale[j] else "linear_scale"), s("}")]
    ids += [s(","), s("history"), s(":")]
    return np.array(ids, dtype=np.int64)


def history_ids(vocab: Vocabulary, x_bins, y_bins, kinds=None, n_categories=None) -> np.ndarray:
    """The trials ``x^1,...,x^d*y|`` of ``(T, d)`` values and ``(T,)`` objective bins. A value is a bin, or
    for a CAT parameter (``kinds``, ``n_categories``: :func:`.grammar.check_kinds`) a category index."""
    x_bins = np.asarray(x_bins)
    y_bins = _check_bins(y_bins, vocab.q, "y_bins")
    if x_bins.ndim != 2 or y_bins.shape != x_bins.shape[:1]:
        raise ValueError(f"x_bins must be (T, d) and y_bins (T,): got {x_bins.shape}, {y_bins.shape}")
    n, d = x_bins.shape
    trial_length(d)
    if kinds is None and n_categories is None:
        values = vocab.bin_offset + _check_bins(x_bins, vocab.q, "x_bins")
    else:
        kinds, counts = check_kinds(vocab, d, kinds, n_categories)
        is_cat = np.array([k == "CAT" for k in kinds])
        if x_bins.size and not np.issubdtype(x_bins.dtype, np.integer):
            raise ValueError(f"x_bins must be integers, got dtype {x_bins.dtype}")
        x_bins = x_bins.astype(np.int64)
        limit = np.where(is_cat, counts, vocab.q)
        bad = (x_bins < 0) | (x_bins >= limit)
        if bad.any():
            t, j = (int(i) for i in np.argwhere(bad)[0])
            what = f"category index outside 0..{counts[j] - 1}" if is_cat[j] else f"bin outside 0..{vocab.q - 1}"
            raise ValueError(f"x_bins[{t}, {j}] = {x_bins[t, j]}: {what}")
        values = x_bins + np.where(is_cat, vocab.category_offset if is_cat.any() else 0, vocab.bin_offset)
    trials = np.empty((n, 2 * d + 2), dtype=np.int64)
    trials[:, 0 : 2 * d : 2] = values
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
    ids = token_ids(ids, vocab)
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
    lo, hi, log, kinds, counts = [], [], [], [], []
    kind_ids = {s(k): k for k in vocab.parameter_types}
    while pos < ids.size and ids[pos] == vocab.lbrace:
        pos += 1
        for word in ("type", ":"):
            expect(s(word), word)
        if pos >= ids.size or int(ids[pos]) not in kind_ids:
            got = repr(vocab.tokens[ids[pos]]) if pos < ids.size else "the end"
            raise ValueError(
                f"malformed header at token {pos}: expected one of {list(vocab.parameter_types)}, got {got}"
            )
        kind = kind_ids[int(ids[pos])]
        pos += 1
        expect(s(","), ",")
        kinds.append(kind)
        if kind == "CAT":
            for word in ("categories", ":", "["):
                expect(s(word), word)
            n = 0
            while True:
                start = pos
                index = number()
                if index != n or vocab.decode_text(ids[start:pos]) != str(n):
                    raise ValueError(f"malformed header at token {start}: category list must be 0,1,...,n-1")
                n += 1
                if pos < ids.size and ids[pos] == s(","):
                    pos += 1
                    continue
                expect(s("]"), "]")
                break
            expect(vocab.rbrace, "}")
            lo.append(np.nan)
            hi.append(np.nan)
            log.append(False)
            counts.append(n)
            continue
        for word in ("min_value", ":"):
            expect(s(word), word)
        counts.append(0)
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
    numeric = np.array([k != "CAT" for k in kinds], dtype=bool)
    lo_, hi_, log_ = (np.asarray(v, dtype=np.float64) for v in (lo, hi, log))
    log_ = log_.astype(bool)
    if numeric.any():
        lo_[numeric], hi_[numeric], log_[numeric] = _check_space(lo_[numeric], hi_[numeric], log_[numeric])
    kinds, counts = check_kinds(vocab, len(kinds), kinds, counts)
    return Header(algorithm, lo_, hi_, log_, kinds, counts), pos


def decode_trajectory(vocab: Vocabulary, ids):
    """``(algorithm, lo, hi, x_bins (T, d), y_bins (T,))`` from an encoded trajectory or prompt
    (``<bos>`` and a final ``<eos>``, then padding, are optional). The scales and parameter kinds are in
    :func:`decode_header`; a CAT parameter's column of ``x_bins`` holds category indices. Anything but
    whole, well-formed trials after the header raises."""
    ids = token_ids(ids, vocab)
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
    ok = TrialGrammar(vocab, d, header.kinds, header.n_categories).masks[np.arange(length), trials]
    if not ok.all():
        t, k = (int(i) for i in np.argwhere(~ok)[0])
        raise ValueError(
            f"malformed trial {t}: token {vocab.tokens[trials[t, k]]!r} at position {k} of "
            f"{length} (token {pos + t * length + k} of the sequence)"
        )
    x_bins = value_indices(vocab, trials[:, 0 : 2 * d : 2], header.kinds)
    y_bins = trials[:, 2 * d] - vocab.bin_offset
    return header.algorithm, header.lo, header.hi, x_bins, y_bins


# validation helpers


def _check_q(q) -> int:
    return int(check_int("q", q, 2))


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


def _warp(v, log: np.ndarray) -> np.ndarray:
    """``log(v)`` on the log-scale coordinates, ``v`` elsewhere (no log of a non-positive bound)."""
    return np.where(log, np.log(np.where(log, v, 1.0)), v)
