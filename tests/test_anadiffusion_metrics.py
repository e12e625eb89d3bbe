"""Frechet distance (exact Gram form), subject-cluster bootstrap, Cohen's d and nearest-neighbour memorization."""

import numpy as np
import pytest
from scipy import linalg

from neurips26.anadiffusion import metrics


def sqrtm_frechet(a, b):
    """The textbook formula with scipy's matrix square root (full-rank covariances only)."""
    mu_a, mu_b = a.mean(0), b.mean(0)
    s_a, s_b = np.cov(a, rowvar=False), np.cov(b, rowvar=False)
    root = linalg.sqrtm(s_a @ s_b).real
    return float((mu_a - mu_b) @ (mu_a - mu_b) + np.trace(s_a + s_b - 2 * root))


# --------------------------------------------------------------------------------------------- Frechet distance


@pytest.mark.parametrize("n,dim", [(80, 6), (20, 64)])  # more rows than features, and fewer (singular covariance)
def test_fd_is_zero_for_identical_sets_and_the_squared_norm_of_a_mean_shift(n, dim):
    rng = np.random.default_rng(0)
    a = rng.normal(size=(n, dim)) * rng.uniform(0.1, 2.0, size=dim)
    assert abs(metrics.frechet_distance(a, a)) < 1e-9 * np.trace(np.cov(a, rowvar=False))
    shift = rng.normal(size=dim)
    for scale in (0.5, 1.0, 3.0):
        assert metrics.frechet_distance(a, a + scale * shift) == pytest.approx(scale**2 * shift @ shift, rel=1e-9)


def test_fd_matches_the_sqrtm_formula_on_full_rank_covariances():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(120, 5)) @ rng.normal(size=(5, 5))
    b = rng.normal(size=(90, 5)) @ rng.normal(size=(5, 5)) + 0.3
    assert metrics.frechet_distance(a, b) == pytest.approx(sqrtm_frechet(a, b), rel=1e-8)
    # symmetric, and a common shift of both sets changes nothing
    assert metrics.frechet_distance(b, a) == pytest.approx(metrics.frechet_distance(a, b), rel=1e-10)
    assert metrics.frechet_distance(a + 100.0, b + 100.0) == pytest.approx(metrics.frechet_distance(a, b), rel=1e-8)


def test_weighted_fd_equals_the_fd_of_rows_repeated_by_their_weights():
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(12, 30)), rng.normal(size=(9, 30)) + 0.2
    wa = rng.integers(0, 4, size=(3, 12)).astype(float)
    wb = rng.integers(1, 3, size=(3, 9)).astype(float)
    got = metrics.weighted_frechet_distances(a, b, wa, wb, chunk=2)
    repeated = [(np.repeat(a, wa[i].astype(int), 0), np.repeat(b, wb[i].astype(int), 0)) for i in range(3)]
    want = [metrics.frechet_distance(x, y) for x, y in repeated]
    np.testing.assert_allclose(got, want, rtol=1e-9)


def test_fd_refuses_mismatched_or_non_finite_features():
    rng = np.random.default_rng(3)
    with pytest.raises(ValueError, match="dimensions differ"):
        metrics.frechet_distance(rng.normal(size=(10, 4)), rng.normal(size=(10, 5)))
    bad = rng.normal(size=(10, 4))
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="generated features: 1 NaN"):
        metrics.frechet_distance(rng.normal(size=(10, 4)), bad)
    with pytest.raises(ValueError, match="at least 2 rows"):
        metrics.frechet_distance(rng.normal(size=(1, 4)), rng.normal(size=(10, 4)))


# ------------------------------------------------------------------------------------------ subject-cluster bootstrap


def test_cluster_weights_resample_whole_clusters():
    clusters = np.repeat(np.arange(5), 3)  # 5 subjects of 3 scans
    w = metrics.cluster_bootstrap_weights(clusters, 400, np.random.default_rng(0))
    assert w.shape == (400, 15)
    np.testing.assert_array_equal(w.sum(1), 15)  # equal clusters: every replicate keeps 15 scans
    np.testing.assert_array_equal(w[:, 0], w[:, 2])  # scans of one subject are drawn together
    assert not np.array_equal(w[:, 0], w[:, 3])
    assert w.mean() == pytest.approx(1.0, abs=0.05)


def clustered_features(subjects, scans, dim, rng, shift=0.0):
    """Features of `scans` per subject: a subject effect shared by its scans plus scan noise."""
    effect = np.repeat(rng.normal(size=(subjects, dim)), scans, axis=0)
    return effect + 0.3 * rng.normal(size=(subjects * scans, dim)) + shift, np.repeat(np.arange(subjects), scans)


def test_bootstrap_interval_contains_the_estimate_and_narrows_with_more_subjects():
    rng = np.random.default_rng(4)
    widths = []
    for subjects in (8, 48):
        real, ids = clustered_features(subjects, 2, 4, rng)
        generated = rng.normal(size=(subjects * 2, 4)) + 1.0
        interval = metrics.bootstrap_frechet_distance(real, generated, ids, replicates=300, seed=1)
        assert interval.contains(interval.value) and interval.replicates == 300
        assert interval.value == pytest.approx(metrics.frechet_distance(real, generated))
        widths.append(interval.high - interval.low)
    assert widths[1] < 0.6 * widths[0]


