"""Training of a denoiser in one (prediction space, loss space) cell, and of the FD feature network.

The denoiser is trained as in JiT: t ~ logit-normal(p_mean, p_std), z_t = t x + (1 - t) eps, the network
output o is read in prediction space `pred` and the squared error is taken in loss space `loss`.
All randomness of a run (batches, noise, t) comes from one seeded torch.Generator per seed, drawn on the CPU
(the same draws on any device). The seeds of a cell train together as one batch of models with a leading seed
dimension (batched.SeedBatch, issue 23); each seed's result is that of the seed trained alone, to float
rounding. Both trainings run in the shared loop (common.loop) on the job's device, which checkpoints the
generators with the model, the optimiser and the EMA weights, so a run killed after a checkpoint resumes
bit-identically to an uninterrupted one.
"""

from __future__ import annotations

import dataclasses
import math
import time

import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from neurips26.common import ensemble, loop
from neurips26.common.optim import Adam
from neurips26.common.validation import check_int, check_number
from neurips26.pred_loss_space import spaces
from neurips26.pred_loss_space.batched import SeedBatch
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


def train_denoisers(
    members: list[nn.Module],
    x_train: torch.Tensor,
    pred: str,
    loss: str,
    steps: int,
    batch: int,
    lr: float,
    p_mean: float,
    p_std: float,
    seeds: list[int],
    ema_decay: float = 0.999,
    t_eps: float = spaces.T_EPS,
    t_min: float = spaces.T_MIN,
    settings: loop.LoopSettings | None = None,
    log_every: int = 10,
) -> tuple[list[dict], pd.DataFrame]:
    """Train the `members` (one model per seed, one architecture, on one device) together, as one SeedBatch
    (batched.py) with Adam for `steps` steps in the shared training loop (common.loop); returns (each member's
    EMA state dict on the CPU, in the order of `seeds`, and the log frame). The members are trained in place:
    they hold their final (raw) weights afterwards.

    Member i is what a run of seed seeds[i] alone gives (to float rounding; a test checks it): its initial
    weights are its own (build them with common.ensemble.build), its batches, noise and t come from its own
    generator seeded with its seed (drawn on the CPU, the same on any device), the loss of a step is the sum of
    the members' losses (so each gets its own gradient), and Adam and the EMA act elementwise.

    The log has one row per seed every `log_every` steps and at the last step: seed, step, loss_native (the mean
    loss in space `loss` that is minimised) and loss_x (the x-space loss of the same batch and output).
    The EMA warms up: its decay at update k is min(ema_decay, (1 + k) / (10 + k)), so short runs are not
    dominated by the initial weights.
    `settings` (a LoopSettings) gives the job's checkpoint: weights, optimiser, generators, EMA weights, the
    count of EMA updates and the log are saved in it, so a killed run resumes bit-identically; the cell
    (pred, loss) and the seeds are part of its fingerprint, so a checkpoint of another cell is never resumed.
    Raises common.loop.Diverged (a FloatingPointError) naming the seed when a member's loss stops being finite,
    before the update.
    """
    check_settings(pred, loss, steps, batch, lr, p_std, ema_decay, t_eps, t_min)
    seeds = [int(seed) for seed in seeds]
    if len(seeds) != len(members):
        raise ValueError(f"{len(members)} models for {len(seeds)} seeds {seeds}")
    x_train = torch.as_tensor(x_train, dtype=torch.float32)
    n = len(x_train)
    if n == 0:
        raise ValueError("empty training set")
    net = SeedBatch(members)
    generators = ensemble.seed_generators(seeds)  # batches and noise are drawn on the CPU, on any device
    device = next(net.parameters()).device
    optimiser = Adam(net.parameters(), lr=lr)
    ema = {k: v.detach().clone() for k, v in net.state_dict().items()}
    counters = {"ema_updates": 0}
    rows: list[tuple[int, int, float, float]] = []
    size = len(seeds)

    def train_step(step: int) -> float:
        xs, noises, ts = [], [], []
        for generator in generators:  # each seed's draws in the order of a single-seed run: batch, noise, t
            x = x_train[torch.randint(0, n, (batch,), generator=generator)]
            xs.append(x)
            noises.append(torch.randn(x.shape, generator=generator))
            ts.append(spaces.sample_t(batch, p_mean, p_std, generator=generator))
        x, eps, t = torch.stack(xs).to(device), torch.stack(noises).to(device), torch.stack(ts).to(device)
        z = spaces.interpolate(x.flatten(0, 1), eps.flatten(0, 1), t.flatten()).view_as(x)
        o = net(z, t)
        flat = [o.flatten(0, 1), x.flatten(0, 1), eps.flatten(0, 1), z.flatten(0, 1), t.flatten()]
        losses = spaces.per_sample_loss(*flat, pred, loss, t_eps, t_min).view(size, batch).mean(1)
        optimiser.zero_grad(set_to_none=True)
        losses.sum().backward()  # the sum: each member's gradient is that of its own loss
        natives = losses.detach().cpu().tolist()
        for index, native in enumerate(natives):
            if not math.isfinite(native):
                raise loop.Diverged(
                    step,
                    _first_non_finite(net, index),
                    native,
                    detail=f"pred={pred}, loss={loss} diverged at step {step} (seed {seeds[index]})",
                )
        optimiser.step()
        updates = counters["ema_updates"]
        ema_update(ema, net, min(ema_decay, (1 + updates) / (EMA_WARMUP + updates)))
        counters["ema_updates"] = updates + 1
        if (log_every and step % log_every == 0) or step == steps - 1:
            with torch.no_grad():
                flat[0] = flat[0].detach()
                loss_x = spaces.per_sample_loss(*flat, pred, "x", t_eps, t_min).view(size, batch).mean(1)
            rows.extend(zip(seeds, [step] * size, natives, loss_x.cpu().tolist()))
        return sum(natives) / size

    net.train()
    seeds_text = "-".join(map(str, seeds))
    settings = settings or loop.LoopSettings(name=f"train {pred}x{loss} s{seeds_text}")
    settings = dataclasses.replace(
        settings, fingerprint=f"{settings.fingerprint}|cell={pred}x{loss}|seeds={seeds_text}"
    )
    state = {
        "model": net,
        "optimiser": optimiser,
        **{f"generator_{seed}": generator for seed, generator in zip(seeds, generators)},
        "ema": ema,
        "counters": counters,
        "rows": rows,
    }
    loop.run_loop(train_step, steps, state, settings)
    with torch.no_grad():
        for index, member in enumerate(members):
            member.load_state_dict(net.member_state_dict(index))
    frame = pd.DataFrame(rows, columns=["seed", *LOG_COLUMNS]).sort_values(["seed", "step"], kind="stable")
    emas = [{k: v.cpu() for k, v in net.member_state_dict(i, ema).items()} for i in range(size)]
    return emas, frame.reset_index(drop=True)


