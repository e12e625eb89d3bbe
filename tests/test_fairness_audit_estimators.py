"""Paper 06: the CE and plug-in mutual-information estimators against closed forms (independence, copies, a Gaussian
mixture by quadrature, Miller-Madow by hand), the data-processing inequality, sklearn's logistic regression, and
their input checks."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats
from sklearn.linear_model import LogisticRegression

from neurips26.fairness_audit.cross_entropy import fit_logistic, spline_features, stratified_folds
from neurips26.fairness_audit.entropies import miller_madow_entropy
from neurips26.fairness_audit.estimators import (
    ESTIMATORS,
    NEG_TOL,
    bayes_scores,
    clip_estimate,
    conditional_mutual_information,
    mutual_information,
)
from neurips26.fairness_audit.plugin import joint_code, plugin_mutual_information, quantile_bins

ESTIMATOR_NAMES = sorted(ESTIMATORS)


def binary_entropy(p: float) -> float:
    return float(-(p * np.log(p) + (1 - p) * np.log(1 - p)))


def gaussian_mixture_mi(shift: float) -> float:
    """I(X; A) for A ~ Bern(1/2), X | A ~ N(shift * A, 1): H(X) by quadrature minus the Gaussian entropy."""

    def minus_p_log_p(v):
        density = 0.5 * stats.norm.pdf(v) + 0.5 * stats.norm.pdf(v - shift)
        return -density * np.log(density)

    h_x = integrate.quad(minus_p_log_p, -12, 12 + shift)[0]
    return h_x - 0.5 * np.log(2 * np.pi * np.e)


@pytest.mark.parametrize("estimator", ESTIMATOR_NAMES)
def test_independent_data_gives_about_zero(estimator):
    rng = np.random.default_rng(0)
    n = 2000
    x, a, y = rng.normal(size=(n, 2)), rng.integers(0, 2, n), rng.integers(0, 2, n)
    mi = mutual_information(x, a, estimator, seed=1)
    cmi = conditional_mutual_information(x, a, y, estimator, seed=1)
    assert abs(mi.raw) < 0.01 and abs(cmi.raw) < 0.02, (mi, cmi)
    assert mi.value <= 0.01 and cmi.value <= 0.02


@pytest.mark.parametrize("estimator", ESTIMATOR_NAMES)
@pytest.mark.parametrize("p", [0.5, 0.3])
def test_copy_of_a_binary_variable_gives_its_entropy(estimator, p):
    rng = np.random.default_rng(1)
    t = (rng.random(3000) < p).astype(int)
    h = binary_entropy(t.mean())
    assert mutual_information(t[:, None].astype(float), t, estimator).value == pytest.approx(h, abs=0.01)


def test_ce_recovers_the_mutual_information_of_a_gaussian_mixture():
    rng = np.random.default_rng(2)
    n, shift = 4000, 1.0
    a = rng.integers(0, 2, n)
    x = (rng.normal(size=n) + shift * a)[:, None]
    truth = gaussian_mixture_mi(shift)
    assert truth == pytest.approx(0.1114, abs=1e-3)
    assert mutual_information(x, a, "ce").value == pytest.approx(truth, abs=0.015)
    # a strictly monotone transform of X carries the same information (the splines follow the quantiles)
    assert mutual_information(np.exp(x), a, "ce").value == pytest.approx(truth, abs=0.015)


@pytest.mark.parametrize("estimator", ESTIMATOR_NAMES)
def test_data_processing_inequality_for_a_function_of_x(estimator):
    rng = np.random.default_rng(3)
    n = 3000
    a = rng.integers(0, 2, n)
    x = rng.normal(size=n) + 1.2 * a
    full = mutual_information(x[:, None], a, estimator, seed=0).value
    for f_x in ((x > 0.6).astype(float), np.abs(x - 0.6), np.round(x)):
        assert mutual_information(f_x[:, None], a, estimator, seed=0).value <= full + 0.01
    assert full > 0.1


@pytest.mark.parametrize("estimator", ESTIMATOR_NAMES)
def test_conditional_mi_vanishes_when_x_depends_on_a_only_through_y(estimator):
    rng = np.random.default_rng(4)
    n = 4000
    a = rng.integers(0, 2, n)
    y = (rng.random(n) < 0.3 + 0.4 * a).astype(int)
    through_y = np.stack([1.5 * y + rng.normal(size=n), rng.normal(size=n)], axis=1)
    direct = through_y + 1.0 * a[:, None]
    assert conditional_mutual_information(through_y, a, y, estimator).value <= 0.01
    assert mutual_information(through_y, a, estimator).value > 0.02  # yet X and A are dependent
    assert conditional_mutual_information(direct, a, y, estimator).value > 0.1


def test_empty_feature_block_gives_exactly_zero():
    rng = np.random.default_rng(5)
    a, y = rng.integers(0, 2, 200), rng.integers(0, 2, 200)
    for estimator in ESTIMATOR_NAMES:
        assert mutual_information(np.empty((200, 0)), a, estimator) == clip_estimate(0.0)
        assert conditional_mutual_information(np.empty((200, 0)), a, y, estimator).raw == 0.0


def test_batched_newton_matches_sklearn_logistic_regression():
    rng = np.random.default_rng(6)
    n = 600
    x = rng.normal(size=(n, 3))
    t = (x[:, 0] - 0.5 * x[:, 1] ** 2 + rng.normal(size=n) > 0).astype(int)
    features = spline_features(x)
    folds = stratified_folds(t, 3, seed=0)
    train = folds[:, None] != np.arange(3)[None, :]
    for C in (1.0, 0.05):
        weights = fit_logistic(features, t, train, C=C, tol=1e-10)
        for j in range(3):
            ref = LogisticRegression(C=C, tol=1e-10, max_iter=10_000).fit(features[train[:, j]], t[train[:, j]])
            np.testing.assert_allclose(weights[:-1, j], ref.coef_[0], atol=1e-5)
            assert weights[-1, j] == pytest.approx(ref.intercept_[0], abs=1e-5)


def test_stratified_folds_are_balanced_and_seeded():
    strata = np.repeat([0, 1, 2], [53, 20, 7])
    folds = stratified_folds(strata, 5, seed=3)
    for s in range(3):
        counts = np.bincount(folds[strata == s], minlength=5)
        assert counts.max() - counts.min() <= 1
    np.testing.assert_array_equal(folds, stratified_folds(strata, 5, seed=3))
    assert not np.array_equal(folds, stratified_folds(strata, 5, seed=4))


def test_clip_estimate_clips_only_within_tolerance():
    assert clip_estimate(0.2) == clip_estimate(0.2, tol=0.0)
    inside = clip_estimate(-0.5 * NEG_TOL)
    assert inside.value == 0.0 and inside.clipped and not inside.negative and inside.raw < 0
    below = clip_estimate(-2 * NEG_TOL)
    assert below.value == below.raw == -2 * NEG_TOL and below.negative and not below.clipped
    with pytest.raises(ValueError, match="tol"):
        clip_estimate(0.1, tol=-1)


def test_miller_madow_entropy_by_hand():
    counts = np.array([5, 3, 2, 0])
    plugin = -(0.5 * np.log(0.5) + 0.3 * np.log(0.3) + 0.2 * np.log(0.2))
    assert miller_madow_entropy(counts) == pytest.approx(plugin + 2 / 20)


def test_plugin_bins_and_shared_bins_make_a_copy_change_nothing():
    rng = np.random.default_rng(7)
    n = 1500
    x = rng.normal(size=(n, 3))
    bins = quantile_bins(x)
    counts = np.bincount(bins[:, 0])
    assert len(counts) == 8 and np.ptp(counts) <= 1  # equal-frequency bins
    a = (x[:, 0] + rng.normal(size=n) > 0).astype(int)
    for cols in ([0], [0, 1], [0, 1, 2]):
        with_copy = np.concatenate([bins[:, cols], bins[:, [0]]], axis=1)
        assert plugin_mutual_information(joint_code(with_copy, seed=0), a) == plugin_mutual_information(
            joint_code(bins[:, cols], seed=0), a
        )
    assert len(np.unique(joint_code(bins, seed=0))) == 32  # three columns: k-means with 32 clusters


def test_bayes_scores_are_constant_without_signal_and_informative_with_it():
    rng = np.random.default_rng(8)
    n = 1000
    x = rng.normal(size=(n, 2))
    noise_y = rng.integers(0, 2, n)
    assert np.ptp(bayes_scores(x, noise_y)) == 0.0
    y = (x[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    scores = bayes_scores(x, y)
    assert np.corrcoef(scores, x[:, 0])[0, 1] > 0.9 and 0 < scores.min() < scores.max() < 1


@pytest.mark.parametrize(
    "bad, match",
    [
        (dict(a=np.r_[np.zeros(50), 2 * np.ones(50)]), "a must be binary"),
        (dict(a=np.zeros(99)), "a has 99 rows"),
        (dict(a=np.r_[np.zeros(98), np.ones(2)]), r"a has class counts \[98, 2\]"),
        (dict(x=np.full((100, 1), np.nan)), "NaN"),
        (dict(x=np.zeros((100, 2, 2))), "x must be"),
    ],
)
def test_bad_inputs_name_the_input(bad, match):
    rng = np.random.default_rng(9)
    args = dict(x=rng.normal(size=(100, 1)), a=rng.integers(0, 2, 100))
    args.update(bad)
    with pytest.raises(ValueError, match=match):
        mutual_information(args["x"], args["a"])
    with pytest.raises(ValueError, match="unknown estimator 'knn'"):
        mutual_information(rng.normal(size=(100, 1)), rng.integers(0, 2, 100), "knn")
