r"""Pre-training loop of the optimizer comparison (the reference's ``train_qwen3.py`` / ``train_olmoe.py`` at
small scale): random windows of the training stream, one mixed optimizer (one optimizer per parameter role),
the reference's schedules, validation loss on fixed windows, loss spikes, divergence, and the singular values
of the vocabulary-indexed matrices' gradients and updates.

Schedules, as in the reference: every matrix role keeps its learning rate for the first 60% of the steps and
then decays it linearly to 0 (``get_lr_scale`` with ``cooldown_frac=0.4``, no warmup); the AdamW role of
vectors ("other") follows a cosine with linear warmup (``get_cosine_schedule_with_warmup``).

A loss spike is a training loss above ``spike_factor`` times the exponential moving average of the losses
before it (after the first ``spike_skip`` steps, where the loss falls steeply). A run diverges when the loss,
a gradient or a parameter stops being finite: the loop stops, and the result names the step and the first
parameter role (in ``optimizers.KINDS`` order) whose weights or gradients went non-finite ("loss" when the
weights are finite and the loss is not, e.g. overflowing logits; the largest weight of each role is then
reported); a learning-rate sweep records this as its outcome rather than failing the run.

Every step runs in the common loop (``neurips26.common.loop``) on the job's device: the model, the optimizers'
states, the window generator, the logged rows and spectra and the outcome are checkpointed, so that a run
killed after a checkpoint resumes to the same result; the loop's own stop on a non-finite loss is off
(``check_finite=False``) because divergence is recorded here and ends the run through ``StopTraining``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import torch
import torch.nn.functional as F

from neurips26.common import loop
from neurips26.common.loop import LoopSettings

from .model import LM, kind_of
from .optimizers import KINDS, build_optimizer
from .settings import TrainSettings

__all__ = [
    "TrainResult",
    "TrainSettings",
    "matrix_lr_scale",
    "spike_flags",
    "train_lm",
    "validation_loss",
    "vector_lr_scale",
]

SPECTRUM_KINDS = ("embedding", "lm_head", "router")


@dataclass
class TrainResult:
    steps: list[dict] = field(default_factory=list)  # one row per step
    spectra: list[dict] = field(default_factory=list)  # singular values of gradients and updates
    diverged: bool = False
    diverged_step: int | None = None
    diverged_kind: str | None = None
    diverged_detail: str = ""
    final_val_loss: float = math.nan
    optimizer_seconds: float = 0.0
    train_seconds: float = 0.0
    epochs: float = 0.0


def matrix_lr_scale(step: int, total: int, cooldown_frac: float) -> float:
    """The reference's ``get_lr_scale``: 1 until ``1 - cooldown_frac`` of the run, then linear to 0."""
    t = max(1.0 - step / total, 1e-12)
    return 1.0 if t >= cooldown_frac else t / cooldown_frac


def vector_lr_scale(step: int, total: int, warmup: int) -> float:
    """``get_cosine_schedule_with_warmup(num_cycles=0.5)``."""
    if step < warmup:
        return step / max(1, warmup)
    progress = (step - warmup) / max(1, total - warmup)
    return max(0.0, 0.5 * (1.0 + math.cos(math.pi * progress)))


def spike_flags(losses, factor: float, ema_beta: float, skip: int) -> list[bool]:
    """Whether each loss is a spike: above ``factor`` times the exponential moving average (``ema_beta``) of the
    finite losses before it, counting from step ``skip + 1`` (1-based); non-finite losses are not spikes."""
    flags, ema = [], None
    for step, value in enumerate(losses, start=1):
        finite = math.isfinite(value)
        flags.append(bool(ema is not None and step > skip and finite and value > factor * ema))
        if finite:
            ema = value if ema is None else ema_beta * ema + (1 - ema_beta) * value
    return flags


def _windows(
    tokens: np.ndarray, starts: np.ndarray, seq_len: int, device: torch.device | str = "cpu"
) -> tuple[torch.Tensor, torch.Tensor]:
    idx = starts[:, None] + np.arange(seq_len + 1)
    rows = torch.from_numpy(np.asarray(tokens[idx], dtype=np.int64)).to(device)
    return rows[:, :-1], rows[:, 1:]


