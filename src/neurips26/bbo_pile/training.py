r"""Pre-training of the BBO-Pile decoder on packed trajectories (bbo-pile's
``open_optformer/training/pretrain.py``, itself litgpt's ``pretrain.py``).

What follows bbo-pile's ``configs/qwen3_*.yaml`` and ``pretrain.fit``:

* next-token cross-entropy, the mean over the target positions that are not padding (their
  ``chunked_cross_entropy`` with ``ignore_index``); a row of ``W`` tokens gives ``W - 1`` inputs and
  targets, as litgpt reads ``max_seq_length + 1`` tokens per row;
* packed rows: trajectories (each starting with BOS) concatenated back to back; attention is not
  masked at trajectory boundaries (litgpt does not either), rotary positions run over the row;
* AdamW, betas (0.9, 0.95), weight decay 0.1 on every parameter (litgpt's ``AdamW(model.parameters())``),
  linear warmup then cosine decay to ``min_lr`` (``get_lr``), gradient-norm clipping at 1.0;
* training stops once the tokens seen reach the budget (``max_tokens``).

Deliberate differences:

* a token is a non-padding target (litgpt counts every position of a row, so its rows are full);
  the cosine's length is planned as ``ceil(budget / (batch x mean non-pad targets per row))`` steps
  and the learning rate stays at ``min_lr`` if the budget needs a step or two more;
* whole trajectories per row (:func:`pack_sequences` pads the rest of a row): litdata's stream cuts
  trajectories at row boundaries, which would leave rows whose trajectories lack their header;
* the warmup counts steps from 1 (``lr * step / warmup``): litgpt's first step has learning rate 0;
* AdamW is :class:`neurips26.common.optim.AdamW`, torch.optim.AdamW's arithmetic without importing
  torch._dynamo;
* fp32 on one device, no gradient accumulation (one micro-batch per step);
* every step's rows are drawn before training (:func:`batch_schedule`, the same permutations in the
  same order as drawing them step by step), so that the common loop knows the number of steps and a
  run resumed from a checkpoint trains on the same batches.

Compute is Kaplan et al.'s ``C = 6 N D``: N the non-embedding parameters (:func:`n_parameters`),
D the non-padding tokens seen; attention's ``T^2`` term and the output layer are not counted.
bbo-pile's scaling points use the same approximation.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import numpy as np
import torch
import torch.nn.functional as F

from neurips26.common import loop
from neurips26.common.loop import LoopSettings
from neurips26.common.optim import AdamW
from neurips26.common.validation import check_int, check_number, integer, is_number, number, validate

from .model import Decoder, DecoderConfig, n_parameters

__all__ = [
    "TrainSettings",
    "batch_schedule",
    "learning_rate",
    "pack_sequences",
    "planned_steps",
    "sequence_nll",
    "token_loss",
    "train_decoder",
]


@dataclass(frozen=True)
class TrainSettings:
    """Optimisation settings; the defaults are bbo-pile's ``qwen3_2M.yaml`` (global batch 512,
    lr 1e-4, warmup 200, min_lr 1e-5, eval interval 50, seed 42); quick scale overrides them."""

    tokens_budget: int = integer(1)
    batch: int = integer(1, default=512)
    lr: float = number(0.0, low_open=True, default=1e-4)
    weight_decay: float = number(0.0, default=0.1)
    betas: tuple[float, float] = (0.9, 0.95)
    warmup: int = integer(0, default=200)
    min_lr: float = number(0.0, default=1e-5)
    grad_clip: float | None = 1.0
    eval_every: int = integer(1, default=50)
    eval_batch: int = integer(1, default=64)
    seed: int = integer(0, default=42)

    def __post_init__(self):
        validate(self)
        if self.min_lr > self.lr:
            raise ValueError(f"TrainSettings.min_lr must lie in [0, lr={self.lr}], got {self.min_lr!r}")
        if not (len(self.betas) == 2 and all(is_number(b, 0.0, 1.0, high_open=True) for b in self.betas)):
            raise ValueError(f"TrainSettings.betas must be two numbers in [0, 1), got {self.betas!r}")
        if self.grad_clip is not None:
            check_number("grad_clip", self.grad_clip, 0.0, low_open=True, who="TrainSettings")


def planned_steps(settings: TrainSettings, tokens_per_row: float) -> int:
    """Steps the cosine is planned over: the budget over the mean non-pad tokens per batch."""
    return max(1, math.ceil(settings.tokens_budget / (settings.batch * tokens_per_row)))


def learning_rate(step: int, settings: TrainSettings, total_steps: int) -> float:
    """Learning rate of update ``step`` (1-based): ``lr * step / warmup`` during the warmup, then
    ``min_lr + (lr - min_lr) (1 + cos(pi r)) / 2`` with ``r = (step - warmup) / (total - warmup)``
    clipped to [0, 1] (litgpt's ``get_lr``)."""
    if step <= settings.warmup:
        return settings.lr * step / settings.warmup
    span = total_steps - settings.warmup
    ratio = min(max((step - settings.warmup) / span, 0.0), 1.0) if span > 0 else 1.0
    return settings.min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (settings.lr - settings.min_lr)


def pack_sequences(sequences: Sequence[np.ndarray], context: int, pad: int) -> np.ndarray:
    """Rows (n, context) int64 of whole trajectories concatenated in the given order: a trajectory
    goes into the current row if it fits, else it starts a new row; the rest of a row is ``pad``."""
    check_int("context", context, 2)
    seqs = [np.asarray(s, dtype=np.int64).ravel() for s in sequences]
    if not seqs:
        raise ValueError("pack_sequences got no trajectories")
    lengths = np.array([s.size for s in seqs], dtype=np.int64)
    if (lengths == 0).any():
        raise ValueError(f"trajectory {int(np.argmax(lengths == 0))} is empty")
    if lengths.max() > context:
        i = int(np.argmax(lengths > context))
        raise ValueError(
            f"trajectory {i} has {lengths[i]} tokens, longer than the context {context}: "
            f"raise the context or shorten the trajectories"
        )
    row_of, offset_of = np.empty(len(seqs), np.int64), np.empty(len(seqs), np.int64)
    row, used = 0, 0
    for i, length in enumerate(lengths.tolist()):  # greedy first fit in order: O(n) integers
        if used + length > context:
            row, used = row + 1, 0
        row_of[i], offset_of[i] = row, used
        used += length
    rows = np.full((row + 1, context), pad, dtype=np.int64)
    within = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    rows[np.repeat(row_of, lengths), np.repeat(offset_of, lengths) + within] = np.concatenate(seqs)
    return rows


def _as_rows(tokens, name: str, vocab_size: int) -> torch.Tensor:
    array = np.asarray(tokens)
    if array.ndim != 2 or array.shape[0] == 0 or array.shape[1] < 2:
        raise ValueError(f"{name} must be (n_rows >= 1, width >= 2) token ids, got shape {array.shape}")
    if not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{name} must hold integer token ids, got dtype {array.dtype}")
    if array.min() < 0 or array.max() >= vocab_size:
        raise ValueError(f"{name} holds ids outside 0..{vocab_size - 1} (min {array.min()}, max {array.max()})")
    if array.dtype == np.int64:
        return torch.from_numpy(array.astype(np.int64))
    # narrower ids (a paper-scale corpus saved as int32) stay 4 bytes a token; batches are widened as drawn
    return torch.from_numpy(np.ascontiguousarray(array, dtype=np.int32))


def token_loss(model: Decoder, rows: torch.Tensor, pad: int) -> tuple[torch.Tensor, int]:
    """Summed next-token cross-entropy over the non-pad targets of rows (B, W), and their count."""
    inputs, targets = rows[:, :-1], rows[:, 1:]
    logits = model(inputs)
    # ignore_index, not logits[targets != pad]: a boolean index has a data-dependent shape, which a device
    # without values (tests' fake GPU) cannot compute; the gradients are the same, the summed loss can differ
    # from the masked sum in its last bit (another summation order)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=pad, reduction="sum")
    return loss, int((targets != pad).sum())


@torch.no_grad()
def _mean_loss(model: Decoder, rows: torch.Tensor, pad: int, batch: int) -> float:
    total, count = 0.0, 0
    for chunk in rows.split(batch):
        loss, n = token_loss(model, chunk.to(model.device).long(), pad)
        total, count = total + float(loss), count + n
    return total / max(count, 1)


def batch_schedule(train_tokens: np.ndarray, settings: TrainSettings, pad: int) -> list[np.ndarray]:
    """The rows of every step, drawn before training: successive permutations of the rows (numpy,
    ``settings.seed``), ``batch`` rows a step, until the non-pad targets seen reach ``tokens_budget``.
    Fixing the schedule up front gives the loop its number of steps and makes step ``k``'s batch a
    function of ``k`` alone (a resumed run draws the same rows)."""
    targets = (np.asarray(train_tokens)[:, 1:] != pad).sum(axis=1)
    order_rng = np.random.default_rng(settings.seed)
    queue, seen, schedule = np.zeros(0, np.int64), 0, []
    while seen < settings.tokens_budget:
        while queue.size < settings.batch:
            queue = np.concatenate([queue, order_rng.permutation(len(targets))])
        idx, queue = queue[: settings.batch], queue[settings.batch :]
        schedule.append(idx)
        seen += int(targets[idx].sum())
    return schedule


def train_decoder(
    train_tokens: np.ndarray,
    valid_tokens: np.ndarray,
    config: DecoderConfig,
    settings: TrainSettings,
    *,
    pad: int,
    log: Callable[[str], None] | None = None,
    device: str | torch.device | None = None,
    loop_settings: LoopSettings | None = None,
) -> tuple[Decoder, list[dict]]:
    """Train a :class:`Decoder` on packed rows (see the module docstring) until ``tokens_budget``
    non-pad targets have been seen, one step of :func:`neurips26.common.loop.run_loop` per update
    (checkpoints and resume as ``loop_settings`` says; ``device`` defaults to the job's).

    Every ``eval_every`` steps and after the last step a row is recorded: ``step``, ``tokens``
    (non-pad targets seen), ``flops`` (``6 N tokens``, N non-embedding parameters), ``lr`` (of that
    step), ``train_loss`` (mean per token since the previous row), ``val_loss`` (mean per non-pad
    target over all validation rows), ``seconds`` (optimisation wall time so far, evaluation
    excluded), ``tokens_per_s``. Batches follow :func:`batch_schedule` (numpy, ``settings.seed``);
    dropout uses a forked torch RNG seeded likewise, so the caller's RNG is untouched and a run is
    reproducible on a fixed thread count. Returns the model in eval mode and the rows. Raises
    ``loop.Diverged`` (a FloatingPointError) naming the step if the loss becomes non-finite.
    """
    if not isinstance(config, DecoderConfig) or not isinstance(settings, TrainSettings):
        raise TypeError("train_decoder needs a DecoderConfig and a TrainSettings")
    train = _as_rows(train_tokens, "train_tokens", config.vocab_size)
    valid = _as_rows(valid_tokens, "valid_tokens", config.vocab_size)
    if train.shape[1] != valid.shape[1]:
        raise ValueError(f"train rows have width {train.shape[1]}, validation rows {valid.shape[1]}")
    if train.shape[1] - 1 > config.context:
        raise ValueError(
            f"rows of {train.shape[1]} tokens give {train.shape[1] - 1} inputs, more than "
            f"the model's context {config.context}"
        )
    targets_per_row = float((train[:, 1:] != pad).sum()) / len(train)
    if targets_per_row == 0:
        raise ValueError("the training rows hold no non-pad target")
    total_steps = planned_steps(settings, targets_per_row)
    schedule = batch_schedule(train.numpy(), settings, pad)
    device = loop.job_device() if device is None else torch.device(device)
    say = log or (lambda line: None)
    say(
        f"training {total_steps} planned steps ({len(schedule)} to the budget) on {device}; {asdict(config)}; "
        f"{asdict(settings)}"
    )

    rows: list[dict] = []
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(settings.seed)
        model = Decoder(config).to(device).train()
        n_params = n_parameters(model)
        params = [p for p in model.parameters() if p.requires_grad]
        optimiser = AdamW(params, lr=settings.lr, betas=settings.betas, weight_decay=settings.weight_decay)
        counters = {"seen": 0, "run_loss": 0.0, "run_count": 0, "seconds": 0.0}
        groups = loop.parameter_groups({"model": model})

        def step_fn(k: int) -> torch.Tensor:
            start = time.perf_counter()
            step = k + 1  # updates count from 1 (the learning rate's warmup)
            lr = learning_rate(step, settings, total_steps)
            loss, count = token_loss(model, train[torch.from_numpy(schedule[k])].to(device).long(), pad)
            optimiser.zero_grad(set_to_none=True)
            (loss / max(count, 1)).backward()
            loop.check_finite(loss, k, groups)  # names the group before the update spoils every one
            if settings.grad_clip is not None:
                torch.nn.utils.clip_grad_norm_(params, settings.grad_clip)
            optimiser.lr = lr  # AdamW decays p <- p (1 - lr wd) at this step's lr, then updates
            optimiser.step()
            counters["seen"] += count
            counters["run_loss"] += loss.item()
            counters["run_count"] += count
            counters["seconds"] += time.perf_counter() - start
            if step % settings.eval_every == 0 or step == len(schedule):
                model.eval()
                val_loss = _mean_loss(model, valid, pad, settings.eval_batch)
                model.train()
                seen, seconds = counters["seen"], counters["seconds"]
                row = {
                    "step": step,
                    "tokens": seen,
                    "flops": 6.0 * n_params * seen,
                    "lr": lr,
                    "train_loss": counters["run_loss"] / max(counters["run_count"], 1),
                    "val_loss": val_loss,
                    "seconds": seconds,
                    "tokens_per_s": seen / max(seconds, 1e-12),
                }
                rows.append(row)
                say(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()))
                counters["run_loss"], counters["run_count"] = 0.0, 0
            return loss.detach() / max(count, 1)  # the step's mean per token, for the loop's progress and check

        loop.run_loop(
            step_fn,
            len(schedule),
            {"model": model, "optimiser": optimiser, "rows": rows, "counters": counters},
            loop_settings or LoopSettings(name="train_decoder"),
        )
    return model.eval(), rows


