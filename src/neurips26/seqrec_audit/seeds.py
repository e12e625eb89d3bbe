r"""Seeds as a batch dimension (issue 23): the seeds of SASRec or BERT4Rec trained in one process as a batched
ensemble, each seed's run its own.

A seed keeps everything a run of its own has:

* **initial weights**: member i is built right after ``torch.manual_seed(seed_i)`` (inside
  ``torch.random.fork_rng``), as the single-seed trainer always built its model;
* **data order and Cloze masks**: its own ``np.random.Generator`` seeded with ``seed_i``;
* **dropout**: its own ``torch.Generator``. On the CPU it continues seed i's torch stream after the initialisation,
  the stream a single run's dropout layers draw from, and each mask is drawn as ``at::dropout`` draws its CPU
  noise (``bernoulli_(1 - p)`` divided by ``1 - p``), in the order the layers run (``dropout_layout``) and at the
  seed's own batch width, so a seed draws bit for bit the masks a single run of it draws. On CUDA it is a CUDA
  generator seeded with ``seed_i`` (a single run's dropout drew from CUDA's default generator seeded so).

Each step takes every seed's own next mini-batch, cut to its own width (:func:`.sasrec._trim`), left-pads the
narrower ones with padding to the widest (padding is masked out of attention and carries no target, so no real
position's output changes; its mask entries are 1) and runs the members as one ``vmap`` over the stacked weights
(:class:`neurips26.common.ensemble.Ensemble`), with the masks passed in: nothing random is drawn inside the
vmapped forward. The logits are taken only where a seed has a target (its positions padded to the largest count
with ignored targets); the step's loss is the sum over seeds of each seed's mean cross-entropy, so each member's
gradient is that of its own loss, and Adam acts elementwise, so each member's update is its own. Validation (one
NDCG@10 and NLL row per seed and epoch), the kept epoch and the returned model are per seed, from the member's
weights as an ordinary module.

One seed is the same code with S = 1: a seed trained inside a batch gets the weights and rows of its run alone up
to float rounding (batched matrix products, and the padded rows' place in a sum;
``tests/test_seqrec_audit_seeds.py``), and on the CPU a single run draws the same random numbers as the trainer
before batching did. Times in the rows are each seed's share of the job's: an epoch's ``seconds`` is the batch's
optimisation time divided by S.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call

from neurips26.common.ensemble import Ensemble
from neurips26.common.loop import LoopSettings, first_non_finite
from neurips26.common.optim import Adam
from neurips26.seqrec_audit.epochs import BatchDiverged, BestEpoch, run_epochs

__all__ = ["AtPositions", "check_seed_configs", "dropout_masks", "seeded_members", "train_seeds"]

IGNORE = -100  # F.cross_entropy's ignore_index, the target of a padded position (sasrec.IGNORE)


class AtPositions(nn.Module):
    """A model's logits at chosen positions of its hidden states: the one forward the ensemble runs."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, tokens: torch.Tensor, positions: torch.Tensor, masks: Sequence[torch.Tensor]) -> torch.Tensor:
        """Logits (K, n_items) at ``positions`` (K,) of the flattened (B * T) hidden states of ``tokens`` (B, T)."""
        hidden = self.model(tokens, masks)
        return self.model.logits(hidden.reshape(-1, hidden.shape[-1])[positions])


def check_seed_configs(configs: Sequence) -> list:
    """The configs of one batched run: at least one, equal but for their distinct seeds."""
    configs = list(configs)
    if not configs:
        raise ValueError("a batched run needs at least one seed's config")
    seeds = [c.seed for c in configs]
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds repeat: {seeds}")
    first = replace(configs[0], seed=0)
    for config in configs[1:]:
        if replace(config, seed=0) != first:
            raise ValueError(f"the seeds of one batched run must share their settings: {configs[0]} vs {config}")
    return configs


def seeded_members(
    factory: Callable[[object], nn.Module], configs: Sequence, device: torch.device
) -> tuple[list[nn.Module], list[torch.Generator]]:
    """One model per config, built right after ``torch.manual_seed(config.seed)`` and moved to ``device``, and
    its dropout generator: on the CPU (and any non-CUDA device) the torch stream after the initialisation, on
    CUDA a CUDA generator seeded with the seed. The caller's torch random state is left as it was."""
    models, generators = [], []
    for config in configs:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(config.seed)
            models.append(factory(config).to(device))
            if device.type == "cuda":
                generator = torch.Generator(device=device).manual_seed(config.seed)
            else:
                generator = torch.Generator()
                generator.set_state(torch.get_rng_state())
        generators.append(generator)
    return models, generators


