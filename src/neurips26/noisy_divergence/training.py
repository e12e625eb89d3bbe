r"""Pre-training of the divergence study: the runs of one model shape, QK-norm choice and learning rate, every noise
setting and seed of them, as one batched ensemble (:class:`neurips26.common.ensemble.Ensemble`), so that
divergence rates rest on tens of runs.

Member i trains on its own token stream (its noise setting's, or the clean one), from its own initialisation
(``LMConfig.seed``) and its own window generator (its seed): random windows of ``seq_len + 1`` tokens, next-token
cross-entropy averaged over the window. AdamW (``neurips26.common.optim``; decoupled weight decay on matrices and the
embedding, none on norms; betas (0.9, 0.95) at every scale of our config), linear warmup then cosine decay to
``min_lr_frac`` of the peak, each member's gradient clipped to ``grad_clip`` by its own norm. The batched step's loss
is the sum of the live members' losses, so each member's gradient is its own; a test holds each member of a batched
run to its run alone within float tolerance.

Divergence is an outcome, never an error: a member whose loss, gradient or weights stop being finite is recorded
as ``non_finite`` at that step (with the first parameter that broke) and frozen (its weights and AdamW state
zeroed; it keeps stepping, finitely and in vain, beside the others). The step function returns the live members'
mean loss, and NaN once every member has diverged: the common loop, with ``record_divergence``, then ends the run
and returns that as ``LoopResult.diverged`` instead of raising. Losses that rise and do not come back
(``divergence.detect``) are found from the logged curves afterwards, so that the detector's settings do not retrain.

Logged per step and member: training loss, learning rate, gradient norm before clipping, and the wall time of the
ensemble's step (``step_seconds``, the same for every member); every ``diag_every`` steps (and at the last): the
norm of the step's update ``||theta_after - theta_before||`` and, on one fixed batch of the clean validation stream
shared by every member (the probe), the largest |output logit|, the mean log-partition ``log Z`` of the output
softmax and per layer the attention statistics and residual RMS (``model.DIAG``); per block the norm of the
step's gradient before clipping (``block_grad_norm``); the ratio of the mean embedding row norm of the member's
noise ids to the median row norm (``embed_noise_ratio``); and, on the noisy probe (``noisy_probes``: windows with their
noise mask; the workflow gives every member the same windows, :func:`.streams.probe_stream`), per layer the largest
attention logit and the attention mass from clean queries onto noise keys (``max_logit_noisy``, ``noise_mass``) with
that mass over its value under uniform causal attention (``noise_mass_ratio``, :func:`.model.uniform_noise_mass`:
about the share of noise among the keys, which alone would make the mass a measure of the probe); validation loss on
the clean
validation stream every ``eval_every`` steps. Everything runs in the
common loop on the job's device and is checkpointed, so a killed job resumes to the same result.

Fitting a step on one GPU at paper scale (``TrainSettings``; :mod:`.memory` counts a step's device memory):

* gradient accumulation: the optimizer batch of ``batch_size`` windows per member is drawn whole (the same random
  windows whatever the split) and run forward and backward in ``batch_size / micro_batch`` micro-batches of
  ``micro_batch`` windows, each micro-batch's loss divided by their number, so that the summed gradient is the
  batch mean's; the probe and the validation batches are ``micro_batch`` windows too. No activation checkpointing:
  the micro-batch alone sets the activations and the logits;
* ``precision`` ``bf16``: the forward runs under ``torch.autocast`` in bfloat16 on the job's device (CUDA at paper
  scale); parameters, gradients and AdamW's state stay float32, the loss is taken on the logits cast to float32,
  and the diagnostic probe runs in float32 (autocast is left out on the meta device of the tests' fake accelerator,
  which has no autocast backend); ``fp32`` runs everything in float32;
* ``attention`` ``sdpa``: the training and validation forwards use PyTorch's fused attention; the probe, every
  ``diag_every`` steps, always takes the explicit float32 path whose statistics it records, at ``micro_batch``
  windows under ``no_grad``, so that only one layer's scores live at a time.

Our smoke and quick configs set ``micro_batch = batch_size``, ``fp32`` and ``explicit``: the code path and the
numbers of the runs before these options existed (a test holds a run with one micro-batch to them).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import torch
import torch.nn.functional as F

from neurips26.common import loop
from neurips26.common.ensemble import Ensemble, StackedWeights, clip_grad_norm_per_member
from neurips26.common.loop import LoopSettings
from neurips26.common.optim import AdamW

from .model import DIAG, DIAG_NOISY, LM, uniform_noise_mass
from .paths import ATTENTIONS

__all__ = [
    "PRECISIONS",
    "MemberResult",
    "TrainSettings",
    "accumulate_gradients",
    "autocast",
    "block_gradient_norms",
    "embedding_noise_ratio",
    "noisy_probe_statistics",
    "lr_at",
    "optimizers_of",
    "probe_statistics",
    "train_ensemble",
    "validation_losses",
]

PRECISIONS = {"fp32": None, "bf16": torch.bfloat16}  # the forward's autocast dtype (None: no autocast)


@dataclass(frozen=True)
class TrainSettings:
    seq_len: int
    batch_size: int
    steps: int
    warmup: int
    lr: float  # peak learning rate (the job's multiplier applied)
    min_lr_frac: float = 0.1
    betas: tuple[float, float] = (0.9, 0.95)
    eps: float = 1e-8
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    diag_every: int = 10
    eval_every: int = 50
    eval_tokens: int = 4096
    micro_batch: int | None = None  # windows per member in one forward (None: batch_size, no accumulation)
    precision: str = "fp32"  # fp32, or bf16 autocast of the forward (module docstring)
    attention: str = "explicit"  # the attention of forwards without diagnostics: explicit or sdpa

    @property
    def micro(self) -> int:
        return self.batch_size if self.micro_batch is None else self.micro_batch

    @property
    def accumulation(self) -> int:
        return self.batch_size // self.micro

    def __post_init__(self) -> None:
        if self.steps < 1 or self.batch_size < 1 or self.seq_len < 1:
            raise ValueError(
                f"steps, batch_size and seq_len must be >= 1, got {self.steps}, {self.batch_size}, {self.seq_len}"
            )
        if not 0 <= self.warmup < self.steps:
            raise ValueError(f"warmup must lie in [0, steps), got {self.warmup} of {self.steps}")
        if not self.lr > 0:
            raise ValueError(f"the learning rate must be > 0, got {self.lr}")
        if self.diag_every < 1 or self.eval_every < 1:
            raise ValueError("diag_every and eval_every must be >= 1")
        if not 1 <= self.micro <= self.batch_size or self.batch_size % self.micro:
            raise ValueError(f"micro_batch {self.micro} must divide batch_size {self.batch_size}")
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {sorted(PRECISIONS)}, got {self.precision!r}")
        if self.attention not in ATTENTIONS:
            raise ValueError(f"attention must be one of {ATTENTIONS}, got {self.attention!r}")


@dataclass
class MemberResult:
    steps: list[dict] = field(default_factory=list)  # one row per step
    diag: list[dict] = field(default_factory=list)  # one row per (diagnostic step, layer)
    non_finite_step: int | None = None  # the step whose loss, gradient or update was not finite
    non_finite_where: str = ""
    final_val_loss: float = math.nan


def lr_at(step: int, s: TrainSettings) -> float:
    """Learning rate of (0-based) ``step``: linear warmup over ``warmup`` steps, then cosine to ``min_lr_frac``."""
    if step < s.warmup:
        return s.lr * (step + 1) / s.warmup
    progress = (step - s.warmup) / max(1, s.steps - s.warmup - 1)
    return s.lr * (s.min_lr_frac + (1 - s.min_lr_frac) * 0.5 * (1 + math.cos(math.pi * min(progress, 1.0))))


def _windows(streams: Sequence, rngs, s: TrainSettings, device) -> tuple[torch.Tensor, torch.Tensor]:
    """Each member's ``batch_size`` random windows, read as contiguous slices (a noised stream is noised as read)."""
    rows = []
    for stream, rng in zip(streams, rngs):
        starts = rng.integers(0, len(stream) - s.seq_len - 1, size=s.batch_size)
        rows.append(np.stack([np.asarray(stream[a : a + s.seq_len + 1], dtype=np.int64) for a in starts]))
    data = torch.from_numpy(np.stack(rows)).to(device)
    return data[..., :-1], data[..., 1:]


