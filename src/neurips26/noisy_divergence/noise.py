r"""Controlled noise injection into a clean token stream (Zhang et al. 2026, "An Empirical Study on Noisy Data and
LLM Pretraining Loss Divergence", arXiv 2602.02400: "injecting controlled, synthetic, uniform random noise into
otherwise clean datasets"; the noise is drawn from a restricted vocabulary or from the full one, inserted between
clean tokens or overwriting them).

The paper's body could not be read here, so the procedure below is our reconstruction and its conventions are ours:

* the **noise vocabulary** ``V_N`` is ``k<n>``, the first n token ids that are not special (our BPE puts
  ``<|endoftext|>`` at id 0, so ``k5`` is ids 1..5), or ``full``, every id that is not special;
  special ids enter only with ``allow_special``;
* **insert** at ratio ``alpha``: alpha is the share of noise in the noised document, so a document of n clean
  tokens receives ``m = round(alpha n / (1 - alpha))`` noise tokens, each placed in one of the n + 1 gaps drawn
  uniformly and independently (several may share a gap); **overwrite**: ``round(alpha n)`` positions chosen without
  replacement get a noise token (which may happen to equal the token it replaces: the mask counts noise draws, not
  changed tokens); the noise ids are uniform over ``V_N``;
* a share ``doc_fraction`` of the documents, ``round(doc_fraction N)`` of the N chosen without replacement, is
  noised; the others are copied unchanged. Documents are the stream split at the end-of-text id, which stays
  where it is and is never noised.

``round`` is half away from zero (``floor(x + 0.5)``), everywhere. Same seed, same bytes. The placement seed is a
tuple of integers (the config's noise seed and the training seed, :func:`placement_seed`), so that each training
seed reads its own draw of the noise and a divergence rate's interval over seeds includes the placement: the choice
of documents comes from ``default_rng(seed)``, the noise of document i from its own generator
``default_rng((*seed, i))``, so that any document can be noised alone, in any order, with the same result.
:func:`injection_stats` re-derives every count from the stream and its mask against the clean stream, so that the
checks of the claims file test the output, not the code's intent.

Streaming (the paper's stream of 900M tokens, 2G after insertion at alpha 0.55): :func:`plan_injection` reads the
clean stream once for its document boundaries and draws the documents to noise; :func:`inject_chunks` then yields
the noised tokens and mask of consecutive groups of whole documents of at most ``chunk_tokens`` clean tokens (a
longer document is a group alone), drawing from the same generator in the same order as :func:`inject_stream`, so
that the concatenated chunks are its output, byte for byte; :func:`injection_stats_chunked` counts the statistics
over the same groups and adds them up. ``stream`` there is anything with ``len`` and slicing (a memory map).
:class:`NoisedStream` reads the noised stream of one placement seed without storing it: a slice noises only the
documents it covers (paper scale: one stream per training seed is never written); ``materialize`` gives the whole
stream at once (small scales), the same tokens.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = [
    "KINDS",
    "NoiseSetting",
    "documents",
    "inject_document",
    "InjectionPlan",
    "NoisedStream",
    "inject_chunks",
    "inject_stream",
    "injection_stats",
    "injection_stats_chunked",
    "plan_injection",
    "noise_count",
    "noise_vocabulary",
    "parse_setting",
    "placement_seed",
    "stream_noise_share",
]

KINDS = ("insert", "overwrite")
CLEAN = "clean"
_VOCAB = re.compile(r"^(k(\d+)|full)$")
_SETTING = re.compile(r"^(insert|overwrite)-(k\d+|full)-a([0-9.]+)-d([0-9.]+)$")


@dataclass(frozen=True)
class NoiseSetting:
    """One noise setting: ``kind`` (insert, overwrite), ``vocab`` (``k<n>`` or ``full``), ratio ``alpha`` in
    [0, 1) and the share ``doc_fraction`` of documents noised; ``name`` is its path segment."""

    kind: str
    vocab: str
    alpha: float
    doc_fraction: float

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"noise type must be one of {KINDS}, got {self.kind!r}")
        if not _VOCAB.match(self.vocab):
            raise ValueError(f"noise vocabulary must be k<n> (the first n non-special ids) or full, got {self.vocab!r}")
        if not 0.0 <= self.alpha < 1.0:
            raise ValueError(f"noise ratio alpha must lie in [0, 1), got {self.alpha}")
        if not 0.0 <= self.doc_fraction <= 1.0:
            raise ValueError(f"doc_fraction must lie in [0, 1], got {self.doc_fraction}")

    @property
    def name(self) -> str:
        return f"{self.kind}-{self.vocab}-a{self.alpha:g}-d{self.doc_fraction:g}"


def parse_setting(name: str) -> NoiseSetting:
    """The setting a path segment names (``insert-k5-a0.5-d0.5``); ValueError naming the problem."""
    match = _SETTING.match(name)
    if not match:
        raise ValueError(
            f"noise setting {name!r} is not <insert|overwrite>-<k<n>|full>-a<alpha>-d<doc_fraction>, "
            "e.g. insert-k5-a0.5-d0.5"
        )
    kind, vocab, alpha, fraction = match.groups()
    return NoiseSetting(kind, vocab, float(alpha), float(fraction))


def _round(x: float) -> int:
    return int(math.floor(x + 0.5))


def placement_seed(noise_seed: int, seed: int) -> tuple[int, int]:
    """The placement seed of a training seed's stream: the config's noise seed and the training seed."""
    return (int(noise_seed), int(seed))


def _entropy(seed) -> tuple[int, ...]:
    return tuple(int(x) for x in (seed if isinstance(seed, (tuple, list)) else (seed,)))


def _doc_rng(seed, doc: int) -> np.random.Generator:
    """The generator of document ``doc``'s noise (module docstring)."""
    return np.random.default_rng((*_entropy(seed), int(doc)))


