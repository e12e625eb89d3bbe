"""Paper 04 (BIRD) data and trained denoisers: the Toeplitz field, subsets, normalisation, networks, training."""

import importlib.util
import logging
import re

import numpy as np
import pytest
import torch

from neurips26.bird import data, loaders, networks, training

SHAPE = (4, 1, 16, 16)


@pytest.fixture(autouse=True)
def one_thread():
    """Tiny models run fastest on one thread (as the workflow's jobs do); restore the setting afterwards."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def same_state(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


# --------------------------------------------------------------------------- Toeplitz field


def test_toeplitz_covariance_is_the_authors_power_law():
    cov = data.toeplitz_covariance(size=8, alpha=1.7, sigma2=2.0)
    # pixel 0 is (0, 0); pixel 8 * 3 + 4 is (3, 4) at distance 5; pixel 1 is a neighbour (r = 1)
    assert cov[0, 0] == pytest.approx(2.0 + data.TOEPLITZ_JITTER)
    assert cov[0, 8 * 3 + 4] == pytest.approx(2.0 / 5**0.3)
    assert cov[0, 1] == pytest.approx(2.0)  # the clamp r >= 1 gives neighbours the full variance
    np.testing.assert_array_equal(cov, cov.T)


def test_toeplitz_field_covariance_matches_the_specified_one():
    size, alpha = 8, 1.7
    x = data.toeplitz_field(40_000, size=size, alpha=alpha, seed=3).reshape(40_000, -1).astype(np.float64)
    empirical = x.T @ x / len(x)
    factor = data.toeplitz_factor(size, alpha)
    sampled = factor @ factor.T  # the specified covariance with its negative eigenvalues clipped
    assert np.abs(empirical - sampled).max() < 0.05
    specified = data.toeplitz_covariance(size, alpha)
    assert np.abs(empirical - specified).mean() < 0.03
    r = data.pixel_distances(size)
    far = r >= 3  # away from the clamped neighbours the power law holds closely
    assert np.abs(empirical - specified)[far].max() < 0.06
    # the field is stationary with variance ~ sigma2 (clipping raises it by ~5% at alpha = 1.7)
    variances = np.diag(empirical)
    assert np.abs(variances - 1.0).max() < 0.1
    assert abs(x.mean()) < 0.02


def test_toeplitz_field_is_seeded_and_extends_with_n():
    a = data.toeplitz_field(50, seed=7)
    assert a.dtype == np.float32 and a.shape == (50, 1, 16, 16)
    np.testing.assert_array_equal(a, data.toeplitz_field(50, seed=7))
    np.testing.assert_array_equal(a[:20], data.toeplitz_field(20, seed=7))
    assert not np.array_equal(a, data.toeplitz_field(50, seed=8))


def test_toeplitz_field_variance_scales_with_sigma2():
    x = data.toeplitz_field(4000, size=8, sigma2=3.0, seed=0)
    assert np.mean(x**2) == pytest.approx(3.0 * 1.05, rel=0.05)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"alpha": 0.0}, r"alpha must be a finite number in \(0, 2\]"),
        ({"alpha": -1.0}, r"alpha must be a finite number in \(0, 2\]"),
        ({"alpha": 2.5}, r"alpha must be a finite number in \(0, 2\]"),
        ({"sigma2": 0.0}, "sigma2"),
        ({"n": 0}, "at least one"),
    ],
)
def test_toeplitz_field_rejects_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        data.toeplitz_field(**{"n": 4, "size": 8, **kwargs})


def test_alpha_two_is_the_log_correlated_field():
    cov = data.toeplitz_covariance(size=8, alpha=2.0)
    assert cov[0, 1] == pytest.approx(1.0)
    assert cov[0, 8 * 3 + 4] == pytest.approx(1.0 - np.log(5.0))  # variogram sigma2 log r, decaying covariance


# --------------------------------------------------------------------------- datasets, subsets, normalisation


def test_load_dataset_records_the_normalisation():
    fields = loaders.load_dataset("toeplitz", n_train=512, n_heldout=64, size=8, seed=0)
    assert fields.train.shape == (512, 1, 8, 8) and fields.heldout.shape == (64, 1, 8, 8)
    np.testing.assert_array_equal(fields.train, data.toeplitz_field(576, size=8, seed=0)[:512])
    norm = fields.meta["normalisation"]
    assert norm["kind"] == "field" and norm["marginal_variance"] == pytest.approx(1.05, abs=0.1)
    digits = loaders.load_dataset("digits16", n_train=1000)
    assert digits.train.shape == (1000, 1, 16, 16) and digits.heldout.shape == (797, 1, 16, 16)
    assert digits.meta["normalisation"]["range"] == [-1.0, 1.0]
    assert -1 <= digits.train.min() and digits.train.max() <= 1


def test_load_dataset_rejects_unknown_kinds_and_keys():
    with pytest.raises(ValueError, match="unknown dataset 'celeba'"):
        loaders.load_dataset("celeba")
    with pytest.raises(ValueError, match=r"unknown parameters \['alpah'\]"):
        loaders.load_dataset("toeplitz", alpah=1.7)


def test_check_standardised_rejects_bad_scales():
    rng = np.random.default_rng(0)
    images = rng.uniform(-1, 1, (32, 1, 8, 8)).astype(np.float32)
    assert data.check_standardised(images, "ok")["range"] == [-1.0, 1.0]
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        data.check_standardised(images * 255, "raw pixels")
    broken = images.copy()
    broken[0, 0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        data.check_standardised(broken, "broken")
    fields = data.toeplitz_field(512, size=8)
    data.check_standardised(fields, "field", kind="field")
    with pytest.raises(ValueError, match="marginal variance"):
        data.check_standardised(2 * fields, "field x2", kind="field")
    with pytest.raises(ValueError, match="unknown normalisation kind"):
        data.check_standardised(fields, "field", kind="gaussian")


def test_subset_is_fixed_nested_and_checked():
    train = np.arange(100, dtype=np.float32).reshape(100, 1, 1, 1)
    x, idx = data.subset(train, 16, seed=0)
    np.testing.assert_array_equal(x[:, 0, 0, 0], idx)
    assert len(set(idx.tolist())) == 16
    np.testing.assert_array_equal(idx, data.subset(train, 16, seed=0)[1])
    np.testing.assert_array_equal(idx[:8], data.subset(train, 8, seed=0)[1])
    assert not np.array_equal(idx, data.subset(train, 16, seed=1)[1])
    with pytest.raises(ValueError, match="N=101 .* only 100"):
        data.subset(train, 101, seed=0)
    with pytest.raises(ValueError, match="at least one"):
        data.subset(train, 0, seed=0)


# --------------------------------------------------------------------------- networks


@pytest.mark.parametrize("name", sorted(networks.ARCHS))
def test_networks_map_images_to_eps_of_the_same_shape(name):
    model = networks.build_network(name, {}, channels=1, image_size=16, seed=0)
    print(f"{name}: {networks.count_parameters(model):,} parameters")
    x, t = torch.randn(SHAPE), torch.rand(4)
    out = model(x, t)
    assert out.shape == SHAPE and torch.isfinite(out).all()


@pytest.mark.parametrize("name", sorted(networks.ARCHS))
def test_networks_are_deterministic_given_the_seed(name):
    state = torch.random.get_rng_state()
    a = networks.build_network(name, {}, 1, 16, seed=0).state_dict()
    assert torch.equal(torch.random.get_rng_state(), state)  # the global random state is untouched
    assert same_state(a, networks.build_network(name, {}, 1, 16, seed=0).state_dict())
    assert not same_state(a, networks.build_network(name, {}, 1, 16, seed=1).state_dict())


def test_unet_tiny_is_small_and_follows_the_minimal_unet():
    model = networks.build_network("unet_tiny", {}, 1, 16)
    assert 80_000 < networks.count_parameters(model) < 150_000
    assert not any(
        isinstance(m, (torch.nn.GroupNorm, torch.nn.BatchNorm2d, torch.nn.LayerNorm)) for m in model.modules()
    )
    convs = [m for m in model.modules() if isinstance(m, torch.nn.Conv2d)]
    assert convs and all(m.padding_mode == "zeros" for m in convs)
    # the time embedding changes the output: t is seen
    x = torch.randn(SHAPE)
    assert not torch.allclose(model(x, torch.full((4,), 0.1)), model(x, torch.full((4,), 0.9)))


def test_dit_tiny_starts_at_exactly_zero_by_adaln_zero():
    model = networks.build_network("dit_tiny", {}, 1, 16)
    assert torch.equal(model(torch.randn(SHAPE), torch.rand(4)), torch.zeros(SHAPE))
    # after one step away from zero, the output depends on the input and t
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.01 * torch.randn(p.shape, generator=torch.Generator().manual_seed(p.numel())))
    x = torch.randn(SHAPE)
    assert not torch.allclose(model(x, torch.full((4,), 0.1)), model(x, torch.full((4,), 0.9)))


def test_spec_overrides_defaults_and_unknown_keys_fail():
    wide = networks.build_network("unet_tiny", {"fsizes": [16, 32, 64]}, 3, 16)
    assert wide(torch.randn(2, 3, 16, 16), torch.rand(2)).shape == (2, 3, 16, 16)
    small = networks.build_network("dit_tiny", {"hidden": 32, "depth": 1, "heads": 2, "patch": 4}, 3, 8)
    assert small(torch.randn(2, 3, 8, 8), torch.rand(2)).shape == (2, 3, 8, 8)
    with pytest.raises(ValueError, match="unknown architecture 'vit'"):
        networks.build_network("vit", {}, 1, 16)
    with pytest.raises(ValueError, match=r"unknown keys \['width'\]"):
        networks.build_network("dit_tiny", {"width": 64}, 1, 16)
    with pytest.raises(ValueError, match="divisible"):
        networks.build_network("dit_tiny", {"patch": 3}, 1, 16)


# --------------------------------------------------------------------------- training


def test_cosine_beta_is_the_legacy_schedule():
    t = torch.tensor([0.0, 0.5, 1.0])
    beta = training.cosine_beta(t)
    assert beta[0] == 0
    assert beta[1].item() == pytest.approx(1 - np.cos(0.5 / 1.008 * np.pi / 2) ** 2)
    assert 0.9998 < beta[2].item() < 1  # no +0.008 offset, so beta(1) stays below 1
    ts = training.sample_t(10_000, torch.Generator().manual_seed(0))
    assert 0 < ts.min() and ts.max() < 1
    assert ts.min() == pytest.approx(1e-3) and ts.unique().numel() > 990


def test_cosine_beta_agrees_with_the_schedule_module():
    if importlib.util.find_spec("neurips26.bird.schedule") is None:
        pytest.skip("neurips26.bird.schedule is not written yet")
    from neurips26.bird import schedule

    if not callable(getattr(schedule, "beta", None)):
        pytest.skip("neurips26.bird.schedule has no beta(t) yet")
    t = np.linspace(0.0, 1.0, 101)
    np.testing.assert_allclose(
        schedule.beta(t), training.cosine_beta(torch.as_tensor(t)).numpy(), rtol=1e-12, atol=1e-15
    )


def fields(n: int = 128) -> torch.Tensor:
    return torch.as_tensor(data.toeplitz_field(n, seed=0))


@pytest.mark.parametrize("name", sorted(networks.ARCHS))
def test_training_lowers_the_loss_and_checkpoints_reload(name):
    x = fields()
    model = networks.build_network(name, {}, 1, 16, seed=0)
    before = training.epsilon_loss(model, x, seed=1)
    log, by_seed = training.train_epsilon(
        [model], x, epochs=2, batch=16, lr=2e-3, seeds=[0], checkpoint_epochs=[0, 1, 2]
    )
    after = training.epsilon_loss(model, x, seed=1)
    assert after < before - 0.02, (before, after)
    assert sorted(by_seed) == [0]
    saved = by_seed[0]
    assert list(log.columns) == ["seed", "epoch", "step", "loss"] and len(log) == 16 and set(log.seed) == {0}
    assert log.epoch.tolist() == [1] * 8 + [2] * 8 and log.step.tolist() == list(range(16))
    assert sorted(saved) == [0, 1, 2]
    assert all(v.device.type == "cpu" for v in saved[1].values())
    fresh = networks.build_network(name, {}, 1, 16, seed=5)
    fresh.load_state_dict(saved[2])
    assert training.epsilon_loss(fresh, x, seed=1) == after
    assert not same_state(saved[0], saved[1])
    assert same_state(saved[2], model.state_dict())


def test_training_is_reproducible_and_the_seed_matters():
    x = fields(64)

    def run(seed):
        model = networks.build_network("dit_tiny", {"depth": 1}, 1, 16, seed=0)
        log, _ = training.train_epsilon([model], x, epochs=2, batch=32, lr=1e-3, seeds=[seed])
        return model.state_dict(), log

    (a, log_a), (b, log_b), (c, _) = run(0), run(0), run(1)
    assert same_state(a, b) and log_a.equals(log_b)
    assert not same_state(a, c)


def resumed_at(caplog) -> list[int]:
    """The steps the loop logged resuming at ("<name>: resuming from checkpoint <path> at step <k> of <n>")."""
    found = (
        re.search(r": resuming from checkpoint .* at step (\d+) of \d+$", r.getMessage())
        for r in caplog.records
        if r.name == "neurips26.loop"
    )
    return [int(m.group(1)) for m in found if m]


def test_training_killed_after_a_checkpoint_resumes_bit_identically(tmp_path, monkeypatch, caplog):
    """A run that dies in the middle of epoch 3 of 4, after the checkpoint of epoch 2, and is started again
    ends with the same weights, log and kept weights as a run that never stopped."""
    from neurips26.common import loop

    x = fields(64)
    settings = loop.LoopSettings(checkpoint=tmp_path / "train.ckpt", fingerprint="job", every_steps=2)

    def model():
        return networks.build_network("dit_tiny", {"depth": 1}, 1, 16, seed=0)

    def run(net, settings=None):
        log, kept = training.train_epsilon(
            [net], x, epochs=4, batch=32, lr=1e-3, seeds=[0], checkpoint_epochs=[0, 1, 3, 4], settings=settings
        )
        return log, kept[0]

    whole = model()
    log_whole, kept_whole = run(whole)
    calls, real_noise = [], training.noise

    def dying_noise(*args):
        calls.append(1)
        if len(calls) == 2 * 2 + 2:  # the second batch of epoch 3 (two batches of 32 per epoch)
            raise KeyboardInterrupt("killed")
        return real_noise(*args)

    monkeypatch.setattr(training, "noise", dying_noise)
    with caplog.at_level(logging.INFO, logger="neurips26.loop"):
        with pytest.raises(KeyboardInterrupt):
            run(model(), settings)
        assert settings.checkpoint.exists()
        assert resumed_at(caplog) == []  # the first run started afresh
        monkeypatch.setattr(training, "noise", real_noise)
        resumed = model()
        log_resumed, kept_resumed = run(resumed, settings)
    assert resumed_at(caplog) == [2]  # the rerun resumed from the checkpoint of epoch 2, not from epoch 0
    assert same_state(whole.state_dict(), resumed.state_dict()) and log_whole.equals(log_resumed)
    assert sorted(kept_resumed) == sorted(kept_whole) == [0, 1, 3, 4]
    assert all(same_state(kept_whole[e], kept_resumed[e]) for e in kept_whole)


def test_training_rejects_bad_settings_and_divergence():
    x = fields(32)
    model = networks.build_network("dit_tiny", {"depth": 1}, 1, 16)
    with pytest.raises(ValueError, match=r"checkpoint epochs \[3\]"):
        training.train_epsilon([model], x, epochs=2, batch=16, lr=1e-3, seeds=[0], checkpoint_epochs=[3])
    with pytest.raises(ValueError, match="learning rate"):
        training.train_epsilon([model], x, epochs=1, batch=16, lr=0.0, seeds=[0])
    with pytest.raises(FloatingPointError, match="epsilon-MSE is nan at epoch 1, step 0 of seed 0"):
        training.train_epsilon([model], x * float("nan"), epochs=1, batch=16, lr=1e-3, seeds=[0])
    with pytest.raises(ValueError, match="one model per seed"):
        training.train_epsilon([model], x, epochs=1, batch=16, lr=1e-3, seeds=[0, 1])
    with pytest.raises(ValueError, match="seeds repeat"):
        training.train_epsilon([model, model], x, epochs=1, batch=16, lr=1e-3, seeds=[0, 0])


def test_mnist_is_read_in_place_resized_to_32_pixels_in_minus_one_to_one(tmp_path):
    import gzip

    def idx(path, images):
        header = np.array([2051, len(images), 28, 28], dtype=">i4").tobytes()
        with gzip.open(path, "wb") as handle:
            handle.write(header + images.astype(np.uint8).tobytes())

    rng = np.random.default_rng(0)
    idx(tmp_path / "train-images-idx3-ubyte.gz", rng.integers(0, 256, (3, 28, 28)))
    idx(tmp_path / "t10k-images-idx3-ubyte.gz", np.full((2, 28, 28), 255))
    images = loaders.load_dataset(
        "mnist", paths=[str(tmp_path / "train-images-idx3-ubyte.gz"), str(tmp_path / "t10k-images-idx3-ubyte.gz")]
    )
    assert images.train.shape == (3, 1, 32, 32) and images.heldout.shape == (2, 1, 32, 32)
    assert images.train.min() >= -1 and images.train.max() <= 1
    np.testing.assert_allclose(images.heldout, 1.0, atol=1e-6)  # a white image stays white
    with pytest.raises(ValueError, match="t10k-images-idx3-ubyte.gz"):
        loaders.load_dataset("mnist", paths=[str(tmp_path / "train-images-idx3-ubyte.gz")])


def test_a_configured_dataset_passes_only_the_loaders_settings_and_the_seed():
    entry = {"kind": "toeplitz", "n_train": 16, "n_heldout": 4, "size": 8, "n_values": [4, 16]}
    configured = loaders.load_configured(entry, seed=3, archives=[])
    direct = loaders.load_dataset("toeplitz", n_train=16, n_heldout=4, size=8, seed=3)
    np.testing.assert_array_equal(configured.train, direct.train)
    assert configured.meta["params"]["seed"] == 3
    with pytest.raises(ValueError, match="unknown parameters"):
        loaders.load_configured({**entry, "alpah": 1.7}, seed=3, archives=[])
