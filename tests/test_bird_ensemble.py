"""Paper 04 (BIRD): seeds as a batch dimension (issue 23). One job trains a group of network seeds as one
ensemble; each seed's result (log, kept and final weights, calibrated numbers) equals its single-seed run: bit for
bit with the members run one after another (the CPU's way), within float tolerance under vmap (a GPU's way). A
killed group resumes bit-identically, and the config's seed groups name the jobs."""

import logging

import numpy as np
import pandas as pd
import pytest
import torch

from neurips26.bird import calibration, data, experiment, networks, summary, training
from neurips26.common import loop

SPECS = {"unet_tiny": {"fsizes": [8, 16], "emb_dim": 16}, "dit_tiny": {"hidden": 32, "depth": 1, "heads": 2}}
SEEDS = [0, 1, 2]
EPOCHS, BATCH, LR, KEEP = 3, 16, 2e-3, [0, 1, 3]
WINDOWS = ["3", "5", "full"]


SIZE = 8  # 8 x 8 images keep the test short


def fields(n: int = 32) -> torch.Tensor:
    return torch.as_tensor(data.toeplitz_field(n, size=SIZE, seed=0))


def train(arch, seeds, x, settings=None, vectorize=None):
    models = [networks.build_network(arch, SPECS[arch], 1, SIZE, seed=s) for s in seeds]
    log, kept = training.train_epsilon(
        models, x, EPOCHS, BATCH, LR, seeds, checkpoint_epochs=KEEP, settings=settings, vectorize=vectorize
    )
    return models, log, kept


EXACT, FLOAT = {"rtol": 0.0, "atol": 0.0}, {"rtol": 1e-4, "atol": 1e-6}


def assert_close_states(a: dict, b: dict, where: str, tol: dict) -> None:
    assert list(a) == list(b), where
    for key in a:
        torch.testing.assert_close(a[key], b[key], **tol, msg=f"{where}: {key}")


@pytest.mark.parametrize("vectorize", [False, True], ids=["one after another", "vmap"])
@pytest.mark.parametrize("arch", sorted(SPECS))
def test_each_seed_of_a_batched_group_equals_its_single_seed_run(arch, vectorize):
    tol = FLOAT if vectorize else EXACT
    x = fields()
    group_models, group_log, group_kept = train(arch, SEEDS, x, vectorize=vectorize)
    assert sorted(group_kept) == SEEDS and group_log.groupby("seed").size().tolist() == [EPOCHS * 2] * 3
    train_np = x.numpy().astype(np.float64)
    model = networks.build_network(arch, SPECS[arch], 1, SIZE)
    last = {seed: {EPOCHS: by_epoch[EPOCHS]} for seed, by_epoch in group_kept.items()}  # calibrated: the last epoch
    group_table = calibration.calibrate_seeds(model, last, len(x), 2, 2, train_np, WINDOWS)
    for i, seed in enumerate(SEEDS):
        (alone,), alone_log, alone_kept = train(arch, [seed], x)
        for epoch in KEEP:
            assert_close_states(group_kept[seed][epoch], alone_kept[seed][epoch], f"s{seed} epoch {epoch}", tol)
        assert all(torch.equal(group_kept[seed][0][k], alone_kept[seed][0][k]) for k in alone_kept[seed][0])
        assert_close_states(group_models[i].state_dict(), alone.state_dict(), f"s{seed} final weights", tol)
        mine = group_log[group_log["seed"] == seed].reset_index(drop=True)
        pd.testing.assert_frame_equal(mine[["seed", "epoch", "step"]], alone_log[["seed", "epoch", "step"]])
        np.testing.assert_allclose(mine["loss"], alone_log["loss"], rtol=1e-5 if vectorize else 0.0)
        # the calibrated numbers of the seed: its rows of the group's table against its single-seed table
        alone_last = {seed: {EPOCHS: alone_kept[seed][EPOCHS]}}
        alone_table = calibration.calibrate_seeds(model, alone_last, len(x), 2, 2, train_np, WINDOWS)
        rows = group_table[group_table["seed"] == seed].reset_index(drop=True)
        pd.testing.assert_frame_equal(
            rows.drop(columns=["cos", "entropy_central"]), alone_table.drop(columns=["cos", "entropy_central"])
        )
        np.testing.assert_allclose(rows["cos"], alone_table["cos"], **tol)
        np.testing.assert_allclose(rows["entropy_central"], alone_table["entropy_central"], **tol)
        keyed = {"dataset": "d", "arch": arch, "n_train": len(x)}
        kcal_group = summary.kcal_table(rows.assign(**keyed), 0.1, 0.8)
        kcal_alone = summary.kcal_table(alone_table.assign(**keyed), 0.1, 0.8)
        pd.testing.assert_series_equal(kcal_group["k_cal"], kcal_alone["k_cal"])
        np.testing.assert_allclose(kcal_group["best_cos"], kcal_alone["best_cos"], **tol)
    # the seeds differ: each keeps its own initialisation, data order and noise
    assert not torch.equal(
        group_kept[0][3][next(iter(group_kept[0][3]))], group_kept[1][3][next(iter(group_kept[1][3]))]
    )


