"""Paper 13 on the job's device: profiles/slurm gives spectral_zo_train a GPU at paper scale, so every method's
training (tuning and seeded runs) places its weights and batches on ``loop.job_device()``, every random draw made on
the CPU generator is moved there (the same numbers on any device) and the weights come back on the CPU. Run under a
fake accelerator (tests/fake_gpu.py), where a tensor left on the CPU fails as it would on a GPU."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import ROOT
from fake_gpu import fake_gpu
from neurips26.common.config import load_yaml
from neurips26.spectral_zo import experiment

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
