"""Training one classifier per (label condition, seed), all of them as one seed-batched ensemble, with the training
dynamics that dataset cartography reads.

Every label condition of arXiv 2605.18648 (original hard labels, human-majority hard labels, human soft labels, the
same aligned to the original mode, synthetic soft labels) is a target distribution q_i over the K classes for each
training item i: a hard label is the one-hot distribution. Each member minimises the soft cross-entropy
``-mean_i sum_k q_ik log p_k(x_i)`` against its own condition's targets, with AdamW (common.optim).

Members: a member is a (condition, seed) pair. Its weights are initialised right after ``torch.manual_seed(seed)``
and its data order is drawn from its own generator seeded with its seed, so that members of one seed share their
initialisation and data order across conditions and differ only in their targets (a paired design: the difference
between two conditions of one seed is the targets' doing, not the draw's). The members' weights are stacked along a
leading member dimension (common.ensemble); one optimiser over the stacked weights updates each member by the
gradient of its own loss (the loss of a step is the sum of the members' losses and AdamW acts elementwise). The
members run under vmap (`vectorize`, the default on a GPU) or one after another on views of the stacked weights
(common.members.call_members, the default on the CPU, where each member then does a single-seed run's arithmetic).

Training dynamics (Swayamdipta et al. 2020, dataset cartography): for every member, epoch and training item we keep
the probability of the item's original (gold) label, that of its target's argmax and whether the predicted class is
the gold label. Two ways of reading them (``DYNAMICS``): ``training_pass`` (the default) reads the softmax of the
item's forward pass in the epoch's training step, before that batch's update, as Swayamdipta et al.'s code logs the
training logits (allenai/cartography): free, but the weights change within the epoch; ``epoch_end`` predicts every
training item after the epoch's last update (one more pass in eval mode, no gradient), so that every item is read by
the same weights, at the cost of a forward pass over the training set per epoch.

Training runs in the shared loop (common.loop), one loop step per epoch: a run killed after a checkpoint resumes at
an epoch boundary bit-identically (weights, AdamW state, the members' generators, the dynamics and the loss log are
checkpointed).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from torch import nn

from neurips26.common import ensemble, loop
from neurips26.common.members import call_members
from neurips26.common.optim import AdamW
from neurips26.common.validation import choice, integer, number, validate
from neurips26.softlabel_audit.members import Member, members_grid  # re-exported: the training API
from neurips26.softlabel_audit.model import build_classifier

__all__ = [
    "Dynamics",
    "Member",
    "TrainResult",
    "TrainSettings",
    "image_tensor",
    "members_grid",
    "predict_proba",
    "soft_cross_entropy",
    "train_members",
]


LOG_COLUMNS = ["condition", "seed", "epoch", "loss"]
TARGET_SUM_TOLERANCE = 1e-4  # float32 soft labels: rows must sum to 1 within this


@dataclass(frozen=True)
class TrainSettings:
    """Epochs, batch size and AdamW's learning rate and decoupled weight decay (torch's AdamW defaults)."""

    epochs: int = integer(1)
    batch: int = integer(1)
    lr: float = number(0.0, low_open=True, default=1e-3)
    weight_decay: float = number(0.0, default=1e-2)
    dynamics: str = choice(("training_pass", "epoch_end"), default="training_pass")  # module docstring
    eval_batch: int = integer(1, default=1024)  # the epoch_end pass over the training set

    def __post_init__(self):
        validate(self)


@dataclass
class Dynamics:
    """Per member m, epoch e (after e + 1 epochs) and training item i: ``gold_prob`` the probability of the item's
    original label, ``target_prob`` that of its target's argmax, ``correct`` whether the argmax prediction is the
    original label. Arrays (M, E, N)."""

    members: list[Member]
    gold_prob: np.ndarray
    target_prob: np.ndarray
    correct: np.ndarray

    def of(self, member: Member) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(gold_prob, target_prob, correct) of one member, each (E, N)."""
        i = self.members.index(member)
        return self.gold_prob[i], self.target_prob[i], self.correct[i]

    def frame(self) -> pd.DataFrame:
        """Long form: one row per (condition, seed, epoch, item) with gold_prob, target_prob and correct."""
        m, e, n = self.gold_prob.shape
        mi, ei, ii = (a.ravel() for a in np.meshgrid(np.arange(m), np.arange(e), np.arange(n), indexing="ij"))
        return pd.DataFrame(
            {
                "condition": np.array([x.condition for x in self.members])[mi],
                "seed": np.array([x.seed for x in self.members], dtype=np.int64)[mi],
                "epoch": ei + 1,
                "item": ii,
                "gold_prob": self.gold_prob.ravel(),
                "target_prob": self.target_prob.ravel(),
                "correct": self.correct.ravel(),
            }
        )


