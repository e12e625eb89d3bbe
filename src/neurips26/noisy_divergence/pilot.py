r"""The edge-of-stability pilot (issue 40's review): does any cheap change of the optimizer, or noise at a raised
learning rate, make runs of the deep quick shape sometimes diverge, so that the divergence claims could be decided
there? Run on pilot seeds (100 and up) apart from the scored ones, and reported whatever it finds.

:data:`VARIANTS` are overrides of the scale's training settings, the levers of Wortsman et al. 2023 ("Small-scale
proxies for large-scale Transformer training instabilities") and the review: no gradient clipping; a warmup of 2 steps
then a constant rate; AdamW's beta2 0.999 with eps 1e-12 (the eps of their small-eps instability); no weight decay;
and all of them at once. Per run :func:`outcome` reports the detector's verdict, the largest rise of the smoothed
loss above its running minimum (a divergence that recovers shows there, not in the verdict), and whether the run
failed to learn: its final smoothed loss within ``UNIGRAM_MARGIN`` nats of the unigram entropy of the training stream
(the loss of a model that learned only token frequencies; the quick runs at the base rate end about a nat below it).
"""

from __future__ import annotations

import math

import numpy as np

from neurips26.common.token_files import read_tokens

from .divergence import detect, smoothed

__all__ = ["UNIGRAM_MARGIN", "VARIANTS", "outcome", "unigram_entropy", "unigram_entropy_of_files"]

UNIGRAM_MARGIN = 0.25  # nats: a quarter of the ~1 nat the base runs learn below the unigram level in 200 steps

_NO_CLIP = {"grad_clip": math.inf}
_CONSTANT = {"warmup": 2, "min_lr_frac": 1.0}
_ADAM = {"betas": (0.9, 0.999), "eps": 1e-12}
_NO_DECAY = {"weight_decay": 0.0}
VARIANTS = {
    "base": {},
    "no_clip": _NO_CLIP,
    "constant_lr": {**_NO_CLIP, **_CONSTANT},
    "adam_b2_0.999_eps_1e-12": {**_NO_CLIP, **_ADAM},
    "no_decay": {**_NO_CLIP, **_NO_DECAY},
    "all": {**_NO_CLIP, **_CONSTANT, **_ADAM, **_NO_DECAY},
}


def unigram_entropy(tokens: np.ndarray, vocab_size: int) -> float:
    """Entropy (nats) of the token frequencies of ``tokens``."""
    return _entropy(np.bincount(np.asarray(tokens, dtype=np.int64), minlength=vocab_size))


def unigram_entropy_of_files(paths, vocab_size: int, chunk: int = 1 << 24) -> float:
    """:func:`unigram_entropy` of the token files ``paths`` read as one stream, counted ``chunk`` tokens at a time (a
    paper-scale stream is 0.9B tokens: its int64 copy would be 7 GB)."""
    counts = np.zeros(vocab_size, dtype=np.int64)
    for path in paths:
        tokens = read_tokens(path)
        for start in range(0, len(tokens), chunk):
            counts += np.bincount(np.asarray(tokens[start : start + chunk], dtype=np.int64), minlength=vocab_size)
    return _entropy(counts)


def _entropy(counts: np.ndarray) -> float:
    p = counts / counts.sum()
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def outcome(losses, unigram: float, delta: float, ema_beta: float, window_frac: float, non_finite_step=None) -> dict:
    """One pilot run's outcome from its training losses: the detector's ``diverged``, ``kind``, ``onset``; the
    smoothed loss's ``largest_rise`` above its running minimum, its ``min_loss`` and ``final_loss`` (NaN after a
    non-finite loss); ``failed_to_learn``: the final smoothed loss within :data:`UNIGRAM_MARGIN` of ``unigram``."""
    diverged, kind, onset = detect(losses, delta, ema_beta, window_frac, non_finite_step)
    x = np.asarray(losses, dtype=float)
    x = x[: np.argmax(~np.isfinite(x))] if not np.isfinite(x).all() else x
    ema = smoothed(x, ema_beta)
    rise = float(np.max(ema - np.minimum.accumulate(ema))) if len(ema) else math.nan
    final = float(ema[-1]) if len(ema) and non_finite_step is None else math.nan
    return {
        "diverged": bool(diverged),
        "kind": kind,
        "onset": onset,
        "largest_rise": rise,
        "min_loss": float(ema.min()) if len(ema) else math.nan,
        "final_loss": final,
        "failed_to_learn": bool(math.isfinite(final) and final > unigram - UNIGRAM_MARGIN),
    }
