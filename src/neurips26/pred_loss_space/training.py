"""Training of a denoiser in one (prediction space, loss space) cell, and of the FD feature network.

The denoiser is trained as in JiT: t ~ logit-normal(p_mean, p_std), z_t = t x + (1 - t) eps, the network
output o is read in prediction space `pred` and the squared error is taken in loss space `loss`.
All randomness of a run (batches, noise, t) comes from one seeded torch.Generator, drawn on the CPU (the same
draws on any device). Both trainings run in the shared loop (common.loop) on the job's device, which
checkpoints the generator with the model, the optimiser and the EMA weights, so a run killed after a
checkpoint resumes bit-identically to an uninterrupted one.
"""

from __future__ import annotations

import dataclasses
import math
import time

import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from neurips26.common import loop
from neurips26.common.optim import Adam
from neurips26.common.validation import check_int, check_number
from neurips26.pred_loss_space import spaces
from neurips26.pred_loss_space.models import FeatureNet

LOG_COLUMNS = ["step", "loss_native", "loss_x"]
EMA_WARMUP = 10  # EMA decay at update k is min(ema_decay, (1 + k) / (EMA_WARMUP + k))


def check_settings(
    pred: str, loss: str, steps: int, batch: int, lr: float, p_std: float, ema_decay: float, t_eps: float, t_min: float
) -> None:
    spaces.check_space(pred, "prediction space")
    spaces.check_space(loss, "loss space")
    check_int("steps", steps, 0, who="train_denoiser")
    check_int("batch", batch, 1, who="train_denoiser")
    check_number("lr (learning rate)", lr, 0.0, low_open=True, who="train_denoiser")
    check_number("p_std", p_std, 0.0, low_open=True, who="train_denoiser")
    check_number("ema_decay", ema_decay, 0.0, 1.0, high_open=True, who="train_denoiser")
    for name, value in (("t_eps", t_eps), ("t_min", t_min)):
        check_number(name, value, 0.0, 0.5, low_open=True, high_open=True, who="train_denoiser")


def ema_update(ema: dict[str, torch.Tensor], model: nn.Module, decay: float) -> None:
    """ema <- decay * ema + (1 - decay) * weights for floating tensors; other buffers are copied."""
    with torch.no_grad():
        current = model.state_dict()
        names = [k for k, v in current.items() if v.is_floating_point()]
        if names:
            averaged = [ema[k] for k in names]
            torch._foreach_mul_(averaged, decay)
            torch._foreach_add_(averaged, [current[k] for k in names], alpha=1 - decay)
        for name, value in current.items():
            if not value.is_floating_point():
                ema[name].copy_(value)


def train_denoiser(
    model: nn.Module,
    x_train: torch.Tensor,
    pred: str,
    loss: str,
    steps: int,
    batch: int,
    lr: float,
    p_mean: float,
    p_std: float,
    seed: int,
    ema_decay: float = 0.999,
    t_eps: float = spaces.T_EPS,
    t_min: float = spaces.T_MIN,
    settings: loop.LoopSettings | None = None,
    log_every: int = 10,
) -> tuple[dict, pd.DataFrame]:
    """Train `model` (in place, on its own device) with Adam for `steps` steps in the shared training loop
    (common.loop); returns (EMA state dict on the CPU, log frame).

    The log has one row every `log_every` steps and at the last step: step, loss_native (the mean loss in
    space `loss` that is minimised) and loss_x (the x-space loss of the same batch and output).
    The EMA warms up: its decay at update k is min(ema_decay, (1 + k) / (10 + k)), so short runs are not
    dominated by the initial weights.
    `settings` (a LoopSettings) gives the job's checkpoint: model, optimiser, generator, EMA weights, the
    count of EMA updates and the log are saved in it, so a killed run resumes bit-identically; the cell
    (pred, loss) is part of its fingerprint, so a checkpoint of another cell is never resumed.
    Raises common.loop.Diverged (a FloatingPointError) when the loss stops being finite, before the update.
    """
    check_settings(pred, loss, steps, batch, lr, p_std, ema_decay, t_eps, t_min)
    x_train = torch.as_tensor(x_train, dtype=torch.float32)
    n = len(x_train)
    if n == 0:
        raise ValueError("empty training set")
    generator = torch.Generator().manual_seed(seed)  # batches and noise are drawn on the CPU, on any device
    device = next(model.parameters()).device
    optimiser = Adam(model.parameters(), lr=lr)
    ema = {k: v.detach().clone() for k, v in model.state_dict().items()}
    counters = {"ema_updates": 0}
    rows: list[tuple[int, float, float]] = []
    groups = loop.parameter_groups({"model": model})

    def train_step(step: int) -> torch.Tensor:
        idx = torch.randint(0, n, (batch,), generator=generator)
        x = x_train[idx]
        eps = torch.randn(x.shape, generator=generator)
        t = spaces.sample_t(batch, p_mean, p_std, generator=generator)
        x, eps, t = x.to(device), eps.to(device), t.to(device)
        z = spaces.interpolate(x, eps, t)
        o = model(z, t)
        value = spaces.per_sample_loss(o, x, eps, z, t, pred, loss, t_eps, t_min).mean()
        optimiser.zero_grad(set_to_none=True)
        value.backward()
        native = value.item()
        if not math.isfinite(native):
            raise loop.Diverged(
                step,
                loop.first_non_finite(groups),
                native,
                detail=(f"pred={pred}, loss={loss} diverged at step {step}; lower the learning rate or check the data"),
            )
        optimiser.step()
        updates = counters["ema_updates"]
        ema_update(ema, model, min(ema_decay, (1 + updates) / (EMA_WARMUP + updates)))
        counters["ema_updates"] = updates + 1
        if (log_every and step % log_every == 0) or step == steps - 1:
            with torch.no_grad():
                loss_x = spaces.per_sample_loss(o.detach(), x, eps, z, t, pred, "x", t_eps, t_min).mean()
            rows.append((step, native, loss_x.item()))
        return native

    model.train()
    settings = settings or loop.LoopSettings(name=f"train {pred}x{loss}")
    settings = dataclasses.replace(settings, fingerprint=f"{settings.fingerprint}|cell={pred}x{loss}")
    state = {
        "model": model,
        "optimiser": optimiser,
        "generator": generator,
        "ema": ema,
        "counters": counters,
        "rows": rows,
    }
    loop.run_loop(train_step, steps, state, settings, groups=groups)
    return {k: v.cpu() for k, v in ema.items()}, pd.DataFrame(rows, columns=LOG_COLUMNS)


