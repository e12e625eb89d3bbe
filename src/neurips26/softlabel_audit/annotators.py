"""SIMULATED annotator panels: vote counts (N, 10) from a documented model of annotator confusion, tied to the
ambiguity of each image. Not human data: the paper's MNIST re-annotations (arXiv 2605.18648: about 6 annotations per
image from a pool of annotators) are not public, so quick and smoke scales, and MNIST at paper scale, use these.

The model. Every item carries two candidate classes a and b and the perceived weight v in [0, 1] of class a
(`Ambiguity`). Annotator j has a psychometric slope k_j ~ LogNormal(log k_med, s_k), a criterion bias
b_j ~ N(0, s_b) towards class a, and a lapse rate l_j ~ Beta(l_conc * l_mean, l_conc * (1 - l_mean)). For an item
the annotator

1. sees class a with probability sigmoid(k_j (v - 0.5) + b_j), class b otherwise (a logistic psychometric function
   of the morph weight, Wichmann and Hill 2001, with annotator-specific slope and bias as in Dawid and Skene 1979's
   annotator-specific confusion);
2. with probability l_j lapses and reports instead a class drawn from row c of the class confusion matrix C (zero
   diagonal) for the class c seen: the small confusion noise over the other classes.

How v is tied to the images:
- morphs (`morph_ambiguity`): a and b are the source classes and v the share of class a's ink in the mix,
  v = w m_a / (w m_a + (1 - w) m_b) with m the ink mass (sum of intensities) of each source: a heavier digit
  dominates the blend, so the human mode departs from the generator's label (w >= 0.5) where ink outweighs w;
- clean digits (`clean_ambiguity`): a is the dataset label, b the nearest other class by distance to class
  prototypes (k-means centroids per class of the centred images), and v = 1 - 0.5 exp(-max(m, 0) / tau) with m the
  distance margin d_b - d_a: typical digits get v near 1 (consensus), digits as close to another class as to
  their own get v = 0.5 (a coin flip between the two); tau puts the median item at v = CLEAN_MEDIAN_WEIGHT.

Each item is annotated by `per_item` distinct annotators drawn uniformly from a pool of `n_annotators` (Floyd's
sampling, vectorised over items).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurips26.common.validation import check_int, check_number
from neurips26.softlabel_audit.digits import N_CLASSES, Digits
from neurips26.softlabel_audit.morph import MorphSet, centre_images

SIMULATED = True  # every vote this module makes comes from the model above, not from people
CLEAN_MEDIAN_WEIGHT = 0.95  # perceived weight of the dataset label for the median clean digit


@dataclass(frozen=True)
class Ambiguity:
    """Per item: the two candidate classes (int64 (N,)) and the perceived weight of class a (float (N,))."""

    class_a: np.ndarray
    class_b: np.ndarray
    weight: np.ndarray

    def __post_init__(self):
        n = len(self.weight)
        if len(self.class_a) != n or len(self.class_b) != n:
            sizes = (len(self.class_a), len(self.class_b), n)
            raise ValueError(f"class_a, class_b and weight differ in length: {sizes}")
        bad = np.flatnonzero(~((self.weight >= 0) & (self.weight <= 1)))
        if bad.size:
            raise ValueError(f"perceived weights must lie in [0, 1], first bad item {bad[0]} ({self.weight[bad[0]]})")


@dataclass(frozen=True)
class PanelModel:
    """The simulated panel's settings (module docstring). Defaults: 6 annotations per image from a pool of 480 (the
    paper's figures per a secondary source); slope, bias and lapse as stated assumptions."""

    n_annotators: int = 480
    per_item: int = 6
    slope_median: float = 12.0
    slope_log_sd: float = 0.4
    bias_sd: float = 0.5
    lapse_mean: float = 0.02
    lapse_concentration: float = 100.0

    def __post_init__(self):
        who = "PanelModel"
        check_int("n_annotators", self.n_annotators, low=1, who=who)
        check_int("per_item", self.per_item, low=1, who=who)
        if self.per_item > self.n_annotators:
            raise ValueError(f"PanelModel.per_item={self.per_item} exceeds n_annotators={self.n_annotators}")
        check_number("slope_median", self.slope_median, low=0.0, low_open=True, who=who)
        for name in ("slope_log_sd", "bias_sd"):
            check_number(name, getattr(self, name), low=0.0, who=who)
        check_number("lapse_mean", self.lapse_mean, low=0.0, high=1.0, low_open=True, high_open=True, who=who)
        check_number("lapse_concentration", self.lapse_concentration, low=0.0, low_open=True, who=who)


@dataclass(frozen=True)
class Annotators:
    """The pool's per-annotator slope, bias and lapse rate (each (n_annotators,))."""

    slope: np.ndarray
    bias: np.ndarray
    lapse: np.ndarray


