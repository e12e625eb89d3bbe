"""Paper 04's stored networks (state dicts + JSON settings, read with weights_only=True), the report's tables
built in summary.py, the step-cost table and the calibration over kept checkpoints."""

import json
import logging
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch

from neurips26.bird import artifacts, calibration, cost, data, networks, summary


def test_kept_weights_round_trip_with_their_settings(tmp_path):
    model = networks.build_network("dit_tiny", {"depth": 1}, 1, 8, seed=2)
    kept = {0: model.state_dict(), 3: {k: v + 1 for k, v in model.state_dict().items()}}
    by_seed = {2: kept, 5: {0: kept[3]}}
    run = {
        "arch": "dit_tiny",
        "spec": {"depth": 1, "fsizes": [32, 64]},
        "n_train": 4,
        "subset_indices": [3, 0, 2, 1],
        "seeds": [2, 5],
    }
    path = tmp_path / "checkpoints.pt"
    artifacts.save_checkpoints(path, by_seed, run)
    loaded, settings = artifacts.load_checkpoints(path)
    assert settings == run and list(loaded) == [2, 5] and list(loaded[2]) == [0, 3] and list(loaded[5]) == [0]
    assert all(torch.equal(loaded[2][3][k], kept[3][k]) for k in kept[3])
    calibration.check_checkpoint_subset(settings, 4, np.array([3, 0, 2, 1]), str(path))
    artifacts.check_seeds(loaded, [5, 2], path)
    with pytest.raises(ValueError, match=r"seeds \[2, 5\], not of seeds \[2\]"):
        artifacts.check_seeds(loaded, [2], path)
    torch.save({"other": torch.zeros(1)}, tmp_path / "bad.pt")
    with pytest.raises(ValueError, match="not a file of kept weights"):
        artifacts.load_checkpoints(tmp_path / "bad.pt")
    json.dumps(settings)  # plain JSON, no pickled objects


def test_report_tables_shape_the_phase_kmem_memorization_and_cost():
    phase = pd.DataFrame(
        {
            "dataset": ["d"] * 4,
            "n_train": [16, 16, 64, 64],
            "memorize_emp": [True, False, True, True],
            "memorize_theory": [True, True, True, False],
        }
    )
    agreement = summary.agreement_table(phase)
    assert agreement["agreement"].tolist() == [0.5, 0.5] and agreement["cells"].tolist() == [2, 2]
    boundary = pd.DataFrame(
        {
            "dataset": "d",
            "n_train": 16,
            "window": ["full", "3"],
            "k": [0, 3],
            "snr_crit_emp": [1.0, 10.0],
            "snr_crit_theory": [1.0, 1.0],
        }
    )
    crit = summary.critical_snr_table(boundary)
    assert crit["log10_ratio"].tolist() == [1.0] and "window" not in crit
    kmem = pd.DataFrame(
        {
            "dataset": "d",
            "snr": [1.0, 1.0],
            "n_train": [16, 64],
            "k_mem_emp": [2.5, np.nan],
            "k_star_theory": [3.0, np.nan],
        }
    )
    pivot = summary.kmem_pivot(kmem)
    assert pivot[16].tolist() == ["2.5 / 3"] and pivot[64].tolist() == ["none / none"]
    memo = pd.DataFrame(
        {"dataset": "d", "n_train": 16, "window": ["full", "11", "3"], "fraction_memorized": [1, 0.5, 0]}
    )
    assert list(summary.memorization_pivot(memo).columns) == ["dataset", "n_train", "3", "11", "full"]
    costs = pd.DataFrame(
        {
            "dataset": "d",
            "method": ["bird k=3", "bird k=3", "unet_tiny"],
            "n_train": [16, 64, np.nan],
            "seconds_per_image": [1.0, 4.0, 0.5],
        }
    )
    per_n, nets = summary.cost_tables(costs)
    assert per_n[64].tolist() == [4.0] and nets["method"].tolist() == ["unet_tiny"]
    assert summary.datasets_list({"d": {"kind": "toeplitz", "n_values": [16, 64]}}) == "- `d`: toeplitz, N in [16, 64]"


def test_step_costs_time_bird_per_n_and_each_network():
    pool = data.toeplitz_field(32, size=8, seed=0).astype(np.float64)
    cfg = {"n_images": 2, "repeats": 1, "n_values": [4, 8], "window": 3}
    table = cost.step_costs(pool, cfg, {"dit_tiny": {"depth": 1}}, seed=0)
    assert table["method"].tolist() == ["bird k=3", "ideal (full)"] * 2 + ["dit_tiny"]
    assert table["n_train"].iloc[:4].tolist() == [4, 4, 8, 8] and np.isnan(table["n_train"].iloc[4])
    assert (table["seconds_per_image"] > 0).all()


