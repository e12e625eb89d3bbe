"""Paper 03 on the job's device: profiles/slurm gives anadiffusion's autoencoder and denoiser training, sampling,
editing, the Seg. cLDM baseline's training and its sampling and editing, and evaluation (the feature network,
MS-SSIM) a GPU, so each places its networks and tensors on ``loop.job_device()``. Each runs its work at the smoke
config's network sizes on a tiny grid under a fake accelerator (tests/fake_gpu.py), where a tensor left on the CPU
next to one on the device fails, as on a GPU."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fake_gpu import fake_gpu
from neurips26.anadiffusion import assembly, diffusion, evaluation, features, model, seg_cldm, training
from neurips26.anadiffusion.template import build_template
from neurips26.common import ensemble, loop

AE, UNET = model.AUTOENCODERS["smoke"], model.DENOISERS["smoke"]
SCHEDULE = diffusion.NoiseSchedule(num_train_timesteps=1000, beta_start=0.0015, beta_end=0.0195)
STEPS, N = 4, 2


@pytest.fixture(scope="module")
def template():
    return build_template(12.0, (16, 20, 16))


def generation_inputs(template):
    """On the job's device: the smoke autoencoder, one denoiser per name of the shared side-conditioned layout, the
    whole-brain noise and each part's noise."""
    device = loop.job_device()
    torch.manual_seed(0)
    autoencoder = model.build_autoencoder(AE).to(device)
    nets = {name: model.build_denoiser(UNET, AE.latent_channels, len(model.SIDES) if name == "hemisphere" else None)
            for name in model.denoiser_names("shared_side_cond")}  # fmt: skip
    gen = torch.Generator().manual_seed(0)

    def draw(shape):
        z = diffusion.draw_sampling_noise((N, AE.latent_channels, *(s // AE.factor for s in shape)), gen)
        return diffusion.SamplingNoise(z.start.to(device), z.injection.to(device))

    parts = {p: draw(s.shape) for p, s in template.supports.items()}
    return autoencoder, {name: net.to(device) for name, net in nets.items()}, draw(template.shape), parts


@pytest.mark.gpu_rule("anadiffusion_train_ae")
def test_autoencoder_training_and_its_latent_scale_run_on_the_jobs_device(template):
    volumes = torch.rand(4, 1, *template.shape) * 2 - 1
    with fake_gpu() as device:
        (autoencoder,) = ensemble.build(lambda: model.build_autoencoder(AE), [0])
        autoencoder.to(loop.job_device())
        trace = training.train_autoencoder([autoencoder], volumes, 2, 2, 1e-3, [0])
        with pytest.raises(ValueError, match="standard deviation 0.0"):  # placed right; values read as zeros
            training.fit_latent_scale(autoencoder, volumes)
        assert next(autoencoder.parameters()).device == device
    assert len(trace) == 2


@pytest.mark.gpu_rule("anadiffusion_train_denoiser")
def test_side_conditioned_denoiser_training_runs_on_the_jobs_device():
    z = torch.randn(6, AE.latent_channels, 4, 8, 8)
    sides = torch.tensor([0, 0, 0, 1, 1, 1])
    with fake_gpu() as device:
        nets = ensemble.build(lambda: model.build_denoiser(UNET, AE.latent_channels, len(model.SIDES)), [0, 1])
        for net in nets:
            net.to(loop.job_device())
        trace = training.train_denoiser(nets, z, 2, 2, 1e-3, [0, 1], SCHEDULE, sides=sides)
        assert all(next(net.parameters()).device == device for net in nets)
    assert len(trace) == 2 * 2


def seg_label_maps(n: int, shape) -> torch.Tensor:
    """Label maps (n, X, Y, Z): left half LH, right half RH, the last slab CB (the cohort's labels)."""
    maps = torch.ones(n, *shape, dtype=torch.long)
    maps[:, shape[0] // 2 :] = 2
    maps[..., -2:] = 3
    return maps


@pytest.mark.gpu_rule("anadiffusion_train_denoiser")
def test_seg_cldm_training_runs_on_the_jobs_device():
    z = torch.randn(4, AE.latent_channels, 4, 8, 8)
    maps = seg_label_maps(4, (8, 16, 16))
    with fake_gpu() as device:
        nets = ensemble.build(lambda: seg_cldm.build_seg_cldm(UNET, AE.latent_channels), [0, 1])
        for net in nets:
            net.to(loop.job_device())
        trace = seg_cldm.train_seg_cldm(nets, z, maps, AE.factor, 2, 2, 1e-3, [0, 1], SCHEDULE)
        assert all(next(net.parameters()).device == device for net in nets)
    assert len(trace) == 2 * 2


@pytest.mark.gpu_rule("anadiffusion_seg_cldm")
def test_seg_cldm_sampling_and_editing_run_on_the_jobs_device(template):
    maps = seg_label_maps(N, template.shape)
    with fake_gpu() as device:
        autoencoder, _, whole, _ = generation_inputs(template)
        (net,) = ensemble.build(lambda: seg_cldm.build_seg_cldm(UNET, AE.latent_channels), [0])
        net.to(loop.job_device())
        z = seg_cldm.sample_seg_cldm(net, maps, AE.factor, whole, SCHEDULE, STEPS)
        # the job keeps its label maps and (recipient, donor) indices on its device; here on the CPU, where the meta
        # device takes them, because the fake device cannot run the label check (unique) or donor != recipient
        edit = seg_cldm.edit_seg_cldm(net, autoencoder, maps, "CB", torch.tensor([0]), torch.tensor([1]), whole,
                                      SCHEDULE, STEPS)  # fmt: skip
        assert z.device == device and edit.volumes.device == device
    assert z.shape == whole.start.shape and edit.volumes.shape == (1, 1, *template.shape)


@pytest.mark.gpu_rule("anadiffusion_sample")
def test_sampling_every_method_runs_on_the_jobs_device(template):
    with fake_gpu() as device:
        autoencoder, nets, whole, parts = generation_inputs(template)
        layout = assembly.TemplateLayout.from_template(template)
        assets, volumes = assembly.sample_methods(nets, autoencoder, layout, "shared_side_cond", parts, whole,
                                                  SCHEDULE, STEPS, {"ana": (2, 1.0)})  # fmt: skip
        assert {v.device for v in volumes.values()} == {device}
    assert {"ldm", "paste", "ana"} <= set(volumes) and volumes["ana"].shape == (N, 1, *template.shape)
    assert assets.images["CB"].shape == (N, 1, *template.supports["CB"].shape)


@pytest.mark.gpu_rule("anadiffusion_edit")
def test_an_edit_runs_on_the_jobs_device(template):
    with fake_gpu() as device:
        autoencoder, nets, whole, _ = generation_inputs(template)
        images = {p: torch.zeros(N, 1, *s.shape, device=device) for p, s in template.supports.items()}
        # the job puts its (recipient, donor) indices on its device; here they stay on the CPU, where the meta device
        # takes them, because the fake device cannot run swap_part's donor != recipient check (nonzero)
        index = torch.tensor([0]), torch.tensor([1])
        result = assembly.edit(assembly.PartAssets({}, images), "LH", *index,
                               assembly.TemplateLayout.from_template(template), nets["whole"], autoencoder, whole,
                               SCHEDULE, STEPS, 2, 1.0)  # fmt: skip
        assert result.volumes.device == device
    assert result.volumes.shape == (1, 1, *template.shape)


@pytest.mark.gpu_rule("anadiffusion_evaluate")
def test_evaluation_features_and_edit_scores_run_on_the_jobs_device(template):
    rng = np.random.default_rng(0)
    real = rng.uniform(-1, 1, (3, *template.shape)).astype(np.float32)
    generated = {("ana", 0): rng.uniform(-1, 1, (3, *template.shape)).astype(np.float32)}
    volumes = rng.uniform(-1, 1, (4, *template.shape)).astype(np.float32)
    with fake_gpu() as device:
        network = features.build_feature_network("rand3d", seed=0)
        fd = evaluation.fd_table(network, real, generated, evaluation.regions(template), 5, 0.95, device=device)
        edits = evaluation.edit_table("ana", 0, "LH", volumes[:2], volumes[2:], volumes[:2], template, [0, 1], [2, 3],
                                      1, 5, 1, device)  # fmt: skip
    assert sorted(fd["region"]) == sorted(evaluation.regions(template)) and len(edits) == 2
