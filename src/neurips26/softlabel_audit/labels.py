"""The label conditions of the audit (arXiv 2605.18648) as a registry, built from the original labels, the annotators'
vote counts and, for the synthetic soft labels, a teacher's logits; and the checks that refuse bad labels.

The paper separates two effects of human re-annotation: the mode shift (the human majority differs from the original
label, which corrects or changes the label) and the soft information (the spread of the votes). The conditions
isolate them:
- `hard_orig`: one-hot of the original label (for a morph, the generator's label, the class with w >= 0.5);
- `hard_majority`: one-hot of the human majority (the mode shift alone; ties: `majority_labels`);
- `human_soft`: the vote proportions (soft information and mode shift);
- `human_soft_aligned`: the vote proportions with the probabilities of the human mode and of the original class
  swapped, so that the original class is the mode (soft information without the mode shift: the paper's "decoupling
  soft-label supervision from underlying label mode shifts"). A swap is a permutation of the vector, so its entropy
  and its sorted values are those of the human soft label exactly;
- `human_soft_shuffled`: the aligned human soft labels permuted at random among the training items of the same
  original class (seeded per member): the same labels, entropies and modes as `human_soft_aligned` within each
  class, but the wrong item-specific pattern (the null of the claims about human soft information);
- `label_smooth`: (1 - eps) one-hot(original) + eps / K (Szegedy et al. 2016; Mueller et al. 2019), a synthetic soft
  label with no item-specific information;
- `teacher_soft`: softmax(teacher logits / T) (Hinton et al. 2015), the synthetic soft label of a model;
- `teacher_soft_aligned`: the teacher's soft label aligned to the original label as above.

eps and T can be matched to the human soft labels' mean entropy on the training items (`matched_smoothing_epsilon`,
`matched_temperature`), so that synthetic and human soft labels carry the same overall uncertainty and differ in how
it is spread over the items.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from neurips26.common.validation import check_number
from neurips26.softlabel_audit.digits import N_CLASSES

TOLERANCE = 1e-6  # how far a soft label's sum may stray from 1
LABEL_SMOOTHING_EPSILON = 0.1  # Szegedy et al. 2016's value
TEACHER_TEMPERATURE = 2.0  # a common distillation temperature (Hinton et al. 2015 use 1 to 20); the config may override


def _first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def check_label_indices(labels, n_classes: int = N_CLASSES, name: str = "labels") -> np.ndarray:
    """`labels` as int64 (N,) when every entry is a class index in 0..n_classes-1; ValueError naming the first
    offending index otherwise."""
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {labels.shape}")
    bad = ~np.isfinite(labels.astype(np.float64)) | (labels < 0) | (labels >= n_classes) | (labels != np.round(labels))
    if bad.any():
        i = _first(bad)
        raise ValueError(f"{name}: class index outside 0..{n_classes - 1} at index {i} ({labels[i]})")
    return labels.astype(np.int64)


def check_vote_counts(counts, n_classes: int = N_CLASSES, name: str = "vote counts") -> np.ndarray:
    """`counts` as int64 (N, n_classes) when they are non-negative integers and every item has at least one
    annotation; ValueError naming the first offending index otherwise."""
    counts = np.asarray(counts)
    if counts.ndim != 2 or counts.shape[1] != n_classes:
        raise ValueError(f"{name} must have shape (N, {n_classes}), got {counts.shape}")
    bad = ((counts < 0) | (counts != np.round(counts)) | ~np.isfinite(counts.astype(np.float64))).any(axis=1)
    if bad.any():
        raise ValueError(f"{name}: negative or non-integer counts at index {_first(bad)} ({counts[_first(bad)]})")
    empty = counts.sum(axis=1) == 0
    if empty.any():
        raise ValueError(f"{name}: zero annotators for item at index {_first(empty)}")
    return counts.astype(np.int64)


def check_soft_labels(soft, n_classes: int = N_CLASSES, atol: float = TOLERANCE, name: str = "soft labels"):
    """`soft` as float64 (N, n_classes) when every row is a probability vector (non-negative, summing to 1 within
    `atol`); ValueError naming the problem and the first offending index otherwise."""
    soft = np.asarray(soft, dtype=np.float64)
    if soft.ndim != 2 or soft.shape[1] != n_classes:
        raise ValueError(f"{name} must have shape (N, {n_classes}), got {soft.shape}")
    bad = ~np.isfinite(soft).all(axis=1)
    if bad.any():
        raise ValueError(f"{name}: non-finite value at index {_first(bad)}")
    bad = (soft < 0).any(axis=1)
    if bad.any():
        raise ValueError(f"{name}: negative probability at index {_first(bad)} ({soft[_first(bad)].min()})")
    total = soft.sum(axis=1)
    bad = np.abs(total - 1.0) > atol
    if bad.any():
        i = _first(bad)
        raise ValueError(f"{name}: row does not sum to 1 (within {atol}) at index {i} (sum {total[i]})")
    return soft


def one_hot(labels, n_classes: int = N_CLASSES) -> np.ndarray:
    """float64 (N, n_classes) one-hot rows of class indices."""
    labels = check_label_indices(labels, n_classes)
    return np.eye(n_classes)[labels]


def soft_from_votes(counts) -> np.ndarray:
    """The vote proportions (the human soft label) of vote counts (N, K)."""
    counts = check_vote_counts(counts, np.asarray(counts).shape[-1])
    return counts / counts.sum(axis=1, keepdims=True)


def majority_labels(scores, original) -> np.ndarray:
    """The mode of each row of `scores` (vote counts or probabilities). Ties: the original label where it is among
    the tied classes (a tie does not overturn the original label, so it is no mode shift), else the lowest tied class
    index."""
    scores = np.asarray(scores)
    original = check_label_indices(original, scores.shape[1], "original labels")
    if len(original) != len(scores):
        raise ValueError(f"{len(scores)} rows of scores but {len(original)} original labels")
    tied = scores == scores.max(axis=1, keepdims=True)
    return np.where(tied[np.arange(len(original)), original], original, tied.argmax(axis=1)).astype(np.int64)


def mode_shifted(counts, original) -> np.ndarray:
    """Whether the human majority (`majority_labels`) differs from the original label, per item."""
    counts = check_vote_counts(counts, np.asarray(counts).shape[-1])
    return majority_labels(counts, original) != np.asarray(original)


def mode_shift_share(counts, original) -> float:
    """The share of items whose human majority differs from the original label (the paper's ambiguous MNIST: about
    33% per a secondary source)."""
    return float(mode_shifted(counts, original).mean())


def align_to_labels(soft, original) -> np.ndarray:
    """Each soft label with the probabilities of its mode (`majority_labels`) and of the original class swapped: the
    original class becomes the mode; the entropy and the multiset of probabilities are unchanged."""
    soft = check_soft_labels(soft, np.asarray(soft).shape[-1])
    original = check_label_indices(original, soft.shape[1], "original labels")
    mode = majority_labels(soft, original)
    rows = np.arange(len(soft))
    aligned = soft.copy()
    aligned[rows, original], aligned[rows, mode] = soft[rows, mode], soft[rows, original]
    return aligned


def smooth_labels(labels, epsilon: float = LABEL_SMOOTHING_EPSILON, n_classes: int = N_CLASSES) -> np.ndarray:
    """Label smoothing: (1 - epsilon) one-hot + epsilon / K."""
    check_number("epsilon", epsilon, low=0.0, high=1.0, who="smooth_labels")
    return (1.0 - epsilon) * one_hot(labels, n_classes) + epsilon / n_classes


def smoothing_entropy(epsilon: float, n_classes: int = N_CLASSES) -> float:
    """Entropy (nats) of a label smoothed with `epsilon`."""
    top, rest = 1.0 - epsilon + epsilon / n_classes, epsilon / n_classes
    return float(-top * np.log(top) - (n_classes - 1) * (rest * np.log(rest) if rest > 0 else 0.0))


def matched_smoothing_epsilon(target_entropy: float, n_classes: int = N_CLASSES) -> float:
    """The epsilon whose smoothed label has entropy `target_entropy` (e.g. the human soft labels' mean entropy), so
    that label smoothing matches the humans' overall uncertainty but not its distribution over items."""
    from scipy.optimize import brentq

    check_number("target_entropy", target_entropy, low=0.0, high=float(np.log(n_classes)), who="matched epsilon")
    if target_entropy == 0:
        return 0.0
    high = (n_classes - 1) / n_classes  # the uniform label, entropy log K
    if target_entropy >= smoothing_entropy(high, n_classes) - 1e-12:
        return high
    return float(brentq(lambda eps: smoothing_entropy(eps, n_classes) - target_entropy, 0.0, high, xtol=1e-12))


def matched_temperature(logits, target_entropy: float, low: float = 1e-6, high: float = 1e4) -> float:
    """The temperature T at which softmax(logits / T) has mean entropy (over the rows) `target_entropy`: bisection on
    log T (the entropy of a tempered softmax does not decrease with T); ValueError where the target lies outside what
    [low, high] reaches."""
    z = np.asarray(logits, dtype=np.float64)

    def mean_entropy(t):
        return float(entropy(teacher_soft_labels(z, t)).mean())

    if not mean_entropy(low) <= target_entropy <= mean_entropy(high):
        raise ValueError(f"target entropy {target_entropy} outside [{mean_entropy(low)}, {mean_entropy(high)}], "
                         f"the teacher's mean entropies at temperatures {low} and {high}")  # fmt: skip
    a, b = np.log(low), np.log(high)
    for _ in range(80):
        mid = 0.5 * (a + b)
        a, b = (mid, b) if mean_entropy(np.exp(mid)) < target_entropy else (a, mid)
    return float(np.exp(0.5 * (a + b)))


def shuffle_within_class(soft, original, seed: int) -> np.ndarray:
    """The rows of `soft` permuted at random among the items of the same original class, seeded."""
    soft = np.asarray(soft)
    original = check_label_indices(original, soft.shape[1], "original labels")
    rng = np.random.default_rng([seed, 2])
    out = soft.copy()
    for c in np.unique(original):
        index = np.flatnonzero(original == c)
        out[index] = soft[rng.permutation(index)]
    return out


def teacher_soft_labels(logits, temperature: float = TEACHER_TEMPERATURE) -> np.ndarray:
    """softmax(logits / temperature) per row (Hinton et al. 2015), float64 (N, K)."""
    check_number("temperature", temperature, low=0.0, low_open=True, who="teacher_soft_labels")
    z = np.asarray(logits, dtype=np.float64) / temperature
    if z.ndim != 2 or not np.isfinite(z).all():
        raise ValueError(f"teacher logits must be a finite (N, K) array, got shape {z.shape}")
    z = np.exp(z - z.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


def entropy(soft) -> np.ndarray:
    """Shannon entropy (nats) of each row of probabilities; 0 log 0 = 0."""
    soft = np.asarray(soft, dtype=np.float64)
    return -np.where(soft > 0, soft * np.log(np.where(soft > 0, soft, 1.0)), 0.0).sum(axis=-1)


@dataclass(frozen=True)
class LabelInputs:
    """What the conditions are built from: original labels (N,), vote counts (N, K); teacher logits (N, K) only for
    the teacher's conditions; the smoothing epsilon, the teacher's temperature and the seed of the shuffle
    (`human_soft_shuffled`)."""

    original: np.ndarray
    counts: np.ndarray
    teacher_logits: np.ndarray | None = None
    epsilon: float = LABEL_SMOOTHING_EPSILON
    temperature: float = TEACHER_TEMPERATURE
    seed: int = 0

    def __post_init__(self):
        counts = check_vote_counts(self.counts, np.asarray(self.counts).shape[-1])
        original = check_label_indices(self.original, counts.shape[1], "original labels")
        if len(original) != len(counts):
            raise ValueError(f"{len(original)} original labels but vote counts for {len(counts)} items")
        if self.teacher_logits is not None and np.shape(self.teacher_logits) != counts.shape:
            raise ValueError(f"teacher logits of shape {np.shape(self.teacher_logits)}, expected {counts.shape}")

    @property
    def n_classes(self) -> int:
        return np.asarray(self.counts).shape[1]

    def teacher(self) -> np.ndarray:
        if self.teacher_logits is None:
            raise ValueError("the teacher's label conditions need teacher_logits")
        return teacher_soft_labels(self.teacher_logits, self.temperature)


LABEL_CONDITIONS: dict[str, Callable[[LabelInputs], np.ndarray]] = {
    "hard_orig": lambda x: one_hot(x.original, x.n_classes),
    "hard_majority": lambda x: one_hot(majority_labels(x.counts, x.original), x.n_classes),
    "human_soft": lambda x: soft_from_votes(x.counts),
    "human_soft_aligned": lambda x: align_to_labels(soft_from_votes(x.counts), x.original),
    "human_soft_shuffled": lambda x: shuffle_within_class(
        align_to_labels(soft_from_votes(x.counts), x.original), x.original, x.seed
    ),
    "label_smooth": lambda x: smooth_labels(x.original, x.epsilon, x.n_classes),
    "teacher_soft": lambda x: x.teacher(),
    "teacher_soft_aligned": lambda x: align_to_labels(x.teacher(), x.original),
}
NEEDS_TEACHER = ("teacher_soft", "teacher_soft_aligned")


def label_targets(condition: str, inputs: LabelInputs) -> np.ndarray:
    """The training targets (N, K) of `condition` (a key of LABEL_CONDITIONS), checked to be probability rows."""
    if condition not in LABEL_CONDITIONS:
        raise ValueError(f"unknown label condition {condition!r}; allowed: {sorted(LABEL_CONDITIONS)}")
    return check_soft_labels(LABEL_CONDITIONS[condition](inputs), inputs.n_classes, name=f"{condition} targets")
