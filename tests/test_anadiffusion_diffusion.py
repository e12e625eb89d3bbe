"""Paper 03 (AnaDiffusion): the noise schedule, DDIM and the scaffold injection with r_inj steps remaining at
strength alpha (alpha = 0 is the monolithic LDM's run; alpha = 1 replaces the trajectory by the noised scaffold)."""

import pytest
import torch

from neurips26.anadiffusion import diffusion as D

SCHEDULE = D.NoiseSchedule(num_train_timesteps=200)
STEPS = 20
SHAPE = (3, 2, 4, 6, 4)  # B, C, x, y, z


def toy_denoiser(calls=None):
    """A fixed smooth function of (z, t) standing in for a network, counting its calls."""

    def denoise(z, t):
        if calls is not None:
            calls.append(int(t.flatten()[0]))
        scale = (t.float() / 200).reshape(*t.shape, 1, 1, 1, 1)
        return 0.3 * torch.tanh(z) * (1 + scale) + 0.1 * z.roll(1, dims=-1)

    return denoise


def noise(seed=0, shape=SHAPE):
    return D.draw_sampling_noise(shape, torch.Generator().manual_seed(seed))


def test_add_noise_is_monais_forward_process_and_vectorises_over_seeds():
    from monai.networks.schedulers import DDPMScheduler

    monai = DDPMScheduler(num_train_timesteps=200, schedule="scaled_linear_beta", beta_start=0.0015, beta_end=0.0195)
    z0, eps = torch.randn(2, 3, *SHAPE[1:]), torch.randn(2, 3, *SHAPE[1:])
    t = torch.tensor([[0, 50, 199], [7, 100, 150]])
    ours = D.add_noise(z0, eps, t, SCHEDULE)
    for s in range(2):
        torch.testing.assert_close(ours[s], monai.add_noise(z0[s], eps[s], t[s]))
    with pytest.raises(ValueError, match="do not lead"):
        D.add_noise(z0, eps, t.T, SCHEDULE)


def test_ddim_timesteps_run_from_t_minus_one_to_zero():
    ts = SCHEDULE.ddim_timesteps(STEPS)
    assert len(ts) == STEPS and int(ts[0]) == 199 and int(ts[-1]) == 0 and bool((ts[:-1] > ts[1:]).all())
    with pytest.raises(ValueError, match="exceed"):
        SCHEDULE.ddim_timesteps(201)


def test_ddim_with_the_true_noise_returns_the_clean_latent():
    """With an oracle eps (the noise that leads from x0 to z_t), every DDIM step stays on the line through x0, so
    the sample is x0: the step's arithmetic and the next-timestep bookkeeping are right."""
    x0 = torch.randn(SHAPE)
    abar = SCHEDULE.alphas_cumprod

    def oracle(z, t):
        a = abar[t].reshape(-1, 1, 1, 1, 1)
        return (z - a.sqrt() * x0) / (1 - a).sqrt()

    out = D.ddim_sample(oracle, noise(), SCHEDULE, STEPS)
    torch.testing.assert_close(out, x0, rtol=1e-4, atol=1e-4)


def test_alpha_zero_is_exactly_the_monolithic_ldm_sample_for_the_same_noise():
    scaffold = torch.randn(SHAPE) * 3
    mono = D.ddim_sample(toy_denoiser(), noise(), SCHEDULE, STEPS)
    for r_inj in (1, 10, STEPS):
        off = D.ddim_sample(toy_denoiser(), noise(), SCHEDULE, STEPS, scaffold=scaffold, r_inj=r_inj, alpha=0.0)
        assert torch.equal(off, mono)
    half = D.ddim_sample(toy_denoiser(), noise(), SCHEDULE, STEPS, scaffold=scaffold, r_inj=10, alpha=0.5)
    full = D.ddim_sample(toy_denoiser(), noise(), SCHEDULE, STEPS, scaffold=scaffold, r_inj=10, alpha=1.0)
    assert (half - mono).abs().mean() > 0.05 and (half - full).abs().mean() > 0.05


