"""Paper 13 (spectral_zo) data: the synthetic teacher-student inputs have the covariance spectrum i^(-alpha) they
promise (log-log slope of the empirical eigenvalues about -alpha), the teacher is applied to those inputs, draws
are seeded, and scikit-learn's digits come as float32 in [0, 1] with a stratified seeded split."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.spectral_zo.alignment import loglog_fit
from neurips26.spectral_zo.data import (
    digits01,
    empirical_spectrum,
    power_law_spectrum,
    random_orthogonal,
    teacher_student,
)


def test_power_law_spectrum_is_i_to_minus_alpha():
    np.testing.assert_allclose(power_law_spectrum(4, 2.0), [1.0, 1 / 4, 1 / 9, 1 / 16])
    np.testing.assert_array_equal(power_law_spectrum(3, 0.0), np.ones(3))


def test_random_orthogonal_is_orthogonal():
    q = random_orthogonal(16, np.random.default_rng(0))
    np.testing.assert_allclose(q @ q.T, np.eye(16), atol=1e-12)


@pytest.mark.parametrize("alpha", [0.5, 1.0, 2.0])
def test_empirical_spectrum_slope_is_minus_alpha(alpha):
    task = teacher_student(dim=32, alpha=alpha, n_train=6000, n_test=10, seed=1)
    eig = empirical_spectrum(task.data.x_train)
    fit = loglog_fit(np.arange(1, 33), eig)
    assert fit.slope == pytest.approx(-alpha, abs=0.1)
    # and the covariance is the promised one in the random basis, not in the coordinate axes
    cov = np.cov(task.data.x_train.astype(np.float64), rowvar=False)
    population = task.basis.T @ np.diag(task.spectrum) @ task.basis
    assert np.abs(cov - population).max() < 0.1


def test_isotropic_case_has_flat_spectrum():
    task = teacher_student(dim=16, alpha=0.0, n_train=4000, n_test=10, seed=2)
    eig = empirical_spectrum(task.data.x_train)
    assert eig.max() / eig.min() < 1.4
    assert abs(loglog_fit(np.arange(1, 17), eig).slope) < 0.1


def test_linear_teacher_without_noise_is_an_exact_linear_map_of_the_inputs():
    task = teacher_student(dim=8, alpha=1.0, n_train=200, n_test=50, teacher="linear", n_outputs=2, seed=3)
    d = task.data
    x = np.concatenate([d.x_train, d.x_test]).astype(np.float64)
    y = np.concatenate([d.y_train, d.y_test]).astype(np.float64)
    design = np.hstack([x, np.ones((len(x), 1))])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    assert np.abs(design @ coef - y).max() < 1e-4
    np.testing.assert_allclose(y.std(axis=0), 1.0, atol=1e-5)  # targets scaled to unit variance
    np.testing.assert_allclose(y.mean(axis=0), 0.0, atol=1e-5)


def test_mlp_teacher_is_not_linear_and_noise_is_added():
    clean = teacher_student(dim=8, alpha=0.0, n_train=500, n_test=10, teacher="mlp", hidden=16, seed=4)
    x = np.hstack([clean.data.x_train, np.ones((500, 1))]).astype(np.float64)
    coef, *_ = np.linalg.lstsq(x, clean.data.y_train, rcond=None)
    assert np.abs(x @ coef - clean.data.y_train).max() > 1e-2
    noisy = teacher_student(dim=8, alpha=0.0, n_train=500, n_test=10, teacher="mlp", hidden=16, noise=0.5, seed=4)
    np.testing.assert_array_equal(noisy.data.x_train, clean.data.x_train)
    assert np.std(noisy.data.y_train - clean.data.y_train) == pytest.approx(0.5, rel=0.15)


def test_classification_labels_shapes_and_seeding():
    task = teacher_student(dim=12, n_train=300, n_test=100, task="classification", n_outputs=4, seed=5)
    d = task.data
    assert d.x_train.shape == (300, 12) and d.x_test.shape == (100, 12)
    assert d.x_train.dtype == np.float32 and d.y_train.dtype == np.int64 and d.y_test.shape == (100,)
    assert set(np.unique(d.y_train)) <= set(range(4)) and len(np.unique(d.y_train)) >= 2
    again = teacher_student(dim=12, n_train=300, n_test=100, task="classification", n_outputs=4, seed=5)
    np.testing.assert_array_equal(again.data.x_test, d.x_test)
    np.testing.assert_array_equal(again.data.y_train, d.y_train)
    other = teacher_student(dim=12, n_train=300, n_test=100, task="classification", n_outputs=4, seed=6)
    assert not np.array_equal(other.data.x_train, d.x_train)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"teacher": "cnn"}, "unknown teacher 'cnn'"),
        ({"task": "ranking"}, "unknown task 'ranking'"),
        ({"alpha": -1.0}, "alpha=-1.0"),
        ({"dim": 0}, "dim=0"),
        ({"task": "classification", "n_outputs": 1}, "n_outputs=1"),
        ({"noise": -0.1}, "noise=-0.1"),
    ],
)
def test_teacher_student_rejects_bad_settings(kwargs, message):
    with pytest.raises(ValueError, match=message):
        teacher_student(n_train=10, n_test=10, **kwargs)


def test_digits01_is_float_in_unit_interval_with_stratified_seeded_split():
    split = digits01(seed=0)
    assert split.x_train.shape == (1437, 64) and split.x_test.shape == (360, 64)
    assert split.x_train.dtype == np.float32 and split.y_train.dtype == np.int64
    both = np.concatenate([split.x_train, split.x_test])
    assert both.min() == 0.0 and both.max() == 1.0
    labels = np.concatenate([split.y_train, split.y_test])
    expected = np.bincount(labels) * 360 / len(labels)
    assert np.abs(np.bincount(split.y_test, minlength=10) - expected).max() <= 1.0  # stratified
    again = digits01(seed=0)
    np.testing.assert_array_equal(again.x_test, split.x_test)
    assert not np.array_equal(digits01(seed=1).y_test, split.y_test)


def test_digits01_images_for_convolutional_networks():
    split = digits01(seed=0, test_fraction=0.5, images=True)
    assert split.x_train.shape[1:] == (1, 8, 8) and len(split.x_train) + len(split.x_test) == 1797
    with pytest.raises(ValueError, match="test_fraction=1.0"):
        digits01(test_fraction=1.0)
