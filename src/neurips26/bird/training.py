"""Epsilon-prediction training of the denoisers BIRD is compared with (the authors' `train_diffusion`).

Per the authors' `scripts/training_script.py` and `src/utils/train.py`: t uniform on a grid of 1000 levels,
the legacy cosine schedule beta(t) = 1 - cos^2(t / 1.008 * pi / 2), x_t = sqrt(1 - beta) x + sqrt(beta) eps,
the loss is the MSE between the network's output and eps, AdamW with weight decay 0 and the learning rate
decayed by ExponentialLR(gamma) after every step, shuffled epochs with a last partial batch.

One deviation: the authors draw t = randint(0, 1000) / 1000, which includes t = 0 (beta = 0: no noise, so eps
cannot be predicted from x_t); we draw t = k / 1000, k in {1, ..., 1000}, clipped inside (0, 1).

Seeds as a batch dimension: one job trains the networks of several seeds (one architecture) as one ensemble
(common.ensemble: weights stacked along a leading seed dimension, one optimiser and one loss), each seed with its
own initialisation (built from its seed), its own torch.Generator seeded with it (shuffles, t, noise, drawn on
the CPU in the order a single-seed run draws them, so a run is the same on any device) and its own loss; the
loss of a step is the sum of the seeds' losses and Adam acts elementwise, so each seed's update is its own.
On any other device (a GPU) the members run under vmap, one batched kernel per layer (the speed-up there is
expected, small networks leaving a GPU mostly idle, but not measured: no GPU was at hand).
On the CPU they run one after another on views of the stacked weights, each seed bit-identical to its
single-seed run. Measured on the 2-core quick machine under load (one thread, quick settings: N = 256 images of
16 x 16, batch 32), these networks are compute-bound on the CPU: one network at batch 96 costs 2.6x (U-Net) and
2.8x (DiT) its step at batch 32, and three seeds cost about 3x one seed either way (per step, vmap 3.8x and 3.1x,
one after another 3.1x and 3.0x; whole runs one after another 3.0x and 3.2x), so vmap saves nothing there. Under
vmap a seed equals its single-seed run to float rounding, which a long run amplifies (quick scale, 480 steps:
the U-Net's final weights differ by up to 0.37 from its single-seed run's, the DiT's by 5e-3;
tests/test_bird_ensemble.py checks a short run). Training runs in the shared loop
(common.loop), one loop step per epoch: the weights and the batches sit on the models' device (the job's,
loop.job_device()), and a run killed after a checkpoint resumes at an epoch boundary bit-identically.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import pandas as pd
import torch
from torch import nn

from neurips26.common import ensemble, loop
from neurips26.common.members import call_members
from neurips26.common.optim import Adam, ExponentialDecay
from neurips26.common.validation import check_int, check_number

T_LEVELS = 1000  # t = k / T_LEVELS
T_CLIP = 1e-6  # t is clipped to [T_CLIP, 1 - T_CLIP]
GAMMA = 0.999965  # the authors' per-step learning-rate decay
LOG_COLUMNS = ["seed", "epoch", "step", "loss"]


def cosine_beta(t: torch.Tensor) -> torch.Tensor:
    """The legacy cosine schedule beta(t) = 1 - cos^2(t / 1.008 * pi / 2) (the noise variance at time t)."""
    return 1 - torch.cos(t / 1.008 * math.pi / 2) ** 2


def noise(x: torch.Tensor, eps: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """x_t = sqrt(1 - beta(t)) x + sqrt(beta(t)) eps, with t (B,) (or (S, B), a batch per seed) broadcast over
    the image axes."""
    beta = cosine_beta(t).reshape(*t.shape, *([1] * (x.ndim - t.ndim)))
    return torch.sqrt(1 - beta) * x + torch.sqrt(beta) * eps


def sample_t(n: int, generator: torch.Generator) -> torch.Tensor:
    """n times k / 1000 with k uniform on {1, ..., 1000}, clipped inside (0, 1)."""
    k = torch.randint(1, T_LEVELS + 1, (n,), generator=generator)
    return (k.float() / T_LEVELS).clamp(T_CLIP, 1 - T_CLIP)


def _check_settings(n: int, epochs: int, batch: int, lr: float, gamma: float, checkpoint_epochs: list[int]) -> None:
    if n == 0:
        raise ValueError("empty training set")
    check_int("epochs", epochs, 0, who="train_epsilon")
    check_int("batch", batch, 1, who="train_epsilon")
    check_number("lr (learning rate)", lr, 0.0, low_open=True, who="train_epsilon")
    check_number("gamma (learning-rate decay)", gamma, 0.0, 1.0, low_open=True, who="train_epsilon")
    outside = [e for e in checkpoint_epochs if not 0 <= e <= epochs]
    if outside:
        raise ValueError(f"checkpoint epochs {outside} lie outside 0..{epochs} (0 = the initial weights)")


def _member_forward(
    ens: ensemble.Ensemble, model: nn.Module, x: torch.Tensor, t: torch.Tensor, vectorize: bool
) -> torch.Tensor:
    """eps of every member on its own batch (x (S, B, C, H, W), t (S, B)): under vmap (`vectorize`, several
    members), or member after member as `model` (their architecture) on views of the stacked weights, each with
    a single-seed run's arithmetic."""
    return call_members(ens, model, x, t, vectorize=vectorize)