def test_alpha_one_replaces_the_trajectory_and_runs_r_inj_steps():
    scaffold = torch.randn(SHAPE) * 3
    calls = []
    full = D.ddim_sample(toy_denoiser(calls), noise(0), SCHEDULE, STEPS, scaffold=scaffold, r_inj=7, alpha=1.0)
    assert calls == SCHEDULE.ddim_timesteps(STEPS)[-7:].tolist()  # the 7 last DDIM timesteps remain
    other_start = D.SamplingNoise(torch.randn(SHAPE), noise(0).injection)  # another z_T, the same injection noise
    again = D.ddim_sample(toy_denoiser(), other_start, SCHEDULE, STEPS, scaffold=scaffold, r_inj=7, alpha=1.0)
    assert torch.equal(full, again)  # nothing of the trajectory before the injection survives


def test_alpha_one_with_one_step_remaining_stays_on_the_scaffold():
    scaffold = torch.randn(SHAPE) * 3
    late = D.ddim_sample(toy_denoiser(), noise(), SCHEDULE, STEPS, scaffold=scaffold, r_inj=1, alpha=1.0)
    mono = D.ddim_sample(toy_denoiser(), noise(), SCHEDULE, STEPS)
    assert (late - scaffold).abs().max() < 0.2  # sqrt(1 - abar_0) = 0.039 of noise, minus the predicted part
    assert (mono - scaffold).abs().mean() > 1.0


@pytest.mark.parametrize(
    ("r_inj", "alpha", "match"),
    [
        (0, 1.0, "r_inj"),
        (STEPS + 1, 1.0, "r_inj"),
        (2.5, 1.0, "r_inj"),
        (10, -0.1, "alpha"),
        (10, 1.5, "alpha"),
        (10, float("nan"), "alpha"),
    ],
)
def test_injection_outside_its_range_is_refused(r_inj, alpha, match):
    with pytest.raises(ValueError, match=match):
        D.ddim_sample(toy_denoiser(), noise(), SCHEDULE, STEPS, scaffold=torch.zeros(SHAPE), r_inj=r_inj, alpha=alpha)
    with pytest.raises(ValueError, match="does not match"):
        D.ddim_sample(toy_denoiser(), noise(), SCHEDULE, STEPS, scaffold=torch.zeros(3, 2, 4, 4, 4))


def test_sampling_is_deterministic_and_seeds_as_a_leading_dimension_match_one_seed_runs():
    first, second = noise(3), noise(3)
    assert torch.equal(first.start, second.start) and torch.equal(first.injection, second.injection)
    assert not torch.equal(first.start, first.injection)
    scaffold = torch.randn(SHAPE)
    stacked = D.SamplingNoise(
        torch.stack([noise(1).start, noise(2).start]), torch.stack([noise(1).injection, noise(2).injection])
    )
    both = D.ddim_sample(toy_denoiser(), stacked, SCHEDULE, STEPS, scaffold=scaffold, r_inj=5, alpha=0.5)
    for i, seed in enumerate((1, 2)):
        alone = D.ddim_sample(toy_denoiser(), noise(seed), SCHEDULE, STEPS, scaffold=scaffold, r_inj=5, alpha=0.5)
        torch.testing.assert_close(both[i], alone)
    picked = first.select(torch.tensor([2, 0]))
    assert torch.equal(picked.start[0], first.start[2]) and torch.equal(picked.injection[1], first.injection[0])


def test_epsilon_mse_per_member():
    predicted, target = torch.zeros(2, 3, 4), torch.stack([torch.ones(3, 4), 2 * torch.ones(3, 4)])
    assert D.epsilon_mse(predicted, target, leading=1).tolist() == [1.0, 4.0]
    assert float(D.epsilon_mse(predicted, target)) == 2.5