def stream_noise_share(setting: NoiseSetting) -> float:
    """The nominal share of noise tokens in the whole training stream (rounding aside): insert adds
    ``alpha / (1 - alpha)`` noise tokens per clean token of a noised document, so ``d r / (1 + d r)`` with
    ``r = alpha / (1 - alpha)``; overwrite replaces ``alpha`` of a noised document's tokens, so ``d alpha``. At
    alpha 0.5 and d 0.5 that is 1/3 against 1/4: equal alphas are not equal amounts of noise."""
    if setting.kind == "insert":
        added = setting.doc_fraction * setting.alpha / (1.0 - setting.alpha)
        return added / (1.0 + added)
    return setting.doc_fraction * setting.alpha


def noise_count(kind: str, alpha: float, n: int) -> int:
    """Noise tokens a noised document of n clean tokens receives (module docstring)."""
    if kind == "insert":
        return _round(alpha * n / (1.0 - alpha))
    if kind == "overwrite":
        return _round(alpha * n)
    raise ValueError(f"noise type must be one of {KINDS}, got {kind!r}")


def noise_vocabulary(
    vocab_size: int, spec: str, special_ids: tuple[int, ...] = (0,), allow_special: bool = False
) -> np.ndarray:
    """The ids of ``V_N``: ``k<n>`` the first n ids that are not special (with ``allow_special``, the first n ids),
    ``full`` every id that is not special (with ``allow_special``, every id)."""
    match = _VOCAB.match(spec)
    if not match:
        raise ValueError(f"noise vocabulary must be k<n> or full, got {spec!r}")
    ids = np.arange(vocab_size, dtype=np.int64)
    if not allow_special:
        ids = ids[~np.isin(ids, np.asarray(special_ids, dtype=np.int64))]
    if match.group(2) is None:
        return ids
    k = int(match.group(2))
    if not 1 <= k <= len(ids):
        raise ValueError(
            f"restricted noise vocabulary k{k} needs 1 <= k <= {len(ids)} (the vocabulary's {vocab_size} ids"
            + ("" if allow_special else f" less {len(special_ids)} special")
            + ")"
        )
    return ids[:k]


