"""Paper 17's reconstruction metrics on hand-computed cases and against scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from neurips26.gplvm_assvi.metrics import coverage, mixture_moments, nlpd, rmse


def test_one_gaussian_gives_the_textbook_values():
    means, variances = np.array([[[0.0, 1.0]]]), np.array([[[1.0, 4.0]]])
    truth, score = np.array([[1.0, 1.0]]), np.array([[True, True]])
    assert rmse(means, truth, score) == pytest.approx(np.sqrt(0.5))
    expected = -(norm.logpdf(1.0, 0.0, 1.0) + norm.logpdf(1.0, 1.0, 2.0)) / 2
    assert nlpd(means, variances, truth, score) == pytest.approx(expected)
    assert coverage(means, variances, truth, score) == 1.0
    assert coverage(means, variances, np.array([[1.95, 1.0]]), score) == 1.0  # inside N(0, 1)'s +-1.960
    assert coverage(means, variances, np.array([[1.97, 1.0]]), score) == 0.5


def test_a_mixture_scores_by_logsumexp_and_its_interval_has_the_declared_mass():
    rng = np.random.default_rng(0)
    means, variances = rng.normal(size=(8, 50, 3)), rng.uniform(0.2, 1.0, size=(8, 50, 3))
    draw = rng.integers(0, 8, size=(50, 3))
    idx = np.indices((50, 3))
    truth = rng.normal(means[draw, idx[0], idx[1]], np.sqrt(variances[draw, idx[0], idx[1]]))
    score = np.ones_like(truth, dtype=bool)
    dens = np.mean([norm.pdf(truth, means[s], np.sqrt(variances[s])) for s in range(8)], axis=0)
    assert nlpd(means, variances, truth, score) == pytest.approx(-np.log(dens).mean())
    assert 0.85 < coverage(means, variances, truth, score) <= 1.0  # 150 draws from the predictive itself
    mean, var = mixture_moments(means, variances)
    assert np.allclose(mean, means.mean(0)) and (var >= variances.min(0) - 1e-12).all()


def test_only_scored_entries_count_and_bad_masks_are_refused():
    means = np.array([[[0.0, 100.0]]])
    truth, score = np.array([[0.0, np.nan]]), np.array([[True, False]])
    assert rmse(means, truth, score) == 0.0
    with pytest.raises(ValueError, match="no true value"):
        rmse(means, truth, np.array([[True, True]]))
    with pytest.raises(ValueError, match="does not match"):
        rmse(means, truth, np.array([True, False]))


def test_the_breadth_of_q_u_is_its_predictive_variance_relative_to_the_noise():
    from neurips26.gplvm_assvi.metrics import qu_breadth

    a = np.eye(3)[:2]  # two points, each at one inducing input
    chol = np.stack([0.2 * np.eye(3), 0.4 * np.eye(3)])  # two outputs, S_d = c_d^2 I
    assert np.isclose(qu_breadth(a, chol, noise=0.04), (0.04 + 0.16) / 2 / 0.04)
    assert qu_breadth(a, np.zeros_like(chol), noise=0.04) == 0.0  # a point mass adds nothing
    with pytest.raises(ValueError, match="noise variance must be positive"):
        qu_breadth(a, chol, noise=0.0)
