r"""Training of the walk generator (AnalogToBi, Kim et al. 2026, arXiv 2603.08720, Sec. 4.1; reference
``GPT_Pretrain.py``, nanoGPT's ``train.py``): next-token cross-entropy on walks padded with ``TRUNCATE``, AdamW with
linear warmup and cosine decay to ``min_lr_frac * lr``, gradient-norm clipping, batches of random rows.

Deliberate differences: the loss counts the targets up to and including each walk's first ``TRUNCATE`` (the
reference trains on the padding too, which only teaches the model to repeat ``TRUNCATE``); each step's rows are drawn
from a generator seeded by ``TrainSettings.seed`` inside the common loop, whose checkpoints hold the generator, so a
resumed run trains on the same batches. The held-out loss (walks of the test circuits) is logged every
``eval_every`` steps.

Length buckets (issue 41, a speed-up that computes the same loss): a step's rows are sorted by walk length and cut
into micro-batches (:func:`length_buckets`), each padded only to its own longest walk, and the gradient is accumulated
over them with every micro-batch's summed loss divided by the step's target count. Under causal attention a row's
logits up to its end do not depend on the padding after it, so the loss and its gradient equal those of the whole
batch padded to its longest walk (up to floating-point summation order, tested); about a third of a quick batch was
padding. With dropout the masks are drawn per micro-batch, so a run with dropout draws other (equally distributed)
masks than one unbucketed batch would.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from neurips26.common import loop
from neurips26.common.optim import AdamW
from neurips26.common.validation import integer, number, validate

from .model import GPT, GPTConfig

__all__ = [
    "TrainSettings",
    "bucketed_loss_backward",
    "learning_rate",
    "length_buckets",
    "target_mask",
    "train_gpt",
    "walk_lengths",
    "walk_loss",
]

# The fixed cost of one micro-batch's forward and backward pass in token positions: on one CPU thread at quick
# sizing (width 96, 2 layers) a pass costs about 25 ms plus 0.19 ms per token (measured when this was written).
# It only chooses where the buckets are cut; the loss does not depend on it.
BUCKET_OVERHEAD_TOKENS = 128


@dataclass(frozen=True)
class TrainSettings:
    steps: int = integer(1, default=400)
    batch_size: int = integer(1, default=32)
    lr: float = number(0.0, low_open=True, default=3e-4)
    warmup: int = integer(0, default=20)
    min_lr_frac: float = number(0.0, 1.0, default=0.1)
    weight_decay: float = number(0.0, default=0.1)
    beta1: float = number(0.0, 1.0, high_open=True, default=0.9)
    beta2: float = number(0.0, 1.0, high_open=True, default=0.99)
    grad_clip: float = number(0.0, default=1.0)
    eval_every: int = integer(1, default=100)
    seed: int = integer(0, default=0)

    def __post_init__(self):
        validate(self)


def learning_rate(step: int, s: TrainSettings) -> float:
    """Linear warmup over ``warmup`` steps (from lr / warmup), then cosine to ``min_lr_frac * lr`` at the last step."""
    if step < s.warmup:
        return s.lr * (step + 1) / s.warmup
    span = max(1, s.steps - s.warmup)
    progress = min(1.0, (step - s.warmup) / span)
    low = s.lr * s.min_lr_frac
    return low + 0.5 * (1 + math.cos(math.pi * progress)) * (s.lr - low)


def walk_lengths(rows: np.ndarray, end: int) -> np.ndarray:
    """Per row, the number of tokens up to and including its first ``end`` (the whole row when it has none)."""
    rows = np.asarray(rows)
    is_end = rows == end
    first = np.where(is_end.any(axis=1), is_end.argmax(axis=1) + 1, rows.shape[1])
    return first.astype(np.int64)


def target_mask(rows: torch.Tensor, end: int) -> torch.Tensor:
    """(B, T-1) True for the targets ``rows[:, 1:]`` up to and including each row's first ``end`` token."""
    targets = rows[:, 1:]
    after = (targets == end).long().cumsum(1)
    return (after == 0) | ((after == 1) & (targets == end))


def walk_loss(model: GPT, rows: torch.Tensor, end: int) -> torch.Tensor:
    """Mean next-token cross-entropy over the targets of :func:`target_mask`."""
    logits = model(rows[:, :-1])
    mask = target_mask(rows, end)
    losses = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), rows[:, 1:].reshape(-1), reduction="none")
    return (losses * mask.reshape(-1)).sum() / mask.sum().clamp(min=1)