def test_calibration_over_kept_checkpoints_has_one_block_per_epoch(caplog):
    train = data.toeplitz_field(8, size=8, seed=1).astype(np.float64)
    model = networks.build_network("unet_tiny", {"fsizes": [4, 8]}, 1, 8, seed=0)
    kept = {0: model.state_dict(), 1: {k: v * 0.5 for k, v in model.state_dict().items()}}
    x_T = np.random.default_rng(0).standard_normal((2, 1, 8, 8))
    with caplog.at_level(logging.INFO):
        table = calibration.calibrate_checkpoints(
            model, kept, x_T, 2, train, ["3", "full"], log=logging.getLogger("test")
        )
    assert sorted(table["epoch"].unique()) == [0, 1]
    assert set(table["window"]) == {"3", "full", "linear"} and len(table) == 2 * 2 * 3
    assert "best local cos" in caplog.text


def test_report_tables_reads_the_report_rules_inputs(tmp_path):
    frames = {
        "phase": pd.DataFrame(
            {"dataset": ["d"], "n_train": [16], "memorize_emp": [True], "memorize_theory": [True], "git_commit": ["x"]}
        ),
        "boundary": pd.DataFrame(
            {
                "dataset": ["d"],
                "n_train": [16],
                "window": ["3"],
                "k": [3],
                "snr_crit_emp": [1.0],
                "snr_crit_theory": [1.0],
            }
        ),
        "kmem": pd.DataFrame(
            {"dataset": ["d"], "snr": [1.0], "n_train": [16], "k_mem_emp": [3.0], "k_star_theory": [3.0]}
        ),
        "kcal": pd.DataFrame(
            {"arch": ["a"], "epoch": [1]}
            | {c: [0.5] for c in ("best_cos", "ideal_cos", "linear_cos", "k_cal", "k_mem_frac", "k_mem_nats")}
        ),
        "memorization": pd.DataFrame({"dataset": ["d"], "n_train": [16], "window": ["3"], "fraction_memorized": [0.0]}),
        "cost": pd.DataFrame({"dataset": ["d"], "method": ["a"], "n_train": [np.nan], "seconds_per_image": [1.0]}),
    }
    paths = {}
    for name, frame in frames.items():
        paths[name] = tmp_path / f"{name}.parquet"
        frame.to_parquet(paths[name])
    inputs = SimpleNamespace(
        **{k: str(v) for k, v in paths.items() if k not in ("memorization", "cost")},
        memorization=[str(paths["memorization"])],
        cost=[str(paths["cost"])],
    )
    tables = summary.report_tables(inputs, SimpleNamespace(datasets={"d": {"kind": "digits16", "n_values": [16]}}))
    assert set(tables) == {
        "datasets",
        "agreement",
        "critical_snr",
        "kmem",
        "memorization",
        "kcal",
        "cost",
        "network_cost",
    }
    assert "git_commit" not in tables["agreement"] and tables["network_cost"]["method"].tolist() == ["a"]


def test_measurements_of_one_n_the_theory_and_the_samples():
    from neurips26.bird import measurements

    train = data.toeplitz_field(16, size=8, seed=0)
    snr = {"min": 0.1, "max": 10.0, "count": 3}
    info = measurements.information_table(train, 4, ["1", "3", "full"], snr, 0.0, seed=0, dataset="f")
    assert len(info) == 9 and set(info["window"]) == {"1", "3", "full"}
    assert (info["mi_central"] <= info["log_n"] + 1e-9).all()
    again = measurements.information_table(train, 4, ["1", "3", "full"], snr, 0.0, seed=0, dataset="f")
    pd.testing.assert_frame_equal(info, again)  # seeded by (seed, N)
    cfg = {"kind": "toeplitz", "alpha": 1.7, "n_values": [16]}
    theory = measurements.theory_table(train, cfg, ["3", "full"], snr, dataset="f")
    assert set(theory["quantity"]) == {"i_gauss", "snr_crit"} and (theory["quantity"] == "snr_crit").sum() == 2
    table, arrays = measurements.sample_windows(
        train.astype(np.float64), {"n": 3, "steps": 2, "windows": ["3", "full"]}, 0.0, seed=0, dataset="f"
    )
    assert table["window"].tolist() == ["3", "full"] and sorted(arrays) == [
        "nearest_3",
        "nearest_full",
        "samples_3",
        "samples_full",
    ]
    assert arrays["samples_full"].shape == (3, 1, 8, 8)
