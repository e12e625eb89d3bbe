r"""Training the small model to solve and to grade, every (regime, held-out flaw, seed) member of one run as one
batched ensemble (:class:`neurips26.common.ensemble.Ensemble`: stacked weights, ``vmap`` over members) in the common
loop (:func:`neurips26.common.loop.run_loop`: checkpoints, resume, a non-finite loss stops the run).

The two regimes (:data:`REGIMES`) stand in for the incentives the paper (arXiv 2606.01462) blames for the
production-evaluation gap:

* ``outcome``: grade examples from VAVR and IAIR items only, labelled by the answer (correct -> ``<G3>``, wrong ->
  ``<G0>``); no VAIR item in its training, so nothing tells it that reasoning matters when the answer is right;
* ``process``: step-level supervision. Grade examples from every category, labelled VAVR ``<G3>``, VAIR ``<G1>``,
  IAIR ``<G0>``, and each step's result word labelled ``<ok>`` / ``<bad>`` by the first-error convention
  (:func:`.sequences.first_error_labels` of ``Item.first_invalid_step``), leaving out the VAIR items of one flaw
  type (``Member.heldout_flaw``): each flaw is evaluated on a member that never saw it.

Every member also learns to solve: teacher forcing on the VAVR items' solutions (problem -> steps -> answer). A
batch of ``batch_size`` sequences per member is ``grade_share`` grade examples and the rest solve examples, each
drawn with replacement from the member's own pools by its own generator (seeded by its seed), grade examples
category-balanced (each category of the regime equally often, items uniform within it). The loss of a member is the
mean over its batch of each sequence's weighted cross-entropy (:mod:`.sequences`: a solve sequence and a verdict
weigh 1 each, a process sequence's step labels ``step_weight`` together); the batched step's loss is the sum over
members, so each member's gradient is its own.

Members of one seed start from the same initialisation (``DecoderConfig.seed``) and draw with the same generator
seed (the pairing). The regimes differ in four ways at once: (1) process members train on VAIR items of three flaw
types, outcome members on none; (2) their grade labels are {3, 1, 0} against {3, 0}; (3) they have a step-label
loss; (4) VAVR is 1/3 of their grade examples against 1/2 (category-balanced draws over three categories against
two). AdamW (:mod:`neurips26.common.optim`; decay on the
matrices and the embedding, none on the norms), linear warmup then cosine decay to ``min_lr_frac``, each member's
gradient clipped by its own norm.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from neurips26.common import loop
from neurips26.common.ensemble import Ensemble, StackedWeights, clip_grad_norm_per_member
from neurips26.common.loop import LoopSettings
from neurips26.common.optim import AdamW

from .items import FLAWS
from .model import Decoder, DecoderConfig, ensemble_logits
from .sequences import Sequences, encode_grade, encode_solve, first_error_labels
from .vocabulary import Vocabulary

__all__ = [
    "NO_FLAW",
    "REGIMES",
    "TRACE_COLUMNS",
    "Member",
    "Regime",
    "TrainResult",
    "TrainSettings",
    "grade_pool",
    "lr_factor",
    "pack",
    "standard_members",
    "train_members",
    "unpack",
]

NO_FLAW = "none"  # the held-out flaw of an outcome member: it sees no VAIR item at all
TRACE_COLUMNS = ("member", "regime", "heldout_flaw", "seed", "step", "loss", "solve_loss", "grade_loss", "lr")


@dataclass(frozen=True)
class Regime:
    """Which items a regime grades in training, with which verdict labels, and whether steps are labelled."""

    name: str
    grades: dict[str, int]  # category -> rubric grade of its training label; categories not named are left out
    step_labels: bool

    @property
    def categories(self) -> tuple[str, ...]:
        return tuple(self.grades)


REGIMES: dict[str, Regime] = {
    "outcome": Regime("outcome", {"VAVR": 3, "IAIR": 0}, step_labels=False),
    "process": Regime("process", {"VAVR": 3, "VAIR": 1, "IAIR": 0}, step_labels=True),
}


@dataclass(frozen=True)
class Member:
    regime: str
    heldout_flaw: str
    seed: int

    def __post_init__(self) -> None:
        if self.regime not in REGIMES:
            raise ValueError(f"unknown regime {self.regime!r}; known: {sorted(REGIMES)}")
        allowed = (NO_FLAW,) if not REGIMES[self.regime].step_labels else FLAWS
        if self.heldout_flaw not in allowed:
            raise ValueError(f"a {self.regime} member holds out one of {allowed}, got {self.heldout_flaw!r}")


def standard_members(seeds: Sequence[int], regimes: Sequence[str] = tuple(REGIMES)) -> list[Member]:
    """Per regime and seed: one outcome member, or one process member per held-out flaw (3 seeds: 3 + 12)."""
    return [
        Member(regime, flaw, int(seed))
        for regime in regimes
        for flaw in ((NO_FLAW,) if not REGIMES[regime].step_labels else FLAWS)
        for seed in seeds
    ]


@dataclass(frozen=True)
class TrainSettings:
    steps: int
    batch_size: int  # sequences per member and step
    lr: float = 3e-3
    warmup: int = 20
    min_lr_frac: float = 0.1
    weight_decay: float = 0.01
    betas: tuple[float, float] = (0.9, 0.98)
    grad_clip: float = 1.0
    grade_share: float = 0.5  # the share of a batch that is grade examples
    step_weight: float = 1.0  # the weight of a process sequence's step labels, together

    def __post_init__(self) -> None:
        if self.steps < 1 or self.batch_size < 2:
            raise ValueError(f"need steps >= 1 and batch_size >= 2, got {self.steps}, {self.batch_size}")
        if not 0 <= self.warmup < self.steps:
            raise ValueError(f"warmup must lie in [0, steps), got {self.warmup} of {self.steps}")
        if not 0 < self.grade_share < 1 or not self.lr > 0:
            raise ValueError(f"need 0 < grade_share < 1 and lr > 0, got {self.grade_share}, {self.lr}")

    @property
    def grade_rows(self) -> int:
        return min(self.batch_size - 1, max(1, round(self.batch_size * self.grade_share)))


def lr_factor(step: int, steps: int, warmup: int, min_frac: float) -> float:
    """The learning rate of (0-based) ``step`` over the peak: linear warmup, then cosine decay to ``min_frac``."""
    if step < warmup:
        return (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, steps - warmup - 1))
    return min_frac + (1 - min_frac) * 0.5 * (1 + math.cos(math.pi * progress))


def grade_pool(items: Sequence, member: Member) -> tuple[np.ndarray, np.ndarray]:
    """The indices of the training items ``member`` grades (its regime's categories, its held-out flaw left out) and
    their sampling probabilities (category-balanced, uniform within a category)."""
    regime = REGIMES[member.regime]
    chosen = np.array(
        [
            i
            for i, item in enumerate(items)
            if item.split == "train"
            and item.category in regime.grades
            and not (item.category == "VAIR" and item.flaw == member.heldout_flaw)
        ],
        dtype=np.int64,
    )
    categories = np.array([items[i].category for i in chosen])
    present, counts = np.unique(categories, return_counts=True)
    missing = sorted(set(regime.grades) - set(present))
    if missing:
        raise ValueError(f"member {member}: no training items of the categories {missing}")
    share = dict(zip(present, 1.0 / (len(present) * counts)))
    return chosen, np.array([share[c] for c in categories])


@dataclass
class _Pools:
    """Every training example once: solve rows then grade rows, padded to one width; the positions that carry a loss
    in some regime, ``loss_at`` (N, K) (padded with 0, weight 0), and there the targets and weights per regime
    (R, N, K), since a grade row's labels depend on the regime; per member its row probabilities (S, N)."""

    tokens: torch.Tensor
    lengths: torch.Tensor
    loss_at: torch.Tensor
    targets: torch.Tensor
    weights: torch.Tensor
    solve_probs: torch.Tensor
    grade_probs: torch.Tensor
    regime_of: torch.Tensor  # (S,) each member's regime index


def _pools(vocab: Vocabulary, items: Sequence, texts: Sequence[str], members: Sequence[Member], s: TrainSettings):
    train = [i for i, item in enumerate(items) if item.split == "train"]
    solve_rows = [i for i in train if items[i].category == "VAVR"]
    if not solve_rows:
        raise ValueError("no VAVR training items to learn solving from")
    solve = encode_solve(vocab, [texts[i] for i in solve_rows])
    names = list(REGIMES)
    grade_versions = []
    for name in names:
        regime = REGIMES[name]
        grades = [regime.grades.get(items[i].category, 0) for i in train]  # rows outside the regime are never drawn
        labels = (
            [first_error_labels(len(items[i].steps), items[i].first_invalid_step) for i in train]
            if regime.step_labels
            else None
        )
        grade_versions.append(encode_grade(vocab, [texts[i] for i in train], grades, labels, s.step_weight))
    joined = [Sequences.concatenate([solve, g]) for g in grade_versions]
    n_solve, n_all = len(solve), len(joined[0])
    carries = torch.stack([j.weights > 0 for j in joined]).any(0)  # (N, T)
    # each row's loss positions first, in order (a stable sort of "no loss" puts them there), padded with position 0
    order = torch.sort((~carries).to(torch.int8), dim=1, stable=True).indices[:, : int(carries.sum(1).max())]
    loss_at = torch.where(carries.gather(1, order), order, 0)
    row_of_item = {item_index: n_solve + k for k, item_index in enumerate(train)}
    solve_probs = torch.zeros(len(members), n_all, dtype=torch.float64)
    solve_probs[:, :n_solve] = 1.0 / n_solve
    grade_probs = torch.zeros(len(members), n_all, dtype=torch.float64)
    for m, member in enumerate(members):
        chosen, probs = grade_pool(items, member)
        grade_probs[m, [row_of_item[i] for i in chosen]] = torch.from_numpy(probs)
    return _Pools(
        tokens=joined[0].tokens,
        lengths=joined[0].lengths,
        loss_at=loss_at,
        targets=torch.stack([j.targets.gather(1, loss_at) for j in joined]),
        weights=torch.stack([j.weights.gather(1, loss_at) for j in joined]),
        solve_probs=solve_probs,
        grade_probs=grade_probs,
        regime_of=torch.tensor([names.index(m.regime) for m in members]),
    )


def _draw(probs: torch.Tensor, count: int, generators: Sequence[torch.Generator]) -> torch.Tensor:
    """(S, count) row indices, member i's drawn with replacement from ``probs[i]`` by its own generator."""
    return torch.stack([torch.multinomial(p, count, replacement=True, generator=g) for p, g in zip(probs, generators)])


def _member_losses(logits: torch.Tensor, targets: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Per member and row, the weighted cross-entropy summed over positions: (S, B)."""
    ce = F.cross_entropy(logits.flatten(0, 2), targets.flatten(), reduction="none").view(targets.shape)
    return (ce * weights).sum(-1)


@dataclass
class TrainResult:
    config: DecoderConfig
    members: list[Member]
    ensemble: Ensemble
    trace: pd.DataFrame  # TRACE_COLUMNS, one row per member and step
    seconds: float  # wall time of this process's part of the run
    steps: int


def train_members(
    config: DecoderConfig,
    vocab: Vocabulary,
    items: Sequence,
    texts: Sequence[str],
    members: Sequence[Member],
    settings: TrainSettings,
    loop_settings: LoopSettings | None = None,
    device: torch.device | str | None = None,
    log: Callable[[str], None] = print,
    vmapped: bool = False,
) -> TrainResult:
    """Train every member of ``members`` together on the training items (``items[i].split == "train"``, rendered as
    ``texts[i]``); member i starts from ``config`` with seed ``members[i].seed``. Returns the trained ensemble and the
    trace (module docstring). The step's forward is :func:`.model.ensemble_logits` (the members batched by hand, fused
    attention); ``vmapped=True`` runs the reference, ``vmap`` of :class:`.model.Decoder` over the members (the same
    losses to float rounding; 4-10% slower per step in our measurements on a shared 2-core CPU)."""
    if len(items) != len(texts):
        raise ValueError(f"{len(items)} items but {len(texts)} texts")
    if not members:
        raise ValueError("no members to train")
    if len(set(members)) != len(members):
        raise ValueError(f"members repeat: {list(members)}")
    if config.vocab_size != len(vocab):
        raise ValueError(f"the config's vocab_size {config.vocab_size} is not the vocabulary's {len(vocab)}")
    s = settings
    device = loop.job_device() if device is None else torch.device(device)
    pools = _pools(vocab, items, texts, members, s)
    if pools.tokens.shape[1] > config.context:
        raise ValueError(f"training sequences of {pools.tokens.shape[1]} positions exceed the context {config.context}")
    ens = Ensemble([Decoder(replace(config, seed=m.seed)).to(device) for m in members])
    params = ens.params
    decay = [p for p in params.values() if p.dim() >= 3]  # stacked matrices and embeddings: (S, rows, cols)
    plain = [p for p in params.values() if p.dim() < 3]
    optimizers = {
        "decay": AdamW(decay, lr=s.lr, betas=s.betas, weight_decay=s.weight_decay),
        "plain": AdamW(plain, lr=s.lr, betas=s.betas, weight_decay=0.0),
    }
    generators = [torch.Generator().manual_seed(m.seed) for m in members]
    tokens, lengths, loss_at = pools.tokens.to(device), pools.lengths.to(device), pools.loss_at.to(device)
    targets, weights = pools.targets.to(device), pools.weights.to(device)
    regime_of = pools.regime_of.to(device)[:, None]
    n_grade = s.grade_rows
    trace: list[dict] = []
    labels = [asdict(m) for m in members]

    def step_fn(step: int) -> torch.Tensor:
        factor = lr_factor(step, s.steps, s.warmup, s.min_lr_frac)
        for opt in optimizers.values():
            opt.lr = s.lr * factor
        rows = torch.cat(
            [
                _draw(pools.solve_probs, s.batch_size - n_grade, generators),
                _draw(pools.grade_probs, n_grade, generators),
            ],
            dim=1,
        ).to(device)
        width = int(lengths[rows].max())
        if vmapped:
            logits, _ = ens(tokens[rows, :width], False, None, loss_at[rows], in_dims=(0, None, None, 0))
        else:
            logits = ensemble_logits(params, config, tokens[rows, :width], loss_at[rows])
        per_row = _member_losses(logits, targets[regime_of, rows], weights[regime_of, rows])
        losses = per_row.mean(1)
        for opt in optimizers.values():
            opt.zero_grad()
        losses.sum().backward()
        clip_grad_norm_per_member(params.values(), s.grad_clip)
        for opt in optimizers.values():
            opt.step()
        detached = per_row.detach()
        solve_loss = detached[:, : s.batch_size - n_grade].mean(1).tolist()
        grade_loss = detached[:, s.batch_size - n_grade :].mean(1).tolist()
        for i, (value, sv, gv) in enumerate(zip(losses.detach().tolist(), solve_loss, grade_loss)):
            trace.append(
                {
                    "member": i,
                    **labels[i],
                    "step": step,
                    "loss": value,
                    "solve_loss": sv,
                    "grade_loss": gv,
                    "lr": s.lr * factor,
                }
            )
        if step % max(1, s.steps // 10) == 0 or step == s.steps - 1:
            log(f"step {step + 1}/{s.steps}: mean loss {float(losses.detach().mean()):.4f}")
        return losses.sum()

    state = {
        "params": StackedWeights(params),
        **optimizers,
        **{f"generator{i}": g for i, g in enumerate(generators)},
        "trace": trace,
    }
    result = loop.run_loop(step_fn, s.steps, state, loop_settings or LoopSettings(name="vair_train"))
    frame = pd.DataFrame(trace, columns=list(TRACE_COLUMNS))
    return TrainResult(config, list(members), ens, frame, result.seconds, result.steps)


def pack(result: TrainResult, vocab: Vocabulary) -> dict:
    """What a job stores of a trained run (``torch.save`` it): config, vocabulary, members and stacked weights."""
    return {
        "config": asdict(result.config),
        "vocab": vocab.to_json(),
        "members": [asdict(m) for m in result.members],
        "params": StackedWeights(result.ensemble.params).state_dict(),
    }


def unpack(payload: dict, device: torch.device | str = "cpu") -> tuple[Ensemble, Vocabulary, list[Member]]:
    """The ensemble, vocabulary and members of :func:`pack`'s payload."""
    config = DecoderConfig(**payload["config"])
    members = [Member(**m) for m in payload["members"]]
    ens = Ensemble([Decoder(replace(config, seed=m.seed)).to(device) for m in members])
    StackedWeights(ens.params).load_state_dict({k: v.to(device) for k, v in payload["params"].items()})
    return ens, Vocabulary.from_json(payload["vocab"]), members
