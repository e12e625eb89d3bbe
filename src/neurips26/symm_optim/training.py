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

Seeds as a batch dimension (:func:`train_ensemble`): the runs of several seeds train as one batched ensemble
(:class:`neurips26.common.ensemble.Ensemble`: stacked weights, ``vmap`` over the leading seed dimension). Each
member keeps its own initialisation (its ``LMConfig.seed``), its own window generator (its data seed) and its
own optimizer state; the batched step's loss is the sum of the members' losses, so each member's gradient is
its own, and every optimizer acts per member (``optimizers``: batched directions over the stack). A member that
diverges is recorded at that step as a run alone would be, then frozen at zero weights and state (it keeps
stepping in vain, finitely, beside the others); the ensemble stops when every member has diverged. A
single-seed run is the ensemble of one (:func:`train_lm`), so the two paths are one code path; a test holds
each member of a batched run to its run alone within float tolerance. Per-step seconds are each member's share
of the ensemble's step (the step's time over the members).

Every step runs in the common loop (``neurips26.common.loop``) on the job's device: the weights, the optimizers'
states, the window generators, the logged rows and spectra and the outcomes are checkpointed, so that a run
killed after a checkpoint resumes to the same result; the loop's own stop on a non-finite loss is off
(``check_finite=False``) because divergence is recorded here and ends the run through ``StopTraining``.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import torch
import torch.nn.functional as F

from neurips26.common import loop
from neurips26.common.ensemble import Ensemble, StackedWeights
from neurips26.common.loop import LoopSettings

from .model import LM, kind_of
from .optimizers import KINDS, build_optimizer
from .settings import TrainSettings

__all__ = [
    "TrainResult",
    "TrainSettings",
    "matrix_lr_scale",
    "spike_flags",
    "train_ensemble",
    "train_lm",
    "validation_losses",
    "vector_lr_scale",
]

SPECTRUM_KINDS = ("embedding", "lm_head", "router")
# vmap runs scaled_dot_product_attention member by member (no batching rule on the CPU): correct, and at the
# sizes of a CPU run cheaper than the rest of the step, so the warning is not repeated in every job's log
_VMAP_FALLBACK = "There is a performance drop because we have not yet implemented the batching rule"


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
    """Inputs and targets of the windows starting at ``starts`` (any shape: the windows keep its leading dims)."""
    idx = starts[..., None] + np.arange(seq_len + 1)
    rows = torch.from_numpy(np.asarray(tokens[idx], dtype=np.int64)).to(device)
    return rows[..., :-1], rows[..., 1:]


def _values(tensor: torch.Tensor) -> list:
    """A small tensor's values as Python numbers (read off the device once)."""
    return tensor.detach().cpu().tolist()


