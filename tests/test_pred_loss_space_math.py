"""Paper 01 mathematics: the loss space only reweights noise levels, exact conversions, data, FD and effects."""

import numpy as np
import pandas as pd
import pytest
import torch

from neurips26.pred_loss_space import data, effects, evaluation, fd, spaces

SHAPE = (6, 3, 4, 4)


@pytest.fixture
def batch():
    """Random float64 x, eps, output o and t in [0.05, 0.9] (inside the clamps), with z_t."""
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(SHAPE, generator=gen, dtype=torch.float64)
    eps = torch.randn(SHAPE, generator=gen, dtype=torch.float64)
    o = torch.randn(SHAPE, generator=gen, dtype=torch.float64)
    t = 0.05 + 0.85 * torch.rand(SHAPE[0], generator=gen, dtype=torch.float64)
    return x, eps, o, t, spaces.interpolate(x, eps, t)


def per_sample_grad(o, x, eps, z, t, pred, loss, weight=None):
    """d loss_i / d o_i for every sample i (samples are independent, so the gradient of the sum suffices)."""
    o = o.clone().requires_grad_(True)
    per_sample = spaces.per_sample_loss(o, x, eps, z, t, pred, loss)
    if weight is not None:
        per_sample = per_sample * weight
    (grad,) = torch.autograd.grad(per_sample.sum(), o)
    return grad


# --------------------------------------------------------------------------- loss space = reweighting


@pytest.mark.parametrize("pred", spaces.SPACES)
@pytest.mark.parametrize("loss", spaces.SPACES)
def test_loss_space_is_a_per_t_weight_of_the_x_loss(batch, pred, loss):
    x, eps, o, t, z = batch
    loss_l = spaces.per_sample_loss(o, x, eps, z, t, pred, loss)
    loss_x = spaces.per_sample_loss(o, x, eps, z, t, pred, "x")
    torch.testing.assert_close(loss_l / loss_x, spaces.loss_weight(loss, t), rtol=1e-10, atol=0)


@pytest.mark.parametrize("pred", spaces.SPACES)
@pytest.mark.parametrize("loss", spaces.SPACES)
def test_per_sample_gradients_are_reweighted_x_gradients(batch, pred, loss):
    x, eps, o, t, z = batch
    grad_l = per_sample_grad(o, x, eps, z, t, pred, loss)
    grad_x = per_sample_grad(o, x, eps, z, t, pred, "x")
    weight = spaces.loss_weight(loss, t).reshape(-1, 1, 1, 1)
    torch.testing.assert_close(grad_l, weight * grad_x, rtol=1e-10, atol=1e-14)


def test_sanity_control_weighted_x_loss_trains_like_eps_loss(batch):
    x, eps, o, t, z = batch
    weighted = per_sample_grad(o, x, eps, z, t, "x", "x", weight=spaces.loss_weight("eps", t))
    eps_loss = per_sample_grad(o, x, eps, z, t, "x", "eps")
    torch.testing.assert_close(weighted, eps_loss, rtol=1e-10, atol=1e-14)


def test_loss_weights_match_the_jit_formulas():
    t = torch.tensor([0.1, 0.5, 0.8], dtype=torch.float64)
    torch.testing.assert_close(spaces.loss_weight("eps", t), t**2 / (1 - t) ** 2)
    torch.testing.assert_close(spaces.loss_weight("v", t), 1 / (1 - t) ** 2)
    torch.testing.assert_close(spaces.loss_weight("x", t), torch.ones_like(t))


# --------------------------------------------------------------------------- conversions


