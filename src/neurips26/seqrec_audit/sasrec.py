r"""SASRec (Kang and McAuley, ICDM 2018) trained with cross-entropy over all items: the paper's
SASRec baseline (quick scale: 2 blocks, d = 64, maxlen 50, 8 epochs).

The network follows ``pmixer/SASRec.pytorch`` (``model.py`` with ``norm_first=True``):

* an item embedding of ``n_items + 1`` rows, row 0 the padding (item ``i`` is row ``i + 1``),
  scaled by ``sqrt(d)``, plus a learned positional embedding, then embedding dropout;
* ``n_blocks`` pre-LN blocks, ``x + MHA(LN(x))`` under a causal mask then ``x + FFN(LN(x))``, with
  pmixer's point-wise feed-forward ``Dropout(W2 ReLU(Dropout(W1 x)))`` (its two kernel-1
  convolutions, width d) and attention dropout; a last LayerNorm;
* logits ``h @ E[1:]^T`` over every item, ``E`` the input item embedding (tied).

The attention is :class:`neurips26.common.transformer.Attention` (biased fused ``qkv``, no q/k norm, no
rotary embedding, an explicit mask), the same computation as before it was shared; the block is not the
shared Qwen3 block: pmixer's is LayerNorm (eps 1e-8) with a ReLU point-wise feed-forward and dropout
inside the branches (BERT4Rec's is post-LN), so it stays here.

Deliberate differences from pmixer:

* loss: softmax cross-entropy over all items at every non-padded position (pmixer: BCE with one
  sampled negative), the setting the paper uses for its SASRec baseline;
* positions count from the right: the most recent item always has position ``maxlen - 1``. Under
  pmixer's left padding to ``maxlen`` this is the same index; it also lets a batch be cut to its
  longest row (:func:`_trim`) without changing any output;
* padded keys are masked out of attention (a padded query attends to itself only, so no row of
  the mask is empty), so left padding changes no real position's output; pmixer lets real
  positions attend to the zero-embedded padding;
* every transition of a training sequence is a target exactly once: a sequence is cut from its end
  into windows of ``maxlen`` inputs (:func:`training_windows`), where pmixer keeps only each user's
  last window. Synthetic sequences (5 + Poisson(12) items) fit in one window;
* the padding row of ``E`` starts at zero; other matrices are xavier-normal as in pmixer.

Training (:func:`train_sasrec`): Adam with pmixer's betas (0.9, 0.98), shuffled mini-batches of
windows and, after each epoch, full-ranking NDCG@10/Recall@10 and the NLL of the validation
targets; the epoch with the best validation NDCG@10 is kept. All randomness comes from
``config.seed`` (numpy for the shuffles; the torch stream seeded with it for the initial weights and,
continued in the seed's own generator, the dropout masks), so a CPU run with a fixed thread count is
bit-reproducible and the caller's torch RNG state is untouched. Several seeds train together as one
batched ensemble (:func:`train_sasrec_seeds`, :mod:`.seeds`), each seed's run its own; one seed is the
same code. Training runs in the common loop, one mini-batch per step (:func:`.epochs.run_epochs`): with
a checkpoint in its ``LoopSettings`` a killed run resumes bit-identically (the numpy shuffle generators,
the dropout generators, the weights, Adam's moments and the epoch's batches are in the checkpoint).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from neurips26.common.loop import LoopSettings
from neurips26.common.transformer import Attention, Layout
from neurips26.common.validation import check_int, integer, number, validate
from neurips26.seqrec_audit.epochs import device_of
from neurips26.seqrec_audit.seeds import check_seed_configs, train_seeds

from .graph import as_sequences
from .metrics import metrics_from_ranks, rank_of_target

__all__ = [
    "IGNORE",
    "SASRec",
    "SASRecConfig",
    "left_padded",
    "score_sasrec",
    "train_sasrec",
    "train_sasrec_seeds",
    "training_windows",
]

IGNORE = -100  # the target at a padded position (F.cross_entropy's default ignore_index)


@dataclass(frozen=True)
class SASRecConfig:
    """SASRec settings: the quick scale and pmixer's defaults otherwise (one head,
    dropout 0.2, lr 1e-3, batch 128).

    At 8 epochs and lr 1e-3 training is not converged on the synthetic regimes (2,000 users, about
    28k targets, 128 Adam steps): validation NDCG@10 still rises at the last epoch.
    """

    d_model: int = integer(1, default=64)
    n_blocks: int = integer(1, default=2)
    n_heads: int = integer(1, default=1)
    maxlen: int = integer(1, default=50)
    dropout: float = number(0.0, 1.0, high_open=True, default=0.2)
    lr: float = number(0.0, low_open=True, default=1e-3)
    batch: int = integer(1, default=128)
    epochs: int = integer(0, default=8)
    seed: int = integer(0, default=0)

    def __post_init__(self):
        validate(self)
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}")


# --------------------------------------------------------------------------------------------------
# Model


SASREC_LAYOUT = Layout("qkv", "out")  # attention only: one fused qkv projection, output ``out``


class CausalSelfAttention(Attention):
    """pmixer's multi-head self-attention: :class:`neurips26.common.transformer.Attention` with biased
    projections, no q/k norm, no rotary embedding (positions are learned embeddings) and an explicit mask
    ``allowed`` (B, 1, T, T) bool, query t may attend to key s (causal and padding here, whatever the
    caller's mask says in BERT4Rec)."""

    def __init__(self, d_model: int, n_heads: int, dropout: float):
        super().__init__(
            d_model,
            n_heads,
            n_heads,
            d_model // n_heads,
            layout=SASREC_LAYOUT,
            qk_norm_eps=None,
            bias=True,
            dropout=dropout,
        )

    def forward(self, x: torch.Tensor, allowed: torch.Tensor, drop: torch.Tensor | None = None) -> torch.Tensor:
        """Attention under ``allowed``; with ``drop`` (the batched trainer's masks, :mod:`.seeds`) the attention
        probabilities are multiplied by it instead of drawing SDPA's dropout (an empty tensor: no dropout)."""
        if drop is None:
            return super().forward(x, mask=allowed)[0]
        return explicit_attention(self, x, allowed, drop)


def explicit_attention(attention: Attention, x: torch.Tensor, allowed: torch.Tensor, drop: torch.Tensor):
    """``attention(x)`` under the bool mask ``allowed`` (B, 1, T, T) with the dropout mask ``drop`` (B, H, T, T) of
    the probabilities given (values 0 or 1 / (1 - p); an empty tensor for no dropout): the arithmetic of
    ``F.scaled_dot_product_attention``'s math path on the CPU (q and k scaled by the root of 1 / sqrt(hs), the mask
    added as 0 / -inf, softmax, dropout as a product with its noise), with no random draw inside, as ``vmap``
    needs."""
    batch, width, _ = x.shape
    q, k, v = attention._heads(x)
    root = math.sqrt(1.0 / math.sqrt(attention.head_size))
    scores = (q * root) @ (k.transpose(-2, -1) * root)
    scores = scores + torch.zeros((), dtype=scores.dtype, device=x.device).masked_fill(~allowed, -math.inf)
    weights = torch.softmax(scores, dim=-1)
    if drop.numel():
        weights = weights * drop
    y = (weights @ v).transpose(1, 2).reshape(batch, width, attention.n_heads * attention.head_size)
    return getattr(attention, attention.layout.out)(y)


class PointWiseFeedForward(nn.Module):
    """pmixer's ``PointWiseFeedForward`` without its residual (the block adds it)."""

    def __init__(self, d_model: int, dropout: float):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(d_model, d_model),
            nn.Dropout(dropout),
            nn.ReLU(),
            nn.Linear(d_model, d_model),
            nn.Dropout(dropout),
        )

    def forward(self, x: torch.Tensor, masks: Sequence[torch.Tensor] | None = None) -> torch.Tensor:
        """With ``masks`` (two: after the first and the second linear map) dropout multiplies by them."""
        if masks is None:
            return self.net(x)
        first, _, relu, second, _ = self.net
        return dropped(second(relu(dropped(first(x), masks[0]))), masks[1])


