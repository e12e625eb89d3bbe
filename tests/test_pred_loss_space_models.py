"""Paper 01 denoisers: architectures, the bottleneck label, training (determinism, resume, divergence), sampling."""

import contextlib
import logging
import math
import re

import pandas as pd
import pytest
import torch
from torch import nn

from neurips26.common import loop
from neurips26.pred_loss_space import batched, models, sampling, spaces, training

IMAGE = (1, 16, 16)


@pytest.fixture(autouse=True)
def one_thread():
    """Tiny models run fastest on one thread (as the workflow's jobs do); restore the setting afterwards."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def toy_data(n: int = 512, dim: int = 8, seed: int = 0) -> torch.Tensor:
    """Points on a 2-D circle of radius 0.8 embedded in `dim` dimensions by a column-orthonormal matrix."""
    g = torch.Generator().manual_seed(seed)
    angle = torch.rand(n, generator=g) * 2 * math.pi
    circle = 0.8 * torch.stack([angle.cos(), angle.sin()], dim=1)
    basis, _ = torch.linalg.qr(torch.randn(dim, 2, generator=g))
    return circle @ basis.T


def toy_model(dim: int = 8, seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return models.build_model("mlp_toy", {"dim": dim, "width": 32, "depth": 3})


def train(model, x, **kw):
    args = dict(pred="x", loss="v", steps=20, batch=64, lr=1e-3, p_mean=-0.8, p_std=0.8, seed=0, log_every=1)
    return training.train_denoiser(model, x, **{**args, **kw})


def same_state(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


# --------------------------------------------------------------------------- architectures


@pytest.mark.parametrize(
    "arch, spec, shape",
    [
        ("unet_tiny", {"channels": 1}, IMAGE),
        ("unet_tiny", {"channels": 3, "base": 16}, (3, 8, 8)),
        ("jit_tiny", {"image_size": 16, "channels": 1}, IMAGE),
        ("jit_tiny_bn", {"image_size": 16, "channels": 1}, IMAGE),
        ("jit_tiny", {"image_size": 8, "channels": 3, "patch": 2, "width": 32, "depth": 1, "heads": 2}, (3, 8, 8)),
        ("mlp_toy", {"dim": 8}, (8,)),
    ],
)
def test_each_architecture_returns_the_input_shape(arch, spec, shape):
    model = models.build_model(arch, spec)
    z = torch.randn(3, *shape)
    out = model(z, torch.rand(3))
    assert out.shape == z.shape
    assert torch.isfinite(out).all()


def test_parameter_counts_are_tiny():
    counts = {
        arch: sum(p.numel() for p in models.build_model(arch, {"dim": 512}).parameters()) for arch in models.ARCHS
    }
    assert 100_000 <= counts["unet_tiny"] <= 350_000
    assert 100_000 <= counts["jit_tiny"] <= 400_000
    assert counts["jit_tiny_bn"] < counts["jit_tiny"]
    assert counts["mlp_toy"] < 100_000


def test_jit_starts_at_zero_output():
    model = models.build_model("jit_tiny", {})
    z = torch.randn(2, *IMAGE)
    assert torch.equal(model(z, torch.rand(2)), torch.zeros_like(z))  # adaLN-Zero and a zero head


def test_patchify_round_trips():
    model = models.JiTTiny(image_size=8, channels=3, patch=4, width=32, depth=1, heads=2)
    z = torch.randn(2, 3, 8, 8)
    tokens = model.patchify(z)
    assert tokens.shape == (2, 4, 48)
    assert torch.equal(model.unpatchify(tokens), z)


def test_build_model_rejects_unknown_arch_and_keys():
    with pytest.raises(ValueError, match=r"unknown architecture 'vit_huge'.*unet_tiny.*mlp_toy"):
        models.build_model("vit_huge", {})
    with pytest.raises(ValueError, match=r"unknown keys \['widht'\]"):
        models.build_model("jit_tiny", {"widht": 64})
    with pytest.raises(ValueError, match="needs the data dimension 'dim'"):
        models.build_model("mlp_toy", {})
    with pytest.raises(ValueError, match="not divisible by the patch size"):
        models.build_model("jit_tiny", {"image_size": 16, "patch": 5})


@pytest.mark.parametrize(
    "arch, spec, expected, dim",
    [
        ("jit_tiny", {"patch": 4, "width": 64, "channels": 1}, False, 16),
        ("jit_tiny_bn", {"patch": 16, "width": 32, "channels": 1}, True, 256),
        ("jit_tiny", {"patch": 4, "width": 32, "channels": 3}, True, 48),
        ("mlp_toy", {"dim": 512, "width": 64}, True, 512),
        ("mlp_toy", {"dim": 16, "width": 64}, False, 16),
        ("unet_tiny", {"channels": 1}, False, None),
    ],
)
def test_has_bottleneck(arch, spec, expected, dim):
    assert models.has_bottleneck(arch, spec) is expected
    assert models.token_dim(arch, spec) == dim


def test_check_bottleneck_label_rejects_mislabels():
    models.check_bottleneck_label("jit_tiny_bn", {"patch": 16, "width": 32}, True)
    models.check_bottleneck_label("jit_tiny", {"patch": 4, "width": 64}, False)
    models.check_bottleneck_label("mlp_toy", {"dim": 512}, True)
    with pytest.raises(ValueError, match="labelled not a bottleneck but its token dimension 256 exceeds its width 32"):
        models.check_bottleneck_label("jit_tiny_bn", {"patch": 16, "width": 32}, False)
    with pytest.raises(ValueError, match="labelled a bottleneck but its token dimension 16 does not exceed its w"):
        models.check_bottleneck_label("jit_tiny", {"patch": 4, "width": 64}, True)
    with pytest.raises(ValueError, match="token dimension 16 does not exceed its width 64"):
        models.check_bottleneck_label("mlp_toy", {"dim": 16, "width": 64}, True)
    with pytest.raises(ValueError, match="unet_tiny is labelled a bottleneck"):
        models.check_bottleneck_label("unet_tiny", {}, True)


def test_feature_net_features_and_training():
    g = torch.Generator().manual_seed(0)
    y = torch.arange(200) % 2
    x = torch.randn(200, *IMAGE, generator=g) * 0.3 + (2.0 * y - 1.0)[:, None, None, None] * 0.5
    net, accuracy = training.train_feature_net(x, y, steps=30, batch=64, lr=3e-3, seed=0)
    assert not net.training
    assert accuracy > 0.95
    assert net.features(x[:5]).shape == (5, 32)
    again, accuracy_again = training.train_feature_net(x, y, steps=30, batch=64, lr=3e-3, seed=0)
    assert same_state(net.state_dict(), again.state_dict()) and accuracy == accuracy_again


def resumed_at(caplog) -> list[int]:
    """The steps the loop logged resuming at ("<name>: resuming from checkpoint <path> at step <k> of <n>")."""
    found = (
        re.search(r": resuming from checkpoint .* at step (\d+) of \d+$", r.getMessage())
        for r in caplog.records
        if r.name == "neurips26.loop"
    )
    return [int(m.group(1)) for m in found if m]


def test_feature_net_killed_after_a_checkpoint_resumes_bit_identically(tmp_path, monkeypatch, caplog):
    g = torch.Generator().manual_seed(0)
    y = torch.arange(200) % 2
    x = torch.randn(200, *IMAGE, generator=g) * 0.3 + (2.0 * y - 1.0)[:, None, None, None] * 0.5
    whole, accuracy = training.train_feature_net(x, y, steps=20, batch=64, lr=3e-3, seed=0)
    settings = loop.LoopSettings(checkpoint=tmp_path / "features.ckpt", fingerprint="job", every_steps=5)
    calls, real = [], training.F.cross_entropy

    def dying(*args, **kw):
        calls.append(1)
        if len(calls) == 13:  # step 12, after the checkpoint of step 10
            raise KeyboardInterrupt("killed")
        return real(*args, **kw)

    monkeypatch.setattr(training.F, "cross_entropy", dying)
    with caplog.at_level(logging.INFO, logger="neurips26.loop"):
        with pytest.raises(KeyboardInterrupt):
            training.train_feature_net(x, y, steps=20, batch=64, lr=3e-3, seed=0, settings=settings)
        monkeypatch.setattr(training.F, "cross_entropy", real)
        assert loop.load_checkpoint(settings.checkpoint)["step"] == 10
        assert resumed_at(caplog) == []  # the first run started afresh
        resumed, accuracy_resumed = training.train_feature_net(
            x, y, steps=20, batch=64, lr=3e-3, seed=0, settings=settings
        )
    assert resumed_at(caplog) == [10]  # the rerun resumed from the checkpoint of step 10, not from step 0
    assert same_state(whole.state_dict(), resumed.state_dict()) and accuracy == accuracy_resumed


# --------------------------------------------------------------------------- training


def test_training_reduces_the_loss():
    x = toy_data()
    _, log = train(toy_model(), x, pred="v", loss="v", steps=60, batch=128, lr=3e-3)
    assert list(log.columns) == ["step", "loss_native", "loss_x"]
    assert log["step"].tolist() == list(range(60))
    first, last = log["loss_native"].iloc[:10].mean(), log["loss_native"].iloc[-10:].mean()
    assert last < 0.5 * first


def test_log_every_and_x_space_loss_of_x_loss():
    _, log = train(toy_model(), toy_data(), pred="eps", loss="x", steps=25, log_every=10)
    assert log["step"].tolist() == [0, 10, 20, 24]
    assert log["loss_native"].tolist() == log["loss_x"].tolist()


def test_same_seed_gives_identical_ema_weights_and_another_seed_does_not():
    x = toy_data()
    ema_a, log_a = train(toy_model(), x)
    ema_b, log_b = train(toy_model(), x)
    ema_c, _ = train(toy_model(), x, seed=1)
    assert same_state(ema_a, ema_b)
    pd.testing.assert_frame_equal(log_a, log_b)
    assert not same_state(ema_a, ema_c)


def test_ema_differs_from_the_raw_weights_and_from_the_start():
    model = toy_model()
    start = {k: v.clone() for k, v in model.state_dict().items()}
    ema, _ = train(model, toy_data(), steps=30)
    assert not same_state(ema, model.state_dict())
    assert not same_state(ema, start)


@contextlib.contextmanager
def crashing(limit: float = math.inf):
    """Count the training's forward calls (of its batch of seeds) and raise on the `limit`-th, like a job killed
    mid-run; yields the list of calls."""
    calls, real = [], batched.SeedBatch.forward

    def forward(self, z, t):
        calls.append(1)
        if len(calls) >= limit:
            raise RuntimeError("killed")
        return real(self, z, t)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(batched.SeedBatch, "forward", forward)
        yield calls


def test_interrupted_and_resumed_run_is_bit_identical(tmp_path):
    x = toy_data()
    ema_full, log_full = train(toy_model(), x, steps=40)

    settings = loop.LoopSettings(checkpoint=tmp_path / "crash.pt", fingerprint="job-1", every_steps=20)
    with crashing(limit=27), pytest.raises(RuntimeError):
        train(toy_model(), x, steps=40, settings=settings)
    assert loop.load_checkpoint(settings.checkpoint)["step"] == 20
    with crashing() as calls:  # other initial weights: they come from the checkpoint
        ema_resumed, log_resumed = train(toy_model(seed=5), x, steps=40, settings=settings)
    assert len(calls) == 20
    assert same_state(ema_full, ema_resumed)
    pd.testing.assert_frame_equal(log_full, log_resumed)


def test_a_checkpoint_of_another_cell_is_never_resumed(tmp_path):
    """Same job fingerprint, other (pred, loss) cell: the checkpoint is ignored and the cell trains afresh."""
    settings = loop.LoopSettings(checkpoint=tmp_path / "ckpt.pt", fingerprint="same", every_steps=10)
    with crashing(limit=15), pytest.raises(RuntimeError):
        train(toy_model(), toy_data(), steps=20, settings=settings)
    assert settings.checkpoint.exists()
    fresh_ema, fresh_log = train(toy_model(), toy_data(), pred="eps", steps=20)
    with crashing() as calls:
        ema, log = train(toy_model(), toy_data(), pred="eps", steps=20, settings=settings)
    assert len(calls) == 20  # every step was run: nothing was resumed
    assert same_state(ema, fresh_ema)
    pd.testing.assert_frame_equal(log, fresh_log)


def test_divergence_raises_floating_point_error():
    with pytest.raises(FloatingPointError, match=r"pred=x, loss=v diverged at step [1-9]"):
        train(toy_model(), toy_data(), lr=1e30)
    nan_data = toy_data()
    nan_data[:] = float("nan")
    with pytest.raises(FloatingPointError, match="pred=eps, loss=eps diverged at step 0"):
        train(toy_model(), nan_data, pred="eps", loss="eps")


@pytest.mark.parametrize(
    "bad, match",
    [
        (dict(pred="y"), "prediction space 'y'"),
        (dict(loss="z"), "loss space 'z'"),
        (dict(p_std=0.0), "p_std must be a finite number > 0"),
        (dict(t_eps=0.5), "t_eps"),
        (dict(lr=0.0), "learning rate"),
    ],
)
def test_train_rejects_bad_settings(bad, match):
    with pytest.raises(ValueError, match=match):
        train(toy_model(), toy_data(), **bad)


# --------------------------------------------------------------------------- sampling and evaluation


def test_heun_sample_shape_determinism_and_steps():
    model = toy_model()
    a = sampling.heun_sample(model, 10, (8,), steps=4, pred="x", seed=3)
    b = sampling.heun_sample(model, 10, (8,), steps=4, pred="x", seed=3, batch=3)
    c = sampling.heun_sample(model, 10, (8,), steps=4, pred="x", seed=4)
    assert a.shape == (10, 8)
    torch.testing.assert_close(a, b)
    assert torch.equal(a, sampling.heun_sample(model, 10, (8,), steps=4, pred="x", seed=3))
    assert not torch.allclose(a, c)
    image = sampling.heun_sample(models.build_model("jit_tiny_bn", {}), 2, IMAGE, steps=2, pred="v", seed=0)
    assert image.shape == (2, *IMAGE)
    with pytest.raises(ValueError, match="at least 1 step"):
        sampling.heun_sample(model, 10, (8,), steps=0, pred="x", seed=3)


class Oracle(nn.Module):
    """The ideal denoiser of a data set of one point: x_hat = point, output in prediction space `pred`."""

    def __init__(self, point: torch.Tensor, pred: str):
        super().__init__()
        self.point, self.pred = point, pred

    def forward(self, z, t):
        tt = t.reshape(-1, *([1] * (z.dim() - 1)))
        x = self.point.expand_as(z)
        return {"x": x, "eps": (z - tt * x) / (1 - tt), "v": (x - z) / (1 - tt)}[self.pred]


@pytest.mark.parametrize("pred", ["x", "v"])
def test_heun_with_the_ideal_denoiser_lands_on_the_single_data_point(pred):
    point = torch.linspace(-1, 1, 16).reshape(1, 1, 4, 4)
    samples = sampling.heun_sample(Oracle(point, pred), 6, (1, 4, 4), steps=8, pred=pred, seed=0)
    torch.testing.assert_close(samples, point.expand_as(samples), atol=1e-5, rtol=0)


def test_denoise_errors_columns_and_amplification():
    t_grid = [0.1, 0.5, 0.9]
    x = toy_data(64)
    for pred in spaces.SPACES:
        frame = sampling.denoise_errors(toy_model(), x, pred, t_grid, seed=0)
        assert list(frame.columns) == [
            "t",
            "mse_x",
            "mse_eps",
            "mse_v",
            "amp_x_emp",
            "amp_x_theory",
            "amp_v_emp",
            "amp_v_theory",
        ]
        assert frame["t"].tolist() == t_grid
        assert (frame[["mse_x", "mse_eps", "mse_v"]] > 0).all().all()
        torch.testing.assert_close(
            torch.tensor(frame["amp_x_emp"].values), torch.tensor(frame["amp_x_theory"].values), rtol=1e-6, atol=0
        )
        torch.testing.assert_close(
            torch.tensor(frame["amp_v_emp"].values), torch.tensor(frame["amp_v_theory"].values), rtol=1e-6, atol=0
        )
    ideal = sampling.denoise_errors(Oracle(x[:1], "x"), x[:1].expand(8, -1), "x", t_grid, seed=0)
    assert ideal["mse_x"].abs().max() == 0
    assert ideal["mse_v"].max() < 1e-10


def test_denoise_errors_is_seeded():
    x = toy_data(32)
    a = sampling.denoise_errors(toy_model(), x, "eps", [0.3], seed=1)
    b = sampling.denoise_errors(toy_model(), x, "eps", [0.3], seed=1)
    pd.testing.assert_frame_equal(a, b)


def test_the_torch_free_architecture_table_matches_the_model_classes():
    import inspect

    from neurips26.pred_loss_space import architectures

    for arch in architectures.ARCHS:
        assert set(architectures.ARCH_PARAMS[arch]) == set(inspect.signature(models._class_of(arch)).parameters), arch


@pytest.mark.parametrize(
    "arch, spec, shape",
    [
        (
            "jit_tiny",
            {"patch": 4, "width": 32, "depth": 1, "heads": 2, "channels": 1, "image_size": 16},
            (2, 1, 16, 16),
        ),
        ("unet_tiny", {"base": 16, "mults": [1, 2], "channels": 1, "image_size": 16}, (2, 1, 16, 16)),
        ("mlp_toy", {"width": 16, "depth": 3, "dim": 8}, (2, 8)),
    ],
)
def test_forward_creates_no_tensor_off_the_models_device(arch, spec, shape):
    # on the meta device any CPU tensor made inside forward is an error, as a CPU tensor is on a GPU
    # (the GPU probe found the time embedding's frequencies made on the CPU)
    model = models.build_model(arch, spec).to("meta")
    out = model(torch.empty(shape, device="meta"), torch.empty(2, device="meta"))
    assert out.shape == shape and out.device.type == "meta"
