"""Paper 01's stored models (state dicts + JSON settings, read with weights_only=True), the datasets by kind, the
cell training wrapper and the report's sections built in summary.py."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch

from neurips26.common import ensemble
from neurips26.pred_loss_space import artifacts, data, evaluation, models, summary, training


def test_a_model_round_trips_with_its_settings(tmp_path):
    net = models.FeatureNet(channels=1, n_classes=3, feature_dim=8)
    settings = {"feature_dim": 8, "channels": 1, "n_classes": 3, "train_accuracy": 0.5}
    artifacts.save_model(tmp_path / "net.pt", net.state_dict(), settings)
    state_dict, loaded = artifacts.load_model(tmp_path / "net.pt")
    assert loaded == settings and all(torch.equal(state_dict[k], v) for k, v in net.state_dict().items())
    embed = evaluation.feature_embedder(state_dict, loaded["feature_dim"], loaded["channels"], loaded["n_classes"])
    assert embed(np.zeros((2, 1, 16, 16), dtype=np.float32)).shape == (2, 8)
    torch.save({"state_dict": {}}, tmp_path / "old.pt")
    with pytest.raises(ValueError, match="not a model written by save_model"):
        artifacts.load_model(tmp_path / "old.pt")


def test_make_dataset_builds_the_toy_and_digits_by_kind():
    toy = data.make_dataset({"kind": "toy", "dim": 8, "n_train": 32, "n_test": 8})
    assert toy["x_train"].shape == (32, 8) and toy["projection"].shape == (8, 2)
    np.testing.assert_array_equal(toy["x_train"], data.toy_manifold(8, 32, 8, seed=data.DATA_SEED)["x_train"])
    digits = data.make_dataset({"kind": "digits16", "n_train": 100})
    assert digits["x_train"].shape == (100, 1, 16, 16) and set(digits) == {"x_train", "y_train", "x_test", "y_test"}


def test_train_cell_passes_the_cell_settings_and_times_the_run():
    spec = {"dim": 4, "width": 16, "depth": 2}
    x = torch.randn(32, 4) * 0.3
    train = {"steps": 6, "batch": 8, "lr": 1e-3, "ema": 0.9}
    noise = {"p_mean": -0.8, "p_std": 0.8, "t_eps": 0.05, "t_min": 0.05}
    members = ensemble.build(lambda: models.build_model("mlp_toy", spec), [1, 4])
    emas, log, seconds = training.train_cell(members, x, "x", "v", train, noise, seeds=[1, 4])
    assert seconds > 0 and log["step"].tolist() == [*range(6), *range(6)]  # 6 // 50 -> every step, per seed
    assert log["seed"].tolist() == [1] * 6 + [4] * 6
    torch.manual_seed(4)
    again = models.build_model("mlp_toy", spec)
    ema_direct, _ = training.train_denoiser(
        again, x, "x", "v", 6, 8, 1e-3, -0.8, 0.8, 4, ema_decay=0.9, t_eps=0.05, t_min=0.05, log_every=1
    )
    assert all(torch.equal(emas[1][k], ema_direct[k]) for k in ema_direct)
    frame = training.log_frame(log, dataset="toy", arch="mlp_toy")
    assert list(frame.columns[:3]) == ["dataset", "arch", "seed"]


def test_a_jobs_models_round_trip_one_state_dict_per_seed(tmp_path):
    states = {s: models.build_model("mlp_toy", {"dim": 4, "width": 8, "depth": 2}).state_dict() for s in (0, 2)}
    artifacts.save_seed_models(tmp_path / "model.pt", states, {"seeds": [0, 2], "train_seconds": 1.5})
    loaded, settings = artifacts.load_seed_models(tmp_path / "model.pt")
    assert settings == {"seeds": [0, 2], "train_seconds": 1.5} and sorted(loaded) == [0, 2]
    assert all(torch.equal(loaded[s][k], v) for s in states for k, v in states[s].items())
    artifacts.save_model(tmp_path / "one.pt", states[0], {})
    with pytest.raises(ValueError, match="not a model written by save_seed_models"):
        artifacts.load_seed_models(tmp_path / "one.pt")


def test_training_settings_are_refused_with_their_names():
    model = models.build_model("mlp_toy", {"dim": 4, "width": 8, "depth": 2})
    with pytest.raises(ValueError, match="train_denoiser.batch must be an integer >= 1"):
        training.train_denoiser(model, torch.zeros(4, 4), "x", "x", 1, 0, 1e-3, 0.0, 1.0, 0)
    with pytest.raises(ValueError, match="train_denoiser.ema_decay"):
        training.train_denoiser(model, torch.zeros(4, 4), "x", "x", 1, 2, 1e-3, 0.0, 1.0, 0, ema_decay=1.0)


def test_report_sections_list_regimes_and_one_matrix_section_per_regime(tmp_path):
    text = summary.regimes_list([{"dataset": "toy", "arch": "mlp_toy", "bottleneck": True, "seeds": [1]}], 500, [0])
    assert text == "- `toy` with `mlp_toy` (bottleneck), 500 steps, seeds [1]"
    rows = [
        {
            "dataset": "toy",
            "arch": "mlp_toy",
            "bottleneck": True,
            "pred": p,
            "loss": loss,
            "seed": 0,
            "t": np.nan,
            "metric": m,
            "value": 1.0,
        }
        for p in ("x", "eps")
        for loss in ("x", "v")
        for m in ("mse", "fd")
    ]
    section = summary.matrices_markdown(pd.DataFrame(rows))
    assert section.startswith("### toy / mlp_toy (bottleneck)") and "FD (proxy)" in section and "FID" not in section
    tables = summary.report_tables(
        SimpleNamespace(metrics=_parquet(pd.DataFrame(rows), tmp_path)), SimpleNamespace(regimes=[], steps=1, seeds=[0])
    )
    assert set(tables) == {"regimes", "matrices", "shares", "runs"}


def _parquet(frame: pd.DataFrame, folder) -> str:
    path = folder / "metrics.parquet"
    frame.to_parquet(path)
    return str(path)


def test_the_sample_grid_loads_the_lowest_seed_of_each_cell():
    from neurips26.pred_loss_space import plots

    jobs = ["toy_a/mlp_toy/xxv/s1-3", "toy_a/mlp_toy/xxv/s0", "d/unet_tiny/epsxx/s2", "d/unet_tiny/epsxx/s4-5"]
    assert plots.lowest_seed_runs(jobs, ["p13", "p0", "p2", "p45"]) == {
        "toy_a/mlp_toy/xxv/s0": ("p0", 0),
        "d/unet_tiny/epsxx/s2": ("p2", 2),
    }
    assert plots.lowest_seed_runs(["d/unet_tiny/epsxx/s4-1-5"], ["p"]) == {"d/unet_tiny/epsxx/s1": ("p", 1)}
    with pytest.raises(ValueError, match="4 run ids but 2 sample files"):
        plots.lowest_seed_runs(jobs, ["p1", "p0"])
