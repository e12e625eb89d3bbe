"""Paper 13 (spectral_zo) alignment metrics on hand-computed cases: cosines of orthogonal, parallel and
antiparallel vectors, per-layer versus whole-network cosine, bias and variance of draws with a known mean and
spread, z-scores, and the log-log slope of exact power laws (and its standard error on noisy ones)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neurips26.spectral_zo.alignment import (
    OVERALL,
    bias_variance,
    coordinate_z_scores,
    cosine,
    dimension_scaling,
    layer_alignment,
    loglog_fit,
)


def test_cosine_orthogonal_parallel_antiparallel_and_zero_estimate():
    true = np.array([1.0, 0.0, 0.0])
    assert cosine([0.0, 2.0, 0.0], true) == 0.0
    assert cosine([3.0, 0.0, 0.0], true) == pytest.approx(1.0)
    assert cosine([-0.5, 0.0, 0.0], true) == pytest.approx(-1.0)
    assert cosine([1.0, 1.0, 0.0], true) == pytest.approx(1 / np.sqrt(2))
    assert cosine([0.0, 0.0, 0.0], true) == 0.0
    np.testing.assert_allclose(cosine(np.array([[1.0, 0, 0], [0, 1.0, 0], [1.0, 1.0, 0]]), true), [1, 0, 2**-0.5])
    with pytest.raises(ValueError, match="true gradient is zero"):
        cosine([1.0, 0.0], [0.0, 0.0])
    with pytest.raises(ValueError, match="does not end in"):
        cosine([1.0, 0.0], [1.0, 0.0, 0.0])


def test_layer_alignment_per_layer_and_overall_is_the_concatenated_cosine():
    true = {"w": np.array([[1.0, 0.0], [0.0, 0.0]]), "b": np.array([0.0, 1.0])}
    # w parallel (cosine 1), b orthogonal (cosine 0): overall = <(1,0,0,0,1,0),(1,0,0,0,0,1)> / (sqrt2 sqrt2) = 1/2
    estimate = {"w": torch.tensor([[2.0, 0.0], [0.0, 0.0]]), "b": torch.tensor([2.0, 0.0])}
    out = layer_alignment(estimate, true)
    assert out["w"] == pytest.approx(1.0) and out["b"] == pytest.approx(0.0)
    assert out[OVERALL] == pytest.approx(0.5)  # not the mean of the layers' cosines weighted by layer size
    # a leading draw axis gives arrays over the draws
    draws = {"w": np.stack([true["w"], -true["w"]]), "b": np.stack([true["b"], true["b"]])}
    many = layer_alignment(draws, true)
    np.testing.assert_allclose(many["w"], [1.0, -1.0])
    np.testing.assert_allclose(many[OVERALL], [1.0, 0.0])


def test_layer_alignment_rejects_mismatched_layers():
    true = {"w": np.ones(3), "b": np.ones(2)}
    with pytest.raises(ValueError, match=r"extra and \['b'\] missing"):
        layer_alignment({"w": np.ones(3)}, true)
    with pytest.raises(ValueError, match="layer 'b'"):
        layer_alignment({"w": np.ones(3), "b": np.ones(3)}, true)
    with pytest.raises(ValueError, match="layer 'b': the true gradient is zero"):
        layer_alignment({"w": np.ones(3), "b": np.ones(2)}, {"w": np.ones(3), "b": np.zeros(2)})
    with pytest.raises(ValueError, match="leading"):
        layer_alignment({"w": np.ones((2, 3)), "b": np.ones((3, 2))}, true)


def test_bias_variance_hand_computed():
    true = np.array([2.0, 0.0])
    # draws with mean (3, 0): bias ||(1, 0)|| / 2 = 0.5; deviations (+-1, +-1): sum of squares 2 per draw
    draws = np.array([[2.0, 1.0], [4.0, -1.0], [2.0, -1.0], [4.0, 1.0]])
    bv = bias_variance(draws, true)
    assert bv.bias == pytest.approx(0.5)
    assert bv.variance == pytest.approx(4 * 2 / 3 / 4)  # ddof 1: 8 / 3, over ||true||^2 = 4
    assert bias_variance(draws, true, ddof=0).variance == pytest.approx(0.5)
    assert bv.bias_floor == pytest.approx(np.sqrt(bv.variance / 4))
    assert bv.bias_sq_debiased == pytest.approx(0.25 - bv.variance / 4)
    # ||g - true||^2 per row: 1, 5, 1, 5, mean 3, over ||true||^2 = 4
    assert bv.relative_mse == pytest.approx(3 / 4)
    assert bv.mean_cosine == pytest.approx(np.mean([2 / np.sqrt(5), 4 / np.sqrt(17), 2 / np.sqrt(5), 4 / np.sqrt(17)]))
    assert bv.n_draws == 4


def test_bias_variance_of_an_unbiased_gaussian_estimator():
    rng = np.random.default_rng(0)
    true = np.array([1.0, -2.0, 0.5, 0.0])
    sigma = 0.7
    draws = true + sigma * rng.standard_normal((4000, 4))
    bv = bias_variance(draws, true)
    assert bv.variance == pytest.approx(4 * sigma**2 / (true @ true), rel=0.05)
    assert bv.bias < 4 * bv.bias_floor
    assert np.abs(coordinate_z_scores(draws, true)).max() < 4
    shifted = coordinate_z_scores(draws + np.array([0.2, 0, 0, 0]), true)
    assert shifted[0] > 10 and np.abs(shifted[1:]).max() < 4


def test_bias_variance_and_z_scores_reject_bad_draws():
    with pytest.raises(ValueError, match="true gradient is zero"):
        bias_variance(np.ones((3, 2)), np.zeros(2))
    with pytest.raises(ValueError, match="draws must be"):
        bias_variance(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="too few"):
        bias_variance(np.ones((1, 2)), np.ones(2))
    with pytest.raises(ValueError, match="non-finite"):
        bias_variance(np.array([[1.0, np.nan], [1.0, 1.0]]), np.ones(2))
    np.testing.assert_array_equal(coordinate_z_scores(np.ones((3, 2)), np.array([1.0, 0.0])), [0.0, np.inf])


def test_dimension_scaling_recovers_exact_power_laws():
    n_params = np.array([10.0, 100.0, 1000.0, 10000.0])
    fit = dimension_scaling(n_params, 3.0 * n_params**-0.5)
    assert fit.slope == pytest.approx(-0.5) and fit.stderr == pytest.approx(0.0, abs=1e-12)
    assert fit.intercept == pytest.approx(np.log(3.0)) and fit.n == 4
    assert dimension_scaling(n_params, np.full(4, 0.2)).slope == pytest.approx(0.0, abs=1e-12)


def test_loglog_fit_standard_error_matches_the_textbook_formula():
    x = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    noise = np.array([0.1, -0.05, 0.0, 0.08, -0.12])
    y = x**-1.0 * np.exp(noise)
    fit = loglog_fit(x, y)
    lx, ly = np.log(x), np.log(y)
    slope = np.polyfit(lx, ly, 1)[0]
    resid = ly - np.polyval(np.polyfit(lx, ly, 1), lx)
    se = np.sqrt(resid @ resid / (len(x) - 2) / ((lx - lx.mean()) ** 2).sum())
    assert fit.slope == pytest.approx(slope) and fit.stderr == pytest.approx(se)


def test_loglog_fit_rejects_non_positive_and_too_few_points():
    with pytest.raises(ValueError, match=r"cosines must be positive.*item 1 is -0.1"):
        dimension_scaling([10, 100, 1000], [0.5, -0.1, 0.2])
    with pytest.raises(ValueError, match=">= 3 points"):
        dimension_scaling([10, 100], [0.5, 0.2])
    with pytest.raises(ValueError, match="distinct n_params"):
        dimension_scaling([10, 10, 10], [0.5, 0.2, 0.1])
    with pytest.raises(ValueError, match="has 3 values"):
        loglog_fit([1, 2, 3], [1, 2])
