"""Paper 13 on the job's device: profiles/slurm gives spectral_zo_train a GPU at paper scale, so every method's
training (tuning and seeded runs) places its weights and batches on ``loop.job_device()``, the draws of the run's CPU
generator are moved there (on a real GPU the probe directions are drawn there by a CUDA generator seeded from it) and
the weights come back on the CPU. Run under a fake accelerator (tests/fake_gpu.py), where a tensor left on the CPU
fails as it would on a GPU."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from conftest import ROOT
from fake_gpu import fake_gpu
from neurips26.common.config import load_yaml
from neurips26.spectral_zo import experiment
from neurips26.spectral_zo.training import probe_generator

SMOKE = load_yaml(ROOT / "config/spectral_zo.yaml")["smoke"]
BLOCK = {**SMOKE["train"], "budget": 40, "evals": 1, "lr_grid": [0.1], "seeds": [0]}


def arrays(n: int = 24, d: int = 16) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {f"{x}_{part}": (rng.random((n, d), dtype=np.float32) if x == "x" else rng.integers(0, 10, n))
            for part in ("train", "val", "test") for x in ("x", "y")}  # fmt: skip


@pytest.mark.gpu_rule("spectral_zo_train")
@pytest.mark.parametrize("method", sorted(SMOKE["methods"]))
def test_every_method_trains_on_the_jobs_device_and_returns_cpu_weights(method):
    spec, data = SMOKE["methods"][method], arrays()
    network = experiment.network_for({"hidden": [8]}, 16)
    with fake_gpu():
        rows, lr = experiment.tune(spec, network, data, BLOCK, lambda message: None)
        result = experiment.train_seed(spec, network, data, BLOCK, lr, 0)
    assert len(rows) == 1 and result.rows  # values on the fake device are zeros: placement is what is tested
    assert all(w.device.type == "cpu" for w in result.params)


def test_probe_directions_are_drawn_by_the_runs_generator_off_a_gpu():
    generator = torch.Generator().manual_seed(3)
    assert probe_generator(generator, torch.device("cpu")) is generator
    assert probe_generator(generator, torch.device("meta")) is generator


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_on_a_gpu_a_cuda_generator_seeded_from_the_run_draws_the_directions():
    first = probe_generator(torch.Generator().manual_seed(3), torch.device("cuda"))
    second = probe_generator(torch.Generator().manual_seed(3), torch.device("cuda"))
    assert first.device.type == "cuda"
    assert torch.equal(torch.randn(5, generator=first, device="cuda"), torch.randn(5, generator=second, device="cuda"))