@pytest.mark.parametrize("pred", spaces.SPACES)
def test_converting_the_exact_target_recovers_all_three_quantities(batch, pred):
    x, eps, _, t, z = batch
    truth = spaces.targets(x, eps)
    recovered = spaces.convert(truth[pred], z, t, pred)
    for name in spaces.SPACES:
        torch.testing.assert_close(recovered[name], truth[name], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("pred", spaces.SPACES)
def test_measured_amplification_matches_the_analytic_one(batch, pred):
    _, _, o, t, z = batch
    gen = torch.Generator().manual_seed(1)
    measured_x = spaces.measured_amplification(o, z, t, pred, space="x", generator=gen)
    torch.testing.assert_close(measured_x, spaces.amplification(pred, t), rtol=1e-6, atol=1e-6)
    measured_v = spaces.measured_amplification(o, z, t, pred, space="v", generator=gen)
    torch.testing.assert_close(measured_v, spaces.velocity_amplification(pred, t), rtol=1e-6, atol=1e-6)


def test_check_space_rejects_an_unknown_space():
    with pytest.raises(ValueError, match="noise"):
        spaces.check_space("noise", "prediction space")
    with pytest.raises(ValueError, match="noise"):
        spaces.convert(torch.zeros(2, 3), torch.zeros(2, 3), torch.full((2,), 0.5), "noise")


# --------------------------------------------------------------------------- data


def test_digits16_shapes_range_split_and_determinism():
    x_train, y_train, x_test, y_test = data.digits16(seed=0)
    assert x_train.shape == (1500, 1, 16, 16) and x_test.shape == (297, 1, 16, 16)
    assert y_train.shape == (1500,) and y_test.shape == (297,)
    assert x_train.dtype == np.float32 and x_test.dtype == np.float32
    both = np.concatenate([x_train, x_test])
    assert both.min() >= -1.0 and both.max() <= 1.0
    assert both.min() == -1.0 and both.max() > 0.9  # background is exactly -1, strokes reach near +1
    data.check_images(both, "digits16")
    again = data.digits16(seed=0)
    for first, second in zip((x_train, y_train, x_test, y_test), again):
        np.testing.assert_array_equal(first, second)
    other = data.digits16(seed=1)
    assert not np.array_equal(other[0], x_train)
    assert sorted(np.concatenate([y_train, y_test]).tolist()) == sorted(np.concatenate([other[1], other[3]]).tolist())


@pytest.mark.parametrize("latent", data.TOY_LATENTS)
def test_toy_manifold_is_a_2d_set_embedded_orthonormally(latent):
    toy = data.toy_manifold(dim=16, n_train=300, n_test=100, seed=3, latent=latent)
    proj = toy["projection"]
    assert toy["x_train"].shape == (300, 16) and toy["x_test"].shape == (100, 16)
    assert toy["x_train"].dtype == np.float32 and proj.shape == (16, 2)
    np.testing.assert_allclose(proj.T @ proj, np.eye(2), atol=1e-12)
    latent_all = np.concatenate([toy["latent_train"], toy["latent_test"]])
    assert np.linalg.norm(latent_all, axis=1).max() <= 0.9 + 1e-12
    np.testing.assert_allclose(toy["x_train"], toy["latent_train"] @ proj.T, atol=1e-6)
    assert data.off_manifold_norm(toy["x_train"], proj).max() < 1e-6
    assert data.off_manifold_norm(np.random.default_rng(0).normal(size=(10, 16)), proj).min() > 0.5
    np.testing.assert_array_equal(data.toy_manifold(16, 300, 100, seed=3, latent=latent)["x_train"], toy["x_train"])


def test_toy_manifold_rejects_an_ambient_dimension_below_the_latent_one():
    with pytest.raises(ValueError, match="dim=1"):
        data.toy_manifold(dim=1, n_train=10, n_test=10)
    with pytest.raises(ValueError, match="latent"):
        data.toy_manifold(dim=4, n_train=10, n_test=10, latent="circles")


def test_check_images_rejects_nan_and_out_of_range():
    good = np.zeros((2, 1, 4, 4), dtype=np.float32)
    data.check_images(good, "fine")
    bad = good.copy()
    bad[0, 0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="my_batch.*NaN"):
        data.check_images(bad, "my_batch")
    bad = good.copy()
    bad[1, 0, 2, 2] = 1.5
    with pytest.raises(ValueError, match="my_batch.*1.5"):
        data.check_images(bad, "my_batch")


# --------------------------------------------------------------------------- FD and sliced W2


def test_fd_of_a_set_with_itself_is_zero():
    a = np.random.default_rng(0).normal(size=(500, 8))
    assert abs(fd.frechet_distance(a, a)) < 1e-8


def test_fd_between_shifted_gaussians_is_the_squared_shift():
    rng = np.random.default_rng(1)
    mu = np.array([1.0, -2.0, 0.5, 0.0])
    a = rng.normal(size=(40000, 4))
    b = rng.normal(size=(40000, 4)) + mu
    assert fd.frechet_distance(a, b) == pytest.approx(mu @ mu, abs=0.05)


def test_fd_from_stats_matches_the_closed_form():
    dim = 5
    mu1, mu2 = np.zeros(dim), np.full(dim, 0.5)
    # tr(I + 4I - 2 (4I)^{1/2}) = dim (1 + 4 - 4)
    assert fd.frechet_from_stats(mu1, np.eye(dim), mu2, 4 * np.eye(dim)) == pytest.approx(dim * 0.25 + dim)
    singular = np.diag([1.0, 0.0, 0.0, 0.0, 0.0])
    value = fd.frechet_from_stats(mu1, singular, mu1, singular)
    assert np.isfinite(value) and abs(value) < 1e-4


def test_fd_rejects_too_few_samples():
    rng = np.random.default_rng(2)
    with pytest.raises(ValueError, match="needs at least 16 samples"):
        fd.frechet_distance(rng.normal(size=(15, 8)), rng.normal(size=(100, 8)))
    with pytest.raises(ValueError, match="dimensions differ"):
        fd.frechet_distance(rng.normal(size=(100, 8)), rng.normal(size=(100, 7)))


def test_gaussian_stats_are_float64_mean_and_covariance():
    feats = np.random.default_rng(3).normal(size=(50, 3)).astype(np.float32)
    mu, sigma = fd.gaussian_stats(feats)
    assert mu.dtype == np.float64 and sigma.shape == (3, 3)
    np.testing.assert_allclose(sigma, np.cov(feats.astype(np.float64), rowvar=False))


def grid_frame(value_of, seeds=(0,)):
    rows = [
        {"pred": p, "loss": loss, "seed": s, "value": value_of(p, loss, s)}
        for p in spaces.SPACES
        for loss in spaces.SPACES
        for s in seeds
    ]
    return pd.DataFrame(rows)


def test_variance_shares_attribute_a_pred_only_effect_to_pred():
    level = {"x": 0.0, "eps": 3.0, "v": 1.0}
    shares = effects.variance_shares(grid_frame(lambda p, loss, s: level[p]), "value")
    assert shares["pred"] == pytest.approx(1.0) and shares["loss"] == pytest.approx(0.0, abs=1e-12)
    assert sum(shares.values()) == pytest.approx(1.0)


def test_variance_shares_average_seeds_and_split_an_additive_table():
    pred_level = {"x": 0.0, "eps": 2.0, "v": 1.0}
    loss_level = {"x": 0.0, "eps": 1.0, "v": -1.0}
    # seeds differ by +-5 around the cell value: averaging first removes them entirely
    frame = grid_frame(lambda p, loss, s: pred_level[p] + loss_level[loss] + (5.0 if s else -5.0), seeds=(0, 1))
    shares = effects.variance_shares(frame, "value")
    # SS_pred = 3 * (1 + 1 + 0) = 6, SS_loss = 3 * (0 + 1 + 1) = 6, no interaction
    assert shares == pytest.approx({"pred": 0.5, "loss": 0.5, "residual": 0.0}, abs=1e-12)


def test_variance_shares_reject_an_incomplete_grid():
    frame = grid_frame(lambda p, loss, s: 1.0 if p == "x" else 2.0)
    frame = frame[~((frame.pred == "eps") & (frame.loss == "v"))]
    with pytest.raises(ValueError, match=r"\(eps, v\)"):
        effects.variance_shares(frame, "value")


def test_variance_shares_of_a_sub_matrix_use_the_spaces_present():
    # smoke scale trains preds {x, eps} x losses {eps, v}: a 2x2 additive table
    frame = grid_frame(lambda p, loss, s: (2.0 if p == "eps" else 0.0) + (1.0 if loss == "v" else 0.0))
    frame = frame[frame.pred.isin(["x", "eps"]) & frame.loss.isin(["eps", "v"])]
    table = effects.cell_means(frame, "value")
    assert list(table.index) == ["x", "eps"] and list(table.columns) == ["eps", "v"]
    # SS_pred = 2 * (1 + 1) = 4, SS_loss = 2 * (0.25 + 0.25) = 1
    assert effects.variance_shares(frame, "value") == pytest.approx({"pred": 0.8, "loss": 0.2, "residual": 0.0})


def test_inception_fid_scores_clipped_finite_samples_against_reference_stats():
    rng = np.random.default_rng(0)
    projection = rng.normal(size=(16, 4))

    def features(images):  # a stand-in for Inception-v3: any fixed map of the images
        assert images.min() >= -1 and images.max() <= 1  # samples are clipped as they are displayed
        return images.reshape(len(images), -1) @ projection

    train = rng.uniform(-1, 1, size=(400, 1, 4, 4))
    mu, sigma = fd.gaussian_stats(features(train))
    assert evaluation.inception_fid(train, features, mu, sigma) == pytest.approx(0.0, abs=1e-6)
    shifted = np.clip(train + 0.5, -1, 1)
    assert evaluation.inception_fid(shifted, features, mu, sigma) > 0.1
    broken = train.copy()
    broken[3:] = np.nan  # 3 finite samples are too few for 4-d features
    assert np.isnan(evaluation.inception_fid(broken, features, mu, sigma))
