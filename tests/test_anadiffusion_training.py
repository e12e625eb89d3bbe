"""Paper 03 (AnaDiffusion): autoencoder and denoiser training with seeds as a batch dimension in the common loop.
Each seed of a batched group equals its single-seed run (bit for bit one after another, to float rounding under
vmap), a killed run resumes bit-identically, and a non-finite loss stops naming the seed."""

import pandas as pd
import pytest
import torch

from neurips26.anadiffusion import diffusion as D
from neurips26.anadiffusion import model as M
from neurips26.anadiffusion import training as T
from neurips26.common import ensemble, loop

AE, UNET = M.AUTOENCODERS["smoke"], M.DENOISERS["smoke"]
SCHEDULE = D.NoiseSchedule(num_train_timesteps=100)
SEEDS, STEPS, BATCH, LR = [0, 1], 2, 2, 1e-3
# under vmap, float rounding differs and Adam's g / sqrt(v) amplifies it on tiny gradients (measured 4e-5 after two
# steps at lr 1e-3 on weights of scale 0.07); a member trained on another member's data or noise is off by ~lr
EXACT, FLOAT = {"rtol": 0.0, "atol": 0.0}, {"rtol": 1e-3, "atol": 2e-4}


def volumes(n=4):
    return torch.rand(n, 1, 8, 8, 8, generator=torch.Generator().manual_seed(0)) * 2 - 1


def latents(n=6):
    return torch.randn(n, AE.latent_channels, 4, 4, 4, generator=torch.Generator().manual_seed(1))


def train_ae(seeds, **kw):
    models = ensemble.build(lambda: M.build_autoencoder(AE), seeds)
    return models, T.train_autoencoder(models, volumes(), STEPS, BATCH, LR, seeds, **kw)


def train_hemisphere(seeds, **kw):
    models = ensemble.build(lambda: M.build_denoiser(UNET, AE.latent_channels, sides=2), seeds)
    sides = torch.tensor([0, 0, 0, 1, 1, 1])
    return models, T.train_denoiser(models, latents(), STEPS, BATCH, LR, seeds, SCHEDULE, sides=sides, **kw)


def test_kl_divergence_by_hand():
    mu, sigma = torch.zeros(2, 3, 4), torch.ones(2, 3, 4)
    assert float(T.kl_divergence(mu, sigma)) == 0.0
    # mu = 1, sigma = e: 0.5 * (1 + e^2 - 2 - 1) per element, summed over 12 elements, averaged over the batch
    value = T.kl_divergence(torch.ones(2, 3, 4), torch.full((2, 3, 4), torch.e))
    torch.testing.assert_close(value, torch.tensor(6 * (torch.e**2 - 2)))
    halves = T.kl_divergence(torch.stack([torch.zeros(3, 4), torch.ones(3, 4)]), torch.ones(2, 3, 4))
    torch.testing.assert_close(halves, torch.tensor(3.0))  # (0 + 0.5 * 12) / 2
    assert T.kl_divergence(mu[None].expand(5, -1, -1, -1), sigma[None].expand(5, -1, -1, -1), leading=2).shape == (5,)


@pytest.mark.parametrize(
    ("train", "vectorize"),
    [(train_ae, False), (train_hemisphere, True)],
    ids=["autoencoder, one after another", "side-conditioned denoiser, vmap"],
)
def test_each_seed_of_a_batched_group_equals_its_single_seed_run(train, vectorize):
    tol = FLOAT if vectorize else EXACT
    group, group_log = train(SEEDS, vectorize=vectorize)
    assert group_log.groupby("seed").size().tolist() == [STEPS] * len(SEEDS)
    for i, seed in [(1, 1)]:  # the second member: its slices of the stacked weights are not the first's
        (alone,), alone_log = train([seed])
        for key, value in alone.state_dict().items():
            torch.testing.assert_close(group[i].state_dict()[key], value, **tol, msg=key)
        mine = group_log[group_log["seed"] == seed].reset_index(drop=True)
        pd.testing.assert_series_equal(mine["loss"], alone_log["loss"], **tol)
    first = group[0].state_dict()
    assert any(not torch.equal(first[k], group[1].state_dict()[k]) for k in first)  # each seed its own run
    assert group_log["loss"].notna().all()


def test_a_killed_run_resumes_bit_identically(tmp_path):
    settings = loop.LoopSettings(checkpoint=tmp_path / "ckpt", fingerprint="job", every_steps=1, name="test")
    models = ensemble.build(lambda: M.build_denoiser(UNET, AE.latent_channels), [0, 1])
    data, drawn = latents(), []

    class Killed(Exception):
        pass

    real_draw = D.draw_timesteps

    def killing_draw(shape, generator, schedule):
        drawn.append(1)
        if len(drawn) == 5:  # the third step's first member: after the checkpoint of step 2
            raise Killed
        return real_draw(shape, generator, schedule)

    D.draw_timesteps = killing_draw
    try:
        with pytest.raises(Killed):
            T.train_denoiser(models, data, 3, BATCH, LR, [0, 1], SCHEDULE, settings=settings)
    finally:
        D.draw_timesteps = real_draw
    resumed_models = ensemble.build(lambda: M.build_denoiser(UNET, AE.latent_channels), [0, 1])
    resumed = T.train_denoiser(resumed_models, data, 3, BATCH, LR, [0, 1], SCHEDULE, settings=settings)
    fresh_models = ensemble.build(lambda: M.build_denoiser(UNET, AE.latent_channels), [0, 1])
    fresh = T.train_denoiser(fresh_models, data, 3, BATCH, LR, [0, 1], SCHEDULE)
    pd.testing.assert_frame_equal(resumed, fresh)
    for a, b in zip(resumed_models, fresh_models):
        for key, value in a.state_dict().items():
            assert torch.equal(value, b.state_dict()[key]), key


def test_a_non_finite_loss_stops_naming_the_seed():
    models = ensemble.build(lambda: M.build_denoiser(UNET, AE.latent_channels), [4, 7])
    bad = latents()
    bad[:, 0, 0, 0, 0] = float("nan")
    with pytest.raises(loop.Diverged, match="seed 4"):
        T.train_denoiser(models, bad, 2, BATCH, LR, [4, 7], SCHEDULE)
    with pytest.raises(ValueError, match="sides"):
        T.train_denoiser(models, latents(), 1, BATCH, LR, [4, 7], SCHEDULE, sides=torch.tensor([0, 1]))
    with pytest.raises(ValueError, match=r"\(2, N, \.\.\.\)"):
        T.train_denoiser(models, latents()[None].expand(3, -1, -1, -1, -1, -1), 1, BATCH, LR, [4, 7], SCHEDULE)


def test_per_seed_data_and_the_latent_scale():
    models = ensemble.build(lambda: M.build_autoencoder(AE), [0, 1])
    per_seed = torch.stack([volumes(), -volumes()])
    log = T.train_autoencoder(models, per_seed, 1, BATCH, LR, [0, 1])
    (alone,) = ensemble.build(lambda: M.build_autoencoder(AE), [1])
    alone_log = T.train_autoencoder([alone], -volumes(), 1, BATCH, LR, [1])
    assert log[log["seed"] == 1]["loss"].tolist() == alone_log["loss"].tolist()  # seed 1 trained on its own set
    scale = T.fit_latent_scale(models[0], volumes())
    assert float(models[0].scale) == scale
    with torch.no_grad():
        torch.testing.assert_close(models[0].encode(volumes()).std(), torch.tensor(1.0), rtol=1e-4, atol=1e-4)
