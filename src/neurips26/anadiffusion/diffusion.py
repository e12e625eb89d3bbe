r"""Latent diffusion for AnaDiffusion: the DDPM noise schedule and epsilon-prediction loss, deterministic DDIM
sampling, and the paper's scaffold injection (arXiv 2608.23014, project page AnaDiffusion/AnaDiffusion.github.io).

* Schedule: MONAI's ``DDPMScheduler`` ("scaled_linear_beta", beta from 0.0015 to 0.0195, T = 1000 at paper scale:
  the schedule of MONAI's 3D LDM tutorials and of the first author's research code ``tracyhann/3D_Brain_partsLDM``).
  :class:`NoiseSchedule` takes its ``alphas_cumprod``; :func:`add_noise` is ``q(z_t | z_0) = sqrt(abar_t) z_0 +
  sqrt(1 - abar_t) eps`` for timesteps of any leading shape (a batch, or seeds x batch).
* DDIM (Song et al. 2021, eq. 12 with eta = 0): the timesteps are MONAI's ``DDIMScheduler.set_timesteps`` list
  (``linspace(T - 1, 0, steps)``, rounded), and each step goes to the *next timestep of that list* (abar = 1 after
  the last). MONAI 1.6.1's ``DDIMScheduler.step`` instead steps back by ``T // steps``, which does not match its own
  linspace list unless ``steps`` divides ``T - 1`` evenly (the same defect as diffusers issue #12633), so the step is
  written here, plainly, over the whole batch. The predicted z_0 is not clipped (latents are not in [-1, 1]).
* Injection (the project page: the assembled scaffold "is encoded and inserted with 10 DDIM denoising steps
  remaining at inference"; Table 2 ablates r_inj in {7, 10, 15} and the strength alpha in {0, 1}): at the DDIM step
  with ``r_inj`` steps remaining, at timestep t,

      z_t <- alpha * q(z_t | z_C) + (1 - alpha) * z_t,

  then free denoising to 0. The paper does not publish the formula: this interpolation is our reading, which gives
  its two published settings exactly: alpha = 1 replaces the trajectory by the forward-noised scaffold (SDEdit-like,
  Meng et al. 2022; what the first author's research code does), alpha = 0 leaves the monolithic LDM's trajectory
  untouched, so that it *is* the plain LDM run with the same noise. No RePaint-style masked replacement after the
  injection: the page describes none.
* Determinism: all randomness is the initial latent z_T and the injection noise, drawn together from one generator
  (:func:`draw_sampling_noise`, z_T first), so that the injected and the monolithic runs of one seed start from the
  same z_T and an edit reuses its recipient's noise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

import torch

from neurips26.common.validation import check_int, check_number, integer, number, validate

from .monai_import import monai_module

__all__ = [
    "Denoise",
    "NoiseSchedule",
    "SamplingNoise",
    "add_noise",
    "check_injection",
    "ddim_sample",
    "ddim_step",
    "draw_sampling_noise",
    "draw_timesteps",
    "epsilon_mse",
]

# a denoiser as the sampler calls it: (z with leading dims L, timesteps of shape L) -> predicted eps
Denoise = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class NoiseSchedule:
    """The forward process's cumulative products abar_t, from MONAI's DDPMScheduler."""

    num_train_timesteps: int = integer(2, default=1000)
    beta_start: float = number(0.0, 1.0, low_open=True, high_open=True, default=0.0015)
    beta_end: float = number(0.0, 1.0, low_open=True, high_open=True, default=0.0195)
    schedule: str = "scaled_linear_beta"

    def __post_init__(self):
        validate(self)
        if self.beta_end < self.beta_start:
            raise ValueError(f"NoiseSchedule: beta_end {self.beta_end} < beta_start {self.beta_start}")

    @cached_property
    def alphas_cumprod(self) -> torch.Tensor:
        DDPMScheduler = monai_module("monai.networks.schedulers").DDPMScheduler

        scheduler = DDPMScheduler(
            num_train_timesteps=self.num_train_timesteps,
            schedule=self.schedule,
            beta_start=self.beta_start,
            beta_end=self.beta_end,
        )
        return scheduler.alphas_cumprod.to(torch.float32)

    def ddim_timesteps(self, steps: int) -> torch.Tensor:
        """MONAI's DDIM timesteps for `steps` steps, from T - 1 down to 0 (int64)."""
        DDIMScheduler = monai_module("monai.networks.schedulers").DDIMScheduler

        check_int("steps (DDIM)", steps, 1, who="NoiseSchedule")
        if steps > self.num_train_timesteps:
            raise ValueError(f"DDIM steps {steps} exceed the {self.num_train_timesteps} training timesteps")
        scheduler = DDIMScheduler(num_train_timesteps=self.num_train_timesteps, schedule=self.schedule,
                                  beta_start=self.beta_start, beta_end=self.beta_end, clip_sample=False)  # fmt: skip
        scheduler.set_timesteps(steps)
        return scheduler.timesteps.clone()