def documents(stream: np.ndarray, eot: int = 0) -> list[np.ndarray]:
    """The documents of a stream whose every document starts with the end-of-text id (``encode_documents``), each
    without its leading end-of-text; a stream that does not start with it is refused."""
    if len(stream) and int(stream[0]) != eot:
        raise ValueError(f"the token stream must start with the end-of-text id {eot}, got {int(stream[0])}")
    starts = np.flatnonzero(np.asarray(stream) == eot)
    ends = np.append(starts[1:], len(stream))
    return [np.asarray(stream[s + 1 : e]) for s, e in zip(starts, ends)]


def inject_document(
    doc: np.ndarray, kind: str, alpha: float, vocab: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """(tokens, mask) of one noised document; ``mask`` is True at noise tokens."""
    n, m = len(doc), noise_count(kind, alpha, len(doc))
    noise = vocab[rng.integers(0, len(vocab), size=m)].astype(doc.dtype)
    if kind == "insert":
        gaps = np.sort(rng.integers(0, n + 1, size=m))
        tokens = np.insert(doc, gaps, noise)
        mask = np.insert(np.zeros(n, dtype=bool), gaps, True)
        return tokens, mask
    positions = rng.choice(n, size=m, replace=False)
    tokens, mask = doc.copy(), np.zeros(n, dtype=bool)
    tokens[positions], mask[positions] = noise, True
    return tokens, mask


def _choose(n_docs: int, setting: NoiseSetting, seed) -> np.ndarray:
    """The documents to noise: round(doc_fraction N) of the N, without replacement, drawn by ``default_rng(seed)``."""
    chosen = np.zeros(n_docs, dtype=bool)
    rng = np.random.default_rng(_entropy(seed))
    chosen[rng.choice(n_docs, size=_round(setting.doc_fraction * n_docs), replace=False)] = True
    return chosen


def inject_stream(
    stream: np.ndarray, setting: NoiseSetting, vocab: np.ndarray, seed, eot: int = 0
) -> tuple[np.ndarray, np.ndarray, pd.DataFrame]:
    """(tokens, mask, documents table) of the stream with ``setting``'s noise; the table has one row per
    document: ``doc``, ``noised``, ``n_clean``, ``n_noise`` (as injected)."""
    if np.isin(vocab, [eot]).any():
        raise ValueError(f"the noise vocabulary holds the end-of-text id {eot}: documents would be split by noise")
    if len(vocab) and int(vocab.max()) > int(np.iinfo(np.asarray(stream).dtype).max):
        raise ValueError(f"noise id {int(vocab.max())} does not fit the stream's {np.asarray(stream).dtype}")
    docs = documents(stream, eot)
    chosen = _choose(len(docs), setting, seed)
    head = np.asarray([eot], dtype=np.asarray(stream).dtype)
    pieces, masks, rows = [], [], []
    for i, doc in enumerate(docs):
        if chosen[i]:
            tokens, mask = inject_document(doc, setting.kind, setting.alpha, vocab, _doc_rng(seed, i))
        else:
            tokens, mask = doc, np.zeros(len(doc), dtype=bool)
        pieces += [head, tokens]
        masks += [np.zeros(1, dtype=bool), mask]
        rows.append({"doc": i, "noised": bool(chosen[i]), "n_clean": len(doc), "n_noise": int(mask.sum())})
    if not pieces:
        return np.asarray(stream).copy(), np.zeros(len(stream), dtype=bool), pd.DataFrame(rows)
    return np.concatenate(pieces), np.concatenate(masks), pd.DataFrame(rows)


def _noise_counts(noise: np.ndarray, vocab: np.ndarray) -> np.ndarray:
    """Draws per id of ``vocab`` (an id above the largest counted in one extra slot)."""
    return np.bincount(np.searchsorted(vocab, noise), minlength=len(vocab) + 1)


def _uniformity_p(counts: np.ndarray, vocab: np.ndarray) -> float:
    """Chi-square p value of the noise ids' ``counts`` against the uniform law on ``vocab`` (NaN when it cannot be
    tested: fewer than 5 expected draws per id)."""
    from scipy.stats import chisquare

    if int(counts.sum()) < 5 * len(vocab) or len(vocab) < 2:
        return math.nan
    return float(chisquare(counts if counts[-1] else counts[:-1]).pvalue)


@dataclass(frozen=True)
class InjectionPlan:
    """What streaming needs before the first chunk: each document's end-of-text position in the clean stream
    (``starts``) and in the noised one (``out_starts``), the documents chosen, the noised length, and the placement
    seed (each document's draws follow from it and its index)."""

    starts: np.ndarray
    out_starts: np.ndarray
    chosen: np.ndarray
    length: int
    seed: tuple


def _eot_positions(stream, eot: int, chunk_tokens: int, mask=None) -> np.ndarray:
    found = []
    for a in range(0, len(stream), chunk_tokens):
        hits = np.asarray(stream[a : a + chunk_tokens]) == eot
        if mask is not None:
            hits &= ~np.asarray(mask[a : a + chunk_tokens], dtype=bool)
        found.append(np.flatnonzero(hits) + a)
    return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)


