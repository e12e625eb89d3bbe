"""Epsilon-prediction training of the denoisers BIRD is compared with (the authors' `train_diffusion`).

Per the authors' `scripts/training_script.py` and `src/utils/train.py`: t uniform on a grid of 1000 levels,
the legacy cosine schedule beta(t) = 1 - cos^2(t / 1.008 * pi / 2), x_t = sqrt(1 - beta) x + sqrt(beta) eps,
the loss is the MSE between the network's output and eps, AdamW with weight decay 0 and the learning rate
decayed by ExponentialLR(gamma) after every step, shuffled epochs with a last partial batch.

One deviation: the authors draw t = randint(0, 1000) / 1000, which includes t = 0 (beta = 0: no noise, so eps
cannot be predicted from x_t); we draw t = k / 1000, k in {1, ..., 1000}, clipped inside (0, 1).

All randomness (shuffles, t, noise) comes from one seeded torch.Generator, drawn on the CPU, so a run is the
same on any device. Training runs in the shared loop (common.loop), one loop step per epoch: the model and
the batches sit on the model's device (the job's, loop.job_device()), and a run killed after a checkpoint
resumes at an epoch boundary bit-identically.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import pandas as pd
import torch
from torch import nn

from neurips26.common import loop
from neurips26.common.optim import Adam, ExponentialDecay
from neurips26.common.validation import check_int, check_number

T_LEVELS = 1000  # t = k / T_LEVELS
T_CLIP = 1e-6  # t is clipped to [T_CLIP, 1 - T_CLIP]
GAMMA = 0.999965  # the authors' per-step learning-rate decay
LOG_COLUMNS = ["epoch", "step", "loss"]


def cosine_beta(t: torch.Tensor) -> torch.Tensor:
    """The legacy cosine schedule beta(t) = 1 - cos^2(t / 1.008 * pi / 2) (the noise variance at time t)."""
    return 1 - torch.cos(t / 1.008 * math.pi / 2) ** 2


def noise(x: torch.Tensor, eps: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """x_t = sqrt(1 - beta(t)) x + sqrt(beta(t)) eps, with t (B,) broadcast over the image axes."""
    beta = cosine_beta(t).reshape(-1, *([1] * (x.ndim - 1)))
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


def _cpu_state(model: nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}


def train_epsilon(
    model: nn.Module,
    x_train: torch.Tensor,
    epochs: int,
    batch: int,
    lr: float,
    seed: int,
    checkpoint_epochs: Iterable[int] = (),
    gamma: float = GAMMA,
    settings: loop.LoopSettings | None = None,
) -> tuple[pd.DataFrame, dict[int, dict[str, torch.Tensor]]]:
    """Train `model` (in place, on its own device) to predict eps for `epochs` epochs in the shared training
    loop (common.loop: one loop step is one epoch); returns (log, kept weights).

    The log has one row per optimiser step: the 1-based epoch, the global step and that batch's mean loss.
    The kept weights map each epoch of `checkpoint_epochs` (0 = before training) to a CPU copy of the
    model's state dict after that epoch. `settings` (a LoopSettings) gives the checkpoint of the job: the
    model, the optimiser (with its decayed learning rate), the decay, the generator, the log and the kept
    weights are saved in it, so a killed run resumes at an epoch boundary bit-identically. Raises
    common.loop.Diverged (a FloatingPointError) when a batch's loss is not finite, before that batch's update.
    """
    x_train = torch.as_tensor(x_train, dtype=torch.float32)
    checkpoint_epochs = sorted({int(e) for e in checkpoint_epochs})
    _check_settings(len(x_train), epochs, batch, lr, gamma, checkpoint_epochs)
    device = next(model.parameters()).device
    generator = torch.Generator().manual_seed(seed)
    # AdamW with weight decay 0 is Adam; ours skips torch.optim's 1.7 s import of torch._dynamo
    optimiser = Adam(model.parameters(), lr=lr)
    rows: list[tuple[int, int, float]] = []
    kept: dict[int, dict[str, torch.Tensor]] = {0: _cpu_state(model)} if 0 in checkpoint_epochs else {}
    scheduler = ExponentialDecay(optimiser, gamma)  # the authors' ExponentialLR, stepped after every optimiser step
    wanted = set(checkpoint_epochs)

    def run_epoch(index: int) -> float:
        epoch = index + 1
        order = torch.randperm(len(x_train), generator=generator)
        first = len(rows)
        for idx in order.split(batch):
            x = x_train[idx]
            eps = torch.randn(x.shape, generator=generator)
            t = sample_t(len(idx), generator)
            x, eps, t = x.to(device), eps.to(device), t.to(device)
            loss = torch.mean((model(noise(x, eps, t), t) - eps) ** 2)
            value, step = loss.item(), len(rows)
            if not math.isfinite(value):
                where = loop.first_non_finite(loop.parameter_groups({"model": model}))
                raise loop.Diverged(
                    step,
                    where,
                    value,
                    detail=(f"epsilon-MSE is {value} at epoch {epoch}, step {step}; lr={lr}, check the data's scale"),
                )
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
            scheduler.step()
            rows.append((epoch, step, value))
        if epoch in wanted:
            kept[epoch] = _cpu_state(model)
        return sum(row[2] for row in rows[first:]) / max(1, len(rows) - first)

    model.train()
    state = {
        "model": model,
        "optimiser": optimiser,
        "generator": generator,
        "rows": rows,
        "kept": kept,
        "scheduler": scheduler,
    }
    loop.run_loop(run_epoch, epochs, state, settings or loop.LoopSettings(name="train_epsilon"))
    return pd.DataFrame(rows, columns=LOG_COLUMNS), {e: kept[e] for e in checkpoint_epochs}


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
