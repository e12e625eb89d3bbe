r"""Training of AnaDiffusion's networks, with seeds as a batch dimension, in the project's one training loop.

* Autoencoder (:func:`train_autoencoder`): L1 reconstruction + ``kl_weight`` x KL(N(mu, sigma) || N(0, 1)), the
  KL summed over the latent and averaged over the batch, kl_weight 1e-6: the loss of MONAI's 3D LDM tutorials and of
  the first author's research code. The paper's autoencoder loss also has an adversarial term (a PatchGAN
  discriminator, weight 0.01 in that code) and a perceptual term (weight 0.001, a pretrained 3D network); both are
  dropped: the perceptual network's weights are not available offline and the discriminator would double the cost
  of the quick budget's costliest network. Then :func:`fit_latent_scale` sets ``scale = 1 / std`` of the training
  latents (Rombach et al. 2022), as MONAI's LDM tutorials do.
* Denoisers (:func:`train_denoiser`): the DDPM simple loss (epsilon prediction, t uniform on {0..T-1}), the shared
  hemisphere model with each example's side label (left 0, right 1) as its class. Part models are trained first and
  frozen (the paper); nothing here trains two stages jointly.
* Seeds (:func:`train_members`): the members of one job (one architecture, one per seed, each built right after
  ``torch.manual_seed(seed)``, ``common.ensemble.build``) are stacked into a ``common.ensemble.Ensemble``; each seed
  draws its batches and noise from its own generator (on the CPU, in a single-seed run's order), the step's loss
  is the sum of the members' losses, and one Adam (``common.optim``, elementwise) updates every member by its own
  gradient. MONAI's networks (Conv3d, GroupNorm, the class embedding, the middle block's attention) run under
  ``torch.vmap(functional_call)``: ``vectorize=True`` maps the members in one batched call, each equal to its
  single-seed run to float rounding. The default runs the members one after another on views of the stacked
  weights on the CPU (bit-identical to single-seed runs; on the 2-core quick machine vmap measured no faster for
  these 3D networks, see the report), and vmap on any other device.
* The loop (``common.loop.run_loop``): one loop step is one optimiser step; the stacked weights, the optimiser,
  each seed's generator and the log are checkpointed, so a run killed (SIGTERM) resumes bit-identically. A
  non-finite loss raises ``common.loop.Diverged`` naming the seed, before its update.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import pandas as pd
import torch
from torch import nn

from neurips26.common import ensemble, loop
from neurips26.common.members import call_members
from neurips26.common.optim import Adam
from neurips26.common.validation import check_int, check_number

from . import diffusion
from .model import LatentAutoencoder

__all__ = [
    "KL_WEIGHT",
    "LOG_COLUMNS",
    "fit_latent_scale",
    "job_members",
    "kl_divergence",
    "member_data",
    "train_autoencoder",
    "train_denoiser",
    "train_members",
]

KL_WEIGHT = 1e-6
LOG_COLUMNS = ["seed", "step", "loss"]

# forward(*args, in_dims=...) -> outputs with a leading member dimension
Forward = Callable[..., object]


def kl_divergence(mu: torch.Tensor, sigma: torch.Tensor, leading: int = 1) -> torch.Tensor:
    """KL(N(mu, sigma^2) || N(0, 1)) summed over each latent and averaged over the batch dimension that follows the
    first `leading - 1` dimensions (leading = 1: a batch; 2: members x batch)."""
    per_latent = 0.5 * (mu**2 + sigma**2 - torch.log(sigma**2) - 1).sum(dim=tuple(range(leading, mu.ndim)))
    return per_latent.mean(dim=-1)


def _forward_members(ens: ensemble.Ensemble, model: nn.Module, vectorize: bool) -> Forward:
    """Call every member on its slice of the arguments (in_dims 0) or on an argument shared by all (None):
    ``common.members.call_members``."""
    return lambda *args, in_dims=None: call_members(ens, model, *args, in_dims=in_dims, vectorize=vectorize)


def train_members(
    models: Sequence[nn.Module],
    seeds: Sequence[int],
    draw: Callable[[torch.Generator, int], tuple[torch.Tensor, ...]],
    member_losses: Callable[[Forward, tuple[torch.Tensor, ...]], torch.Tensor],
    steps: int,
    lr: float,
    settings: loop.LoopSettings | None = None,
    vectorize: bool | None = None,
) -> pd.DataFrame:
    """Train `models` (one per seed of `seeds`, one architecture, on one device) for `steps` Adam steps as one
    ensemble (module docstring); the models end with their trained weights. Returns the log: one row per seed and
    step (seed, 1-based step, the member's loss).

    Each step, ``draw(generator, member)`` gives member's batch (CPU tensors) from its seed's generator; the
    batches are stacked along a leading member dimension, moved to the models' device, and
    ``member_losses(forward, batch)`` returns the (S,) losses, ``forward`` calling each member on its slice.
    """
    models, seeds = list(models), [int(s) for s in seeds]
    if not models or len(models) != len(seeds):
        raise ValueError(f"train_members needs one model per seed, got {len(models)} models for seeds {seeds}")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds repeat: {seeds}")
    check_int("steps", steps, 0, who="train_members")
    check_number("lr (learning rate)", lr, 0.0, low_open=True, who="train_members")
    device = next(models[0].parameters()).device
    vectorize = device.type != "cpu" if vectorize is None else vectorize
    keys = list(models[0].state_dict())
    ens = ensemble.Ensemble(models)
    weights = {**ens.params, **ens.buffers}
    forward = _forward_members(ens, models[0], vectorize)
    generators = ensemble.seed_generators(seeds)
    optimiser = Adam(ens.parameters(), lr=lr)
    rows: list[tuple[int, int, float]] = []
    groups: dict[str, list[torch.Tensor]] = {}
    for name, value in ens.params.items():
        groups.setdefault(f"model.{name.split('.')[0]}", []).append(value)

    def step_fn(step: int) -> torch.Tensor:
        batches = [draw(g, i) for i, g in enumerate(generators)]
        batch = tuple(torch.stack(parts).to(device) for parts in zip(*batches))
        losses = member_losses(forward, batch)
        values = losses.detach().cpu().tolist()
        bad = [(seed, v) for seed, v in zip(seeds, values) if not math.isfinite(v)]
        if bad:
            raise loop.Diverged(step, loop.first_non_finite(groups), bad[0][1], detail=f"loss of seed {bad[0][0]}")
        optimiser.zero_grad(set_to_none=True)
        losses.sum().backward()  # each member's gradient is its own loss's
        optimiser.step()
        rows.extend((seed, step + 1, v) for seed, v in zip(seeds, values))
        return losses.detach().sum()

    ens.train()
    state = {
        "weights": ensemble.StackedWeights(weights),
        "optimiser": optimiser,
        "rows": rows,
        **{f"generator_s{seed}": g for seed, g in zip(seeds, generators)},
    }
    loop.run_loop(step_fn, steps, state, settings or loop.LoopSettings(name="train_members"), groups=groups)
    for i, model in enumerate(models):
        model.load_state_dict({k: weights[k][i].detach().to("cpu", copy=True) for k in keys})
        model.to(device)
    return pd.DataFrame(rows, columns=LOG_COLUMNS).sort_values(["seed", "step"], kind="stable", ignore_index=True)


def job_members(build: Callable[[], nn.Module], seeds: Sequence[int], device: torch.device) -> list[nn.Module]:
    """A training job's networks: one per seed of `seeds`, each built by `build` right after
    ``torch.manual_seed(seed)`` (``common.ensemble.build``), on the job's `device`."""
    nets = ensemble.build(build, seeds)
    for net in nets:
        net.to(device)
    return nets


def member_data(data: torch.Tensor, n_members: int, what: str, item_ndim: int) -> Callable[[int], torch.Tensor]:
    """The training set of each member: `data` shared by all members (N, *item), or one set per member
    (S, N, *item) with S = `n_members`, as a function member index -> its (N, *item) set; ValueError naming `what`
    for any other shape (`item_ndim`: the dimensions of one example)."""
    if data.ndim == item_ndim + 1:
        return lambda i: data
    if data.ndim == item_ndim + 2 and data.shape[0] == n_members:
        return lambda i: data[i]
    raise ValueError(f"{what} of shape {tuple(data.shape)}: need (N, ...) or ({n_members}, N, ...) per seed")


def train_autoencoder(
    models: Sequence[LatentAutoencoder],
    volumes: torch.Tensor,
    steps: int,
    batch: int,
    lr: float,
    seeds: Sequence[int],
    kl_weight: float = KL_WEIGHT,
    settings: loop.LoopSettings | None = None,
    vectorize: bool | None = None,
) -> pd.DataFrame:
    """Fit autoencoders (one per seed) to volumes (N, 1, X, Y, Z) in [-1, 1] (or (S, N, 1, X, Y, Z), one set per
    seed) by L1 + kl_weight * KL on minibatches of `batch` drawn with replacement (module docstring)."""
    check_int("batch", batch, 1, who="train_autoencoder")
    check_number("kl_weight", kl_weight, 0.0, who="train_autoencoder")
    volumes = torch.as_tensor(volumes, dtype=torch.float32)
    member_volumes = member_data(volumes, len(models), "volumes", 4)
    config = models[0].config
    latent = (config.latent_channels, *(s // config.factor for s in volumes.shape[-3:]))

    def draw(generator: torch.Generator, member: int):
        data = member_volumes(member)
        index = torch.randint(len(data), (batch,), generator=generator)
        return data[index], torch.randn((batch, *latent), generator=generator)

    def member_losses(forward: Forward, batch_: tuple[torch.Tensor, ...]) -> torch.Tensor:
        x, eps = batch_
        recon, mu, sigma = forward(x, eps)
        l1 = (recon - x).abs().mean(dim=tuple(range(1, x.ndim)))
        return l1 + kl_weight * kl_divergence(mu, sigma, leading=2)

    return train_members(models, seeds, draw, member_losses, steps, lr, settings, vectorize)


def train_denoiser(
    models: Sequence[nn.Module],
    latents: torch.Tensor,
    steps: int,
    batch: int,
    lr: float,
    seeds: Sequence[int],
    schedule: diffusion.NoiseSchedule,
    sides: torch.Tensor | None = None,
    settings: loop.LoopSettings | None = None,
    vectorize: bool | None = None,
) -> pd.DataFrame:
    """Fit denoisers (one per seed) to predict eps from q(z_t | z_0) on latents (N, C, x, y, z) (or one set per
    seed, (S, N, C, x, y, z)); `sides` (N,) gives each example's class label for the side-conditioned hemisphere
    model (the left hemispheres and the mirrored right ones stacked in one set)."""
    check_int("batch", batch, 1, who="train_denoiser")
    latents = torch.as_tensor(latents, dtype=torch.float32)
    member_latents = member_data(latents, len(models), "latents", 4)
    n = latents.shape[-5]
    if sides is not None:
        sides = torch.as_tensor(sides).long()
        if sides.shape != (n,):
            raise ValueError(f"sides of shape {tuple(sides.shape)}: need one label per latent, ({n},)")

    def draw(generator: torch.Generator, member: int):
        index = torch.randint(n, (batch,), generator=generator)
        z0 = member_latents(member)[index]
        noise = torch.randn(z0.shape, generator=generator)
        t = diffusion.draw_timesteps((batch,), generator, schedule)
        return (z0, noise, t) if sides is None else (z0, noise, t, sides[index])

    def member_losses(forward: Forward, batch_: tuple[torch.Tensor, ...]) -> torch.Tensor:
        z0, noise, t = batch_[:3]
        zt = diffusion.add_noise(z0, noise, t, schedule)
        if sides is None:
            eps = forward(zt, t)
        else:
            eps = forward(zt, t, None, batch_[3], in_dims=(0, 0, None, 0))
        return diffusion.epsilon_mse(eps, noise, leading=1)

    return train_members(models, seeds, draw, member_losses, steps, lr, settings, vectorize)


@torch.no_grad()
def fit_latent_scale(autoencoder: LatentAutoencoder, volumes: torch.Tensor, batch: int = 16) -> float:
    """Set the autoencoder's latent scale to 1 / std of the latent means of `volumes` (N, 1, X, Y, Z); returns it."""
    was_training = autoencoder.training
    autoencoder.eval()
    device = autoencoder.scale.device
    mus = torch.cat([autoencoder.net.encode(chunk.to(device))[0] for chunk in torch.as_tensor(volumes).split(batch)])
    std = float(mus.std())
    if not math.isfinite(std) or std <= 0:
        raise ValueError(f"latent standard deviation {std} of the training volumes: cannot scale the latents")
    autoencoder.scale.fill_(1.0 / std)
    autoencoder.train(was_training)
    return float(autoencoder.scale)
