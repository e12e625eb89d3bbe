"""Paper 01, seeds as a batch dimension (issue 23): the seeds of a cell trained together in one job give each
seed what it gets trained alone (final weights, loss curve, samples, metrics), and the batched forwards of the
architectures are their modules' forwards."""

from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from neurips26.common import ensemble
from neurips26.common.io import load_npz, save_npz
from neurips26.pred_loss_space import artifacts, batched, models, sampling, training

ROOT = Path(__file__).resolve().parents[1]
CLOSE = {"rtol": 1e-5, "atol": 1e-6}  # float rounding (in practice the results agree bit for bit on the CPU)
ARCHS = [
    ("jit_tiny", {"image_size": 8, "channels": 1, "patch": 2, "width": 16, "depth": 2, "heads": 2}, (1, 8, 8)),
    ("jit_tiny_bn", {"image_size": 8, "channels": 3, "patch": 8, "width": 16, "depth": 1, "heads": 4}, (3, 8, 8)),
    ("mlp_toy", {"dim": 8, "width": 16, "depth": 3}, (8,)),
]


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def members(arch: str, spec: dict, seeds: list[int], randomize: bool = False) -> list[torch.nn.Module]:
    """One model per seed; `randomize` draws every weight (the zero-initialised adaLN and head included), so
    that a forward exercises every layer."""
    built = ensemble.build(lambda: models.build_model(arch, spec), seeds)
    if randomize:
        with torch.no_grad():
            for seed, model in zip(seeds, built):
                g = torch.Generator().manual_seed(100 + seed)
                for p in model.parameters():
                    p.copy_(torch.randn(p.shape, generator=g) * 0.3)
    return built


@pytest.mark.parametrize(
    "arch, spec, shape",
    [*ARCHS, ("unet_tiny", {"channels": 1, "base": 8, "t_dim": 16}, (1, 8, 8))],
    ids=["jit_patches", "jit_one_token", "mlp_toy", "unet_vmap"],
)
@pytest.mark.parametrize("seeds", [[0], [0, 1, 2]], ids=["one_seed", "three_seeds"])
def test_the_batched_forward_is_each_members_own_forward(arch, spec, shape, seeds):
    built = members(arch, spec, seeds, randomize=True)
    net = batched.SeedBatch(built)
    g = torch.Generator().manual_seed(7)
    z, t = torch.randn(len(seeds), 5, *shape, generator=g), torch.rand(len(seeds), 5, generator=g)
    out = net(z, t)
    assert out.shape == z.shape
    for i, model in enumerate(built):
        torch.testing.assert_close(out[i], model(z[i], t[i]), **CLOSE)
        assert net.member_state_dict(i).keys() == model.state_dict().keys()
        assert all(torch.equal(net.member_state_dict(i)[k], v) for k, v in model.state_dict().items())


def test_a_seed_batch_refuses_mixed_architectures_and_misshaped_inputs():
    toy = models.build_model("mlp_toy", {"dim": 8})
    with pytest.raises(ValueError, match="share one architecture"):
        batched.SeedBatch([toy, models.build_model("jit_tiny", {})])
    with pytest.raises(ValueError, match=r"needs z of shape \(2, B, \.\.\.\)"):
        batched.SeedBatch([toy, toy])(torch.zeros(3, 4, 8), torch.zeros(3, 4))


@pytest.mark.parametrize("arch, spec, shape", ARCHS, ids=[a for a, _, _ in ARCHS])
def test_seeds_trained_together_equal_each_seed_trained_alone(arch, spec, shape):
    """Final EMA and raw weights, the loss curve and the samples of each seed from one batched run of [0, 1, 2]
    equal those of the seed's own run (initialisation, batches, noise and t are each seed's own)."""
    x = torch.rand(96, *shape, generator=torch.Generator().manual_seed(3)) * 2 - 1
    args = dict(pred="eps", loss="v", steps=12, batch=16, lr=2e-3, p_mean=-0.8, p_std=0.8, ema_decay=0.9, log_every=4)
    seeds = [0, 1, 2]
    together = members(arch, spec, seeds)
    emas, log = training.train_denoisers(together, x, seeds=seeds, **args)
    assert log["seed"].tolist() == [s for s in seeds for _ in range(4)]  # steps 0, 4, 8, 11 of each seed
    for i, seed in enumerate(seeds):
        (alone,) = members(arch, spec, [seed])
        ema, own_log = training.train_denoiser(alone, x, seed=seed, **args)
        for key, value in ema.items():
            torch.testing.assert_close(emas[i][key], value, **CLOSE)
        for key, value in alone.state_dict().items():
            torch.testing.assert_close(together[i].state_dict()[key], value, **CLOSE)
        mine = log[log["seed"] == seed].drop(columns="seed").reset_index(drop=True)
        pd.testing.assert_frame_equal(mine, own_log, rtol=1e-5, atol=1e-6)
        batched_model, own_model = models.build_model(arch, spec), models.build_model(arch, spec)
        batched_model.load_state_dict(emas[i])
        own_model.load_state_dict(ema)
        torch.testing.assert_close(
            sampling.heun_sample(batched_model, 6, shape, 3, "eps", seed=seed + 1000),
            sampling.heun_sample(own_model, 6, shape, 3, "eps", seed=seed + 1000),
            **CLOSE,
        )
    assert not torch.equal(emas[0][next(iter(emas[0]))], emas[1][next(iter(emas[1]))])  # the seeds differ