def train_epsilon(
    models: Sequence[nn.Module],
    x_train: torch.Tensor,
    epochs: int,
    batch: int,
    lr: float,
    seeds: Sequence[int],
    checkpoint_epochs: Iterable[int] = (),
    gamma: float = GAMMA,
    settings: loop.LoopSettings | None = None,
    vectorize: bool | None = None,
) -> tuple[pd.DataFrame, dict[int, dict[int, dict[str, torch.Tensor]]]]:
    """Train `models` (one per seed of `seeds`, one architecture, each built from its seed, on one device) as a
    batched ensemble to predict eps for `epochs` epochs in the shared training loop (common.loop: one loop step
    is one epoch); the models end with their trained weights. Returns (log, kept weights).

    The log has one row per seed and optimiser step: the seed, the 1-based epoch, the global step and that
    batch's mean loss. The kept weights map each seed to {epoch of `checkpoint_epochs` (0 = before training):
    a CPU copy of its state dict after that epoch}. `settings` (a LoopSettings) gives the checkpoint of the
    job: the weights, the optimiser (with its decayed learning rate), the decay, each seed's generator, the log
    and the kept weights are saved in it, so a killed run resumes at an epoch boundary bit-identically. Raises
    common.loop.Diverged (a FloatingPointError) naming the seed when a batch's loss is not finite, before that
    batch's update.

    `vectorize` (default: on any device but the CPU) runs the members' forward and backward under vmap, one
    batched kernel per layer, which is what makes seeds cheap on a GPU; each seed then equals its single-seed
    run to float rounding, amplified over a long run (module docstring). Off, the members run one after
    another on views of the stacked weights: each seed's numbers are bit-identical to its single-seed run, and
    on the CPU, where these networks are compute-bound, no slower than vmap (module docstring).
    """
    models, seeds = list(models), [int(s) for s in seeds]
    if len(models) != len(seeds) or not models:
        raise ValueError(f"train_epsilon needs one model per seed, got {len(models)} models for seeds {seeds}")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds repeat: {seeds}")
    x_train = torch.as_tensor(x_train, dtype=torch.float32)
    checkpoint_epochs = sorted({int(e) for e in checkpoint_epochs})
    _check_settings(len(x_train), epochs, batch, lr, gamma, checkpoint_epochs)
    device = next(models[0].parameters()).device
    vectorize = device.type != "cpu" if vectorize is None else vectorize
    keys = list(models[0].state_dict())  # a member's state dict: the persistent entries only
    ens = ensemble.Ensemble(models)
    weights = {**ens.params, **ens.buffers}
    generators = ensemble.seed_generators(seeds)
    # AdamW with weight decay 0 is Adam; ours skips torch.optim's 1.7 s import of torch._dynamo
    optimiser = Adam(ens.parameters(), lr=lr)
    scheduler = ExponentialDecay(optimiser, gamma)  # the authors' ExponentialLR, stepped after every optimiser step
    rows: list[tuple[int, int, int, float]] = []

    def member_state(i: int) -> dict[str, torch.Tensor]:
        return {k: weights[k][i].detach().to("cpu", copy=True) for k in keys}

    kept: dict[int, dict[int, dict[str, torch.Tensor]]] = {seed: {} for seed in seeds}
    if 0 in checkpoint_epochs:
        for i, seed in enumerate(seeds):
            kept[seed][0] = member_state(i)
    wanted = set(checkpoint_epochs)
    groups = {f"model.{name.split('.')[0]}": [] for name in ens.params}
    for name, value in ens.params.items():
        groups[f"model.{name.split('.')[0]}"].append(value)

    def run_epoch(index: int) -> float:
        epoch = index + 1
        orders = [torch.randperm(len(x_train), generator=g) for g in generators]
        first = len(rows)
        for batches in zip(*(order.split(batch) for order in orders)):
            x = torch.stack([x_train[idx] for idx in batches])
            eps = torch.stack([torch.randn(x.shape[1:], generator=g) for g in generators])
            t = torch.stack([sample_t(len(idx), g) for idx, g in zip(batches, generators)])
            x, eps, t = x.to(device), eps.to(device), t.to(device)
            out = _member_forward(ens, models[0], noise(x, eps, t), t, vectorize)
            losses = torch.stack([torch.mean((out[i] - eps[i]) ** 2) for i in range(len(seeds))])
            values, step = losses.detach().cpu().tolist(), len(rows) // len(seeds)
            bad = [(seed, v) for seed, v in zip(seeds, values) if not math.isfinite(v)]
            if bad:
                seed, value = bad[0]
                raise loop.Diverged(
                    step,
                    loop.first_non_finite(groups),
                    value,
                    detail=(
                        f"epsilon-MSE is {value} at epoch {epoch}, step {step} of seed {seed}; lr={lr}, "
                        "check the data's scale"
                    ),
                )
            optimiser.zero_grad(set_to_none=True)
            losses.sum().backward()  # each seed's gradient is its own loss's
            optimiser.step()
            scheduler.step()
            rows.extend((seed, epoch, step, v) for seed, v in zip(seeds, values))
        if epoch in wanted:
            for i, seed in enumerate(seeds):
                kept[seed][epoch] = member_state(i)
        return sum(row[3] for row in rows[first:]) / max(1, len(rows) - first)

    ens.train()
    state = {
        "weights": ensemble.StackedWeights(weights),
        "optimiser": optimiser,
        "rows": rows,
        "kept": kept,
        "scheduler": scheduler,
        **{f"generator_s{seed}": g for seed, g in zip(seeds, generators)},
    }
    loop.run_loop(run_epoch, epochs, state, settings or loop.LoopSettings(name="train_epsilon"), groups=groups)
    for i, model in enumerate(models):
        model.load_state_dict(member_state(i))
    log = pd.DataFrame(rows, columns=LOG_COLUMNS).sort_values(["seed", "step"], kind="stable", ignore_index=True)
    return log, {seed: {e: kept[seed][e] for e in checkpoint_epochs} for seed in seeds}


@torch.no_grad()
def epsilon_loss(model: nn.Module, x: torch.Tensor, seed: int, batch: int = 512) -> float:
    """The epsilon-MSE of `model` on x with t and eps drawn from `seed` (a fixed yardstick across checkpoints)."""
    x = torch.as_tensor(x, dtype=torch.float32)
    device = next(model.parameters()).device
    generator = torch.Generator().manual_seed(seed)
    was_training = model.training
    model.eval()
    total = 0.0
    for chunk in x.split(batch):
        eps = torch.randn(chunk.shape, generator=generator)
        t = sample_t(len(chunk), generator)
        chunk, eps, t = chunk.to(device), eps.to(device), t.to(device)
        total += torch.sum((model(noise(chunk, eps, t), t) - eps) ** 2).item()
    model.train(was_training)
    return total / x.numel()