def plan_injection(stream, setting: NoiseSetting, seed, eot: int = 0, chunk_tokens: int = 1 << 24):
    """The :class:`InjectionPlan` of ``stream`` (read ``chunk_tokens`` at a time) under ``setting`` and ``seed``."""
    if chunk_tokens < 1:
        raise ValueError(f"chunk_tokens must be >= 1, got {chunk_tokens}")
    if len(stream) and int(stream[0]) != eot:
        raise ValueError(f"the token stream must start with the end-of-text id {eot}, got {int(stream[0])}")
    starts = _eot_positions(stream, eot, chunk_tokens).astype(np.int64)
    sizes = np.diff(np.append(starts, len(stream))) - 1
    chosen = _choose(len(starts), setting, seed)
    if setting.kind == "insert":  # noise_count, vectorised: round(alpha n / (1 - alpha)) per document
        added = np.floor(setting.alpha * sizes / (1.0 - setting.alpha) + 0.5).astype(np.int64)
    else:
        added = np.zeros(len(sizes), dtype=np.int64)
    out_sizes = 1 + sizes + added * chosen
    out_starts = np.concatenate([[0], np.cumsum(out_sizes)[:-1]]).astype(np.int64)
    length = int(out_sizes.sum()) if len(starts) else len(stream)
    return InjectionPlan(starts, out_starts, chosen, length, _entropy(seed))


def _groups(starts: np.ndarray, total: int, chunk_tokens: int) -> list[tuple[int, int]]:
    """Consecutive document ranges [d0, d1) of at most ``chunk_tokens`` tokens, at least one document each."""
    ends, groups, d0 = np.append(starts[1:], total), [], 0
    while d0 < len(starts):
        d1 = max(d0 + 1, int(np.searchsorted(ends, starts[d0] + chunk_tokens, side="right")))
        groups.append((d0, d1))
        d0 = d1
    return groups


def inject_chunks(
    stream, setting: NoiseSetting, vocab: np.ndarray, plan: InjectionPlan, eot: int = 0, chunk_tokens: int = 1 << 24
):
    """Yield ``(d0, d1, tokens, mask, rows)`` for consecutive groups of documents [d0, d1): their noised tokens
    (from ``plan.out_starts[d0]`` on), mask and rows of the documents table, as :func:`inject_stream` makes them."""
    dtype = np.asarray(stream[:1]).dtype
    if np.isin(vocab, [eot]).any():
        raise ValueError(f"the noise vocabulary holds the end-of-text id {eot}: documents would be split by noise")
    if len(vocab) and int(vocab.max()) > int(np.iinfo(dtype).max):
        raise ValueError(f"noise id {int(vocab.max())} does not fit the stream's {dtype}")
    head = np.asarray([eot], dtype=dtype)
    ends = np.append(plan.starts[1:], len(stream))
    for d0, d1 in _groups(plan.starts, len(stream), chunk_tokens):
        block = np.asarray(stream[plan.starts[d0] : ends[d1 - 1]])
        pieces, masks, rows = [], [], []
        for i in range(d0, d1):
            doc = block[plan.starts[i] + 1 - plan.starts[d0] : ends[i] - plan.starts[d0]]
            if plan.chosen[i]:
                tokens, mask = inject_document(doc, setting.kind, setting.alpha, vocab, _doc_rng(plan.seed, i))
            else:
                tokens, mask = doc, np.zeros(len(doc), dtype=bool)
            pieces += [head, tokens]
            masks += [np.zeros(1, dtype=bool), mask]
            rows.append({"doc": i, "noised": bool(plan.chosen[i]), "n_clean": len(doc), "n_noise": int(mask.sum())})
        yield d0, d1, np.concatenate(pieces), np.concatenate(masks), rows