def _member_losses(ens: Ensemble, x: torch.Tensor, y: torch.Tensor, reduction: str) -> torch.Tensor:
    """(S,) next-token cross-entropy of each member on its own windows ``x``, ``y`` (S, B, T): the mean or sum
    over the member's targets."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_VMAP_FALLBACK)
        logits = ens(x)
    vocab = logits.shape[-1]
    losses = F.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1), reduction="none").view(ens.size, -1)
    return losses.mean(dim=1) if reduction == "mean" else losses.sum(dim=1)


@torch.no_grad()
def validation_losses(ens: Ensemble, tokens: np.ndarray, seq_len: int, max_tokens: int, batch_size: int) -> list[float]:
    """Each member's mean next-token cross-entropy (nats) over the same consecutive non-overlapping windows of
    the validation stream, covering at most ``max_tokens`` targets (on the ensemble's device)."""
    n_windows = min(max_tokens // seq_len, (len(tokens) - 1) // seq_len)
    if n_windows < 1:
        raise ValueError(f"the validation stream ({len(tokens)} tokens) is shorter than one window of {seq_len + 1}")
    ens.eval()
    device = next(iter(ens.params.values())).device
    totals, count = [0.0] * ens.size, 0
    starts = np.arange(n_windows) * seq_len
    for i in range(0, n_windows, batch_size):
        chunk = starts[i : i + batch_size]
        x, y = _windows(tokens, np.broadcast_to(chunk, (ens.size, len(chunk))), seq_len, device)
        totals = [t + v for t, v in zip(totals, _values(_member_losses(ens, x, y, "sum")))]
        count += y[0].numel()
    ens.train()
    return [t / count for t in totals]


def _any_non_finite(tensor: torch.Tensor) -> bool:
    """Whether a tensor holds a NaN or an infinity (asked as 'is any bad', so that a device whose values read as
    zeros, the tests' fake GPU, answers 'no')."""
    return bool(torch.isfinite(tensor).logical_not().any())


def _first_non_finite(params: dict[str, torch.Tensor], kinds: dict[str, str], grads: bool, size: int) -> list:
    """Per member: the first role (in ``KINDS`` order) whose weights (or gradients) hold a non-finite value in
    that member's slice, or None."""
    tensors = [p.grad if grads else p for p in params.values()]
    tensors = [t for t in tensors if t is not None]
    if not tensors or not _any_non_finite(torch.stack(torch._foreach_norm(tensors))):
        return [None] * size  # one fused check per step; the per-member search below only runs once something broke
    bad: list[set] = [set() for _ in range(size)]
    for name, p in params.items():
        t = p.grad if grads else p
        if t is None:
            continue
        flags = _values(torch.isfinite(t).reshape(size, -1).logical_not().any(dim=1))
        for member, flag in enumerate(flags):
            if flag:
                bad[member].add(kinds[name])
    return [next((k for k in KINDS if k in b), None) for b in bad]


def _largest_weights(params: dict[str, torch.Tensor], kinds: dict[str, str], member: int) -> str:
    largest: dict[str, float] = {}
    for name, p in params.items():
        largest[kinds[name]] = max(largest.get(kinds[name], 0.0), float(p[member].detach().abs().max()))
    return ", ".join(f"{k} {v:.3g}" for k, v in sorted(largest.items(), key=lambda kv: -kv[1]))


def _singular_values(matrix: torch.Tensor) -> np.ndarray:
    return torch.linalg.svdvals(matrix.detach().double()).cpu().numpy()


def _check_inputs(models: Sequence[LM], train_tokens: np.ndarray, val_tokens: np.ndarray, s: TrainSettings) -> None:
    configs = {replace(m.config, seed=0) for m in models}
    if len(configs) != 1:
        raise ValueError("the members of an ensemble must share their sizes (LMConfig apart from the seed)")
    config = models[0].config
    for name, stream in (("training", train_tokens), ("validation", val_tokens)):
        if len(stream) and int(np.max(stream)) >= config.vocab_size:
            raise ValueError(
                f"the {name} tokens reach id {int(np.max(stream))}, beyond the model's vocabulary "
                f"of {config.vocab_size}: the tokenizer and the model disagree"
            )
    if s.seq_len > config.context:
        raise ValueError(f"seq_len {s.seq_len} exceeds the model's context {config.context}")
    if len(train_tokens) <= s.seq_len + 1:
        raise ValueError(f"the training stream ({len(train_tokens)} tokens) is shorter than one window")


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
    """Train one ``model`` (data order from ``settings.seed``): :func:`train_ensemble` with one member, the
    trained weights written back into ``model``."""
    (result,) = train_ensemble(
        [model],
        [settings.seed],
        assignment,
        train_tokens,
        val_tokens,
        settings,
        spectrum_steps=spectrum_steps,
        log=log,
        loop_settings=loop_settings,
        device=device,
    )
    return result


def train_ensemble(
    models: Sequence[LM],
    seeds: Sequence[int],
    assignment: dict[str, dict],
    train_tokens: np.ndarray,
    val_tokens: np.ndarray,
    settings: TrainSettings,
    spectrum_steps: tuple[int, ...] = (),
    log: Callable[[str], None] = print,
    loop_settings: LoopSettings | None = None,
    device: torch.device | str | None = None,
) -> list[TrainResult]:
    """Train ``models`` (one per seed, each initialised from its own ``LMConfig.seed``) as one batched ensemble
    with one optimizer per role (``assignment``, see ``optimizers.build_optimizer``; the ``lr`` of each role is
    its peak learning rate); member i draws its training windows from ``seeds[i]`` (``settings.seed`` is not
    read). Returns one result per member, each what the member trained alone would give (module docstring);
    the trained weights are written back into ``models``.

    The ensemble is moved to ``device`` (default: the job's, ``loop.job_device()``) and every step runs in the
    common loop (:func:`neurips26.common.loop.run_loop`), which checkpoints and resumes as ``loop_settings``
    says; divergence is an outcome here, recorded in the member's result (the loop's own finiteness stop is off)."""
    s, size = settings, len(models)
    if size < 1 or len(seeds) != size:
        raise ValueError(f"an ensemble needs one data seed per model, got {len(seeds)} seeds for {size} models")
    _check_inputs(models, train_tokens, val_tokens, s)
    device = loop.job_device() if device is None else torch.device(device)
    for model in models:
        model.to(device)
    ens = Ensemble(models)
    params = ens.params
    kinds = {name: kind_of(name, p[0]) for name, p in params.items()}
    optimizer = build_optimizer(params.items(), assignment, kind_of, members=size)
    peak = {kind: [g["lr"] for g in opt.param_groups] for kind, opt in optimizer.optimizers.items()}
    rngs = [np.random.default_rng(seed) for seed in seeds]
    epochs = s.steps * s.batch_size * s.seq_len / len(train_tokens)
    steps: list[list[dict]] = [[] for _ in range(size)]
    spectra: list[list[dict]] = [[] for _ in range(size)]
    outcomes = [
        {
            "diverged": False,
            "diverged_step": None,
            "diverged_kind": None,
            "diverged_detail": "",
            "optimizer_seconds": 0.0,
            "train_seconds": 0.0,
        }
        for _ in range(size)
    ]
    watched = {kind: n for n, kind in kinds.items() if kind in SPECTRUM_KINDS}
    label = [f"seed {seed}: " if size > 1 else "" for seed in seeds]

    def freeze(members: list[int]) -> None:
        """Zero the weights and optimizer states of diverged members: they keep stepping, finitely and in vain,
        beside the others (their results are final), and an SVD or eigh of the stack never sees a NaN."""
        if not members:
            return
        with torch.no_grad():
            for p in params.values():
                p[members] = 0.0
            for opt in optimizer.optimizers.values():
                for state in opt.state.values():
                    for value in state.values():
                        if torch.is_tensor(value) and value.ndim and value.shape[0] == size:
                            value[members] = 0.0

    def step_fn(k: int):
        started = time.perf_counter()
        step = k + 1
        active = [i for i in range(size) if not outcomes[i]["diverged"]]
        for kind, opt in optimizer.optimizers.items():
            scale = (
                vector_lr_scale(step - 1, s.steps, s.vector_warmup)
                if kind == "vector"
                else matrix_lr_scale(step - 1, s.steps, s.cooldown_frac)
            )
            for group, lr in zip(opt.param_groups, peak[kind]):
                group["lr"] = lr * scale
        starts = np.stack([rng.integers(0, len(train_tokens) - s.seq_len - 1, size=s.batch_size) for rng in rngs])
        x, y = _windows(train_tokens, starts, s.seq_len, device)
        losses = _member_losses(ens, x, y, "mean")
        values = _values(losses)
        optimizer.zero_grad()
        losses.sum().backward()  # the sum: each member's gradient is the gradient of its own loss
        weights_bad = (
            _first_non_finite(params, kinds, grads=False, size=size)
            if not all(math.isfinite(values[i]) for i in active)
            else [None] * size
        )
        grads_bad = _first_non_finite(params, kinds, grads=True, size=size)
        norms = {
            kind: _values(torch.linalg.vector_norm(params[n].grad.reshape(size, -1), dim=1))
            if params[n].grad is not None
            else [math.nan] * size
            for kind, n in watched.items()
        }
        bad: dict[int, str] = {}
        for i in active:
            reason = None if math.isfinite(values[i]) else (weights_bad[i] or "loss")
            reason = reason or grads_bad[i]
            if reason is not None:
                bad[i] = reason
        records = {
            i: {"step": step, "train_loss": values[i], **{f"grad_norm_{k}": v[i] for k, v in norms.items()}}
            for i in active
        }
        # a member that broke before the step is reported with its weights as they are (the step below moves them:
        # its gradient is zeroed, but its momentum is not)
        details = {i: _largest_weights(params, kinds, i) for i in bad}
        stepping = [i for i in active if i not in bad]
        frozen = [i for i in range(size) if i not in stepping]
        if stepping:
            with torch.no_grad():
                for p in params.values():
                    if p.grad is not None and frozen:
                        p.grad[frozen] = 0.0
            record_spectrum = step in spectrum_steps
            before = {k: params[n].detach().clone() for k, n in watched.items()} if record_spectrum else {}
            tick = time.perf_counter()
            optimizer.step()
            seconds = time.perf_counter() - tick
            after = _first_non_finite(params, kinds, grads=False, size=size)
            for i in stepping:
                records[i]["optimizer_seconds"] = seconds / size  # the member's share of the ensemble's step
                outcomes[i]["optimizer_seconds"] += seconds / size
                if after[i] is not None:
                    bad[i], details[i] = after[i], _largest_weights(params, kinds, i)
            for i in stepping if record_spectrum else ():
                if i in bad:
                    continue
                for kind, name in watched.items():
                    lr = optimizer.optimizers[kind].param_groups[0]["lr"]
                    update = (before[kind][i] - params[name][i].detach()) / max(lr, 1e-30)
                    for what, matrix in (("gradient", params[name].grad[i]), ("update", update)):
                        sv = _singular_values(matrix)
                        spectra[i].extend(
                            {"step": step, "kind": kind, "matrix": what, "index": j, "sigma": v}
                            for j, v in enumerate(sv)
                        )
        for i, reason in sorted(bad.items()):
            detail = f"largest |weight| per role: {details[i]}"
            outcomes[i].update(diverged=True, diverged_step=step, diverged_kind=reason, diverged_detail=detail)
            log(f"{label[i]}step {step}: diverged, first non-finite: {reason} (train loss {values[i]}); {detail}")
        freeze([i for i in range(size) if outcomes[i]["diverged"]])
        finite = [i for i in active if i not in bad]
        evaluate = step % s.eval_every == 0 or step == s.steps
        val = validation_losses(ens, val_tokens, s.seq_len, s.eval_tokens, s.batch_size) if evaluate and finite else []
        seconds = (time.perf_counter() - started) / size
        for i in active:
            records[i]["val_loss"] = val[i] if i in finite and evaluate else math.nan
            if i in finite and evaluate:
                log(f"{label[i]}step {step}/{s.steps}: train {values[i]:.4f} val {val[i]:.4f}")
            steps[i].append(records[i])
            outcomes[i]["train_seconds"] += seconds
        if not finite:
            raise loop.StopTraining
        return sum(values[i] for i in finite) / len(finite)

    state = {
        "params": StackedWeights(params),
        "optimizer": optimizer,
        **{f"rng{i}": rng for i, rng in enumerate(rngs)},
        "steps": steps,
        "spectra": spectra,
        "outcomes": outcomes,
    }
    loop.run_loop(step_fn, s.steps, state, replace(loop_settings or LoopSettings(name="train_lm"), check_finite=False))
    with torch.no_grad():
        for i, model in enumerate(models):
            for name, p in model.named_parameters():
                p.copy_(params[name][i])
    results = []
    for i in range(size):
        o = outcomes[i]
        result = TrainResult(
            steps=steps[i],
            spectra=spectra[i],
            diverged=o["diverged"],
            diverged_step=o["diverged_step"],
            diverged_kind=o["diverged_kind"],
            diverged_detail=o["diverged_detail"],
            optimizer_seconds=o["optimizer_seconds"],
            train_seconds=o["train_seconds"],
            epochs=epochs,
        )
        flags = spike_flags([r["train_loss"] for r in result.steps], s.spike_factor, s.spike_ema, s.spike_skip)
        for record, flag in zip(result.steps, flags):
            record["spike"] = flag
        if not result.diverged:
            result.final_val_loss = result.steps[-1]["val_loss"]
        results.append(result)
    return results
