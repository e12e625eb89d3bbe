"""Paper 11 on the job's device (issue 38): profiles/slurm gives ecfr_train and ecfr_evaluate a GPU, so training
(the reconstruction networks and CFM, unified and per class) and scoring place their networks and batches on
``loop.job_device()``; so does the quick scale's teacher pretraining (ecfr_teacher, on the CPU: at paper scale it
only loads ImageNet weights). Run under a fake accelerator (tests/fake_gpu.py), where a network or batch left on the CPU
fails as it would on a GPU. The networks are the smoke config's, on a few 64-pixel images."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import yaml

from conftest import ROOT
from fake_gpu import fake_gpu
from neurips26.ecfr.experiment import fit_run, score_run
from neurips26.ecfr.teacher import pretrain_teacher

SMOKE = yaml.safe_load((ROOT / "config/ecfr.yaml").read_text())["smoke"]
CFG = {key: SMOKE[key] for key in ("teacher", "model", "cfm")} | {"train": {**SMOKE["train"], "steps": 2, "batch": 2}}
CLASSES = np.array(["ring", "ring", "dome", "dome"])


def images(n: int = 4) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    return torch.randn(n, 3, 64, 64, generator=gen), torch.randn(n, 3, 64, 64, generator=gen)


@pytest.mark.gpu_rule("ecfr_train")
@pytest.mark.parametrize("setting", ["unified", "per_class"])
@pytest.mark.parametrize("method", ["ecfr", "same_modal", "cfm"])
def test_training_runs_on_the_jobs_device_and_saves_its_states_from_the_cpu(method, setting):
    rgb, depth = images()
    with fake_gpu():
        states, rows = fit_run(method, setting, 0, rgb, depth, CLASSES, CFG, None)
    assert sorted(states) == (["all"] if setting == "unified" else ["dome", "ring"]) and len(rows) >= 2
    assert all(v.device.type == "cpu" for state in states.values() for v in state.values())


@pytest.mark.gpu_rule("ecfr_evaluate")
@pytest.mark.parametrize("method", ["ecfr", "same_modal", "cfm"])
def test_scoring_runs_on_the_jobs_device(method):
    rgb, depth = images()
    states, _ = fit_run(method, "unified", 0, rgb, depth, CLASSES, {**CFG, "train": {**CFG["train"], "steps": 1}}, None)
    with fake_gpu():
        maps = score_run(method, states, rgb, depth, CLASSES, CFG, None, sigma=1.0)
    assert maps.shape == (4, 64, 64)


@pytest.mark.gpu_rule("ecfr_teacher")
def test_teacher_pretraining_runs_on_the_jobs_device_and_returns_the_teacher_on_the_cpu():
    with fake_gpu():
        backbone, rows = pretrain_teacher((8, 16, 32), (1, 1, 1), 32, steps=2, batch=4, lr=3e-3, seed=0)
    assert len(rows) == 2 and all(p.device.type == "cpu" for p in backbone.parameters())