def dropped(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Dropout with a given mask (0 or 1 / (1 - p), as ``at::dropout``'s CPU noise); an empty mask: none."""
    return x * mask if mask.numel() else x


class Block(nn.Module):
    def __init__(self, d_model: int, n_heads: int, dropout: float):
        super().__init__()
        self.ln_attention = nn.LayerNorm(d_model, eps=1e-8)
        self.attention = CausalSelfAttention(d_model, n_heads, dropout)
        self.ln_forward = nn.LayerNorm(d_model, eps=1e-8)
        self.forward_net = PointWiseFeedForward(d_model, dropout)

    def forward(
        self, x: torch.Tensor, allowed: torch.Tensor, masks: Sequence[torch.Tensor] | None = None
    ) -> torch.Tensor:
        """``masks``: None (the modules' dropout) or three (attention probabilities, then the feed-forward's two)."""
        x = x + self.attention(self.ln_attention(x), allowed, None if masks is None else masks[0])
        return x + self.forward_net(self.ln_forward(x), None if masks is None else masks[1:])


class SASRec(nn.Module):
    """SASRec over ``n_items`` items (ids ``0..n_items-1``); see the module docstring."""

    def __init__(self, n_items: int, config: SASRecConfig = SASRecConfig()):
        super().__init__()
        check_int("n_items", n_items, 1)
        self.n_items, self.config = int(n_items), config
        d = config.d_model
        self.item_embedding = nn.Embedding(self.n_items + 1, d, padding_idx=0)
        self.position_embedding = nn.Embedding(config.maxlen, d)
        self.embedding_dropout = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(Block(d, config.n_heads, config.dropout) for _ in range(config.n_blocks))
        self.ln_final = nn.LayerNorm(d, eps=1e-8)
        for param in self.parameters():  # pmixer: xavier_normal_ on every matrix
            if param.dim() > 1:
                nn.init.xavier_normal_(param)
        with torch.no_grad():
            self.item_embedding.weight[0].zero_()

    def forward(self, tokens: torch.Tensor, masks: Sequence[torch.Tensor] | None = None) -> torch.Tensor:
        """Hidden states (B, T, d) of left-padded tokens (B, T), ``T <= maxlen``, where a token is
        the item id + 1 and 0 is padding. ``masks``: None for the modules' own dropout (active in training
        mode), or the dropout masks of :meth:`dropout_masks` (the batched trainer's: no random draw inside)."""
        batch, width = tokens.shape
        maxlen = self.config.maxlen
        if width > maxlen:
            raise ValueError(f"{width} positions exceed maxlen={maxlen}")
        positions = torch.arange(maxlen - width, maxlen, device=tokens.device)
        x = self.item_embedding(tokens) * math.sqrt(self.config.d_model)
        x = x + self.position_embedding(positions)
        x = self.embedding_dropout(x) if masks is None else dropped(x, masks[0])
        causal = torch.ones(width, width, dtype=torch.bool, device=tokens.device).tril()
        itself = torch.eye(width, dtype=torch.bool, device=tokens.device)
        allowed = ((causal & (tokens > 0)[:, None, :]) | itself)[:, None]  # (B, 1, T, T)
        for index, block in enumerate(self.blocks):
            x = block(x, allowed, None if masks is None else masks[1 + 3 * index : 4 + 3 * index])
        return self.ln_final(x)

    def dropout_layout(self) -> list[str]:
        """The dropout masks of one forward pass, in the order the layers draw them: ``tokens`` (B, T, d) after
        the embeddings, then per block ``attention`` (B, H, T, T) and two ``tokens`` in the feed-forward."""
        return ["tokens", *["attention", "tokens", "tokens"] * self.config.n_blocks]

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """Scores (..., n_items) of every item from hidden states (..., d): the tied embedding."""
        return hidden @ self.item_embedding.weight[1:].T


# --------------------------------------------------------------------------------------------------
# Batches


def left_padded(histories: Sequence[np.ndarray], n_items: int, maxlen: int) -> np.ndarray:
    """Tokens (n, maxlen) int64: the last ``maxlen`` items of each history, shifted by +1 and
    left-padded with 0. Every history must be non-empty."""
    hists = as_sequences(histories, n_items, "history")
    lengths = np.array([h.size for h in hists], dtype=np.int64)
    if (lengths == 0).any():
        empty = int(np.argmax(lengths == 0))
        raise ValueError(f"every history needs at least one item; history {empty} is empty")
    flat = np.concatenate(hists) if hists else np.zeros(0, np.int64)
    take = np.minimum(lengths, maxlen)
    rows = np.repeat(np.arange(len(hists)), take)
    within = np.arange(take.sum()) - np.repeat(np.cumsum(take) - take, take)
    source = np.cumsum(lengths)[rows] - take[rows] + within
    tokens = np.zeros((len(hists), maxlen), dtype=np.int64)
    tokens[rows, maxlen - take[rows] + within] = flat[source] + 1
    return tokens


def training_windows(sequences: Sequence[np.ndarray], n_items: int, maxlen: int) -> tuple[np.ndarray, np.ndarray]:
    """Every transition ``s[j] -> s[j + 1]`` as one (input token, target) pair of a left-padded
    window.

    A sequence of ``L`` items has ``L - 1`` transitions. Counted from its end, transition ``r``
    (r = 0 the last) sits in the sequence's window ``r // maxlen`` from the end, at slot
    ``maxlen - 1 - r % maxlen``: the last window is pmixer's training row, the earlier ones hold the
    rest (a sequence's windows in time order). Returns tokens (n_windows, maxlen) (item + 1, 0 =
    pad) and targets (n_windows, maxlen) (item id, ``IGNORE`` at padding).
    """
    seqs = [s for s in as_sequences(sequences, n_items) if s.size > 1]
    if not seqs:
        raise ValueError("no training sequence has two or more items: nothing to predict")
    lengths = np.array([s.size for s in seqs], dtype=np.int64)
    flat = np.concatenate(seqs)
    n_pairs = lengths - 1
    seq = np.repeat(np.arange(len(seqs)), n_pairs)
    j = np.arange(n_pairs.sum()) - np.repeat(np.cumsum(n_pairs) - n_pairs, n_pairs)
    source = (np.cumsum(lengths) - lengths)[seq] + j  # position of s[j] in flat
    r = n_pairs[seq] - 1 - j
    n_windows = -(-n_pairs // maxlen)
    window = np.cumsum(n_windows)[seq] - 1 - r // maxlen
    slot = maxlen - 1 - r % maxlen
    tokens = np.zeros((n_windows.sum(), maxlen), dtype=np.int64)
    targets = np.full((n_windows.sum(), maxlen), IGNORE, dtype=np.int64)
    tokens[window, slot] = flat[source] + 1
    targets[window, slot] = flat[source + 1]
    return tokens, targets


def _trim(tokens: torch.Tensor, *others: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Drop the leading columns that are padding in every row: positions count from the right and
    padding is masked, so no output changes."""
    width = max(int((tokens > 0).sum(dim=1).max()), 1) if len(tokens) else 1
    return tuple(t[:, t.shape[1] - width :] for t in (tokens, *others))


# --------------------------------------------------------------------------------------------------
# Scoring and training


def score_sasrec(model: SASRec, histories: Sequence[np.ndarray], batch: int = 512) -> np.ndarray:
    """Scores (n_users, n_items) float32 of the item after each history (its last ``maxlen``
    items): the logits at the last position, without dropout. Histories must be non-empty; the
    model's train/eval mode is restored afterwards."""
    tokens = torch.from_numpy(left_padded(histories, model.n_items, model.config.maxlen))
    scores = np.empty((len(tokens), model.n_items), dtype=np.float32)
    device = model.item_embedding.weight.device
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            for start in range(0, len(tokens), batch):
                (chunk,) = _trim(tokens[start : start + batch].to(device))
                scores[start : start + len(chunk)] = model.logits(model(chunk)[:, -1]).float().cpu().numpy()
    finally:
        model.train(was_training)
    return scores


def _validation_row(score: Callable, histories, targets: np.ndarray, chunk_size: int = 4096) -> dict[str, float]:
    """Full-ranking NDCG@10/Recall@10 and NLL of the validation targets, ``score(histories)`` called on
    `chunk_size` users at a time (shared with BERT4Rec)."""
    histories, ranks, nll = list(histories), [], 0.0
    for start in range(0, len(histories), chunk_size):
        chunk_targets = targets[start : start + chunk_size]
        scores = score(histories[start : start + chunk_size])
        nll += float(
            F.cross_entropy(torch.from_numpy(scores).double(), torch.from_numpy(chunk_targets), reduction="sum")
        )
        ranks.append(rank_of_target(scores, chunk_targets))
    metrics = metrics_from_ranks(np.concatenate(ranks), ks=(10,))
    return {
        "valid_ndcg10": metrics["NDCG@10"],
        "valid_recall10": metrics["Recall@10"],
        "valid_nll": nll / max(len(targets), 1),
    }


def _validation_targets(valid_histories, valid_targets, n_items: int) -> np.ndarray | None:
    """The validation targets as int64, after checking them against the histories and the item range."""
    if (valid_histories is None) != (valid_targets is None):
        raise ValueError("give both valid_histories and valid_targets, or neither")
    if valid_targets is None:
        return None
    valid_targets = np.asarray(valid_targets, dtype=np.int64).ravel()
    if valid_targets.size != len(valid_histories):
        raise ValueError(f"{valid_targets.size} validation targets for {len(valid_histories)} histories")
    if valid_targets.size and (valid_targets.min() < 0 or valid_targets.max() >= n_items):
        raise ValueError(f"validation targets outside 0..{n_items - 1}")
    return valid_targets


def train_sasrec(
    train_sequences: Sequence[np.ndarray],
    n_items: int,
    valid_histories: Sequence[np.ndarray] | None,
    valid_targets: np.ndarray | None,
    config: SASRecConfig = SASRecConfig(),
    log: Callable[[str], None] | None = None,
    device: str | torch.device | None = None,
    settings: LoopSettings | None = None,
) -> tuple[SASRec, list[dict]]:
    """Train SASRec by softmax cross-entropy over all items at every position of the training
    windows (:func:`training_windows`).

    After each epoch the validation targets (the item after each validation history) are ranked
    among all items; the weights of the epoch with the best validation NDCG@10 (the earliest among
    equals) are returned, in eval mode. Without validation data (both None) the last epoch is kept.

    Returns the model and one row per epoch: ``epoch`` (1-based), ``train_loss`` (mean CE per
    target), ``tokens`` (targets per epoch), ``seconds`` and ``tokens_per_s`` (optimisation only,
    validation excluded), ``valid_ndcg10``, ``valid_recall10``, ``valid_nll`` (when validating) and
    ``best``. ``log`` receives one line per epoch. ``device`` (default: the job's, ``loop.job_device()``)
    holds the model and the batches; validation scores come back to the CPU in chunks of 4,096 users.
    Each mini-batch is one step of the common training loop (:func:`.epochs.run_epochs`): ``settings``
    (``LoopSettings``) sets its checkpoint, from which a killed run resumes bit-identically. Raises
    FloatingPointError (``loop.Diverged``) naming the epoch and batch where the loss becomes non-finite.
    """
    return train_sasrec_seeds(
        train_sequences, n_items, valid_histories, valid_targets, [config], log, device, settings
    )[0]


def train_sasrec_seeds(
    train_sequences: Sequence[np.ndarray],
    n_items: int,
    valid_histories: Sequence[np.ndarray] | None,
    valid_targets: np.ndarray | None,
    configs: Sequence[SASRecConfig],
    log: Callable[[str], None] | None = None,
    device: str | torch.device | None = None,
    settings: LoopSettings | None = None,
) -> list[tuple[SASRec, list[dict]]]:
    """:func:`train_sasrec` for several seeds at once (``configs`` equal but for their seeds), trained as one
    batched ensemble (:func:`.seeds.train_seeds`); each seed's (model, rows) equals its run alone up to float
    rounding. The rows' ``seconds`` are each seed's share of the batch's time."""
    configs = check_seed_configs(configs)
    valid_targets = _validation_targets(valid_histories, valid_targets, n_items)
    tokens_np, targets_np = training_windows(train_sequences, n_items, configs[0].maxlen)
    tokens_all, targets_all = torch.from_numpy(tokens_np), torch.from_numpy(targets_np)
    n_tokens = int((targets_np != IGNORE).sum())

    def epoch_data(shuffle: np.random.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return tokens_all, targets_all, torch.from_numpy(shuffle.permutation(len(tokens_np)))

    def validate(model: SASRec) -> dict[str, float]:
        return _validation_row(lambda h: score_sasrec(model, h), valid_histories, valid_targets)

    return train_seeds(
        "SASRec",
        configs,
        lambda config: SASRec(n_items, config),
        len(tokens_np),
        epoch_data,
        n_tokens,
        (0.9, 0.98),
        None if valid_targets is None else validate,
        log,
        device_of(device),
        settings,
    )