@dataclass(frozen=True)
class Panel:
    """SIMULATED votes: the class each annotation chose and who gave it (both int64 (N, per_item))."""

    votes: np.ndarray
    annotator: np.ndarray

    @property
    def counts(self) -> np.ndarray:
        """Vote counts per item and class, int64 (N, 10)."""
        return vote_counts(self.votes)


def vote_counts(votes: np.ndarray, n_classes: int = N_CLASSES) -> np.ndarray:
    """(N, n_classes) counts of the class indices in each row of `votes` (N, H)."""
    votes = np.asarray(votes, dtype=np.int64)
    rows = np.repeat(np.arange(len(votes)), votes.shape[1])
    return np.bincount(rows * n_classes + votes.ravel(), minlength=len(votes) * n_classes).reshape(-1, n_classes)


def draw_annotators(model: PanelModel, seed: int) -> Annotators:
    """The pool's skills, seeded: slope log-normal, bias normal, lapse beta (module docstring)."""
    rng = np.random.default_rng([seed, 0])
    n = model.n_annotators
    slope = model.slope_median * np.exp(model.slope_log_sd * rng.standard_normal(n))
    bias = model.bias_sd * rng.standard_normal(n)
    c = model.lapse_concentration
    lapse = rng.beta(c * model.lapse_mean, c * (1.0 - model.lapse_mean), n)
    return Annotators(slope, bias, lapse)


def distinct_annotators(n_items: int, pool: int, per_item: int, rng: np.random.Generator) -> np.ndarray:
    """(n_items, per_item) annotator ids, distinct within each row, each row a uniform random subset of the pool
    in random order (Floyd's algorithm, vectorised over rows)."""
    chosen = np.empty((n_items, per_item), dtype=np.int64)
    for s in range(per_item):
        top = pool - per_item + s
        pick = rng.integers(0, top + 1, n_items)
        taken = (chosen[:, :s] == pick[:, None]).any(axis=1)
        chosen[:, s] = np.where(taken, top, pick)
    return rng.permuted(chosen, axis=1)


def uniform_confusion(n_classes: int = N_CLASSES) -> np.ndarray:
    """Lapses spread evenly over the other classes."""
    return (1.0 - np.eye(n_classes)) / (n_classes - 1)


def prototype_confusion(images: np.ndarray, labels: np.ndarray, temperature: float = 0.1) -> np.ndarray:
    """Lapses towards similar classes: C[c, c'] proportional to exp(-D[c, c'] / (temperature * median D)) off the
    diagonal, D the Euclidean distance between the mean centred images of the classes."""
    check_number("temperature", temperature, low=0.0, low_open=True, who="prototype_confusion")
    flat = centre_images(images).reshape(len(images), -1).astype(np.float64)
    classes = np.arange(N_CLASSES)
    present = np.isin(classes, labels)
    if not present.all():
        raise ValueError(f"prototype_confusion needs every class, missing {classes[~present].tolist()}")
    means = np.stack([flat[labels == c].mean(axis=0) for c in classes])
    dist = np.linalg.norm(means[:, None] - means[None], axis=-1)
    scale = temperature * np.median(dist[~np.eye(N_CLASSES, dtype=bool)])
    weight = np.where(np.eye(N_CLASSES, dtype=bool), 0.0, np.exp(-(dist - dist.min()) / scale))
    return weight / weight.sum(axis=1, keepdims=True)


def morph_ambiguity(morphs: MorphSet, source_images: np.ndarray) -> Ambiguity:
    """The perceived weight of class a: its share of the ink in the mix (module docstring). `source_images` are the
    digits the morphs were made from (MorphSet.source_a/source_b index them)."""
    ink = np.asarray(source_images, dtype=np.float64).sum(axis=(1, 2))
    ink_a, ink_b = morphs.w * ink[morphs.source_a], (1.0 - morphs.w) * ink[morphs.source_b]
    total = ink_a + ink_b
    weight = np.where(total > 0, ink_a / np.where(total > 0, total, 1.0), morphs.w)
    return Ambiguity(morphs.class_a.astype(np.int64), morphs.class_b.astype(np.int64), weight)


def clean_ambiguity(digits: Digits, n_prototypes: int = 10, seed: int = 0) -> Ambiguity:
    """Candidate classes and perceived weight of unmorphed digits from their distance to class prototypes (module
    docstring): `n_prototypes` k-means centroids per class of the centred images, seeded."""
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    check_int("n_prototypes", n_prototypes, low=1, who="clean_ambiguity")
    if len(np.unique(digits.labels)) < 2:
        raise ValueError(f"clean_ambiguity needs digits of at least two classes, got {np.unique(digits.labels)}")
    flat = centre_images(digits.images).reshape(len(digits), -1).astype(np.float64)
    dist = np.full((len(digits), N_CLASSES), np.inf)
    for c in np.unique(digits.labels):  # ten fits, one per class
        members = flat[digits.labels == c]
        k = min(n_prototypes, len(members))
        with threadpool_limits(1):  # fits this small run ~30x slower with OpenMP threads on a shared machine
            centres = KMeans(k, n_init=1, random_state=seed).fit(members).cluster_centers_
        sq = (flat**2).sum(1)[:, None] - 2 * flat @ centres.T + (centres**2).sum(1)[None]
        dist[:, c] = np.sqrt(np.maximum(sq, 0.0)).min(axis=1)
    rows = np.arange(len(digits))
    own = dist[rows, digits.labels]
    others = dist.copy()
    others[rows, digits.labels] = np.inf
    rival = others.argmin(axis=1)
    margin = np.maximum(others[rows, rival] - own, 0.0)
    typical = np.median(margin)
    tau = typical / np.log(0.5 / (1.0 - CLEAN_MEDIAN_WEIGHT)) if typical > 0 else 1.0
    weight = 1.0 - 0.5 * np.exp(-margin / tau)
    return Ambiguity(digits.labels.astype(np.int64), rival.astype(np.int64), weight)


def _checked_confusion(confusion: np.ndarray | None) -> np.ndarray:
    confusion = uniform_confusion() if confusion is None else np.asarray(confusion, dtype=np.float64)
    if confusion.shape != (N_CLASSES, N_CLASSES) or (confusion < 0).any():
        raise ValueError(f"confusion must be a non-negative {N_CLASSES} x {N_CLASSES} matrix, got {confusion.shape}")
    if not np.allclose(confusion.sum(axis=1), 1.0):
        raise ValueError(f"confusion rows must sum to 1, got {confusion.sum(axis=1).round(6).tolist()}")
    return confusion


def expected_votes(ambiguity: Ambiguity, model: PanelModel, seed: int, confusion: np.ndarray | None = None):
    """The panel's true class probabilities per item, float64 (N, 10): the expected share of votes for each class of
    an annotation by an annotator drawn uniformly from the pool (`draw_annotators(model, seed)`, the pool that
    `simulate_panel` with the same seed draws from), lapses included. The limit of the vote proportions as the
    number of annotators per item grows (the analogue of a many-annotator distribution); `simulate_panel`'s six
    votes are a sample of it."""
    confusion = _checked_confusion(confusion)
    pool = draw_annotators(model, seed)
    logit = pool.slope[None] * (ambiguity.weight[:, None] - 0.5) + pool.bias[None]  # (N, J)
    sees_a = 1.0 / (1.0 + np.exp(-logit))
    keep = 1.0 - pool.lapse[None]
    rows = np.arange(len(ambiguity.weight))
    probs = np.zeros((len(rows), N_CLASSES))
    np.add.at(probs, (rows, ambiguity.class_a), (keep * sees_a).mean(axis=1))
    np.add.at(probs, (rows, ambiguity.class_b), (keep * (1.0 - sees_a)).mean(axis=1))
    lapse_a, lapse_b = (pool.lapse[None] * sees_a).mean(axis=1), (pool.lapse[None] * (1.0 - sees_a)).mean(axis=1)
    probs += lapse_a[:, None] * confusion[ambiguity.class_a] + lapse_b[:, None] * confusion[ambiguity.class_b]
    return probs


def simulate_panel(ambiguity: Ambiguity, model: PanelModel, seed: int, confusion: np.ndarray | None = None) -> Panel:
    """SIMULATED annotations of every item by `model.per_item` distinct annotators of the pool (module docstring),
    seeded; `confusion` (rows: the class seen) defaults to `uniform_confusion`."""
    confusion = _checked_confusion(confusion)
    pool = draw_annotators(model, seed)
    rng = np.random.default_rng([seed, 1])
    n = len(ambiguity.weight)
    who = distinct_annotators(n, model.n_annotators, model.per_item, rng)
    logit = pool.slope[who] * (ambiguity.weight[:, None] - 0.5) + pool.bias[who]
    sees_a = rng.random(who.shape) < 1.0 / (1.0 + np.exp(-logit))
    seen = np.where(sees_a, ambiguity.class_a[:, None], ambiguity.class_b[:, None])
    lapsed = rng.random(who.shape) < pool.lapse[who]
    cumulative = np.cumsum(confusion, axis=1)
    other = (cumulative[seen] < rng.random(who.shape)[..., None]).sum(axis=-1)
    votes = np.where(lapsed, np.minimum(other, N_CLASSES - 1), seen)
    return Panel(votes.astype(np.int64), who)