def length_buckets(lengths: np.ndarray, overhead: int | None = None) -> list[np.ndarray]:
    """The rows of one batch in micro-batches: sorted by length (stable), cut where the padded token count plus
    ``overhead`` (default :data:`BUCKET_OVERHEAD_TOKENS`) per micro-batch is smallest (an exact dynamic programme
    over the cut points); each item holds the row positions of one micro-batch, shortest walks first."""
    overhead = BUCKET_OVERHEAD_TOKENS if overhead is None else overhead
    lengths = np.asarray(lengths, dtype=np.int64)
    if lengths.ndim != 1 or len(lengths) == 0:
        raise ValueError(f"lengths must be a non-empty vector, got shape {lengths.shape}")
    order = np.argsort(lengths, kind="stable")
    ranked = lengths[order]
    n = len(ranked)
    best = np.full(n + 1, np.inf)
    best[0] = 0.0
    cut = np.zeros(n + 1, dtype=np.int64)
    for j in range(1, n + 1):  # rows [i, j) form the last micro-batch, padded to ranked[j - 1]
        costs = best[:j] + (j - np.arange(j)) * ranked[j - 1] + overhead
        cut[j] = int(np.argmin(costs))
        best[j] = costs[cut[j]]
    bounds = [n]
    while bounds[-1] > 0:
        bounds.append(int(cut[bounds[-1]]))
    bounds = bounds[::-1]
    return [order[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def bucketed_loss_backward(model: GPT, rows: torch.Tensor, lengths: np.ndarray, end: int) -> torch.Tensor:
    """Accumulate into the parameters' ``.grad`` the gradient of :func:`walk_loss` of ``rows`` (B, T), computed in
    the micro-batches of :func:`length_buckets` (``lengths``: each row's tokens up to its first ``end``, as
    :func:`walk_lengths`); returns the loss (detached), equal to ``walk_loss(model, rows[:, :max(lengths)], end)``."""
    lengths = np.asarray(lengths, dtype=np.int64)
    if len(lengths) != len(rows):
        raise ValueError(f"{len(lengths)} lengths for {len(rows)} rows")
    total = int(target_mask(rows, end).sum())
    loss = torch.zeros((), device=rows.device)
    for members in length_buckets(lengths):
        width = min(rows.shape[1], max(2, int(lengths[members].max())))
        chunk = rows[torch.as_tensor(members, device=rows.device), :width]
        logits = model(chunk[:, :-1])
        mask = target_mask(chunk, end)
        losses = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), chunk[:, 1:].reshape(-1), reduction="none")
        part = (losses * mask.reshape(-1)).sum() / max(total, 1)
        part.backward()
        loss += part.detach()
    return loss


@torch.no_grad()
def _eval_loss(model: GPT, rows: torch.Tensor, end: int, batch: int) -> float:
    model.eval()
    total, count = 0.0, 0
    lengths = walk_lengths(rows.cpu().numpy(), end)
    for i in range(0, len(rows), batch):
        chunk = rows[i : i + batch, : int(lengths[i : i + batch].max())].long()  # the padding after carries no target
        n = int(target_mask(chunk, end).sum())
        total += float(walk_loss(model, chunk, end)) * n
        count += n
    model.train()
    return total / max(count, 1)


def train_gpt(
    train_rows: np.ndarray,
    val_rows: np.ndarray,
    config: GPTConfig,
    settings: TrainSettings,
    *,
    end: int,
    device: torch.device | str = "cpu",
    loop_settings: loop.LoopSettings | None = None,
    log: Callable[[str], None] | None = None,
) -> tuple[GPT, list[dict], loop.LoopResult]:
    """Train a :class:`GPT` on ``train_rows`` (n, T) of token ids padded with ``end``; returns the model in eval
    mode, the logged rows (step, lr, loss, val_loss) and the loop's result."""
    if train_rows.ndim != 2 or len(train_rows) == 0:
        raise ValueError(f"train_rows must be a non-empty (n, T) array, got shape {train_rows.shape}")
    if train_rows.shape[1] > config.context + 1:
        raise ValueError(f"rows of {train_rows.shape[1]} tokens exceed the context {config.context} + 1")
    for name, rows in (("train", train_rows), ("val", val_rows)):
        if rows.size and (rows.min() < 0 or rows.max() >= config.vocab_size):
            raise ValueError(f"{name} rows hold token ids outside [0, {config.vocab_size})")
    device = torch.device(device)
    model = GPT(config).to(device)
    model.train()
    # int32 on the device (paper scale: 400k walks x 1025 tokens), each batch widened to int64
    train = torch.as_tensor(train_rows, dtype=torch.int32, device=device)
    val = torch.as_tensor(val_rows, dtype=torch.int32, device=device)
    optimiser = AdamW(
        model.parameters(), settings.lr, (settings.beta1, settings.beta2), weight_decay=settings.weight_decay
    )
    generator = torch.Generator().manual_seed(settings.seed)
    lengths = torch.as_tensor(walk_lengths(train_rows, end))  # on the CPU, beside the generator
    logged: list[dict] = []

    def step_fn(step: int) -> torch.Tensor:
        lr = learning_rate(step, settings)
        optimiser.lr = lr
        index = torch.randint(len(train), (settings.batch_size,), generator=generator)
        width = int(lengths[index].max())  # the batch's longest walk: the padding after it carries no target
        for p in model.parameters():
            p.grad = None
        loss = bucketed_loss_backward(model, train[index.to(device), :width].long(), lengths[index].numpy(), end)
        if settings.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), settings.grad_clip)
        optimiser.step()
        done = step + 1
        row = {"step": done, "lr": lr, "loss": float(loss.detach())}
        if done % settings.eval_every == 0 or done == settings.steps:
            row["val_loss"] = _eval_loss(model, val, end, 4 * settings.batch_size) if len(val) else math.nan
            if log:
                log(f"step {done}: loss {row['loss']:.4f} val {row['val_loss']:.4f} lr {lr:.2e}")
        logged.append(row)
        return loss

    result = loop.run_loop(
        step_fn,
        settings.steps,
        {"model": model, "optimiser": optimiser, "generator": generator, "logged": logged},
        loop_settings,
    )
    model.eval()
    return model, logged, result