def train_cell(
    model: nn.Module,
    x_train: torch.Tensor,
    pred: str,
    loss: str,
    train: dict,
    noise: dict,
    seed: int,
    settings: loop.LoopSettings | None = None,
) -> tuple[dict, pd.DataFrame, float]:
    """`train_denoiser` with a cell's `train` settings (steps, batch, lr, ema) and `noise` settings (p_mean,
    p_std, t_eps, t_min), logging 50 times over the run; returns (EMA state dict, log, seconds)."""
    start = time.perf_counter()
    ema_state, train_log = train_denoiser(
        model,
        x_train,
        pred,
        loss,
        train["steps"],
        train["batch"],
        train["lr"],
        noise["p_mean"],
        noise["p_std"],
        seed,
        ema_decay=train["ema"],
        t_eps=noise["t_eps"],
        t_min=noise["t_min"],
        settings=settings,
        log_every=max(1, train["steps"] // 50),
    )
    return ema_state, train_log, time.perf_counter() - start


def log_frame(train_log: pd.DataFrame, **columns) -> pd.DataFrame:
    """The training log with the run's identifying `columns` in front, in their order."""
    frame = train_log.copy()
    for key, value in reversed(columns.items()):
        frame.insert(0, key, value)
    return frame


def train_feature_net(
    x: torch.Tensor,
    y: torch.Tensor,
    steps: int,
    batch: int,
    lr: float,
    seed: int,
    feature_dim: int = 32,
    settings: loop.LoopSettings | None = None,
) -> tuple[FeatureNet, float]:
    """A FeatureNet classifier of images x (N, C, H, W) with labels y, trained in the shared loop on the job's
    device (loop.job_device()); returns (net in eval mode on the CPU, train accuracy). `settings` gives the
    job's checkpoint (net, optimiser, generator), from which a killed run resumes bit-identically."""
    x = torch.as_tensor(x, dtype=torch.float32)
    y = torch.as_tensor(y, dtype=torch.long)
    if len(x) != len(y) or len(x) == 0:
        raise ValueError(f"need as many labels as images (and some), got {len(x)} images and {len(y)} labels")
    device = loop.job_device()
    generator = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        net = FeatureNet(channels=x.shape[1], n_classes=int(y.max()) + 1, feature_dim=feature_dim)
    net.to(device)
    optimiser = Adam(net.parameters(), lr=lr)
    groups = loop.parameter_groups({"net": net})

    def train_step(step: int) -> torch.Tensor:
        idx = torch.randint(0, len(x), (batch,), generator=generator)
        value = F.cross_entropy(net(x[idx].to(device)), y[idx].to(device))
        optimiser.zero_grad(set_to_none=True)
        value.backward()
        loop.check_finite(value, step, groups)
        optimiser.step()
        return value.detach()

    net.train()
    loop.run_loop(
        train_step,
        steps,
        {"net": net, "optimiser": optimiser, "generator": generator},
        settings or loop.LoopSettings(name="feature net"),
        groups=groups,
    )
    net.eval()
    with torch.no_grad():
        predicted = torch.cat([net(chunk.to(device)).argmax(1) for chunk in x.split(1024)])
        accuracy = predicted.eq(y.to(device)).float().mean().item()
    return net.cpu(), accuracy
