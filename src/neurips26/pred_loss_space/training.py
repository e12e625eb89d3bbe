"""Training of a denoiser in one (prediction space, loss space) cell, and of the FD feature network.

The denoiser is trained as in JiT: t ~ logit-normal(p_mean, p_std), z_t = t x + (1 - t) eps, the network
output o is read in prediction space `pred` and the squared error is taken in loss space `loss`.
All randomness of a run (batches, noise, t) comes from one seeded torch.Generator, which is checkpointed
with the model, the optimiser and the EMA weights, so a resumed run is bit-identical to an uninterrupted one.
"""

from __future__ import annotations

import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from neurips26.common.adam import Adam
from neurips26.common.checkpoint import resume_training, save_training
from neurips26.pred_loss_space import spaces
from neurips26.pred_loss_space.models import FeatureNet

LOG_COLUMNS = ["step", "loss_native", "loss_x"]
EMA_WARMUP = 10  # EMA decay at update k is min(ema_decay, (1 + k) / (EMA_WARMUP + k))


def check_settings(pred: str, loss: str, steps: int, batch: int, lr: float, p_std: float, ema_decay: float,
                   t_eps: float, t_min: float) -> None:
    spaces.check_space(pred, "prediction space")
    spaces.check_space(loss, "loss space")
    if steps < 0 or batch < 1:
        raise ValueError(f"need steps >= 0 and batch >= 1, got steps={steps}, batch={batch}")
    if not lr > 0:
        raise ValueError(f"learning rate must be positive, got {lr}")
    if not p_std > 0:
        raise ValueError(f"P_std must be positive, got {p_std}")
    if not 0 <= ema_decay < 1:
        raise ValueError(f"EMA decay must lie in [0, 1), got {ema_decay}")
    if not 0 < t_eps < 0.5:
        raise ValueError(f"t_eps must lie in (0, 0.5), got {t_eps}")
    if not 0 < t_min < 0.5:
        raise ValueError(f"t_min must lie in (0, 0.5), got {t_min}")


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
    model: nn.Module, x_train: torch.Tensor, pred: str, loss: str, steps: int, batch: int, lr: float,
    p_mean: float, p_std: float, seed: int, ema_decay: float = 0.999, t_eps: float = spaces.T_EPS,
    t_min: float = spaces.T_MIN, checkpoint: str | None = None, fingerprint: str = "",
    checkpoint_every: int = 200, log_every: int = 10,
) -> tuple[dict, pd.DataFrame]:
    """Train `model` (in place) with Adam for `steps` steps; returns (EMA state dict, log frame).

    The log has one row every `log_every` steps and at the last step: step, loss_native (the mean loss in
    space `loss` that is minimised) and loss_x (the x-space loss of the same batch and output).
    The EMA warms up: its decay at update k is min(ema_decay, (1 + k) / (10 + k)), so short runs are not
    dominated by the initial weights.
    With `checkpoint`, a matching checkpoint (same `fingerprint`) is resumed and a new one is written every
    `checkpoint_every` steps. Raises FloatingPointError when the loss stops being finite.
    """
    check_settings(pred, loss, steps, batch, lr, p_std, ema_decay, t_eps, t_min)
    x_train = torch.as_tensor(x_train, dtype=torch.float32)
    n = len(x_train)
    if n == 0:
        raise ValueError("empty training set")
    generator = torch.Generator().manual_seed(seed)  # batches and noise are drawn on the CPU, on any device
    device = next(model.parameters()).device
    optimiser = Adam(model.parameters(), lr=lr)
    state, rows, start = resume_training(checkpoint, fingerprint, model, optimiser)
    if state is not None:
        if (state.get("pred"), state.get("loss")) != (pred, loss):
            raise ValueError(f"checkpoint {checkpoint} was written for pred={state.get('pred')!r}, "
                             f"loss={state.get('loss')!r}, not pred={pred!r}, loss={loss!r}")
        ema = {k: v.clone() for k, v in state["ema"].items()}
        generator.set_state(state["generator"])
        updates = state["ema_updates"]
    else:
        ema = {k: v.detach().clone() for k, v in model.state_dict().items()}
        updates = 0
    model.train()
    for step in range(start, steps):
        idx = torch.randint(0, n, (batch,), generator=generator)
        x = x_train[idx]
        eps = torch.randn(x.shape, generator=generator)
        t = spaces.sample_t(batch, p_mean, p_std, generator=generator)
        x, eps, t = x.to(device), eps.to(device), t.to(device)
        z = spaces.interpolate(x, eps, t)
        o = model(z, t)
        value = spaces.per_sample_loss(o, x, eps, z, t, pred, loss, t_eps, t_min).mean()
        if not torch.isfinite(value):
            raise FloatingPointError(f"training pred={pred}, loss={loss} diverged at step {step} "
                                     f"(loss {value.item()}); lower the learning rate or check the data")
        optimiser.zero_grad(set_to_none=True)
        value.backward()
        optimiser.step()
        ema_update(ema, model, min(ema_decay, (1 + updates) / (EMA_WARMUP + updates)))
        updates += 1
        if (log_every and step % log_every == 0) or step == steps - 1:
            with torch.no_grad():
                loss_x = spaces.per_sample_loss(o.detach(), x, eps, z, t, pred, "x", t_eps, t_min).mean()
            rows.append((step, value.item(), loss_x.item()))
        if checkpoint and checkpoint_every and (step + 1) % checkpoint_every == 0 and step + 1 < steps:
            save_training(checkpoint, fingerprint, model, optimiser, rows, step + 1, ema=ema,
                          generator=generator.get_state(), ema_updates=updates, pred=pred, loss=loss)
    return {k: v.cpu() for k, v in ema.items()}, pd.DataFrame(rows, columns=LOG_COLUMNS)


def train_feature_net(x: torch.Tensor, y: torch.Tensor, steps: int, batch: int, lr: float,
                      seed: int, feature_dim: int = 32) -> tuple[FeatureNet, float]:
    """A FeatureNet classifier of images x (N, C, H, W) with labels y; returns (net in eval mode, train accuracy)."""
    x = torch.as_tensor(x, dtype=torch.float32)
    y = torch.as_tensor(y, dtype=torch.long)
    if len(x) != len(y) or len(x) == 0:
        raise ValueError(f"need as many labels as images (and some), got {len(x)} images and {len(y)} labels")
    generator = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        net = FeatureNet(channels=x.shape[1], n_classes=int(y.max()) + 1, feature_dim=feature_dim)
    optimiser = Adam(net.parameters(), lr=lr)
    net.train()
    for step in range(steps):
        idx = torch.randint(0, len(x), (batch,), generator=generator)
        value = F.cross_entropy(net(x[idx]), y[idx])
        if not torch.isfinite(value):
            raise FloatingPointError(f"feature net training diverged at step {step} (loss {value.item()})")
        optimiser.zero_grad(set_to_none=True)
        value.backward()
        optimiser.step()
    net.eval()
    with torch.no_grad():
        accuracy = torch.cat([net(chunk).argmax(1) for chunk in x.split(1024)]).eq(y).float().mean().item()
    return net, accuracy