def _first_non_finite(net: SeedBatch, index: int) -> str:
    """The first parameter of member `index` (its top-level child) with a non-finite weight, or else gradient."""
    for what in ("weight", "gradient"):
        for name, param in zip(net.names, net.stacked):
            tensor = param.detach() if what == "weight" else param.grad
            if tensor is not None and tensor.device.type != "meta" and not bool(torch.isfinite(tensor[index]).all()):
                return f"{what} of model.{name.split('.')[0]}"
    return "loss"


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
    """`train_denoisers` of one model and one seed: trains `model` in place, returns (its EMA state dict on the
    CPU, the log frame: step, loss_native, loss_x)."""
    emas, frame = train_denoisers(
        [model],
        x_train,
        pred,
        loss,
        steps,
        batch,
        lr,
        p_mean,
        p_std,
        [seed],
        ema_decay,
        t_eps,
        t_min,
        settings,
        log_every,
    )
    return emas[0], frame.drop(columns="seed")


def train_cell(
    members: list[nn.Module],
    x_train: torch.Tensor,
    pred: str,
    loss: str,
    train: dict,
    noise: dict,
    seeds: list[int],
    settings: loop.LoopSettings | None = None,
) -> tuple[list[dict], pd.DataFrame, float]:
    """`train_denoisers` with a cell's `train` settings (steps, batch, lr, ema) and `noise` settings (p_mean,
    p_std, t_eps, t_min), logging 50 times over the run; returns (EMA state dicts, log, seconds of the whole
    batch of seeds)."""
    start = time.perf_counter()
    emas, train_log = train_denoisers(
        members,
        x_train,
        pred,
        loss,
        train["steps"],
        train["batch"],
        train["lr"],
        noise["p_mean"],
        noise["p_std"],
        seeds,
        ema_decay=train["ema"],
        t_eps=noise["t_eps"],
        t_min=noise["t_min"],
        settings=settings,
        log_every=max(1, train["steps"] // 50),
    )
    return emas, train_log, time.perf_counter() - start


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