@dataclass
class TrainResult:
    """The trained members (``ensemble``, with ``model`` their architecture), their dynamics and the loss log (one
    row per member and epoch: the mean soft cross-entropy of that epoch's batches)."""

    members: list[Member]
    ensemble: ensemble.Ensemble
    model: nn.Module
    dynamics: Dynamics
    log: pd.DataFrame
    loop: loop.LoopResult


def image_tensor(images: np.ndarray) -> torch.Tensor:
    """Images (N, H, W) grey or (N, H, W, C) colour, float in [0, 1], as a float32 tensor (N, C, H, W)."""
    images = np.asarray(images)
    if images.ndim not in (3, 4) or images.shape[0] == 0:
        raise ValueError(f"images must be (N, H, W) or (N, H, W, C) with N >= 1, got shape {images.shape}")
    if not np.issubdtype(images.dtype, np.floating):
        raise ValueError(f"images must be floats in [0, 1], got dtype {images.dtype}")
    if not np.isfinite(images).all() or images.min() < 0 or images.max() > 1:
        raise ValueError(f"images must lie in [0, 1], got values in [{images.min()}, {images.max()}]")
    x = torch.as_tensor(images, dtype=torch.float32)
    return x.unsqueeze(1) if x.ndim == 3 else x.permute(0, 3, 1, 2).contiguous()


def soft_cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """``-mean_i sum_k q_ik log softmax(z_i)_k`` over the item axis (-2), for logits and targets (..., B, K); a
    one-hot target gives the usual cross-entropy."""
    return -(targets * torch.log_softmax(logits, dim=-1)).sum(-1).mean(-1)


def _check_inputs(x: torch.Tensor, gold: np.ndarray, targets: np.ndarray, members: list[Member]) -> None:
    n = x.shape[0]
    if targets.ndim != 3 or targets.shape[0] != len(members) or targets.shape[1] != n:
        raise ValueError(
            f"targets must be (members, items, classes) = ({len(members)}, {n}, K), got shape {targets.shape}"
        )
    k = targets.shape[2]
    if gold.shape != (n,):
        raise ValueError(f"gold labels must be ({n},), one per image, got shape {gold.shape}")
    if not np.issubdtype(gold.dtype, np.integer) or gold.min() < 0 or gold.max() >= k:
        raise ValueError(f"gold labels must be integers in 0..{k - 1}, got values in [{gold.min()}, {gold.max()}]")
    if not np.isfinite(targets).all() or targets.min() < 0:
        raise ValueError("targets must be finite and non-negative (soft labels are distributions)")
    sums = targets.sum(-1)
    worst = np.unravel_index(np.argmax(np.abs(sums - 1)), sums.shape)
    if abs(sums[worst] - 1) > TARGET_SUM_TOLERANCE:
        m, i = worst
        raise ValueError(f"targets of member {members[m]} item {i} sum to {sums[worst]:.6f}, not 1")
    if len(set(members)) != len(members):
        raise ValueError(f"members repeat: {members}")


@torch.no_grad()
def _member_probs(ens: ensemble.Ensemble, model: nn.Module, x: torch.Tensor, batch: int, vectorize: bool):
    """Every member's softmax probabilities on all of x (N, C, H, W, shared by the members): (M, N, K)."""
    device = next(iter(ens.params.values())).device
    parts = [
        torch.softmax(call_members(ens, model, chunk.to(device), in_dims=(None,), vectorize=vectorize), -1)
        for chunk in x.split(batch)
    ]
    return torch.cat(parts, dim=1)


def predict_proba(result: TrainResult, images: np.ndarray, batch: int = 1024, vectorize: bool | None = None):
    """The predictive distributions (M, N, K) of every trained member on `images` (N, H, W[, C]) in [0, 1]."""
    ens = result.ensemble
    vectorize = next(iter(ens.params.values())).device.type != "cpu" if vectorize is None else vectorize
    ens.eval()
    return _member_probs(ens, result.model, image_tensor(images), batch, vectorize).cpu().numpy()