@torch.no_grad()
def sequence_nll(
    model: Decoder,
    sequences: Sequence[np.ndarray],
    score_masks: Sequence[np.ndarray] | None = None,
    batch: int = 32,
    reduce: str = "mean",
) -> float | np.ndarray:
    """Negative log-likelihood of chosen tokens of whole sequences (each its own prompt from
    position 0). ``score_masks[i][j]`` marks token ``j`` of sequence ``i`` as scored (predicted from
    tokens ``< j``; position 0 cannot be scored); without masks every token but the first is.
    ``reduce="mean"``: the mean NLL per scored token over all sequences; ``"sequence"``: an array of
    per-sequence means (NaN where a sequence scores nothing). The model's mode is restored."""
    if reduce not in ("mean", "sequence"):
        raise ValueError(f"reduce must be 'mean' or 'sequence', got {reduce!r}")
    seqs = [np.asarray(s, dtype=np.int64).ravel() for s in sequences]
    if not seqs:
        raise ValueError("sequence_nll got no sequences")
    if score_masks is None:
        masks = [np.arange(s.size) > 0 for s in seqs]
    else:
        masks = [np.asarray(m, dtype=bool).ravel() for m in score_masks]
        if len(masks) != len(seqs) or any(m.size != s.size for m, s in zip(masks, seqs)):
            raise ValueError("score_masks must give one mask of the same length per sequence")
        if any(m.size and m[0] for m in masks):
            raise ValueError("position 0 of a sequence cannot be scored: nothing precedes it")
    longest = max(s.size for s in seqs)
    if longest - 1 > model.config.context:
        raise ValueError(
            f"a sequence has {longest} tokens ({longest - 1} inputs), more than the "
            f"model's context {model.config.context}"
        )
    sums, counts = np.zeros(len(seqs)), np.array([m.sum() for m in masks], dtype=np.int64)
    order = np.argsort([s.size for s in seqs], kind="stable")  # similar lengths share a batch
    was_training = model.training
    model.eval()
    try:
        for start in range(0, len(order), batch):
            chosen = order[start : start + batch]
            width = max(seqs[i].size for i in chosen)
            if width < 2:  # single tokens: nothing to score
                continue
            tokens = np.zeros((len(chosen), width), np.int64)
            scored = np.zeros((len(chosen), width), bool)
            for r, i in enumerate(chosen):
                tokens[r, : seqs[i].size], scored[r, : seqs[i].size] = seqs[i], masks[i]
            tokens_t = torch.from_numpy(tokens).to(model.device)
            logp = torch.log_softmax(model(tokens_t[:, :-1]).double(), dim=-1)
            nll = -logp.gather(-1, tokens_t[:, 1:, None])[..., 0].cpu().numpy()
            sums[chosen] = (nll * scored[:, 1:]).sum(axis=1)
    finally:
        model.train(was_training)
    if reduce == "mean":
        return float(sums.sum() / max(counts.sum(), 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts
