"""Distribution metrics of AnaDiffusion's evaluation (arXiv 2608.23014, Table 1; project page
AnaDiffusion/AnaDiffusion.github.io): the Frechet distance between real and generated regional features with a
subject-cluster bootstrap interval, Cohen's d of regional volumes, and the nearest-training-neighbour distance that
watches for memorization.

The paper reports "MedicalNet FID" per region (whole brain, each hemisphere, cerebellum-brainstem, seam) multiplied by
1e4 (`FID_TABLE_SCALE`), and SynthSeg volumes as Cohen's |d|, each with a 95% interval from 5,000 subject-cluster
bootstrap replicates against 291 held-out ADNI scans. A subject-cluster bootstrap draws subjects with replacement
and keeps every scan of a drawn subject, so scans of one subject never count as independent; real and generated sets
are resampled independently (a generated sample is its own cluster unless told otherwise). Replicates are carried
as multiplicity weights (B, n) so that every statistic is computed for all replicates at once. Intervals are
percentile intervals; the Frechet distance is biased upward in small samples, and resampling (which duplicates rows)
adds to that bias, so with few samples per feature dimension the replicates sit above the point estimate and the
interval can exclude it (e.g. 32 against 32 samples of 128-d features).

The Frechet distance ||mu_a - mu_b||^2 + tr(S_a + S_b - 2 (S_a S_b)^(1/2)) is computed exactly from Gram matrices:
with Y = sqrt(w / (W - 1)) (x - mu) the weighted centred rows of a set (S = Y^T Y), the eigenvalues of S_a S_b are
the squared singular values of Y_a Y_b^T, so tr (S_a S_b)^(1/2) is the nuclear norm of that (n_a, n_b) matrix. This
holds with fewer samples than feature dimensions (the paper's 512-d MedicalNet features against 291 scans), needs no
matrix square root (no eps I fallback), and batches over replicates. Cost per replicate: O(n_a n_b min(n_a, n_b)).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from neurips26.common.nearest import k_nearest

__all__ = [
    "FID_TABLE_SCALE",
    "PAPER_BOOTSTRAP_REPLICATES",
    "BootstrapInterval",
    "Memorization",
    "bootstrap_cohens_d",
    "bootstrap_frechet_distance",
    "bootstrap_mean",
    "check_scaled_volumes",
    "cluster_bootstrap_weights",
    "cohens_d",
    "frechet_distance",
    "memorization",
    "nearest_neighbour_distances",
    "regional_frechet_distances",
    "weighted_frechet_distances",
]

FID_TABLE_SCALE = 1e4  # Table 1 and 2 of the paper print FID x 1e4
PAPER_BOOTSTRAP_REPLICATES = 5000
CONFIDENCE = 0.95
_MIN_PER_GROUP = 3  # Cohen's d
_RANGE_TOLERANCE = 1e-5


@dataclass(frozen=True)
class BootstrapInterval:
    """A statistic on the full samples (`value`) with its percentile bootstrap interval [`low`, `high`] at
    `confidence`, from `replicates` finite replicates (of `requested`)."""

    value: float
    low: float
    high: float
    replicates: int
    requested: int
    confidence: float

    def contains(self, x: float) -> bool:
        return bool(self.low <= x <= self.high)


# --------------------------------------------------------------------------------------------- inputs and resampling


def check_scaled_volumes(volumes, name: str = "volumes", ndims: tuple[int, ...] = (4,)) -> np.ndarray:
    """`volumes` when they are a finite float array of `ndims` dimensions ((N, D, H, W) by default; (3, 4) also
    takes one volume) on the paper's [-1, 1] scale (background -1); ValueError naming `name` otherwise (the first
    non-finite voxel's index, the range found). The one value check of the pipeline: the feature networks, the
    segmenter, the editing scores, and :func:`.volumes.check_volumes` after its grid and affine checks."""
    volumes = np.asarray(volumes)
    if volumes.ndim not in ndims:
        raise ValueError(f"{name}: shape {volumes.shape} has {volumes.ndim} dimensions, not {ndims} (N, D, H, W)")
    if not np.issubdtype(volumes.dtype, np.floating):
        raise ValueError(f"{name}: dtype {volumes.dtype} is not floating point")
    finite = np.isfinite(volumes)
    if not finite.all():
        bad = tuple(int(i) for i in np.argwhere(~finite)[0])
        raise ValueError(f"{name}: {int((~finite).sum())} non-finite voxels (first at index {bad})")
    lo, hi = float(volumes.min()), float(volumes.max())
    if lo < -1 - _RANGE_TOLERANCE or hi > 1 + _RANGE_TOLERANCE:
        raise ValueError(
            f"{name}: intensities span [{lo:.4g}, {hi:.4g}], outside [-1, 1], the paper's scaling (scale them with "
            "volumes.clip_and_scale)"
        )
    return volumes


def _rows(x, name: str, min_rows: int = 2) -> np.ndarray:
    """`x` (n, ...) as finite float64 rows (n, F)."""
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim < 2:
        arr = arr.reshape(-1, 1)
    if arr.shape[0] < min_rows:
        raise ValueError(f"{name}: needs at least {min_rows} rows, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name}: {int((~np.isfinite(arr)).sum())} NaN or infinite values")
    return arr.reshape(arr.shape[0], -1)


def _cluster_index(clusters, n: int, name: str) -> np.ndarray:
    """Cluster ids (n,) of any hashable dtype -> dense integer ids 0..K-1; None: every row its own cluster."""
    if clusters is None:
        return np.arange(n)
    ids = np.asarray(clusters)
    if ids.shape != (n,):
        raise ValueError(f"{name}: cluster ids must have shape ({n},), one per row, got {ids.shape}")
    return np.unique(ids, return_inverse=True)[1].reshape(n)


def cluster_bootstrap_weights(clusters, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """Multiplicity weights (replicates, n) of a cluster bootstrap: each replicate draws K clusters out of the K in
    `clusters` (n integer ids, dense 0..K-1) with replacement, and a row weighs as often as its cluster was drawn."""
    clusters = np.asarray(clusters)
    if not isinstance(replicates, int | np.integer) or isinstance(replicates, bool) or replicates < 1:
        raise ValueError(f"replicates must be a positive integer, got {replicates!r}")
    k = int(clusters.max()) + 1
    draws = rng.integers(0, k, size=(replicates, k)) + k * np.arange(replicates)[:, None]
    counts = np.bincount(draws.ravel(), minlength=replicates * k).reshape(replicates, k)
    return counts[:, clusters].astype(np.float64)


def _interval(value: float, replicates: np.ndarray, confidence: float) -> BootstrapInterval:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    finite = replicates[np.isfinite(replicates)]
    tail = (1 - confidence) / 2
    low, high = np.quantile(finite, [tail, 1 - tail]) if len(finite) else (np.nan, np.nan)
    return BootstrapInterval(float(value), float(low), float(high), len(finite), len(replicates), confidence)


# ------------------------------------------------------------------------------------------------ Frechet distance


def weighted_frechet_distances(a, b, weights_a, weights_b, chunk: int = 64) -> np.ndarray:
    """Frechet distances (B,) between the weighted Gaussian fits of features `a` (n_a, F) and `b` (n_b, F), one per
    row of the multiplicity weights `weights_a` (B, n_a) and `weights_b` (B, n_b).

    A row of weights is a resample: the mean is sum w x / W and the covariance sum w (x - mu)(x - mu)^T / (W - 1),
    what np.cov gives for the rows repeated by their weights. Computed from Gram matrices (module docstring), `chunk`
    replicates at a time.
    """
    a, b = _rows(a, "first feature set"), _rows(b, "second feature set")
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"feature dimensions differ: {a.shape[1]} and {b.shape[1]}")
    wa, wb = np.atleast_2d(np.asarray(weights_a, np.float64)), np.atleast_2d(np.asarray(weights_b, np.float64))
    if wa.shape[1:] != (len(a),) or wb.shape[1:] != (len(b),) or len(wa) != len(wb):
        raise ValueError(f"weights {wa.shape} and {wb.shape} do not match the sets ({len(a)}, {len(b)} rows)")
    if (wa < 0).any() or (wb < 0).any() or (wa.sum(1) <= 1).any() or (wb.sum(1) <= 1).any():
        raise ValueError("weights must be non-negative with a total above 1 in every replicate")
    shift = np.concatenate([a, b]).mean(axis=0)  # the distance is shift-invariant; centring limits cancellation
    a, b = a - shift, b - shift
    gram_aa, gram_bb, gram_ab = a @ a.T, b @ b.T, a @ b.T
    out = np.empty(len(wa))
    for start in range(0, len(wa), chunk):
        pa, pb = wa[start : start + chunk], wb[start : start + chunk]
        total_a, total_b = pa.sum(1), pb.sum(1)
        a_dot_mu_b = pb @ gram_ab.T / total_b[:, None]  # (C, n_a): x_i . mu_b
        mu_a_dot_b = pa @ gram_ab / total_a[:, None]  # (C, n_b): mu_a . y_j
        mu_aa = np.einsum("ci,ij,cj->c", pa, gram_aa, pa) / total_a**2
        mu_bb = np.einsum("ci,ij,cj->c", pb, gram_bb, pb) / total_b**2
        mu_ab = (a_dot_mu_b * pa).sum(1) / total_a
        trace_a = (pa @ np.diag(gram_aa) - total_a * mu_aa) / (total_a - 1)
        trace_b = (pb @ np.diag(gram_bb) - total_b * mu_bb) / (total_b - 1)
        centred = gram_ab[None] - a_dot_mu_b[:, :, None] - mu_a_dot_b[:, None, :] + mu_ab[:, None, None]
        scale_a, scale_b = np.sqrt(pa / (total_a - 1)[:, None]), np.sqrt(pb / (total_b - 1)[:, None])
        cross = scale_a[:, :, None] * centred * scale_b[:, None, :]
        nuclear = np.linalg.svd(cross, compute_uv=False).sum(-1)
        out[start : start + chunk] = mu_aa + mu_bb - 2 * mu_ab + trace_a + trace_b - 2 * nuclear
    return out


def frechet_distance(real, generated) -> float:
    """Frechet distance between the Gaussian fits (mean, unbiased covariance) of two feature sets (n, F): the
    formula of FID (Heusel et al. 2017), here on the features of `neurips26.anadiffusion.features`. Exact for any
    n and F (module docstring); at least 2 rows per set."""
    real, generated = _rows(real, "real features"), _rows(generated, "generated features")
    return float(weighted_frechet_distances(real, generated, np.ones(len(real)), np.ones(len(generated)))[0])


def bootstrap_frechet_distance(
    real,
    generated,
    real_clusters=None,
    generated_clusters=None,
    replicates: int = PAPER_BOOTSTRAP_REPLICATES,
    confidence: float = CONFIDENCE,
    seed: int = 0,
) -> BootstrapInterval:
    """The Frechet distance of real (n, F) and generated (m, F) features with its subject-cluster bootstrap interval
    (the paper: 95%, 5,000 replicates). `real_clusters` (n,) names the subject of each real scan; generated samples
    are their own clusters unless `generated_clusters` says otherwise."""
    return regional_frechet_distances(
        {"features": real}, {"features": generated}, real_clusters, generated_clusters, replicates, confidence, seed
    )["features"]


def regional_frechet_distances(
    real: Mapping[str, np.ndarray],
    generated: Mapping[str, np.ndarray],
    real_clusters=None,
    generated_clusters=None,
    replicates: int = PAPER_BOOTSTRAP_REPLICATES,
    confidence: float = CONFIDENCE,
    seed: int = 0,
) -> dict[str, BootstrapInterval]:
    """Per region (the keys of `real`, e.g. whole, LH, RH, CB, seam): the Frechet distance of that region's real and
    generated features (n, F) with its subject-cluster bootstrap interval. One draw of subjects per replicate serves
    every region, as a subject is resampled with all its regions."""
    if set(real) != set(generated) or not real:
        raise ValueError(f"regions differ: real {sorted(real)}, generated {sorted(generated)}")
    n_real = {len(np.asarray(v)) for v in real.values()}
    n_gen = {len(np.asarray(v)) for v in generated.values()}
    if len(n_real) != 1 or len(n_gen) != 1:
        raise ValueError(f"every region needs the same rows: real counts {sorted(n_real)}, generated {sorted(n_gen)}")
    (n,), (m,) = n_real, n_gen
    rng = np.random.default_rng(seed)
    w_real = cluster_bootstrap_weights(_cluster_index(real_clusters, n, "real_clusters"), replicates, rng)
    w_gen = cluster_bootstrap_weights(_cluster_index(generated_clusters, m, "generated_clusters"), replicates, rng)
    out = {}
    for region in real:
        values = weighted_frechet_distances(real[region], generated[region], w_real, w_gen)
        out[region] = _interval(frechet_distance(real[region], generated[region]), values, confidence)
    return out


# ---------------------------------------------------------------------------------------------------- Cohen's d


def _values(x, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name}: one value per subject (n,), got shape {arr.shape}")
    if len(arr) < _MIN_PER_GROUP:
        raise ValueError(f"{name}: Cohen's d needs at least {_MIN_PER_GROUP} values per group, got {len(arr)}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name}: {int((~np.isfinite(arr)).sum())} NaN or infinite values")
    return arr


def _weighted_d(generated: np.ndarray, real: np.ndarray, w_gen: np.ndarray, w_real: np.ndarray) -> np.ndarray:
    """(mean_gen - mean_real) / pooled SD per row of multiplicity weights; NaN where the pooled SD is 0."""

    def moments(x, w):
        total = w.sum(1)
        mean = w @ x / total
        var = (w * (x[None] - mean[:, None]) ** 2).sum(1) / (total - 1)
        return total, mean, var

    n_g, mean_g, var_g = moments(generated, w_gen)
    n_r, mean_r, var_r = moments(real, w_real)
    pooled = np.sqrt(((n_g - 1) * var_g + (n_r - 1) * var_r) / (n_g + n_r - 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(pooled > 0, (mean_g - mean_r) / pooled, np.nan)


def cohens_d(generated, real) -> float:
    """Cohen's d of a regional volume, (mean_generated - mean_real) / s_pooled with
    s_pooled = sqrt(((n_g - 1) s_g^2 + (n_r - 1) s_r^2) / (n_g + n_r - 2)) and unbiased variances; the paper reports
    |d| (Table 1, SynthSeg volumes). Refuses fewer than 3 values per group and a zero pooled SD."""
    generated, real = _values(generated, "generated"), _values(real, "real")
    d = _weighted_d(generated, real, np.ones((1, len(generated))), np.ones((1, len(real))))[0]
    if not np.isfinite(d):
        raise ValueError("Cohen's d: both groups have zero variance (pooled SD 0); the effect size is undefined")
    return float(d)


def bootstrap_cohens_d(
    generated,
    real,
    generated_clusters=None,
    real_clusters=None,
    replicates: int = PAPER_BOOTSTRAP_REPLICATES,
    confidence: float = CONFIDENCE,
    seed: int = 0,
    absolute: bool = True,
) -> BootstrapInterval:
    """Cohen's d (|d| when `absolute`, as the paper reports) with its subject-cluster bootstrap interval; replicates
    whose pooled SD is 0 are left out (`replicates` counts those kept)."""
    point = cohens_d(generated, real)
    generated, real = _values(generated, "generated"), _values(real, "real")
    rng = np.random.default_rng(seed)
    w_gen = cluster_bootstrap_weights(_cluster_index(generated_clusters, len(generated), "generated"), replicates, rng)
    w_real = cluster_bootstrap_weights(_cluster_index(real_clusters, len(real), "real"), replicates, rng)
    values = _weighted_d(generated, real, w_gen, w_real)
    if absolute:
        point, values = abs(point), np.abs(values)
    return _interval(point, values, confidence)


def bootstrap_mean(
    values, clusters=None, replicates: int = PAPER_BOOTSTRAP_REPLICATES, confidence: float = CONFIDENCE, seed: int = 0
) -> BootstrapInterval:
    """Mean of per-item values (e.g. one MS-SSIM column over the edits) with its cluster bootstrap interval;
    `clusters` (n,) groups items that share a subject (None: each item its own cluster)."""
    x = _rows(values, "values", min_rows=1)
    if x.shape[1] != 1:
        raise ValueError(f"values: one number per item (n,), got shape {np.shape(values)}")
    x = x[:, 0]
    rng = np.random.default_rng(seed)
    weights = cluster_bootstrap_weights(_cluster_index(clusters, len(x), "clusters"), replicates, rng)
    return _interval(float(x.mean()), weights @ x / weights.sum(1), confidence)


# ---------------------------------------------------------------------------------------------------- memorization


def nearest_neighbour_distances(queries, reference, chunk: int | None = None) -> np.ndarray:
    """Euclidean distance (n,) from each query (n, ...) to its nearest reference item (m, ...), both flattened
    (``common.nearest.k_nearest``: float64, the reference streamed `chunk` items at a time)."""
    q, r = _rows(queries, "queries", min_rows=1), _rows(reference, "reference", min_rows=1)
    if q.shape[1] != r.shape[1]:
        raise ValueError(f"queries have {q.shape[1]} values per item but the reference has {r.shape[1]}")
    return k_nearest(q, r, k=1, chunk=chunk).distances[:, 0]


@dataclass(frozen=True)
class Memorization:
    """Median distance of generated samples to their nearest training item (`sample_median`), the same for held-out
    real items (`held_out_median`), and `ratio` = sample_median / held_out_median: far below 1 means the samples sit
    closer to the training set than new real data do, i.e. copies."""

    sample_median: float
    held_out_median: float
    ratio: float


def memorization(samples, held_out, training) -> Memorization:
    """Nearest-training-neighbour distances of generated `samples` against those of `held_out` real items, both to
    `training` (arrays (n, ...): volumes or features). A generative model that copies its training data gives
    samples closer to the training set than held-out reals are."""
    sample_median = float(np.median(nearest_neighbour_distances(samples, training)))
    held_out_median = float(np.median(nearest_neighbour_distances(held_out, training)))
    if held_out_median <= 0:
        raise ValueError("held-out items coincide with training items (median nearest distance 0): not held out")
    return Memorization(sample_median, held_out_median, sample_median / held_out_median)