def dropout_masks(
    layout: Sequence[str],
    p: float,
    batch: int,
    width: int,
    d_model: int,
    n_heads: int,
    generator: torch.Generator,
    pad_to: int,
) -> list[torch.Tensor]:
    """One seed's dropout masks of one forward pass, drawn from `generator` on its device in `layout`'s order
    (``tokens``: (batch, width, d_model), ``attention``: (batch, n_heads, width, width)) as ``at::dropout``'s CPU
    noise, then left-padded with ones to ``pad_to`` positions. Dropout 0 draws nothing (empty masks)."""
    if p == 0:
        return [torch.ones(0, device=generator.device) for _ in layout]
    masks, pad = [], pad_to - width
    for kind in layout:
        if kind == "tokens":
            shape, padding = (batch, width, d_model), (0, 0, pad, 0)
        elif kind == "attention":
            shape, padding = (batch, n_heads, width, width), (pad, 0, pad, 0)
        else:
            raise ValueError(f"unknown dropout site {kind!r}")
        noise = torch.empty(shape, device=generator.device).bernoulli_(1 - p, generator=generator).div_(1 - p)
        masks.append(F.pad(noise, padding, value=1.0) if pad else noise)
    return masks


class _Weights:
    """The ensemble's stacked weights as one checkpointed object (restored in place, without autograd)."""

    def __init__(self, params: dict[str, torch.Tensor]):
        self.params = params

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {key: value.detach().clone() for key, value in self.params.items()}

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        with torch.no_grad():
            for key, value in state.items():
                self.params[key].copy_(value)


def _batched_forward(ens: Ensemble, template: AtPositions) -> Callable[..., torch.Tensor]:
    """``forward(tokens, positions, masks)``: every member on its slice of the leading seed dimension, the
    template's forward run on the stacked weights (training mode; with masks given no layer draws anything).

    ``vmap(functional_call)`` as :class:`neurips26.common.ensemble.Ensemble` calls it, without its check for tied
    weights on every call (none here) and, for one seed, without vmap: the member's weights as views of the
    stacked ones, the same arithmetic as an ordinary module's (a single-seed run costs what it cost before
    batching; measured with ``vmap`` at S = 1: 20 to 40 % more CPU time per step at quick scale)."""
    params, buffers = ens.params, ens.buffers
    template.train()

    def member(weights, kept, *args):
        return functional_call(template, (weights, kept), args, tie_weights=False)

    batched = torch.vmap(member, randomness="error")

    def forward(tokens: torch.Tensor, positions: torch.Tensor, masks: list[torch.Tensor]) -> torch.Tensor:
        if ens.size == 1:
            one = ({k: v[0] for k, v in params.items()}, {k: v[0] for k, v in buffers.items()})
            return member(*one, tokens[0], positions[0], [m[0] for m in masks])[None]
        return batched(params, buffers, tokens, positions, masks)

    return forward


def _member_groups(ens: Ensemble, seeds: Sequence[int]) -> dict[str, list[torch.Tensor]]:
    """Each seed's weights by top-level child ('seed 3 blocks'), for naming where a divergence started."""
    groups: dict[str, list[torch.Tensor]] = {}
    for index, seed in enumerate(seeds):
        for name, value in ens.params.items():
            child = name.removeprefix("model.").split(".")[0]
            groups.setdefault(f"seed {seed} {child}", []).append(value.detach()[index])
    return groups


