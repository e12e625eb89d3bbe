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
* fp32 on one device; a step's rows go through the model ``micro_batch`` at a time, their gradients accumulated
  (litgpt's gradient accumulation; the same update as the whole batch at once, within float rounding);
* every step's rows are drawn before training (:func:`batch_schedule`, the same permutations in the
  same order as drawing them step by step), so that the common loop knows the number of steps and a
  run resumed from a checkpoint trains on the same batches;
* several seeds of one run train in one process as a batched ensemble (:func:`train_decoders`: a leading
  seed dimension, ``vmap`` over the stacked weights), each seed with its own initialisation and data order,
  its result its single-seed run's within float rounding; a single-seed run is the ensemble of one.

Compute is Kaplan et al.'s ``C = 6 N D``: N the non-embedding parameters (:func:`n_parameters`),
D the non-padding tokens seen; attention's ``T^2`` term and the output layer are not counted.
bbo-pile's scaling points use the same approximation.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace

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
    "train_decoders",
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
    micro_batch: int | None = None  # rows per forward pass, gradients accumulated over the step's batch (None: all)

    def __post_init__(self):
        validate(self)
        if self.min_lr > self.lr:
            raise ValueError(f"TrainSettings.min_lr must lie in [0, lr={self.lr}], got {self.min_lr!r}")
        if not (len(self.betas) == 2 and all(is_number(b, 0.0, 1.0, high_open=True) for b in self.betas)):
            raise ValueError(f"TrainSettings.betas must be two numbers in [0, 1), got {self.betas!r}")
        if self.grad_clip is not None:
            check_number("grad_clip", self.grad_clip, 0.0, low_open=True, who="TrainSettings")
        if self.micro_batch is not None:
            check_int("micro_batch", self.micro_batch, 1, who="TrainSettings")


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
    """Train one :class:`Decoder` (initialised from ``config.seed``, batches drawn with ``settings.seed``): the
    ensemble of one member of :func:`train_decoders`, so a single-seed run and a seed of a batched run are one
    code path. Returns the model in eval mode and its rows (see :func:`train_decoders`)."""
    models, rows = train_decoders(
        train_tokens, valid_tokens, [config], [settings], pad=pad, log=log, device=device, loop_settings=loop_settings
    )
    return models[0], rows[0]


class _MemberSlice:
    """Member ``index`` of a stacked parameter, as :func:`neurips26.common.loop.first_non_finite` reads a
    parameter (``detach()`` and ``grad``): the divergence report names the group of the seed that diverged."""

    def __init__(self, stacked: torch.Tensor, index: int):
        self.stacked, self.index = stacked, index

    def detach(self) -> torch.Tensor:
        return self.stacked.detach()[self.index]

    @property
    def grad(self) -> torch.Tensor | None:
        return None if self.stacked.grad is None else self.stacked.grad[self.index]


def _groups(params: dict[str, torch.Tensor], index: int | None = None) -> dict[str, list]:
    """The parameter groups of the divergence report, by top-level child (``model.wte``, ``model.blocks``, ...):
    every member's stacked tensors, or member ``index``'s slices."""
    groups: dict[str, list] = {}
    for name, tensor in params.items():
        groups.setdefault(f"model.{name.split('.')[0]}", []).append(
            tensor if index is None else _MemberSlice(tensor, index)
        )
    return groups


def _check_members(configs: Sequence[DecoderConfig], settings: Sequence[TrainSettings]) -> None:
    if not configs or len(configs) != len(settings):
        raise ValueError(
            f"train_decoders needs one TrainSettings per DecoderConfig, got {len(configs)} and {len(settings)}"
        )
    if not all(isinstance(c, DecoderConfig) for c in configs) or not all(
        isinstance(s, TrainSettings) for s in settings
    ):
        raise TypeError("train_decoders needs DecoderConfigs and TrainSettings")
    if len({replace(c, seed=0) for c in configs}) > 1 or len({replace(s, seed=0) for s in settings}) > 1:
        raise ValueError("the members of a batched run must differ in their seeds only (one architecture, one recipe)")
    pairs = [(c.seed, s.seed) for c, s in zip(configs, settings)]
    if len(set(pairs)) != len(pairs):
        raise ValueError(f"members repeat (initialisation seed, data seed) pairs: {pairs}")
    if configs[0].dropout > 0 and len(configs) > 1:
        raise ValueError(
            f"dropout {configs[0].dropout} trains one seed per run: the shared decoder blocks draw their masks from "
            f"the global generator, so the members of a batched run could not keep dropout streams of their own"
        )