class NoisedStream:
    """The noised stream of ``clean`` under ``setting`` and placement ``seed``, read without being stored: ``len``,
    ``stream[a:b]`` (tokens) and :meth:`read` (tokens and mask) noise only the documents the range covers, each from
    its own generator, so that a read is the slice of :func:`inject_stream`'s output whatever was read before.
    Holds the plan (a few integers per document), not the stream."""

    def __init__(
        self, clean, setting: NoiseSetting, vocab: np.ndarray, seed, eot: int = 0, chunk_tokens: int = 1 << 24
    ):
        dtype = np.asarray(clean[:1]).dtype
        if np.isin(vocab, [eot]).any():
            raise ValueError(f"the noise vocabulary holds the end-of-text id {eot}: documents would be split by noise")
        if len(vocab) and int(vocab.max()) > int(np.iinfo(dtype).max):
            raise ValueError(f"noise id {int(vocab.max())} does not fit the stream's {dtype}")
        self.clean, self.setting, self.vocab, self.eot, self.dtype = clean, setting, np.asarray(vocab), eot, dtype
        self.plan = plan_injection(clean, setting, seed, eot=eot, chunk_tokens=chunk_tokens)
        self.ends = np.append(self.plan.starts[1:], len(clean))

    def __len__(self) -> int:
        return self.plan.length

    def read(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """(tokens, mask) of the noised stream's positions [start, stop), clipped to its length."""
        start, stop = max(0, int(start)), min(int(stop), len(self))
        if stop <= start:
            return np.zeros(0, dtype=self.dtype), np.zeros(0, dtype=bool)
        plan = self.plan
        if not len(plan.starts):
            return np.asarray(self.clean[start:stop]), np.zeros(stop - start, dtype=bool)
        first = int(np.searchsorted(plan.out_starts, start, side="right")) - 1
        last = int(np.searchsorted(plan.out_starts, stop, side="left"))
        pieces, masks = [], []
        for i in range(first, last):
            doc = np.asarray(self.clean[plan.starts[i] + 1 : self.ends[i]])
            if plan.chosen[i]:
                rng = _doc_rng(plan.seed, i)
                tokens, mask = inject_document(doc, self.setting.kind, self.setting.alpha, self.vocab, rng)
            else:
                tokens, mask = doc, np.zeros(len(doc), dtype=bool)
            pieces += [np.asarray([self.eot], dtype=self.dtype), tokens.astype(self.dtype, copy=False)]
            masks += [np.zeros(1, dtype=bool), mask]
        at = start - int(plan.out_starts[first])
        return np.concatenate(pieces)[at : at + stop - start], np.concatenate(masks)[at : at + stop - start]

    def __getitem__(self, key):
        if not isinstance(key, slice) or key.step not in (None, 1):
            raise TypeError("a noised stream is read by contiguous slices")
        start, stop, _ = key.indices(len(self))
        return self.read(start, stop)[0]

    def statistics(self, chunk_tokens: int = 1 << 24) -> dict:
        """:func:`injection_stats` of this stream as it is read (groups of whole documents of at most
        ``chunk_tokens`` clean tokens, each read once and counted against the clean documents, then added up)."""
        plan, total = self.plan, {}
        if not len(plan.starts):
            tokens, mask = self.read(0, len(self))
            return injection_stats(
                np.asarray(self.clean[:]), tokens, mask, self.setting, self.vocab, plan.chosen, self.eot
            )
        for d0, d1 in _groups(plan.starts, len(self.clean), chunk_tokens):
            stop = int(plan.out_starts[d1]) if d1 < len(plan.starts) else len(self)
            tokens, mask = self.read(int(plan.out_starts[d0]), stop)
            clean = np.asarray(self.clean[plan.starts[d0] : self.ends[d1 - 1]])
            part = _stats_counts(clean, tokens, mask, self.setting, self.vocab, plan.chosen[d0:d1], self.eot)
            _add_counts(total, part)
        return _finish_stats(total, self.setting, self.vocab)

    def materialize(self) -> tuple[np.ndarray, np.ndarray]:
        """(tokens, mask) of the whole stream, read once (:func:`inject_chunks`): for streams that fit in memory."""
        return self.read(0, len(self))


def injection_stats(
    clean: np.ndarray,
    tokens: np.ndarray,
    mask: np.ndarray,
    setting: NoiseSetting,
    vocab: np.ndarray,
    chosen: np.ndarray,
    eot: int = 0,
) -> dict:
    """What the written stream and its mask show, counted against the clean stream (one row of ``stats.parquet``):

    - ``count_error_max``: largest |noise tokens - expected| over the documents, expected ``noise_count(n)`` for a
      document the injection chose (``chosen``, its documents table) and 0 for the others;
    - ``docs_noised`` (chosen) against ``docs_expected`` = round(doc_fraction N); ``docs_with_noise`` (documents with
      a masked token) against ``docs_positive`` (chosen documents whose count is positive); ``docs``,
      ``tokens_clean``, ``tokens_noise``, ``noise_share`` (noise over all training tokens);
    - ``recovered_mismatches``: tokens where the clean stream is not recovered (insert: the stream without its masked
      tokens; overwrite: the unmasked positions), plus a length mismatch;
    - ``outside_vocab``: noise tokens outside ``V_N`` or at an end-of-text; ``eot_moved``: end-of-text ids not where
      the clean documents put them;
    - ``uniform_p``: chi-square p value of the noise ids against the uniform law on ``V_N``.
    """
    return _finish_stats(_stats_counts(clean, tokens, mask, setting, vocab, chosen, eot), setting, vocab)


def _stats_counts(clean, tokens, mask, setting: NoiseSetting, vocab: np.ndarray, chosen, eot: int) -> dict:
    """The additive counts behind :func:`injection_stats` (and the largest count error) of one stretch of whole
    documents."""
    tokens, mask, clean = np.asarray(tokens), np.asarray(mask, dtype=bool), np.asarray(clean)
    if len(tokens) != len(mask):
        raise ValueError(f"tokens ({len(tokens)}) and mask ({len(mask)}) differ in length")
    noise = tokens[mask].astype(np.int64)
    docs_clean, docs_noisy = documents(clean, eot), documents(tokens, eot)
    doc_ids = np.cumsum(tokens == eot) - 1  # the document each position belongs to (its leading EOT included)
    per_doc = np.bincount(doc_ids[mask], minlength=len(docs_noisy)) if len(docs_noisy) else np.zeros(0, dtype=int)
    if setting.kind == "insert":
        recovered = tokens[~mask]
        mismatches = int(np.sum(recovered[: len(clean)] != clean[: len(recovered)])) + abs(len(recovered) - len(clean))
    else:
        same_length = len(tokens) == len(clean)
        mismatches = (
            int(np.sum(tokens[~mask] != clean[~mask])) if same_length else abs(len(tokens) - len(clean)) + len(clean)
        )
    chosen = np.asarray(chosen, dtype=bool)
    if len(chosen) != len(docs_clean):
        raise ValueError(f"{len(chosen)} document flags for {len(docs_clean)} documents")
    errors = [
        abs(int(per_doc[i]) - (noise_count(setting.kind, setting.alpha, len(doc)) if chosen[i] else 0))
        for i, doc in enumerate(docs_clean)
    ] + [int(per_doc[i]) for i in range(len(docs_clean), len(per_doc))]  # noise in documents the clean stream lacks
    clean_eot = np.flatnonzero(clean == eot)
    noisy_eot = np.flatnonzero((tokens == eot) & ~mask)
    eot_moved = abs(len(clean_eot) - len(noisy_eot))
    if setting.kind == "overwrite" and len(clean_eot) == len(noisy_eot):
        eot_moved += int(np.sum(clean_eot != noisy_eot))
    return {
        "docs": len(docs_clean),
        "docs_noised": int(chosen.sum()),
        "docs_with_noise": int(np.sum(per_doc > 0)),
        "docs_positive": int(
            sum(
                bool(chosen[i]) and noise_count(setting.kind, setting.alpha, len(d)) > 0
                for i, d in enumerate(docs_clean)
            )
        ),
        "tokens_clean": int((~mask).sum()),
        "tokens_noise": int(mask.sum()),
        "count_error_max": float(max(errors)) if errors else math.nan,
        "recovered_mismatches": mismatches + (len(docs_noisy) != len(docs_clean)),
        "outside_vocab": int(np.sum(~np.isin(noise, vocab)) + np.sum(noise == eot)),
        "eot_moved": eot_moved,
        "noise_counts": _noise_counts(noise, vocab),
    }


def _finish_stats(counts: dict, setting: NoiseSetting, vocab: np.ndarray) -> dict:
    counts = dict(counts)
    noise_counts = counts.pop("noise_counts")
    length = counts["tokens_clean"] + counts["tokens_noise"]
    return {
        "setting": setting.name,
        "kind": setting.kind,
        "vocab": setting.vocab,
        "vocab_size_noise": len(vocab),
        "alpha": setting.alpha,
        "doc_fraction": setting.doc_fraction,
        **{k: counts[k] for k in ("docs", "docs_noised", "docs_with_noise", "docs_positive")},
        "docs_expected": _round(setting.doc_fraction * counts["docs"]),
        "tokens_clean": counts["tokens_clean"],
        "tokens_noise": counts["tokens_noise"],
        "noise_share": counts["tokens_noise"] / length if length else math.nan,
        **{k: counts[k] for k in ("count_error_max", "recovered_mismatches", "outside_vocab", "eot_moved")},
        "uniform_p": _uniformity_p(noise_counts, vocab),
    }


def injection_stats_chunked(
    clean, tokens, mask, setting: NoiseSetting, vocab: np.ndarray, chosen, eot: int = 0, chunk_tokens: int = 1 << 24
) -> dict:
    """:func:`injection_stats` counted over groups of whole documents of at most ``chunk_tokens`` clean tokens and
    added up (the written stream cut at its unmasked end-of-text ids, the document count of the clean one): the
    same row for a well-formed output; a broken one is still counted as broken, not always by the same numbers."""
    starts = _eot_positions(clean, eot, chunk_tokens)
    cuts = _eot_positions(tokens, eot, chunk_tokens, mask)
    cuts = np.append(cuts, [len(tokens)] * max(0, len(starts) + 1 - len(cuts)))
    chosen = np.asarray(chosen, dtype=bool)
    if len(starts) == 0 or len(chosen) != len(starts):
        return injection_stats(clean[:], tokens[:], mask[:], setting, vocab, chosen, eot)
    total: dict = {}
    ends = np.append(starts[1:], len(clean))
    groups = _groups(starts, len(clean), chunk_tokens)
    for j, (d0, d1) in enumerate(groups):
        a = 0 if j == 0 else int(cuts[d0])
        b = len(tokens) if j == len(groups) - 1 else int(cuts[d1])
        part = _stats_counts(
            clean[starts[d0] : ends[d1 - 1]], tokens[a:b], mask[a:b], setting, vocab, chosen[d0:d1], eot
        )
        _add_counts(total, part)
    return _finish_stats(total, setting, vocab)


def _add_counts(total: dict, part: dict) -> None:
    """Add one group's :func:`_stats_counts` into ``total`` (the largest count error kept, the rest summed)."""
    for key, value in part.items():
        if key not in total:
            total[key] = value
        elif key == "count_error_max":
            total[key] = float(np.nanmax([total[key], value]))
        else:
            total[key] = total[key] + value