def _values(tensor: torch.Tensor) -> list:
    return tensor.detach().cpu().tolist()


def autocast(device: torch.device, precision: str):
    """The forward's autocast context for ``precision`` on ``device`` (module docstring)."""
    dtype = PRECISIONS[precision]
    if dtype is None or device.type == "meta":
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=dtype)


def _member_losses(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Each member's mean cross-entropy, (S,), of logits (S, B, T, V) against targets (S, B, T), in float32."""
    ce = F.cross_entropy(logits.float().flatten(0, 2), targets.flatten(), reduction="none")
    return ce.view(logits.shape[0], -1).mean(1)


def accumulate_gradients(ens: Ensemble, x: torch.Tensor, y: torch.Tensor, alive: torch.Tensor, s: TrainSettings):
    """Forward and backward of one optimizer batch x, y (S, batch_size, T) in ``s.accumulation`` micro-batches,
    adding the live members' gradients into ``.grad``; returns each member's mean loss over the batch (detached)."""
    parts, total = s.accumulation, None
    for j in range(parts):
        window = slice(j * s.micro, (j + 1) * s.micro)
        with autocast(x.device, s.precision):
            logits, _ = ens(x[:, window], diagnostics=False, attention=s.attention)
        ce = _member_losses(logits, y[:, window])
        del logits
        if parts > 1:
            ce = ce / parts
        torch.where(alive, ce, torch.zeros_like(ce)).sum().backward()
        total = ce.detach() if total is None else total + ce.detach()
    return total


@torch.no_grad()
def probe_statistics(ens: Ensemble, probe: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(largest |logit|, mean log Z, per-layer ``DIAG``) of each member on the shared probe batch, by the explicit
    float32 path."""
    out, diag = ens(probe, in_dims=None, diagnostics=True)
    return out.abs().flatten(1).amax(1), torch.logsumexp(out, dim=-1).flatten(1).mean(1), diag


@torch.no_grad()
def noisy_probe_statistics(ens: Ensemble, tokens: torch.Tensor, key_mask: torch.Tensor) -> torch.Tensor:
    """Per member and layer ``DIAG_NOISY`` on each member's own probe windows ``tokens`` (S, n, T) with their noise
    mask (S, n, T), by the explicit float32 path: (S, n_layers, len(DIAG_NOISY))."""
    _, diag = ens(tokens, key_mask, in_dims=(0, 0), diagnostics=True)
    return diag


@torch.no_grad()
def block_gradient_norms(params: dict[str, torch.Tensor], size: int, n_layers: int) -> torch.Tensor:
    """(S, n_layers): each member's gradient norm over each block's parameters (``blocks.<i>.``)."""
    total = None
    for name, p in params.items():
        if p.grad is None or not name.startswith("blocks."):
            continue
        layer = int(name.split(".")[1])
        squares = p.grad.reshape(size, -1).double().square().sum(1)
        if total is None:
            total = torch.zeros(size, n_layers, dtype=torch.float64, device=p.grad.device)
        total[:, layer] += squares
    return total.sqrt() if total is not None else torch.full((size, n_layers), math.nan)


@torch.no_grad()
def embedding_noise_ratio(embedding: torch.Tensor, noise_ids: torch.Tensor) -> torch.Tensor:
    """(S,): mean row norm of each member's noise ids (``noise_ids`` (S, vocab) bool) over its median row norm,
    for the stacked embedding (S, vocab, d)."""
    norms = embedding.detach().float().norm(dim=-1)
    ids = noise_ids.to(norms.dtype)
    return (norms * ids).sum(1) / ids.sum(1) / norms.median(dim=1).values


def optimizers_of(params: dict[str, torch.Tensor], s: TrainSettings) -> dict[str, AdamW]:
    """AdamW with decay on the stacked matrices and embedding, (S, rows, cols), and without on the norm weights."""
    decayed = [p for p in params.values() if p.dim() > 2]
    kept = [p for p in params.values() if p.dim() <= 2]
    return {
        "decay": AdamW(decayed, s.lr, s.betas, s.eps, s.weight_decay),
        "no_decay": AdamW(kept, s.lr, s.betas, s.eps, 0.0),
    }


@torch.no_grad()
def validation_losses(
    ens: Ensemble,
    tokens: np.ndarray,
    seq_len: int,
    max_tokens: int,
    batch_size: int,
    attention: str = "explicit",
    precision: str = "fp32",
) -> list:
    """Each member's mean next-token cross-entropy over the same consecutive windows of the (clean) validation
    stream, at most ``max_tokens`` targets, ``batch_size`` windows per forward."""
    n_windows = min(max_tokens // seq_len, (len(tokens) - 1) // seq_len)
    if n_windows < 1:
        raise ValueError(f"the validation stream ({len(tokens)} tokens) is shorter than one window of {seq_len + 1}")
    device = next(iter(ens.params.values())).device
    starts = np.arange(n_windows) * seq_len
    total = torch.zeros(ens.size, dtype=torch.float64, device=device)
    for i in range(0, n_windows, batch_size):
        chunk = starts[i : i + batch_size]
        data = torch.from_numpy(np.asarray(tokens[chunk[:, None] + np.arange(seq_len + 1)], dtype=np.int64)).to(device)
        with autocast(device, precision):
            logits, _ = ens(data[:, :-1], in_dims=None, diagnostics=False, attention=attention)
        ce = F.cross_entropy(
            logits.float().flatten(0, 2), data[:, 1:].expand(ens.size, -1, -1).flatten(), reduction="none"
        )
        total += ce.view(ens.size, -1).double().sum(1)
    return _values(total / (n_windows * seq_len))


def _check_inputs(models: Sequence[LM], streams: Sequence[np.ndarray], val: np.ndarray, s: TrainSettings) -> None:
    if len({replace(m.config, seed=0) for m in models}) != 1:
        raise ValueError("the members of an ensemble must share one shape (LMConfig apart from the seed)")
    config = models[0].config
    if s.seq_len > config.context:
        raise ValueError(f"sequence length {s.seq_len} exceeds the model's context {config.context}")
    for i, stream in enumerate([*streams, val]):
        name = "validation" if i == len(streams) else f"member {i}'s training"
        if len(stream) <= s.seq_len + 1:
            raise ValueError(f"the {name} stream ({len(stream)} tokens) is shorter than one window of {s.seq_len + 1}")
        if int(np.max(stream)) >= config.vocab_size:
            raise ValueError(
                f"the {name} tokens reach id {int(np.max(stream))}, beyond the vocabulary of "
                f"{config.vocab_size}: the tokenizer and the model disagree"
            )


def _bad_members(params: dict[str, torch.Tensor], grads: bool, size: int) -> dict[int, str]:
    """Member -> first parameter (in model order) whose weights (or gradients) are not finite in its slice."""
    tensors = [(n, p.grad if grads else p) for n, p in params.items()]
    tensors = [(n, t) for n, t in tensors if t is not None]
    if not tensors or bool(torch.stack(torch._foreach_norm([t for _, t in tensors])).isfinite().all()):
        return {}
    bad: dict[int, str] = {}
    for name, t in tensors:
        for member, flag in enumerate(_values(t.reshape(size, -1).isfinite().logical_not().any(1))):
            if flag and member not in bad:
                bad[member] = ("gradient of " if grads else "weights of ") + name
    return bad


def train_ensemble(
    models: Sequence[LM],
    seeds: Sequence[int],
    streams: Sequence[np.ndarray],
    val_tokens: np.ndarray,
    settings: TrainSettings,
    log: Callable[[str], None] = print,
    loop_settings: LoopSettings | None = None,
    device: torch.device | str | None = None,
    labels: Sequence[str] | None = None,
    noisy_probes: tuple[np.ndarray, np.ndarray] | None = None,
    noise_ids: Sequence[np.ndarray] | None = None,
) -> tuple[list[MemberResult], loop.LoopResult]:
    """Train ``models`` (member i from its own ``LMConfig.seed``) on ``streams[i]`` with windows drawn by
    ``seeds[i]`` as one batched ensemble (module docstring). ``noisy_probes``: each member's probe windows and
    noise mask, (S, n, seq_len) each; ``noise_ids``: each member's noise vocabulary (the ids whose embedding norms
    are compared). Returns each member's result and the loop's result (``diverged`` is set when every member
    diverged); the trained weights are written back into ``models``."""
    s, size = settings, len(models)
    if size < 1 or len(seeds) != size or len(streams) != size:
        raise ValueError(
            f"an ensemble needs one seed and one stream per model: {size} models, {len(seeds)} seeds, "
            f"{len(streams)} streams"
        )
    _check_inputs(models, streams, val_tokens, s)
    labels = list(labels) if labels is not None else [f"member {i}" for i in range(size)]
    device = loop.job_device() if device is None else torch.device(device)
    for model in models:
        model.to(device)
    ens = Ensemble(models)
    params = ens.params
    optimizers = optimizers_of(params, s)
    rngs = [np.random.default_rng(seed) for seed in seeds]
    # the diagnostics' probe: the first micro_batch consecutive windows of the clean validation stream, one batch
    # shared by every member, so that no run's statistics are read on its own (possibly noisy) input
    n_probe = min(s.micro, (len(val_tokens) - 1) // s.seq_len)
    probe = torch.from_numpy(
        np.asarray(val_tokens[: n_probe * s.seq_len], dtype=np.int64).reshape(n_probe, s.seq_len)
    ).to(device)
    probe_tokens = probe_mask = noise_rows = None
    if noisy_probes is not None:
        probe_tokens = torch.as_tensor(np.asarray(noisy_probes[0], dtype=np.int64), device=device)
        probe_mask = torch.as_tensor(np.asarray(noisy_probes[1], dtype=bool), device=device)
        if probe_tokens.shape[0] != size or probe_tokens.shape != probe_mask.shape:
            raise ValueError(f"noisy probes must be (members, windows, positions) twice, got {probe_tokens.shape}")
        uniform_mass = _values(uniform_noise_mass(probe_mask))
    if noise_ids is not None:
        noise_rows = torch.zeros(size, models[0].config.vocab_size, dtype=torch.bool, device=device)
        for i, ids in enumerate(noise_ids):
            noise_rows[i, torch.as_tensor(np.asarray(ids, dtype=np.int64), device=device)] = True
    # plain dicts (what a checkpoint may hold); MemberResult at the end
    results = [{"steps": [], "diag": [], "non_finite_step": None, "non_finite_where": ""} for _ in range(size)]
    n_layers = models[0].config.n_layers

    def freeze(members: list[int]) -> None:
        with torch.no_grad():
            for p in params.values():
                p[members] = 0.0
            for opt in optimizers.values():
                for t in (*opt.exp_avg, *opt.exp_avg_sq):
                    t[members] = 0.0

    def step_fn(k: int):
        started = time.perf_counter()
        step = k + 1
        live = [i for i in range(size) if results[i]["non_finite_step"] is None]
        lr = lr_at(k, s)
        for opt in optimizers.values():
            opt.lr = lr
        x, y = _windows(streams, rngs, s, device)
        record = step % s.diag_every == 0 or step == s.steps
        alive = torch.zeros(size, dtype=torch.bool, device=device)
        alive[live] = True
        for opt in optimizers.values():
            opt.zero_grad()
        losses = _values(accumulate_gradients(ens, x, y, alive, s))
        bad = {i: "loss" for i in live if not math.isfinite(losses[i])}
        bad = {**{i: w for i, w in _bad_members(params, True, size).items() if i in live}, **bad}
        block_grads = _values(block_gradient_norms(params, size, n_layers)) if record else None
        grad_norms = _values(clip_grad_norm_per_member(params.values(), s.grad_clip))
        frozen = [i for i in range(size) if i not in live or i in bad]
        if frozen:
            with torch.no_grad():
                for p in params.values():
                    if p.grad is not None:
                        p.grad[frozen] = 0.0
        before = {n: p.detach().clone() for n, p in params.items()} if record else {}
        for opt in optimizers.values():
            opt.step()
        for i, where in _bad_members(params, False, size).items():
            if i in live and i not in bad:
                bad[i] = where
        if record:
            with torch.no_grad():
                update = torch.zeros(size, dtype=torch.float64, device=device)
                for n, p in params.items():
                    update += (p.detach() - before[n]).reshape(size, -1).double().square().sum(1)
                out_max, out_log_z, diag = probe_statistics(ens, probe)  # the fixed clean batch, after the update
                logit_max, log_z = _values(out_max), _values(out_log_z)
                update_norm = _values(update.sqrt())
                diag_rows = _values(diag)
                noisy_rows = (
                    _values(noisy_probe_statistics(ens, probe_tokens, probe_mask)) if probe_tokens is not None else None
                )
                embed_ratio = (
                    _values(embedding_noise_ratio(params["embed.weight"], noise_rows))
                    if noise_rows is not None
                    else [math.nan] * size
                )
        for i, where in sorted(bad.items()):
            results[i].update(non_finite_step=step, non_finite_where=where)
            log(f"{labels[i]}: step {step}: diverged (non-finite), first: {where}; loss {losses[i]}")
        if bad:
            freeze(sorted(bad))
        finite = [i for i in live if i not in bad]
        evaluate = finite and (step % s.eval_every == 0 or step == s.steps)
        val = (
            validation_losses(ens, val_tokens, s.seq_len, s.eval_tokens, s.micro, s.attention, s.precision)
            if evaluate
            else []
        )
        step_seconds = time.perf_counter() - started
        for i in live:
            row = {
                "step": step,
                "train_loss": losses[i],
                "lr": lr,
                "grad_norm": grad_norms[i],
                "step_seconds": step_seconds,
            }
            row["val_loss"] = val[i] if evaluate and i in finite else math.nan
            if record:
                row.update(
                    logit_max=logit_max[i], log_z=log_z[i], update_norm=update_norm[i], embed_noise_ratio=embed_ratio[i]
                )
                for layer in range(n_layers):
                    entry = {"step": step, "layer": layer, **dict(zip(DIAG, diag_rows[i][layer]))}
                    entry["block_grad_norm"] = block_grads[i][layer]
                    if noisy_rows is not None:
                        noisy = dict(zip(DIAG_NOISY, noisy_rows[i][layer]))
                        entry.update(
                            max_logit_noisy=noisy["max_logit"],
                            noise_mass=noisy["noise_mass"],
                            noise_mass_ratio=noisy["noise_mass"] / uniform_mass[i],
                        )
                    results[i]["diag"].append(entry)
            results[i]["steps"].append(row)
        if evaluate:
            shown = ", ".join(f"{labels[i]} {val[i]:.3f}" for i in finite[:4])
            log(f"step {step}/{s.steps}: validation loss {shown}{' ...' if len(finite) > 4 else ''}")
        return sum(losses[i] for i in finite) / len(finite) if finite else math.nan

    state = {
        "params": StackedWeights(params),
        **optimizers,
        **{f"rng{i}": rng for i, rng in enumerate(rngs)},
        "results": results,
    }
    base = loop_settings or LoopSettings(name="train noisy_divergence")
    outcome = loop.run_loop(
        step_fn, s.steps, state, replace(base, check_finite=True, record_divergence=True), groups={"weights": []}
    )
    with torch.no_grad():
        for i, model in enumerate(models):
            for name, p in model.named_parameters():
                p.copy_(params[name][i])
    members = []
    for r in results:
        vals = [row["val_loss"] for row in r["steps"] if math.isfinite(row["val_loss"])]
        final = vals[-1] if vals and r["non_finite_step"] is None else math.nan
        members.append(MemberResult(r["steps"], r["diag"], r["non_finite_step"], r["non_finite_where"], final))
    return members, outcome