def test_a_diverging_seed_is_named():
    spec = {"dim": 8, "width": 16, "depth": 2}
    x = torch.rand(32, 8)
    built = members("mlp_toy", spec, [3, 5])
    with torch.no_grad():
        built[1].net[2].weight[0, 0] = float("nan")  # seed 5 only
    match = r"step 0: loss nan; first non-finite: weight of model.net \(pred=x, loss=x diverged at step 0 \(seed 5\)"
    with pytest.raises(FloatingPointError, match=match):
        training.train_denoisers(built, x, "x", "x", 30, 8, 1e-3, -0.8, 0.8, [3, 5])
    with pytest.raises(ValueError, match="2 models for 1 seeds"):
        training.train_denoisers(members("mlp_toy", spec, [3, 5]), x, "x", "x", 3, 8, 1e-3, -0.8, 0.8, [3])


class Named(list):
    """Snakemake's named lists as the scripts read them: values in order, each also an attribute (`input.data`),
    and name -> value under dict()."""

    def __init__(self, *values, **items):
        super().__init__([*values, *items.values()])
        self.__dict__.update(items)
        self._names = list(items)

    def keys(self):
        return list(self._names)

    def items(self):
        return [(name, getattr(self, name)) for name in self._names]

    def __getitem__(self, key):
        return getattr(self, key) if isinstance(key, str) else super().__getitem__(key)


def run_jobs(folder: Path, data_file: Path, group: str) -> Path:
    """The train, sample and evaluate scripts of one job of the toy cell pred x, loss v, for seed group `group`."""
    run = folder / f"s{group}"
    run.mkdir(parents=True)
    spec = {"dim": 8, "width": 16, "depth": 3}
    noise = {"p_mean": -0.8, "p_std": 0.8, "t_eps": 0.05, "t_min": 0.05}
    wildcards = Named(scale="test", dataset="toy", arch="mlp_toy", pred="x", loss="v", seeds=group)
    common = dict(wildcards=wildcards, threads=1)
    jobs = [
        (
            "train",
            Named(data=str(data_file)),
            Named(model=str(run / "model.pt"), log_table=str(run / "train_log.parquet")),
            Named(
                spec=spec,
                bottleneck=False,
                train={"steps": 10, "batch": 16, "lr": 2e-3, "ema": 0.9, "checkpoint_every": 5},
                noise=noise,
            ),
        ),
        (
            "sample",
            Named(model=str(run / "model.pt")),
            Named(str(run / "samples.npz")),
            Named(spec=spec, sample={"n": 24, "steps": 3}, t_eps=0.05, t_min=0.05),
        ),
        (
            "evaluate",
            Named(
                data=str(data_file),
                model=str(run / "model.pt"),
                train_log=str(run / "train_log.parquet"),
                samples=str(run / "samples.npz"),
                features=[],
                fid=[],
            ),
            Named(str(run / "metrics.parquet")),
            Named(spec=spec, bottleneck=False, t_grid=[0.2, 0.7], n_test=16, t_eps=0.05, t_min=0.05),
        ),
    ]
    for rule, inputs, outputs, params in jobs:
        smk = Named(
            input=inputs,
            output=outputs,
            params=params,
            log=[str(run / f"{rule}.log")],
            rule=f"pred_loss_space_{rule}",
            **common,
        )
        runpy.run_path(str(ROOT / f"scripts/pred_loss_space/{rule}.py"), init_globals={"snakemake": smk})
    return run


def test_a_jobs_seed_group_gives_each_seed_what_its_own_job_gives(tmp_path):
    """The rule scripts themselves: one job of seeds 0-2 against a job of seed 0 and one of seed 2 (model file,
    training log, samples and metrics of each seed)."""
    data_file = tmp_path / "toy.npz"  # points of a plane in 8 dimensions, as the toy dataset (without sklearn)
    rng = np.random.default_rng(0)
    projection, _ = np.linalg.qr(rng.normal(size=(8, 2)))
    points = (rng.uniform(-0.8, 0.8, size=(80, 2)) @ projection.T).astype(np.float32)
    save_npz(data_file, x_train=points[:64], x_test=points[64:], projection=projection)
    group = run_jobs(tmp_path, data_file, "0-2")
    states, settings = artifacts.load_seed_models(group / "model.pt")
    assert settings["seeds"] == [0, 2] and sorted(states) == [0, 2]
    log, samples = pd.read_parquet(group / "train_log.parquet"), load_npz(group / "samples.npz")
    metrics = pd.read_parquet(group / "metrics.parquet")
    assert samples["seeds"].tolist() == [0, 2] and sorted(metrics["seed"].unique()) == [0, 2]
    timing = metrics["metric"] == "train_seconds"
    for index, seed in enumerate([0, 2]):
        alone = run_jobs(tmp_path, data_file, str(seed))
        own_states, _ = artifacts.load_seed_models(alone / "model.pt")
        for key, value in own_states[seed].items():
            torch.testing.assert_close(states[seed][key], value, **CLOSE)
        own_log = pd.read_parquet(alone / "train_log.parquet")
        pd.testing.assert_frame_equal(
            log[log["seed"] == seed].reset_index(drop=True), own_log, check_exact=False, rtol=1e-5, atol=1e-6
        )
        own_samples = load_npz(alone / "samples.npz")
        np.testing.assert_allclose(samples["samples"][index], own_samples["samples"][0], **CLOSE)
        own_metrics = pd.read_parquet(alone / "metrics.parquet")
        own_timing = own_metrics["metric"] == "train_seconds"
        mine = metrics[(metrics["seed"] == seed) & ~timing].reset_index(drop=True)
        pd.testing.assert_frame_equal(mine, own_metrics[~own_timing].reset_index(drop=True), rtol=1e-5, atol=1e-6)
