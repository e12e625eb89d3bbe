"""Dataset cartography (Swayamdipta et al. 2020, "Dataset Cartography: Mapping and Diagnosing Datasets with Training
Dynamics"): each training item's confidence, variability and correctness over the epochs of a training run, its
region on the data map, and how the map lines up with human uncertainty (arXiv 2605.18648: models trained on human
soft labels mirror human uncertainty, those trained on synthetic labels do not).

From the probability p_e of an item's original (gold) label at the end of (or during) epoch e = 1..E:
confidence = mean_e p_e, variability = std_e p_e (population std, ddof 0, as numpy's default in
allenai/cartography), correctness = the share of epochs whose argmax prediction is the gold label (their code counts
the epochs; the share is the paper's "fraction of times").

Regions, as Swayamdipta et al. select them (allenai/cartography, ``train_dy_filtering.py``: sort by one measure and
keep a fraction; the paper's subsets hold 33 %): ambiguous = the `fraction` of items with the highest variability,
hard-to-learn = the `fraction` with the lowest confidence, easy-to-learn = the `fraction` with the highest
confidence. An item can be selected by both ambiguous and a confidence end; :func:`regions` labels it ambiguous first,
then hard-to-learn, then easy-to-learn, and "other" when no selection holds it. Ties in a measure are broken by item
order (a stable sort).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurips26.common.validation import check_number
from neurips26.softlabel_audit.metrics import uncertainty_correlation

__all__ = ["REGION_FRACTION", "REGIONS", "Cartography", "alignment", "cartography", "region_masks", "regions"]

REGION_FRACTION = 0.33  # Swayamdipta et al.'s subsets: 33 % of the training set
REGIONS = ("ambiguous", "hard-to-learn", "easy-to-learn", "other")  # labelling priority, then the rest


@dataclass(frozen=True)
class Cartography:
    """Per item (arrays (..., N)): confidence, variability and correctness over the epochs."""

    confidence: np.ndarray
    variability: np.ndarray
    correctness: np.ndarray


def cartography(gold_prob, correct=None) -> Cartography:
    """The data map coordinates from the gold-label probabilities (..., E, N) over E epochs (and whether each
    epoch's prediction was right, (..., E, N) booleans; correctness is NaN without them)."""
    p = np.asarray(gold_prob, dtype=np.float64)
    if p.ndim < 2 or p.shape[-2] == 0 or p.shape[-1] == 0:
        raise ValueError(f"gold-label probabilities must be (..., epochs, items) with both >= 1, got shape {p.shape}")
    if not np.isfinite(p).all() or p.min() < 0 or p.max() > 1:
        raise ValueError("gold-label probabilities must lie in [0, 1]")
    if correct is None:
        correctness = np.full(p.shape[:-2] + p.shape[-1:], np.nan)
    else:
        c = np.asarray(correct)
        if c.shape != p.shape or c.dtype != bool:
            raise ValueError(f"correct must be booleans of the probabilities' shape {p.shape}, got {c.shape} {c.dtype}")
        correctness = c.mean(axis=-2)
    return Cartography(p.mean(axis=-2), p.std(axis=-2), correctness)


def _top(values: np.ndarray, count: int, highest: bool) -> np.ndarray:
    order = np.argsort(-values if highest else values, kind="stable")
    mask = np.zeros(len(values), dtype=bool)
    mask[order[:count]] = True
    return mask


def region_masks(carto: Cartography, fraction: float = REGION_FRACTION) -> dict[str, np.ndarray]:
    """Swayamdipta et al.'s selections of one run (items (N,)), as boolean masks: the floor(`fraction` N) items
    of highest variability (ambiguous), lowest confidence (hard-to-learn) and highest confidence (easy-to-learn)."""
    check_number("fraction", fraction, 0.0, 0.5, low_open=True, who="region_masks")
    conf, var = np.asarray(carto.confidence), np.asarray(carto.variability)
    if conf.ndim != 1:
        raise ValueError(f"region_masks maps one run's items (N,), got confidence of shape {conf.shape}")
    count = int(np.floor(fraction * len(conf)))
    return {
        "ambiguous": _top(var, count, highest=True),
        "hard-to-learn": _top(conf, count, highest=False),
        "easy-to-learn": _top(conf, count, highest=True),
    }


def regions(carto: Cartography, fraction: float = REGION_FRACTION) -> np.ndarray:
    """One region name per item (N,): the first of ambiguous, hard-to-learn, easy-to-learn whose selection holds it
    (``region_masks``), otherwise "other"."""
    masks = region_masks(carto, fraction)
    label = np.full(len(carto.confidence), REGIONS[-1], dtype=object)
    for name in reversed(REGIONS[:-1]):  # the first in REGIONS wins
        label[masks[name]] = name
    return label


def alignment(carto: Cartography, human_entropy, subset=None) -> dict[str, float]:
    """Spearman's rank correlation of each map coordinate of one run with the human uncertainty (entropy of the
    human soft label, (N,)): variability and 1 - confidence (model uncertainties: positive when the model is unsure
    where humans are) and confidence (the sign of the paper's reported correlations)."""
    conf = np.asarray(carto.confidence)
    return {
        "variability": uncertainty_correlation(carto.variability, human_entropy, subset),
        "one_minus_confidence": uncertainty_correlation(1.0 - conf, human_entropy, subset),
        "confidence": uncertainty_correlation(conf, human_entropy, subset),
    }
