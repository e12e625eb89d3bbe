"""Training at a matched forward-pass budget (spectral_zo.training): steps from the budget, curves that fall,
divergence stopping the run at its step with the last checkpoint kept, the wall-time limit, bad inputs."""

import pytest
import torch

from neurips26.common.loop import load_checkpoint
from neurips26.spectral_zo.networks import MLP, ConvNet
from neurips26.spectral_zo.training import FORWARD_PASSES, TrainConfig, checkpoint_settings, train

NET = MLP((5, 8, 3), activation="tanh")


def _data(seed=0, n=60):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 5, generator=g)
    y = (x @ torch.randn(5, 3, generator=g)).argmax(-1)
    return (x[:40], y[:40]), (x[40:], y[40:])


def test_forward_pass_counts_and_matched_steps():
    assert FORWARD_PASSES["spsa"](4, 3) == 8 and FORWARD_PASSES["wp_layerwise"](4, 3) == 24
    assert FORWARD_PASSES["szo"](4, 3) == 9 and FORWARD_PASSES["agzo"](4, 3) == 6
    train_data, test_data = _data()
    wp = train(TrainConfig("wp_global", n_probes=2, budget=40, evals=2), NET, train_data, test_data)
    layer = train(TrainConfig("wp_layerwise", n_probes=2, budget=40, evals=2), NET, train_data, test_data)
    assert (wp.steps, wp.passes_per_step, layer.steps, layer.passes_per_step) == (10, 4, 5, 8)
    assert [r["step"] for r in wp.rows] == [0, 5, 10] and wp.rows[-1]["forward_passes"] == 40


@pytest.mark.parametrize("estimator, lr", [("backprop", 0.5), ("spsa", 0.05), ("mezo", 0.05), ("szo", 0.05)])
def test_training_lowers_the_loss(estimator, lr):
    train_data, test_data = _data()
    options = {"kappa": 0.5} if estimator == "szo" else {}
    config = TrainConfig(estimator, n_probes=4, lr=lr, budget=800, batch_size=20, evals=2, options=options)
    result = train(config, NET, train_data, test_data)
    assert result.diverged is None
    assert result.rows[-1]["train_loss"] < 0.8 * result.rows[0]["train_loss"]
    assert 0.0 <= result.rows[-1]["test_accuracy"] <= 1.0


def test_same_seed_same_curve_and_other_seed_differs():
    train_data, test_data = _data()
    runs = [train(TrainConfig("mezo", n_probes=2, budget=40, seed=s), NET, train_data, test_data) for s in (0, 0, 1)]
    assert runs[0].rows[-1]["train_loss"] == runs[1].rows[-1]["train_loss"]
    assert runs[0].rows[-1]["train_loss"] != runs[2].rows[-1]["train_loss"]


def test_divergence_stops_at_its_step_and_keeps_the_last_checkpoint(tmp_path):
    train_data, test_data = _data()
    path = tmp_path / "run.ckpt"
    config = TrainConfig("spsa", n_probes=2, lr=1e30, budget=400, batch_size=20)
    relu = MLP((5, 8, 3), activation="relu")  # weights ~1e30 after one step: the next pass overflows float32
    result = train(config, relu, train_data, test_data, settings=checkpoint_settings(path, "f", every_steps=1))
    assert result.diverged_step == 1
    assert f"step {result.diverged_step}" in result.diverged
    assert result.steps == result.diverged_step
    saved = load_checkpoint(path)
    assert saved["step"] == result.diverged_step  # the last finite step's weights
    assert all(torch.isfinite(w).all() for w in saved["state"]["params"].values())


def test_a_finite_blow_up_is_a_divergence_at_its_step(tmp_path, caplog):
    train_data, test_data = _data()
    path = tmp_path / "run.ckpt"
    config = TrainConfig("spsa", n_probes=2, lr=1e6, budget=400, batch_size=20)  # logits ~1e5: finite, absurd
    with caplog.at_level("WARNING"):
        result = train(config, NET, train_data, test_data, settings=checkpoint_settings(path, "f", every_steps=1))
    assert result.diverged_step is not None and result.steps == result.diverged_step
    assert "exceeds" in caplog.text and f"step {result.diverged_step}" in caplog.text
    saved = load_checkpoint(path)
    assert saved["step"] == result.diverged_step
    weights = torch.cat([w.flatten() for w in saved["state"]["params"].values()])
    assert torch.isfinite(weights).all()
    # the same run at a small lr is not stopped
    calm = train(TrainConfig("spsa", n_probes=2, lr=0.05, budget=400, batch_size=20), NET, train_data, test_data)
    assert calm.diverged is None


def test_wall_time_limit_stops_early_with_a_final_row():
    train_data, test_data = _data()
    result = train(TrainConfig("spsa", n_probes=2, budget=10**7, seconds=0.05), NET, train_data, test_data)
    assert 0 < result.steps < 10**7 // 4
    assert result.rows[-1]["step"] == result.steps


@pytest.mark.parametrize(
    "kwargs, word",
    [
        ({"n_probes": 0}, "n_probes"),
        ({"eps": 0.0}, "eps"),
        ({"eps": -1.0}, "eps"),
        ({"options": {"kappa": 2.5}}, "kappa"),
        ({"options": {"kappa": -0.1}}, "kappa"),
        ({"estimator": "adam"}, "estimator"),
        ({"lr": 0.0}, "lr"),
    ],
)
def test_bad_configs_rejected(kwargs, word):
    with pytest.raises(ValueError, match=word):
        TrainConfig(**{"estimator": "szo", **kwargs})


def test_budget_below_one_step_rejected():
    train_data, test_data = _data()
    with pytest.raises(ValueError, match="budget"):
        train(TrainConfig("spsa", n_probes=8, budget=15), NET, train_data, test_data)


@pytest.mark.parametrize(
    ("estimator", "options"),
    [("agzo", {"rank": 4}), ("szo", {"kappa": 1.0, "normalise": "top"}), ("node_perturbation", {})],
)
def test_activation_shaped_estimators_train_a_conv_net_on_its_patches(estimator, options):
    conv = ConvNet(side=4, channels=(2,), strides=(2,), classes=3)
    g = torch.Generator().manual_seed(0)
    x = torch.rand(48, 1, 4, 4, generator=g)
    y = (x.flatten(1) @ torch.randn(16, 3, generator=g)).argmax(-1)
    config = TrainConfig(estimator, n_probes=16, budget=40 * FORWARD_PASSES[estimator](16, 2), lr=0.3, batch_size=16,
                         evals=1, options=options)  # fmt: skip
    result = train(config, conv, (x, y), (x, y))
    assert result.steps == 40 and result.diverged is None
    assert [tuple(w.shape) for w in result.params] == [(2, 1, 3, 3), (3, 8)]
    assert result.rows[-1]["train_loss"] < result.rows[0]["train_loss"]