def train_members(
    images: np.ndarray,
    gold: np.ndarray,
    targets: np.ndarray,
    members: Sequence[Member],
    model_name: str,
    settings: TrainSettings,
    loop_settings: loop.LoopSettings | None = None,
    device: str | torch.device | None = None,
    vectorize: bool | None = None,
) -> TrainResult:
    """Train one classifier of size `model_name` (model.MODELS) per member on `images` (N, H, W[, C]) in [0, 1],
    member m against its soft targets ``targets[m]`` (N, K), rows distributions; `gold` (N,) are the original labels
    the dynamics are read against. Returns the trained members, their training dynamics and loss log.

    `device` defaults to the job's (common.loop.job_device); `vectorize` (default: on any device but the CPU) runs
    the members under vmap. `loop_settings` gives the job's checkpoint (resume after a kill or SIGTERM). Raises
    common.loop.Diverged naming the member when its loss stops being finite, before that batch's update.
    """
    members = list(members)
    if not members:
        raise ValueError("train_members needs at least one member")
    x = image_tensor(images)
    gold = np.asarray(gold)
    targets = np.asarray(targets, dtype=np.float32)
    _check_inputs(x, gold, targets, members)
    device = torch.device(device) if device is not None else loop.job_device()
    vectorize = device.type != "cpu" if vectorize is None else vectorize
    n, k, m = x.shape[0], targets.shape[2], len(members)

    def factory() -> nn.Module:
        return build_classifier(model_name, x.shape[1], x.shape[2], k)

    seeds = sorted({mb.seed for mb in members})
    by_seed = dict(zip(seeds, ensemble.build(factory, seeds)))
    models = [by_seed[mb.seed] for mb in members]  # members of one seed start from the same weights
    ens = ensemble.Ensemble([mdl.to(device) for mdl in models])
    template = copy.deepcopy(models[0]).to(device)  # the members' architecture (call_members)
    x_dev, q = x.to(device), torch.as_tensor(targets, device=device)
    gold_t = torch.as_tensor(gold, dtype=torch.long, device=device)
    target_top = q.argmax(-1)  # (M, N)
    generators = ensemble.seed_generators([mb.seed for mb in members])
    optimiser = AdamW(ens.parameters(), lr=settings.lr, weight_decay=settings.weight_decay)
    epochs = settings.epochs
    dyn = {
        "gold_prob": torch.zeros(m, epochs, n),
        "target_prob": torch.zeros(m, epochs, n),
        "correct": torch.zeros(m, epochs, n, dtype=torch.bool),
    }
    rows: list[tuple[str, int, int, float]] = []
    groups: dict[str, list[torch.Tensor]] = {}
    for name, value in ens.params.items():
        groups.setdefault(f"model.{name.split('.')[0]}", []).append(value)
    member_index = torch.arange(m, device=device)[:, None]

    def record(index: int, items: torch.Tensor, probs: torch.Tensor) -> None:
        """Store epoch `index`'s dynamics of `items` (M, B) from the members' probabilities there (M, B, K)."""
        probs = probs.detach()
        gold_of = gold_t[items].unsqueeze(-1)
        at = (member_index.cpu(), index, items.cpu())
        dyn["gold_prob"][at] = probs.gather(-1, gold_of).squeeze(-1).cpu()
        dyn["target_prob"][at] = probs.gather(-1, target_top.gather(1, items).unsqueeze(-1)).squeeze(-1).cpu()
        dyn["correct"][at] = (probs.argmax(-1) == gold_of.squeeze(-1)).cpu()

    def run_epoch(index: int) -> float:
        ens.train()
        orders = torch.stack([torch.randperm(n, generator=g) for g in generators]).to(device)  # (M, N)
        totals = torch.zeros(m, dtype=torch.float64)
        n_batches = 0
        for step, idx in enumerate(orders.split(settings.batch, dim=1)):
            logits = call_members(ens, template, x_dev[idx], vectorize=vectorize)  # (M, B, K)
            losses = soft_cross_entropy(logits, q[member_index, idx])
            values = losses.detach().cpu()
            if not bool(torch.isfinite(values).all()):
                bad = int(torch.nonzero(~torch.isfinite(values))[0])
                raise loop.Diverged(
                    index,
                    loop.first_non_finite(groups),
                    float(values[bad]),
                    detail=f"soft cross-entropy of member {members[bad]} at epoch {index + 1}, batch {step}",
                )
            if settings.dynamics == "training_pass":
                record(index, idx, torch.softmax(logits.detach(), -1))
            optimiser.zero_grad(set_to_none=True)
            losses.sum().backward()  # each member's gradient is its own loss's
            optimiser.step()
            totals += values.double()
            n_batches += 1
        if settings.dynamics == "epoch_end":
            ens.eval()
            everyone = torch.arange(n, device=device).expand(m, n)
            record(index, everyone, _member_probs(ens, template, x, settings.eval_batch, vectorize))
        means = (totals / n_batches).tolist()
        rows.extend((mb.condition, mb.seed, index + 1, v) for mb, v in zip(members, means))
        return float(sum(means) / m)

    state = {
        "weights": ensemble.StackedWeights(ens.params),
        "optimiser": optimiser,
        "dynamics": dyn,
        "rows": rows,
        **{f"generator_{i}": g for i, g in enumerate(generators)},
    }
    result = loop.run_loop(
        run_epoch, epochs, state, loop_settings or loop.LoopSettings(name="train_members"), groups=groups
    )
    ens.eval()
    log = pd.DataFrame(rows, columns=LOG_COLUMNS)
    dynamics = Dynamics(
        members, dyn["gold_prob"].numpy(), dyn["target_prob"].numpy(), dyn["correct"].numpy().astype(bool)
    )
    return TrainResult(members, ens, template, dynamics, log, result)