def train_decoders(
    train_tokens: np.ndarray,
    valid_tokens: np.ndarray,
    configs: Sequence[DecoderConfig],
    settings: Sequence[TrainSettings],
    *,
    pad: int,
    log: Callable[[str], None] | None = None,
    device: str | torch.device | None = None,
    loop_settings: LoopSettings | None = None,
) -> tuple[list[Decoder], list[list[dict]]]:
    """Train S :class:`Decoder` s that differ only in their seeds as one batched ensemble (a leading seed
    dimension: :class:`neurips26.common.ensemble.Ensemble`, ``vmap`` over the stacked weights), member ``i``
    initialised from ``configs[i].seed`` and drawing its batches with ``settings[i].seed``
    (:func:`batch_schedule`), each until its own ``tokens_budget`` non-pad targets have been seen, one step of
    :func:`neurips26.common.loop.run_loop` per update (checkpoints and resume as ``loop_settings`` says;
    ``device`` defaults to the job's).

    Each member's result is its single-seed run's (:func:`train_decoder`) within float rounding: the loss of a
    step is the sum of the members' mean losses, so each member's gradient is its own; AdamW acts elementwise;
    gradients are clipped per member (:func:`neurips26.common.ensemble.clip_grad_norm_per_member`); the
    learning rate is a function of the step, the same for every member. A member whose schedule is shorter
    (its rows reached the budget in fewer steps) stops there: at later steps its loss is left out and its
    weights and optimiser moments are put back after the update. The validation loss is computed member by
    member on an ordinary :class:`Decoder` holding its weights. Dropout (0 in every config) is refused for S > 1:
    the shared blocks draw their masks from the global generator; one member draws them from a forked generator
    seeded with its ``settings.seed``, as before.

    Every ``eval_every`` steps and after its last step a member records a row: ``step``, ``tokens``
    (non-pad targets seen), ``flops`` (``6 N tokens``, N non-embedding parameters), ``lr`` (of that
    step), ``train_loss`` (mean per token since the previous row), ``val_loss`` (mean per non-pad
    target over all validation rows), ``seconds`` (optimisation wall time of the job so far, shared by its
    members, evaluation excluded), ``tokens_per_s`` (the member's tokens over those seconds). Returns the
    models in eval mode and each member's rows. Raises ``loop.Diverged`` (a FloatingPointError) naming the
    step and the seed if a member's loss becomes non-finite.
    """
    from neurips26.common.ensemble import Ensemble, StackedWeights, clip_grad_norm_per_member

    _check_members(configs, settings)
    config, recipe, size = configs[0], settings[0], len(configs)
    train = _as_rows(train_tokens, "train_tokens", config.vocab_size)
    valid = _as_rows(valid_tokens, "valid_tokens", config.vocab_size)
    if train.shape[1] != valid.shape[1]:
        raise ValueError(f"train rows have width {train.shape[1]}, validation rows {valid.shape[1]}")
    if train.shape[1] - 1 > config.context:
        raise ValueError(
            f"rows of {train.shape[1]} tokens give {train.shape[1] - 1} inputs, more than "
            f"the model's context {config.context}"
        )
    row_targets = (train[:, 1:] != pad).sum(dim=1).numpy()
    if row_targets.sum() == 0:
        raise ValueError("the training rows hold no non-pad target")
    total_steps = planned_steps(recipe, float(row_targets.sum()) / len(train))
    schedules = [batch_schedule(train.numpy(), s, pad) for s in settings]
    steps = max(len(schedule) for schedule in schedules)
    device = loop.job_device() if device is None else torch.device(device)
    say = log or (lambda line: None)
    seeds = [(c.seed, s.seed) for c, s in zip(configs, settings)]
    say(
        f"training {size} member(s) (initialisation, data seeds {seeds}) for {total_steps} planned steps "
        f"({[len(s) for s in schedules]} to the budget) on {device}; {asdict(replace(config, seed=0))} "
        f"(seed per member); {asdict(replace(recipe, seed=0))} (seed per member)"
    )

    with torch.random.fork_rng(devices=[]), warnings.catch_warnings():
        # vmap runs CPU flash attention member by member (no batching rule): the same numbers, said once per op
        warnings.filterwarnings("ignore", message="There is a performance drop because we have not yet implemented")
        torch.manual_seed(recipe.seed)  # a lone member's dropout masks (refused for several members)
        members = [Decoder(c).to(device) for c in configs]
        n_params = n_parameters(members[0])
        ens = Ensemble(members).train()
        del members  # the ensemble holds stacked copies
        params = ens.parameters()
        for tensor in params:
            tensor.requires_grad_(True)
        optimiser = AdamW(params, lr=recipe.lr, betas=recipe.betas, weight_decay=recipe.weight_decay)
        rows: list[list[dict]] = [[] for _ in range(size)]
        counters = {"seen": [0] * size, "run_loss": [0.0] * size, "run_count": [0] * size, "seconds": 0.0}
        randomness = "same" if config.dropout > 0 else "error"

        def step_fn(k: int) -> torch.Tensor:
            start = time.perf_counter()
            step = k + 1  # updates count from 1 (the learning rate's warmup)
            lr = learning_rate(step, recipe, total_steps)
            active = [k < len(schedule) for schedule in schedules]
            index = np.stack([schedule[min(k, len(schedule) - 1)] for schedule in schedules])
            batch = train[torch.from_numpy(index)].to(device).long()  # (S, batch, W)
            counts = [int(row_targets[idx].sum()) for idx in index]
            optimiser.zero_grad(set_to_none=True)
            values = [0.0] * size
            # micro-batches of rows, each backward pass scaled by the whole batch's count: the batch's gradient
            for part in batch.split(recipe.micro_batch or recipe.batch, dim=1):
                logits = ens(part[:, :, :-1], randomness=randomness)
                losses = [
                    F.cross_entropy(
                        logits[i].reshape(-1, logits.shape[-1]),
                        part[i, :, 1:].reshape(-1),
                        ignore_index=pad,
                        reduction="sum",
                    )
                    for i in range(size)
                ]
                sum(loss / max(count, 1) for loss, count, on in zip(losses, counts, active) if on).backward()
                values = [value + loss.item() for value, loss in zip(values, losses)]
                del logits, losses
            for i in range(size):  # names the seed and group before the update spoils every one
                if active[i] and not math.isfinite(values[i]):
                    raise loop.Diverged(k, loop.first_non_finite(_groups(ens.params, i)), values[i], f"seed {seeds[i]}")
            if recipe.grad_clip is not None:
                clip_grad_norm_per_member(params, recipe.grad_clip)
            frozen = torch.tensor([i for i in range(size) if not active[i]], dtype=torch.long, device=device)
            kept = (
                [(t, t[frozen].clone()) for t in params + optimiser.exp_avg + optimiser.exp_avg_sq]
                if len(frozen)
                else []
            )
            optimiser.lr = lr  # AdamW decays p <- p (1 - lr wd) at this step's lr, then updates
            optimiser.step()
            with torch.no_grad():
                for tensor, saved in kept:  # a member past its budget keeps its weights and moments
                    tensor[frozen] = saved
            counters["seconds"] += time.perf_counter() - start
            for i in range(size):
                if not active[i]:
                    continue
                counters["seen"][i] += counts[i]
                counters["run_loss"][i] += values[i]
                counters["run_count"][i] += counts[i]
                if step % recipe.eval_every == 0 or step == len(schedules[i]):
                    member = ens.module(i).eval()
                    val_loss = _mean_loss(member, valid, pad, recipe.eval_batch)
                    seen, seconds = counters["seen"][i], counters["seconds"]
                    row = {
                        "step": step,
                        "tokens": seen,
                        "flops": 6.0 * n_params * seen,
                        "lr": lr,
                        "train_loss": counters["run_loss"][i] / max(counters["run_count"][i], 1),
                        "val_loss": val_loss,
                        "seconds": seconds,
                        "tokens_per_s": seen / max(seconds, 1e-12),
                    }
                    rows[i].append(row)
                    prefix = f"seed {seeds[i][0]}: " if size > 1 else ""
                    say(
                        prefix
                        + " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items())
                    )
                    counters["run_loss"][i], counters["run_count"][i] = 0.0, 0
            # each active member's mean per token, summed, for the loop's progress and check
            return torch.tensor(sum(v / max(c, 1) for v, c, on in zip(values, counts, active) if on))

        loop.run_loop(
            step_fn,
            steps,
            {"params": StackedWeights(ens.params), "optimiser": optimiser, "rows": rows, "counters": counters},
            loop_settings or LoopSettings(name="train_decoders"),
            groups=_groups(ens.params),
        )
    models = []
    for i, member_config in enumerate(configs):
        model = Decoder(member_config).to(device)
        model.load_state_dict(ens.state_dict(i))
        models.append(model.eval())
    return models, rows


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