def _device(model: LM) -> torch.device:
    return next(model.parameters()).device


@torch.no_grad()
def validation_loss(model: LM, tokens: np.ndarray, seq_len: int, max_tokens: int, batch_size: int) -> float:
    """Mean next-token cross-entropy (nats) over consecutive non-overlapping windows of the validation stream
    covering at most ``max_tokens`` targets (on the model's device)."""
    n_windows = min(max_tokens // seq_len, (len(tokens) - 1) // seq_len)
    if n_windows < 1:
        raise ValueError(f"the validation stream ({len(tokens)} tokens) is shorter than one window of {seq_len + 1}")
    model.eval()
    total, count = 0.0, 0
    starts = np.arange(n_windows) * seq_len
    for i in range(0, n_windows, batch_size):
        x, y = _windows(tokens, starts[i : i + batch_size], seq_len, _device(model))
        logits = model(x)
        total += float(F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), reduction="sum"))
        count += y.numel()
    model.train()
    return total / count


def _any_non_finite(tensor: torch.Tensor) -> bool:
    """Whether a tensor holds a NaN or an infinity (asked as 'is any bad', so that a device whose values read as
    zeros, the tests' fake GPU, answers 'no')."""
    return bool(torch.isfinite(tensor).logical_not().any())


def _first_non_finite(model: LM, grads: bool) -> str | None:
    tensors = [p.grad if grads else p for p in model.parameters()]
    tensors = [t for t in tensors if t is not None]
    if not tensors or not _any_non_finite(torch.stack(torch._foreach_norm(tensors))):
        return None  # one fused check per step; the per-role search below only runs once something broke
    bad = set()
    for name, p in model.named_parameters():
        t = p.grad if grads else p
        if t is not None and _any_non_finite(t):
            bad.add(kind_of(name, p))
    return next((k for k in KINDS if k in bad), None)


def _largest_weights(model: LM) -> str:
    largest: dict[str, float] = {}
    for name, p in model.named_parameters():
        kind = kind_of(name, p)
        largest[kind] = max(largest.get(kind, 0.0), float(p.detach().abs().max()))
    return ", ".join(f"{k} {v:.3g}" for k, v in sorted(largest.items(), key=lambda kv: -kv[1]))


def _singular_values(matrix: torch.Tensor) -> np.ndarray:
    return torch.linalg.svdvals(matrix.detach().double()).cpu().numpy()


def train_lm(
    model: LM,
    assignment: dict[str, dict],
    train_tokens: np.ndarray,
    val_tokens: np.ndarray,
    settings: TrainSettings,
    spectrum_steps: tuple[int, ...] = (),
    log: Callable[[str], None] = print,
    loop_settings: LoopSettings | None = None,
    device: torch.device | str | None = None,
) -> TrainResult:
    """Train ``model`` with one optimizer per role (``assignment``, see ``optimizers.build_optimizer``); the
    ``lr`` of each role is its peak learning rate. Returns per-step rows, spectra and the outcome.

    The model is moved to ``device`` (default: the job's, ``loop.job_device()``) and every step runs in the
    common loop (:func:`neurips26.common.loop.run_loop`), which checkpoints and resumes as ``loop_settings``
    says; divergence is an outcome here, recorded in the result (the loop's own finiteness stop is off)."""
    s = settings
    vocab = model.config.vocab_size
    for name, stream in (("training", train_tokens), ("validation", val_tokens)):
        if len(stream) and int(np.max(stream)) >= vocab:
            raise ValueError(
                f"the {name} tokens reach id {int(np.max(stream))}, beyond the model's vocabulary "
                f"of {vocab}: the tokenizer and the model disagree"
            )
    if s.seq_len > model.config.context:
        raise ValueError(f"seq_len {s.seq_len} exceeds the model's context {model.config.context}")
    if len(train_tokens) <= s.seq_len + 1:
        raise ValueError(f"the training stream ({len(train_tokens)} tokens) is shorter than one window")
    device = loop.job_device() if device is None else torch.device(device)
    model.to(device)
    optimizer = build_optimizer(model.named_parameters(), assignment, kind_of)
    peak = {kind: [g["lr"] for g in opt.param_groups] for kind, opt in optimizer.optimizers.items()}
    rng = np.random.default_rng(s.seed)
    result = TrainResult(epochs=s.steps * s.batch_size * s.seq_len / len(train_tokens))
    outcome = {
        "diverged": False,
        "diverged_step": None,
        "diverged_kind": None,
        "diverged_detail": "",
        "optimizer_seconds": 0.0,
        "train_seconds": 0.0,
    }
    params = dict(model.named_parameters())
    watched = {kind_of(n, p): n for n, p in params.items() if kind_of(n, p) in SPECTRUM_KINDS}

    def step_fn(k: int):
        started = time.perf_counter()
        step = k + 1
        for kind, opt in optimizer.optimizers.items():
            scale = (
                vector_lr_scale(step - 1, s.steps, s.vector_warmup)
                if kind == "vector"
                else matrix_lr_scale(step - 1, s.steps, s.cooldown_frac)
            )
            for group, lr in zip(opt.param_groups, peak[kind]):
                group["lr"] = lr * scale
        starts = rng.integers(0, len(train_tokens) - s.seq_len - 1, size=s.batch_size)
        x, y = _windows(train_tokens, starts, s.seq_len, device)
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1))
        value = float(loss.detach())
        optimizer.zero_grad()
        loss.backward()
        bad = None if math.isfinite(value) else (_first_non_finite(model, grads=False) or "loss")
        bad = bad or _first_non_finite(model, grads=True)
        record = {
            "step": step,
            "train_loss": value,
            **{
                f"grad_norm_{k}": float(params[n].grad.norm()) if params[n].grad is not None else math.nan
                for k, n in watched.items()
            },
        }
        if bad is None:
            record_spectrum = step in spectrum_steps
            before = {k: params[n].detach().clone() for k, n in watched.items()} if record_spectrum else {}
            tick = time.perf_counter()
            optimizer.step()
            record["optimizer_seconds"] = time.perf_counter() - tick
            outcome["optimizer_seconds"] += record["optimizer_seconds"]
            bad = _first_non_finite(model, grads=False)
            if record_spectrum and bad is None:
                for kind, name in watched.items():
                    lr = optimizer.optimizers[kind].param_groups[0]["lr"]
                    update = (before[kind] - params[name].detach()) / max(lr, 1e-30)
                    for what, matrix in (("gradient", params[name].grad), ("update", update)):
                        sv = _singular_values(matrix)
                        result.spectra.extend(
                            {"step": step, "kind": kind, "matrix": what, "index": i, "sigma": v}
                            for i, v in enumerate(sv)
                        )
        record["val_loss"] = math.nan
        if bad is not None:
            detail = f"largest |weight| per role: {_largest_weights(model)}"
            outcome.update(diverged=True, diverged_step=step, diverged_kind=bad, diverged_detail=detail)
            result.steps.append(record)
            outcome["train_seconds"] += time.perf_counter() - started
            log(f"step {step}: diverged, first non-finite: {bad} (train loss {value}); {detail}")
            raise loop.StopTraining
        if step % s.eval_every == 0 or step == s.steps:
            record["val_loss"] = validation_loss(model, val_tokens, s.seq_len, s.eval_tokens, s.batch_size)
            log(f"step {step}/{s.steps}: train {value:.4f} val {record['val_loss']:.4f}")
        result.steps.append(record)
        outcome["train_seconds"] += time.perf_counter() - started
        return loss

    state = {
        "model": model,
        "optimizer": optimizer,
        "rng": rng,
        "steps": result.steps,
        "spectra": result.spectra,
        "outcome": outcome,
    }
    loop.run_loop(step_fn, s.steps, state, replace(loop_settings or LoopSettings(name="train_lm"), check_finite=False))
    result.diverged, result.diverged_step = outcome["diverged"], outcome["diverged_step"]
    result.diverged_kind, result.diverged_detail = outcome["diverged_kind"], outcome["diverged_detail"]
    result.optimizer_seconds, result.train_seconds = outcome["optimizer_seconds"], outcome["train_seconds"]
    flags = spike_flags([r["train_loss"] for r in result.steps], s.spike_factor, s.spike_ema, s.spike_skip)
    for record, flag in zip(result.steps, flags):
        record["spike"] = flag
    if not result.diverged:
        result.final_val_loss = result.steps[-1]["val_loss"]
    return result