def _per_sample(values: torch.Tensor, t: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """values[t] shaped to broadcast over `like`, whose leading dimensions are t's."""
    if tuple(like.shape[: t.ndim]) != tuple(t.shape):
        raise ValueError(f"timesteps of shape {tuple(t.shape)} do not lead the latents' shape {tuple(like.shape)}")
    v = values.to(like.device)[t.to(like.device)]
    return v.reshape(*t.shape, *([1] * (like.ndim - t.ndim))).to(like.dtype)


def add_noise(z0: torch.Tensor, noise: torch.Tensor, t: torch.Tensor, schedule: NoiseSchedule) -> torch.Tensor:
    """q(z_t | z_0) = sqrt(abar_t) z_0 + sqrt(1 - abar_t) noise; t (int64) has z0's leading shape (B,) or (S, B)."""
    abar = _per_sample(schedule.alphas_cumprod, t, z0)
    return abar.sqrt() * z0 + (1 - abar).sqrt() * noise


def draw_timesteps(shape: Sequence[int], generator: torch.Generator, schedule: NoiseSchedule) -> torch.Tensor:
    """Training timesteps uniform on {0, ..., T - 1} (DDPM, Ho et al. 2020, Algorithm 1)."""
    return torch.randint(0, schedule.num_train_timesteps, tuple(shape), generator=generator)


def epsilon_mse(predicted: torch.Tensor, noise: torch.Tensor, leading: int = 0) -> torch.Tensor:
    """The DDPM simple loss, the mean squared error between predicted and true noise, averaged over all but the
    first `leading` dimensions (leading = 1: one loss per ensemble member)."""
    return ((predicted - noise) ** 2).mean(dim=tuple(range(leading, predicted.ndim)))


def ddim_step(z: torch.Tensor, eps: torch.Tensor, abar_t: torch.Tensor, abar_prev: torch.Tensor) -> torch.Tensor:
    """One deterministic DDIM step (Song et al. 2021, eq. 12, eta = 0) from abar_t to abar_prev."""
    z0 = (z - (1 - abar_t).sqrt() * eps) / abar_t.sqrt()
    return abar_prev.sqrt() * z0 + (1 - abar_prev).sqrt() * eps


@dataclass(frozen=True)
class SamplingNoise:
    """All the randomness of one batch of samples: the initial latent z_T and the injection noise (same shape)."""

    start: torch.Tensor
    injection: torch.Tensor

    def __post_init__(self):
        if self.start.shape != self.injection.shape:
            raise ValueError(
                f"SamplingNoise: start {tuple(self.start.shape)} and injection {tuple(self.injection.shape)} differ"
            )

    def select(self, index: torch.Tensor) -> SamplingNoise:
        """The noise of samples `index` along the batch dimension (the last leading one): an edit reuses its
        recipient's noise."""
        dim = self.start.ndim - 5
        return SamplingNoise(self.start.index_select(dim, index), self.injection.index_select(dim, index))


def draw_sampling_noise(shape: Sequence[int], generator: torch.Generator) -> SamplingNoise:
    """z_T, then the injection noise, both standard normal of `shape` (..., C, x, y, z), from `generator`."""
    shape = tuple(int(s) for s in shape)
    if len(shape) < 5:
        raise ValueError(f"sampling noise needs a shape (..., B, C, x, y, z), got {shape}")
    start = torch.randn(shape, generator=generator)
    return SamplingNoise(start, torch.randn(shape, generator=generator))


def check_injection(r_inj: int, alpha: float, steps: int) -> None:
    """r_inj (DDIM steps remaining at the injection) in [1, steps] and alpha in [0, 1], or ValueError."""
    check_int("steps (DDIM)", steps, 1, who="injection")
    if not (isinstance(r_inj, int) and not isinstance(r_inj, bool) and 1 <= r_inj <= steps):
        raise ValueError(f"injection.r_inj must be an integer in [1, {steps}] (the total DDIM steps), got {r_inj!r}")
    check_number("alpha (injection strength)", alpha, 0.0, 1.0, who="injection")


@torch.no_grad()
def ddim_sample(
    denoise: Denoise,
    noise: SamplingNoise,
    schedule: NoiseSchedule,
    steps: int,
    scaffold: torch.Tensor | None = None,
    r_inj: int = 10,
    alpha: float = 1.0,
) -> torch.Tensor:
    """DDIM from z_T = ``noise.start`` to z_0 in `steps` steps with `denoise` (module docstring).

    With a `scaffold` latent z_C (shape (..., C, x, y, z), broadcast over z's extra leading dimensions such as
    seeds), at the step with `r_inj` steps remaining z_t <- alpha * q(z_t | z_C) + (1 - alpha) * z_t, the forward
    noise being ``noise.injection``; without one, the plain (monolithic) LDM sample. When alpha = 1 the steps
    before the injection are not run: their result is replaced whole, so the output is the same.
    """
    z = noise.start
    timesteps = schedule.ddim_timesteps(steps)
    abar = schedule.alphas_cumprod.to(z.device)
    inject_at, first = None, 0
    if scaffold is not None:
        check_injection(r_inj, alpha, steps)
        if tuple(scaffold.shape[-4:]) != tuple(z.shape[-4:]):
            raise ValueError(f"scaffold latent {tuple(scaffold.shape)} does not match the latents {tuple(z.shape)}")
        inject_at = steps - r_inj
        first = inject_at if alpha == 1 else 0
    lead = z.shape[:-4]
    for i in range(first, steps):
        t = int(timesteps[i])
        if i == inject_at:
            noised = abar[t].sqrt() * scaffold + (1 - abar[t]).sqrt() * noise.injection
            z = alpha * noised + (1 - alpha) * z
        eps = denoise(z, torch.full(lead, t, dtype=torch.long, device=z.device))
        abar_prev = abar[int(timesteps[i + 1])] if i + 1 < steps else torch.ones((), device=z.device)
        z = ddim_step(z, eps, abar[t], abar_prev)
    return z
