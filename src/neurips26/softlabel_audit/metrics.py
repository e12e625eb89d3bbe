"""Evaluation metrics of the soft-label audit (arXiv 2605.18648): accuracy, expected calibration error (over all items
and a subset such as the difficult ones), KL(human || model), seed disagreement, and the rank correlation of model
uncertainty with human uncertainty; and the paper's reported numbers.

Conventions: predictive distributions are arrays (N, K) for one model or (S, N, K) for the S seeds of one condition;
human soft labels are (N, K), rows distributions; labels are class indices (N,). Entropies are in nats.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from neurips26.common.validation import check_int, check_number
from neurips26.softlabel_audit.labels import entropy

__all__ = [
    "ECE_BINS",
    "KL_EPSILON",
    "PAPER_NUMBERS",
    "PAPER_SOURCE",
    "PaperNumber",
    "ReliabilityBins",
    "accuracy",
    "entropy",
    "expected_calibration_error",
    "kl_human_model",
    "mean_kl",
    "pairwise_total_variation",
    "paper_numbers_frame",
    "predictive_entropy",
    "reliability_bins",
    "seed_disagreement",
    "uncertainty_correlation",
]

ECE_BINS = 15  # Guo et al. (2017) report ECE with 15 equal-width bins
KL_EPSILON = 1e-12  # model probabilities are clipped below at this before the log in KL(human || model)
DISTRIBUTION_TOLERANCE = 1e-4  # rows must sum to 1 within this (float32 softmax outputs)


def _probs(probs, name: str = "probabilities", ndim: int = 2) -> np.ndarray:
    p = np.asarray(probs, dtype=np.float64)
    if p.ndim != ndim or p.shape[-1] < 2 or p.shape[-2] == 0 or (ndim == 3 and p.shape[0] == 0):
        shape = "(N, K)" if ndim == 2 else "(S, N, K)"
        raise ValueError(f"{name} must be {shape} with N >= 1 and K >= 2, got shape {p.shape}")
    if not np.isfinite(p).all() or p.min() < 0:
        raise ValueError(f"{name} must be finite and non-negative")
    worst = float(np.abs(p.sum(-1) - 1).max())
    if worst > DISTRIBUTION_TOLERANCE:
        raise ValueError(f"{name}: rows must sum to 1, one is off by {worst:.3g}")
    return p


def _labels(labels, n: int, k: int) -> np.ndarray:
    y = np.asarray(labels)
    if y.shape != (n,) or not np.issubdtype(y.dtype, np.integer):
        raise ValueError(f"labels must be {n} integer class indices, got shape {y.shape} and dtype {y.dtype}")
    if y.min() < 0 or y.max() >= k:
        raise ValueError(f"labels must lie in 0..{k - 1}, got values in [{y.min()}, {y.max()}]")
    return y


def _subset(subset, n: int) -> np.ndarray:
    """A boolean mask of n items (all when `subset` is None), refusing an empty one."""
    if subset is None:
        return np.ones(n, dtype=bool)
    mask = np.asarray(subset)
    if mask.dtype != bool or mask.shape != (n,):
        raise ValueError(f"subset must be a boolean mask of the {n} items, got shape {mask.shape}, dtype {mask.dtype}")
    if not mask.any():
        raise ValueError("subset selects no item")
    return mask


def accuracy(probs, labels, subset=None) -> float:
    """The share of items whose argmax prediction is the label (the original label, or the human majority)."""
    p = _probs(probs)
    y = _labels(labels, *p.shape)
    mask = _subset(subset, len(y))
    return float(np.mean(p[mask].argmax(-1) == y[mask]))


@dataclass(frozen=True)
class ReliabilityBins:
    """Equal-width confidence bins ((edges[b], edges[b + 1]], the first closed at 0): items per bin, the mean
    top-label confidence and the accuracy of the items in each bin (NaN in an empty bin)."""

    edges: np.ndarray  # (B + 1,)
    counts: np.ndarray  # (B,)
    confidence: np.ndarray  # (B,)
    accuracy: np.ndarray  # (B,)

    @property
    def ece(self) -> float:
        """sum_b |B_b| / n * |acc(B_b) - conf(B_b)| (Guo et al. 2017, eq. 3)."""
        filled = self.counts > 0
        n = self.counts.sum()
        return float(np.sum(self.counts[filled] / n * np.abs(self.accuracy[filled] - self.confidence[filled])))


def reliability_bins(probs, labels, n_bins: int = ECE_BINS, subset=None) -> ReliabilityBins:
    """The reliability diagram's bins of the top-label confidence max_k p_k against the correctness of the argmax
    (Guo et al. 2017, Sec. 2): item i falls in bin b when edges[b] < conf_i <= edges[b + 1], with
    edges = linspace(0, 1, n_bins + 1); `subset` (a boolean mask) restricts to some items."""
    check_int("n_bins", n_bins, 2, who="reliability_bins")
    p = _probs(probs)
    y = _labels(labels, *p.shape)
    mask = _subset(subset, len(y))
    p, y = p[mask], y[mask]
    conf = p.max(-1)
    correct = (p.argmax(-1) == y).astype(np.float64)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    which = np.clip(np.searchsorted(edges, conf, side="left") - 1, 0, n_bins - 1)
    counts = np.bincount(which, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_conf = np.bincount(which, weights=conf, minlength=n_bins) / counts
        mean_acc = np.bincount(which, weights=correct, minlength=n_bins) / counts
    return ReliabilityBins(edges, counts, mean_conf, mean_acc)


def expected_calibration_error(probs, labels, n_bins: int = ECE_BINS, subset=None) -> float:
    """Top-label expected calibration error with `n_bins` equal-width bins (Guo et al. 2017, eq. 3), over all items
    or over a `subset` (boolean mask, e.g. the difficult items), normalised by the items it holds."""
    return reliability_bins(probs, labels, n_bins, subset).ece


def kl_human_model(human, probs, epsilon: float = KL_EPSILON) -> np.ndarray:
    """Per item KL(h || p) = sum_k h_k (log h_k - log max(p_k, epsilon)) with 0 log 0 = 0: the human distribution
    is the reference, the model's probabilities are clipped below at `epsilon` (not renormalised) so that a class
    the humans chose but the model rules out costs a finite amount."""
    check_number("epsilon", epsilon, 0.0, 1.0, low_open=True, who="kl_human_model")
    h = _probs(human, "human soft labels")
    p = _probs(probs)
    if h.shape != p.shape:
        raise ValueError(f"human soft labels {h.shape} and model probabilities {p.shape} differ in shape")
    log_ratio = np.log(np.where(h > 0, h, 1.0)) - np.log(np.maximum(p, epsilon))
    return np.where(h > 0, h * log_ratio, 0.0).sum(-1)


def mean_kl(human, probs, subset=None, epsilon: float = KL_EPSILON) -> float:
    """The mean over items (of `subset`, a boolean mask, when given) of KL(human || model)."""
    kl = kl_human_model(human, probs, epsilon)
    return float(kl[_subset(subset, len(kl))].mean())


def _pairs(s: int) -> tuple[np.ndarray, np.ndarray]:
    if s < 2:
        raise ValueError(f"seed agreement needs at least two seeds, got {s}")
    return np.triu_indices(s, k=1)


def seed_disagreement(probs) -> float:
    """The share of items whose argmax differs between two seeds, averaged over all pairs of the S seeds'
    predictions (S, N, K)."""
    p = _probs(probs, ndim=3)
    a, b = _pairs(len(p))
    top = p.argmax(-1)
    return float(np.mean(top[a] != top[b]))


def pairwise_total_variation(probs) -> float:
    """The total variation 1/2 sum_k |p_k - p'_k| between two seeds' predictive distributions, averaged over
    items and over all pairs of the S seeds (S, N, K)."""
    p = _probs(probs, ndim=3)
    a, b = _pairs(len(p))
    return float(np.mean(0.5 * np.abs(p[a] - p[b]).sum(-1)))


def predictive_entropy(probs) -> np.ndarray:
    """Per item, the entropy (nats) of the seeds' mean prediction (S, N, K) -> (N,), or of one model's (N, K)."""
    p = np.asarray(probs, dtype=np.float64)
    p = _probs(p.mean(0) if p.ndim == 3 else p)
    return entropy(p)


def uncertainty_correlation(model_uncertainty, human_uncertainty, subset=None) -> float:
    """Spearman's rank correlation (scipy.stats.spearmanr, ties averaged) between a per-item model uncertainty
    (entropy of the mean prediction, cartography variability or 1 - confidence) and the human uncertainty (entropy of
    the human soft label); NaN when either is constant over the items, where the rank correlation is undefined."""
    u = np.asarray(model_uncertainty, dtype=np.float64)
    h = np.asarray(human_uncertainty, dtype=np.float64)
    if u.ndim != 1 or u.shape != h.shape:
        raise ValueError(f"model and human uncertainty must be two (N,) arrays, got shapes {u.shape} and {h.shape}")
    if not (np.isfinite(u).all() and np.isfinite(h).all()):
        raise ValueError("uncertainties must be finite")
    mask = _subset(subset, len(u))
    u, h = u[mask], h[mask]
    if len(u) < 2 or np.ptp(u) == 0 or np.ptp(h) == 0:
        return float("nan")
    from scipy.stats import spearmanr  # here: scipy.stats costs the jobs that never correlate (data, figures) ~0.7 s

    return float(spearmanr(u, h).statistic)


# ---- the paper's numbers ------------------------------------------------------------------------------------------

PAPER_SOURCE = (
    "arXiv 2605.18648 (Pavlovic, Paun, Poesio 2026), as quoted by a secondary source; not checked against the paper"
)


@dataclass(frozen=True)
class PaperNumber:
    """One number the paper reports: the metric, the paper's name of the label condition, our nearest condition (a
    key of labels.LABEL_CONDITIONS) and the value."""

    metric: str
    paper_condition: str
    condition: str
    value: float


PAPER_NUMBERS: tuple[PaperNumber, ...] = (
    # mean KL(human || model) on the high-variation subset
    PaperNumber("kl_high_variation", "original", "hard_orig", 2.214),
    PaperNumber("kl_high_variation", "majority hard", "hard_majority", 1.661),
    PaperNumber("kl_high_variation", "human soft", "human_soft", 0.669),
    PaperNumber("kl_high_variation", "synthetic", "teacher_soft", 1.612),
    # Spearman correlation of model (cartography) uncertainty with human uncertainty; the source gives neither the
    # model-side measure nor which one-hot labels (the negative signs suggest a certainty such as confidence)
    PaperNumber("spearman_human_uncertainty", "human soft", "human_soft", -0.70),
    PaperNumber("spearman_human_uncertainty", "one-hot", "hard_orig", -0.47),
    PaperNumber("spearman_human_uncertainty", "synthetic", "teacher_soft", -0.09),
)


def paper_numbers_frame() -> pd.DataFrame:
    """The paper's numbers as a table (metric, paper_condition, condition, paper_value, source)."""
    frame = pd.DataFrame([vars(x) for x in PAPER_NUMBERS]).rename(columns={"value": "paper_value"})
    return frame.assign(source=PAPER_SOURCE)
