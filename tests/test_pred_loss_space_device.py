"""Paper 01: every GPU rule (train, sample, evaluate, fid_reference) and the feature classifier's training (features)
place their models and data on the job's device. Each runs its training, sampling or scoring at a tiny size under a
fake accelerator (tests/fake_gpu.py), where a tensor left on the CPU next to one on the device fails, as on a GPU."""

import numpy as np
import pytest
import torch

from fake_gpu import fake_gpu
from neurips26.common import loop
from neurips26.pred_loss_space import evaluation, inception, models, sampling, training

CASES = [
    ("jit_tiny", {"image_size": 16, "channels": 1, "patch": 4, "width": 32, "depth": 1, "heads": 2}, (1, 16, 16)),
    ("unet_tiny", {"channels": 1, "base": 8}, (1, 16, 16)),
    ("mlp_toy", {"dim": 8, "width": 16, "depth": 2}, (8,)),
]
IDS = [arch for arch, _, _ in CASES]


def on_device(arch: str, spec: dict) -> torch.nn.Module:
    torch.manual_seed(0)
    return models.build_model(arch, spec).to(loop.job_device())


@pytest.mark.gpu_rule("pred_loss_space_train")
@pytest.mark.parametrize("arch, spec, shape", CASES, ids=IDS)
def test_training_runs_on_the_job_device(arch, spec, shape):
    x = torch.rand(16, *shape) * 2 - 1
    with fake_gpu() as device:
        model = on_device(arch, spec)
        ema, log = training.train_denoiser(
            model, x, "x", "v", steps=3, batch=4, lr=1e-3, p_mean=-0.8, p_std=0.8, seed=0, log_every=1
        )
        assert next(model.parameters()).device == device
    assert log["step"].tolist() == [0, 1, 2]
    assert all(v.device.type == "cpu" for v in ema.values())


@pytest.mark.gpu_rule("pred_loss_space_features")
def test_the_feature_classifier_trains_on_the_job_device():
    """The FD proxy's classifier (rule pred_loss_space_features; no GPU in the profile, see test_gpu_placement)."""
    x, y = torch.rand(16, 1, 16, 16), torch.arange(16) % 3
    with fake_gpu():
        net, accuracy = training.train_feature_net(x, y, steps=2, batch=4, lr=1e-3, seed=0, feature_dim=4)
    assert all(p.device.type == "cpu" for p in net.parameters()) and accuracy == 0.0  # values read back as zeros


@pytest.mark.gpu_rule("pred_loss_space_sample")
@pytest.mark.parametrize("arch, spec, shape", CASES, ids=IDS)
def test_sampling_runs_on_the_job_device(arch, spec, shape):
    with fake_gpu():
        samples = sampling.heun_sample(on_device(arch, spec), 3, shape, 2, "eps", seed=0)
    assert samples.shape == (3, *shape) and samples.device.type == "cpu"


@pytest.mark.gpu_rule("pred_loss_space_evaluate")
@pytest.mark.parametrize("arch, spec, shape", CASES, ids=IDS)
def test_scoring_runs_on_the_job_device(arch, spec, shape):
    x = torch.rand(6, *shape) * 2 - 1
    with fake_gpu():
        errors = sampling.denoise_errors(on_device(arch, spec), x, "v", [0.3, 0.7], seed=0)
    assert len(errors) == 2


@pytest.mark.gpu_rule("pred_loss_space_evaluate")
def test_the_feature_embedder_runs_on_the_job_device():
    state = models.FeatureNet(channels=1, n_classes=3, feature_dim=4).state_dict()
    with fake_gpu() as device:
        embed = evaluation.feature_embedder(state, 4, channels=1, n_classes=3, device=loop.job_device())
        features = embed(np.zeros((5, 1, 16, 16), dtype=np.float32))
        assert device.type == "meta"
    assert features.shape == (5, 4)


@pytest.mark.gpu_rule("pred_loss_space_fid_reference")
@pytest.mark.gpu_rule("pred_loss_space_evaluate")
def test_inception_features_run_on_the_job_device():
    with fake_gpu():
        device = loop.job_device()
        net = inception.FIDInceptionV3().to(device).eval().requires_grad_(False)
        features = inception.inception_features(net, np.zeros((3, 1, 16, 16), dtype=np.float32), batch=2, device=device)
    assert features.shape == (3, inception.FEATURE_DIM)


def test_a_batch_left_on_the_cpu_fails_under_the_fake_device():
    """The check has teeth: a model on the fake device fed a CPU batch fails."""
    arch, spec, shape = CASES[0]
    with fake_gpu():
        model = on_device(arch, spec)
        with pytest.raises((RuntimeError, NotImplementedError)):
            model(torch.zeros(2, *shape), torch.full((2,), 0.5))