def train_seeds(
    name: str,
    configs: Sequence,
    factory: Callable[[object], nn.Module],
    n_examples: int,
    epoch_data: Callable[[np.random.Generator], tuple[torch.Tensor, torch.Tensor, torch.Tensor]],
    n_tokens: int,
    betas: tuple[float, float],
    validate: Callable[[nn.Module], dict] | None,
    log: Callable[[str], None] | None,
    device: torch.device,
    settings: LoopSettings | None,
) -> list[tuple[nn.Module, list[dict]]]:
    """Train one model per config (equal but for their seeds) as a batched ensemble; see the module docstring.

    ``factory(config)`` builds a model with ``forward(tokens, masks)``, ``logits(hidden)``, ``dropout_layout()``
    and a ``config`` (d_model, n_heads, dropout, lr, batch, epochs, seed); ``epoch_data(rng)`` draws one epoch of a
    seed from its generator: inputs and targets (N, T) on the CPU (``IGNORE`` where there is no target) and the
    order (N,) of the examples, cut into mini-batches of ``config.batch``. ``n_tokens`` is an epoch's row
    ``tokens``; ``validate(model)`` gives the validation columns of a row from a member as an ordinary module (in
    eval mode; None: no validation, the last epoch is kept). Returns each seed's (model in eval mode, rows), in the
    order of `configs`; the rows are :func:`.sasrec.train_sasrec`'s."""
    from .sasrec import _trim

    configs = check_seed_configs(configs)
    config, size = configs[0], len(configs)
    seeds = [c.seed for c in configs]
    models, dropout = seeded_members(factory, configs, device)
    layout = models[0].dropout_layout()
    ens = Ensemble([AtPositions(model) for model in models])
    forward = _batched_forward(ens, AtPositions(copy.deepcopy(models[0])).to("meta"))
    del models
    optimiser = Adam(ens.parameters(), lr=config.lr, betas=betas)
    rngs = [np.random.default_rng(seed) for seed in seeds]
    rows: list[list[dict]] = [[] for _ in seeds]

    def say(seed: int) -> Callable[[str], None] | None:
        if log is None or size == 1:
            return log
        return lambda line: log(f"seed {seed}: {line}")

    best = [BestEpoch(config.epochs, say(seed)) for seed in seeds]
    hint = f"lower the learning rate (lr={config.lr}) or check the data"
    groups = _member_groups(ens, seeds)

    def member(index: int) -> nn.Module:
        model = ens.module(index).model
        model.config = configs[index]
        return model

    def member_state(index: int) -> dict[str, torch.Tensor]:
        return {key.removeprefix("model."): value for key, value in ens.state_dict(index).items()}

    def begin_epoch(epoch: int) -> dict:
        draws = [epoch_data(rng) for rng in rngs]
        return {
            "inputs": [inputs for inputs, _, _ in draws],
            "targets": [targets for _, targets, _ in draws],
            "batches": [list(order.split(config.batch)) for _, _, order in draws],
            "total": [0.0] * size,
            "count": [0] * size,
        }

    def train_batch(current: dict, epoch: int, batch: int, step: int) -> float:
        parts = []
        for index in range(size):
            rows_of = current["batches"][index][batch - 1]
            parts.append(_trim(current["inputs"][index][rows_of], current["targets"][index][rows_of]))
        width = max(inputs.shape[1] for inputs, _ in parts)
        tokens = torch.stack([F.pad(inputs, (width - inputs.shape[1], 0)) for inputs, _ in parts])
        targets = torch.stack([F.pad(t, (width - t.shape[1], 0), value=IGNORE) for _, t in parts]).reshape(size, -1)
        keep = targets != IGNORE
        counts = keep.sum(dim=1)
        where = [row.nonzero().squeeze(1) for row in keep]
        most = max(int(counts.max()), 1)
        positions = torch.zeros(size, most, dtype=torch.int64)
        labels = torch.full((size, most), IGNORE, dtype=torch.int64)
        for index, found in enumerate(where):
            positions[index, : len(found)] = found
            labels[index, : len(found)] = targets[index, found]
        drawn = [
            dropout_masks(
                layout,
                config.dropout,
                len(inputs),
                inputs.shape[1],
                config.d_model,
                config.n_heads,
                generator,
                width,
            )
            for (inputs, _), generator in zip(parts, dropout)
        ]
        masks = [torch.stack(site).to(device) for site in zip(*drawn)]
        logits = forward(tokens.to(device), positions.to(device), masks)  # (S, K, n_items)
        losses = F.cross_entropy(
            logits.reshape(size * most, -1), labels.to(device).reshape(-1), ignore_index=IGNORE, reduction="none"
        )
        losses = losses.reshape(size, most).sum(dim=1)
        values = losses.tolist()  # one read off the device
        for index, value in enumerate(values):
            if not math.isfinite(value):
                seed = seeds[index]
                mine = {k: v for k, v in groups.items() if k.startswith(f"seed {seed} ")}
                raise BatchDiverged(
                    f"{name} cross-entropy", value, epoch, batch, step, first_non_finite(mine), hint + f" (seed {seed})"
                )
        optimiser.zero_grad(set_to_none=True)
        (losses / counts.to(device)).sum().backward()
        optimiser.step()
        counted = counts.tolist()
        for index in range(size):
            current["total"][index] += values[index]
            current["count"][index] += counted[index]
        return sum(v / max(c, 1) for v, c in zip(values, counted)) / size  # the seeds' mean batch CE, logged

    def end_epoch(epoch: int, current: dict) -> None:
        seconds = current["seconds"] / size  # each seed's share of the batch's optimisation time
        for index in range(size):
            row = {
                "epoch": epoch,
                "train_loss": current["total"][index] / current["count"][index],
                "tokens": n_tokens,
                "seconds": seconds,
                "tokens_per_s": n_tokens / seconds,
            }
            if validate is not None:
                row |= validate(member(index))
            rows[index].append(row)
            best[index].offer(lambda index=index: member_state(index), row)

    state = {"weights": _Weights(ens.params), "optimiser": optimiser, "rows": rows}
    for index, seed in enumerate(seeds):
        state |= {f"rng_{seed}": rngs[index], f"dropout_{seed}": dropout[index], f"best_{seed}": best[index]}
    run_epochs(
        name,
        config.epochs,
        -(-n_examples // config.batch),
        begin_epoch,
        train_batch,
        end_epoch,
        state,
        settings,
        groups,
    )
    return [best[index].restore(member(index), rows[index], configs[index]) for index in range(size)]