def test_cluster_bootstrap_is_wider_than_treating_scans_as_independent():
    rng = np.random.default_rng(5)
    real, ids = clustered_features(12, 6, 3, rng)
    generated = rng.normal(size=(72, 3)) + 0.8
    clustered = metrics.bootstrap_frechet_distance(real, generated, ids, replicates=400)
    per_scan = metrics.bootstrap_frechet_distance(real, generated, None, replicates=400)
    assert clustered.value == per_scan.value
    assert clustered.high - clustered.low > 1.5 * (per_scan.high - per_scan.low)


def test_regional_fd_is_seeded_and_refuses_mismatched_regions():
    rng = np.random.default_rng(6)
    real = {r: rng.normal(size=(20, 3)) for r in ("whole", "seam")}
    gen = {r: rng.normal(size=(15, 3)) + 0.5 for r in ("whole", "seam")}
    first = metrics.regional_frechet_distances(real, gen, replicates=50, seed=3)
    assert first == metrics.regional_frechet_distances(real, gen, replicates=50, seed=3)
    assert first != metrics.regional_frechet_distances(real, gen, replicates=50, seed=4)
    with pytest.raises(ValueError, match="regions differ"):
        metrics.regional_frechet_distances(real, {"whole": gen["whole"]}, replicates=10)
    with pytest.raises(ValueError, match="real_clusters"):
        metrics.regional_frechet_distances(real, gen, real_clusters=np.arange(19), replicates=10)


# --------------------------------------------------------------------------------------------------- Cohen's d


def test_cohens_d_matches_a_hand_computation():
    # means 2.5 and 4, variances 5/3 and 4: pooled SD sqrt((3 * 5/3 + 2 * 4) / 5) = sqrt(2.6)
    assert metrics.cohens_d([1, 2, 3, 4], [2, 4, 6]) == pytest.approx(-1.5 / np.sqrt(2.6), rel=1e-12)
    assert metrics.cohens_d([2, 4, 6], [1, 2, 3, 4]) == pytest.approx(1.5 / np.sqrt(2.6), rel=1e-12)


def test_cohens_d_refuses_small_groups_and_zero_variance():
    with pytest.raises(ValueError, match="real: Cohen's d needs at least 3"):
        metrics.cohens_d([1.0, 2.0, 3.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="zero variance"):
        metrics.cohens_d([2.0, 2.0, 2.0], [5.0, 5.0, 5.0, 5.0])
    with pytest.raises(ValueError, match="generated: 1 NaN"):
        metrics.cohens_d([1.0, np.nan, 3.0], [1.0, 2.0, 3.0])


def test_bootstrap_cohens_d_reports_abs_d_inside_its_interval():
    rng = np.random.default_rng(7)
    generated, real = rng.normal(0.5, 1.0, 60), rng.normal(0.0, 1.0, 80)
    interval = metrics.bootstrap_cohens_d(generated, real, replicates=500)
    assert interval.value == pytest.approx(abs(metrics.cohens_d(generated, real)))
    assert interval.contains(interval.value) and interval.low > 0
    signed = metrics.bootstrap_cohens_d(real, generated, replicates=500, absolute=False)
    assert signed.value < 0 and signed.high < 0


def test_bootstrap_mean_of_clustered_values():
    values = np.array([0.9, 0.9, 0.9, 0.5, 0.5, 0.5])
    interval = metrics.bootstrap_mean(values, clusters=[0, 0, 0, 1, 1, 1], replicates=300)
    assert interval.value == pytest.approx(0.7)
    # two clusters: every replicate's mean is 0.5, 0.7 or 0.9
    assert interval.low == pytest.approx(0.5) and interval.high == pytest.approx(0.9)
    constant = metrics.bootstrap_mean(np.full(5, 0.8), replicates=50)
    assert constant.low == pytest.approx(0.8) and constant.high == pytest.approx(0.8)


# ------------------------------------------------------------------------------------------------- memorization


def test_nearest_neighbour_distances_match_brute_force():
    rng = np.random.default_rng(8)
    queries, reference = rng.normal(size=(7, 2, 3, 2)), rng.normal(size=(11, 2, 3, 2))
    brute = np.linalg.norm(queries.reshape(7, 1, -1) - reference.reshape(1, 11, -1), axis=-1).min(1)
    np.testing.assert_allclose(metrics.nearest_neighbour_distances(queries, reference, chunk=3), brute, rtol=1e-10)


def test_memorization_ratio_flags_copies_of_the_training_set():
    rng = np.random.default_rng(9)
    training, held_out = rng.normal(size=(40, 50)), rng.normal(size=(20, 50))
    copies = training[:20] + 0.01 * rng.normal(size=(20, 50))
    fresh = rng.normal(size=(20, 50))
    assert metrics.memorization(copies, held_out, training).ratio < 0.05
    assert metrics.memorization(fresh, held_out, training).ratio == pytest.approx(1.0, abs=0.15)
    with pytest.raises(ValueError, match="not held out"):
        metrics.memorization(fresh, training[:5], training)