def test_a_seeds_run_under_vmap_does_not_depend_on_the_other_seeds_of_its_group():
    x = fields()
    _, log_a, kept_a = train("dit_tiny", [1, 2], x, vectorize=True)
    _, log_b, kept_b = train("dit_tiny", [3, 1], x, vectorize=True)
    assert_close_states(kept_a[1][3], kept_b[1][3], "s1 with s2 vs with s3", FLOAT)
    np.testing.assert_allclose(log_a[log_a.seed == 1]["loss"], log_b[log_b.seed == 1]["loss"], rtol=1e-5)


@pytest.mark.parametrize("vectorize", [False, True], ids=["one after another", "vmap"])
def test_a_killed_seed_group_resumes_bit_identically(vectorize, tmp_path, monkeypatch, caplog):
    """A group that dies in epoch 3 of 3, after the checkpoint of epoch 2, and is started again ends with the
    same weights, log and kept weights of every seed as a run that never stopped."""
    x = fields()
    settings = loop.LoopSettings(checkpoint=tmp_path / "train.ckpt", fingerprint="job", every_steps=2)
    seeds = [4, 7]
    whole_models, whole_log, whole_kept = train("unet_tiny", seeds, x, vectorize=vectorize)
    calls, real_noise = [], training.noise

    def dying_noise(*args):
        calls.append(1)
        if len(calls) == 2 * 2 + 2:  # the second batch of epoch 3 (two batches of 16 per epoch)
            raise KeyboardInterrupt("killed")
        return real_noise(*args)

    monkeypatch.setattr(training, "noise", dying_noise)
    with pytest.raises(KeyboardInterrupt):
        train("unet_tiny", seeds, x, settings, vectorize)
    assert settings.checkpoint.exists()
    monkeypatch.setattr(training, "noise", real_noise)
    with caplog.at_level(logging.INFO, logger="neurips26.loop"):
        models, log, kept = train("unet_tiny", seeds, x, settings, vectorize)
    assert "resuming from checkpoint" in caplog.text and "at step 2 of 3" in caplog.text
    assert log.equals(whole_log)
    for model, whole in zip(models, whole_models):
        assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), whole.state_dict().values()))
    for seed in seeds:
        assert all(torch.equal(kept[seed][e][k], whole_kept[seed][e][k]) for e in KEEP for k in kept[seed][e])


def test_a_diverging_seed_is_named():
    x = fields()
    models = [networks.build_network("dit_tiny", SPECS["dit_tiny"], 1, SIZE, seed=s) for s in (0, 1)]
    with torch.no_grad():
        next(models[1].parameters()).fill_(float("nan"))
    with pytest.raises(FloatingPointError, match="step 0 of seed 1"):
        training.train_epsilon(models, x, 1, BATCH, LR, [0, 1])


def test_seed_groups_name_one_job_per_arch_and_group():
    nets = {"dataset": "digits16", "n_train": 256, "seeds": [0, 1, 2, 5], "archs": {"unet_tiny": {}, "dit_tiny": {}}}
    assert experiment.seed_groups({**nets, "seeds_per_job": 3}) == [[0, 1, 2], [5]]
    assert experiment.seed_groups({**nets, "seeds_per_job": 1}) == [[0], [1], [2], [5]]
    runs = experiment.network_runs({"networks": {**nets, "seeds_per_job": 3}})
    assert runs == [
        "digits16/unet_tiny/N256/s0-1-2",
        "digits16/unet_tiny/N256/s5",
        "digits16/dit_tiny/N256/s0-1-2",
        "digits16/dit_tiny/N256/s5",
    ]
    assert experiment.parse_seeds("0-1-2") == [0, 1, 2] and experiment.parse_seeds("7") == [7]
    assert experiment.seeds_label([0, 1, 2]) == "0-1-2"
    with pytest.raises(ValueError, match="repeats a seed"):
        experiment.parse_seeds("1-1")
