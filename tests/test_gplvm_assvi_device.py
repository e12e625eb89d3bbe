"""Paper 17 on the job's device (issue 38): every rule that trains a torch model places it on ``loop.job_device()``
(tests/test_gpu_placement.py finds gplvm_assvi_train from its script). Its fits run here under a fake accelerator
(tests/fake_gpu.py), where a tensor left on the CPU fails as it would on a GPU: the model, the data, the minibatch
rows and the draws of U and X, which the run's CPU generator makes and moves to the device (the same draws on any
device). The models are the smoke config's, on a small S-curve."""

from __future__ import annotations

import pytest
import torch
import yaml

from conftest import ROOT
from fake_gpu import fake_gpu
from neurips26.gplvm_assvi.experiment import build_model
from neurips26.gplvm_assvi.models import fit
from neurips26.gplvm_assvi.names import GPLVM_METHODS

SMOKE = yaml.safe_load((ROOT / "config/gplvm_assvi.yaml").read_text())["smoke"]
DATASET = {"latent_dim": 2, "inducing": 6}


def data() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    y = torch.randn(24, 5, generator=gen, dtype=torch.float64)
    return y, torch.rand(24, 5, generator=gen) > 0.2


@pytest.mark.gpu_rule("gplvm_assvi_train")
@pytest.mark.parametrize("batch", [None, 8])
@pytest.mark.parametrize("method", sorted(GPLVM_METHODS))
def test_training_runs_on_the_jobs_device(method, batch):
    y, mask = data()
    model = build_model(method, y, mask, DATASET, SMOKE["model"], seed=0)
    with fake_gpu():
        from neurips26.common import loop

        device = loop.job_device()
        model, y, mask = model.to(device), y.to(device), mask.to(device)
        trace = fit(model, y, mask, 2, 0.01, batch=batch, seed=0)
    assert len(trace) == 2 and all(p.device.type == "meta" for p in model.parameters())


def test_the_draws_moved_from_the_runs_generator_follow_its_seed():
    """The draws of U and of the minibatch rows come from the run's seeded CPU generators wherever the model lives:
    the same seed gives the same bound at every step, another seed another one."""
    y, mask = data()

    def trace(seed):
        model = build_model("ssvi_amort", y, mask, DATASET, SMOKE["model"], seed=seed)
        return fit(model, y, mask, 3, 0.01, batch=8, seed=seed)

    assert trace(0) == trace(0) and trace(0) != trace(1)
