r"""BERT4Rec (Sun et al., CIKM 2019) trained by the Cloze task: the paper's bidirectional
trained baseline, a sibling of :mod:`.sasrec` (same batches, validation and rows).

The network follows ``FeiSun/BERT4Rec`` (``modeling.py``, a BERT encoder):

* a vocabulary of ``n_items + 2`` tokens: 0 the padding, item ``i`` is ``i + 1`` and
  ``n_items + 1`` is ``[MASK]``; token and learned positional embeddings are summed, then
  LayerNorm and dropout (BERT's embedding post-processor);
* ``n_blocks`` post-LN BERT blocks, ``LN(x + Dropout(MHA(x)))`` then ``LN(x + Dropout(FFN(x)))``,
  with a GELU feed-forward of width ``4 d``, ``n_heads`` heads and attention dropout. Attention is
  bidirectional: no causal mask, every real position attends to every real position;
* the output layer of the original's ``get_masked_lm_output``: ``LN(GELU(W h))``, then logits
  ``. @ E[1:n_items+1]^T + b`` over the items, ``E`` the input embedding (tied), ``b`` a bias;
* weights drawn from BERT's truncated normal (std 0.02), biases zero, the padding row zero.

Deliberate differences from the original:

* as in :mod:`.sasrec`, positions count from the right (the last token always has position
  ``maxlen - 1``) and padded keys are masked out of attention (a padded query attends to itself
  only), so left padding changes no real position's output and a batch can be cut to its longest
  row (:func:`.sasrec._trim`);
* training windows: each sequence is cut from its end into windows of ``maxlen`` items
  (:func:`item_windows`), so every item appears exactly once per epoch; the original slides
  overlapping windows over long sequences (``prop_sliding_window`` 0.1 to 0.5 of ``maxlen``);
  synthetic sequences fit in one window anyway;
* masking is dynamic (fresh every epoch, from the seed) and per position: each real item is
  masked with probability ``mask_prob``, as in ``jaywonchung/BERT4Rec-VAE-Pytorch``; the original
  masks ``max(1, round(0.2 L))`` positions (its ``masked_lm_prob``) of 10 fixed copies
  (``dupe_factor``). A masked item always becomes ``[MASK]`` (the original's runs set its
  ``mask_prob = 1.0``, turning off the 80/10/10 rule too). A window with no masked item gets its
  last item masked; the original's extra "mask only the last item" copy of each sequence is not
  added;
* the softmax runs over the ``n_items`` real items only (the original's runs over the whole
  vocabulary, special tokens included);
* optimiser: Adam (betas 0.9, 0.999) at a constant learning rate, as the PyTorch port; the
  original uses AdamW-style weight decay 0.01, linear warm-up and decay, and gradient clipping.

Scoring appends ``[MASK]`` after a user's last ``maxlen - 1`` items and reads the logits there
(the original's test instances). Training (:func:`train_bert4rec`) mirrors
:func:`.sasrec.train_sasrec`: shuffled mini-batches, per-epoch full-ranking validation, the epoch
with the best validation NDCG@10 kept, all randomness from ``config.seed`` (numpy for shuffles and
masks, the torch stream seeded with it for weights and dropout), several seeds as one batched ensemble
(:func:`train_bert4rec_seeds`, :mod:`.seeds`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from neurips26.common.loop import LoopSettings
from neurips26.common.validation import check_int, integer, number, validate
from neurips26.seqrec_audit.epochs import device_of
from neurips26.seqrec_audit.seeds import check_seed_configs, train_seeds

from .graph import as_sequences
from .sasrec import IGNORE, _trim, _validation_row, _validation_targets, dropped, left_padded
from .sasrec import CausalSelfAttention as SelfAttention  # its mask is whatever `allowed` says

__all__ = [
    "BERT4Rec",
    "BERT4RecConfig",
    "cloze_masked",
    "item_windows",
    "score_bert4rec",
    "train_bert4rec",
    "train_bert4rec_seeds",
]


@dataclass(frozen=True)
class BERT4RecConfig:
    """BERT4Rec settings: the quick scale of the SASRec baseline (2 blocks, d = 64, maxlen 50,
    8 epochs) and the original's defaults otherwise (2 heads, dropout 0.1, mask_prob 0.2), with the
    PyTorch port's lr 1e-3 and batch 128.

    The Cloze task starts slowly: on a tiny cycle (d = 16 or 32) the loss sits at ``log n_items``
    for 30 to 100 Adam steps before attention finds the neighbours of ``[MASK]``, and lr 1e-2 was
    unstable there where 3e-3 was not (post-LN blocks, no warm-up)."""

    d_model: int = integer(1, default=64)
    n_blocks: int = integer(1, default=2)
    n_heads: int = integer(1, default=2)
    maxlen: int = integer(2, default=50)  # room for one item and the [MASK] after it
    dropout: float = number(0.0, 1.0, high_open=True, default=0.1)
    mask_prob: float = number(0.0, 1.0, low_open=True, high_open=True, default=0.2)
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

EPS = 1e-12  # BERT's LayerNorm epsilon


class Block(nn.Module):
    """A post-LN BERT encoder layer."""

    def __init__(self, d_model: int, n_heads: int, dropout: float):
        super().__init__()
        self.attention = SelfAttention(d_model, n_heads, dropout)
        self.ln_attention = nn.LayerNorm(d_model, eps=EPS)
        self.forward_net = nn.Sequential(
            nn.Linear(d_model, 4 * d_model), nn.GELU("tanh"), nn.Linear(4 * d_model, d_model)
        )
        self.ln_forward = nn.LayerNorm(d_model, eps=EPS)
        self.dropout = nn.Dropout(dropout)

    def forward(
        self, x: torch.Tensor, allowed: torch.Tensor, masks: Sequence[torch.Tensor] | None = None
    ) -> torch.Tensor:
        """``masks``: None (the modules' dropout) or three (attention probabilities, attention output,
        feed-forward output), as :meth:`BERT4Rec.dropout_layout` lists them."""
        if masks is None:
            x = self.ln_attention(x + self.dropout(self.attention(x, allowed)))
            return self.ln_forward(x + self.dropout(self.forward_net(x)))
        x = self.ln_attention(x + dropped(self.attention(x, allowed, masks[0]), masks[1]))
        return self.ln_forward(x + dropped(self.forward_net(x), masks[2]))


class BERT4Rec(nn.Module):
    """BERT4Rec over ``n_items`` items (ids ``0..n_items-1``); see the module docstring."""

    def __init__(self, n_items: int, config: BERT4RecConfig = BERT4RecConfig()):
        super().__init__()
        check_int("n_items", n_items, 1)
        self.n_items, self.config = int(n_items), config
        self.mask_token = self.n_items + 1
        d = config.d_model
        self.item_embedding = nn.Embedding(self.n_items + 2, d, padding_idx=0)
        self.position_embedding = nn.Embedding(config.maxlen, d)
        self.ln_embedding = nn.LayerNorm(d, eps=EPS)
        self.embedding_dropout = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(Block(d, config.n_heads, config.dropout) for _ in range(config.n_blocks))
        self.transform = nn.Sequential(nn.Linear(d, d), nn.GELU("tanh"), nn.LayerNorm(d, eps=EPS))
        self.output_bias = nn.Parameter(torch.zeros(self.n_items))
        for name, param in self.named_parameters():  # BERT: truncated normal (0.02), zero biases
            if param.dim() > 1:
                nn.init.trunc_normal_(param, std=0.02, a=-0.04, b=0.04)
            elif name.endswith("bias"):
                nn.init.zeros_(param)
        with torch.no_grad():
            self.item_embedding.weight[0].zero_()

    def forward(self, tokens: torch.Tensor, masks: Sequence[torch.Tensor] | None = None) -> torch.Tensor:
        """Hidden states (B, T, d) of left-padded tokens (B, T), ``T <= maxlen``: 0 is padding,
        item ``i`` is ``i + 1`` and ``n_items + 1`` is ``[MASK]``. ``masks``: None for the modules' own
        dropout, or the batched trainer's masks (:meth:`dropout_layout`), as in :meth:`.sasrec.SASRec.forward`."""
        batch, width = tokens.shape
        maxlen = self.config.maxlen
        if width > maxlen:
            raise ValueError(f"{width} positions exceed maxlen={maxlen}")
        positions = torch.arange(maxlen - width, maxlen, device=tokens.device)
        x = self.ln_embedding(self.item_embedding(tokens) + self.position_embedding(positions))
        x = self.embedding_dropout(x) if masks is None else dropped(x, masks[0])
        itself = torch.eye(width, dtype=torch.bool, device=tokens.device)
        allowed = ((tokens > 0)[:, None, :] | itself)[:, None]  # (B, 1, T, T): every real key
        for index, block in enumerate(self.blocks):
            x = block(x, allowed, None if masks is None else masks[1 + 3 * index : 4 + 3 * index])
        return x

    def dropout_layout(self) -> list[str]:
        """The dropout masks of one forward pass, in the order the layers draw them: ``tokens`` (B, T, d) after
        the embeddings, then per block ``attention`` (B, H, T, T) and two ``tokens`` (the attention's and the
        feed-forward's outputs)."""
        return ["tokens", *["attention", "tokens", "tokens"] * self.config.n_blocks]

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """Scores (..., n_items) of every item from hidden states (..., d): the original's output
        layer, tied to the item rows of the input embedding, plus a bias."""
        items = self.item_embedding.weight[1 : self.n_items + 1]
        return self.transform(hidden) @ items.T + self.output_bias


# --------------------------------------------------------------------------------------------------
# Batches


def item_windows(sequences: Sequence[np.ndarray], n_items: int, maxlen: int) -> np.ndarray:
    """Tokens (n_windows, maxlen) int64 (item + 1, left-padded with 0): each non-empty sequence
    cut from its end into windows of ``maxlen`` items, so every item is in exactly one window (a
    sequence's windows in time order; only its first can be padded)."""
    seqs = [s for s in as_sequences(sequences, n_items) if s.size]
    if not seqs:
        raise ValueError("every training sequence is empty: nothing to train on")
    lengths = np.array([s.size for s in seqs], dtype=np.int64)
    seq = np.repeat(np.arange(len(seqs)), lengths)
    within = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    r = lengths[seq] - 1 - within  # distance from the sequence's end
    n_windows = -(-lengths // maxlen)
    tokens = np.zeros((n_windows.sum(), maxlen), dtype=np.int64)
    window = np.cumsum(n_windows)[seq] - 1 - r // maxlen
    tokens[window, maxlen - 1 - r % maxlen] = np.concatenate(seqs) + 1
    return tokens


def cloze_masked(
    tokens: np.ndarray, n_items: int, mask_prob: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """The Cloze task on left-padded windows: each real token becomes ``[MASK]`` (``n_items +
    1``) with probability ``mask_prob``; a window with none masked gets its last token masked
    (every row's last slot is real). Returns the inputs and the targets (item id at masked
    positions, ``IGNORE`` elsewhere)."""
    real = tokens > 0
    if not real[:, -1].all():
        raise ValueError("every window must end with a real item (left padding)")
    masked = (rng.random(tokens.shape) < mask_prob) & real
    masked[~masked.any(axis=1), -1] = True
    return np.where(masked, n_items + 1, tokens), np.where(masked, tokens - 1, IGNORE)


# --------------------------------------------------------------------------------------------------
# Scoring and training


def score_bert4rec(model: BERT4Rec, histories: Sequence[np.ndarray], batch: int = 512) -> np.ndarray:
    """Scores (n_users, n_items) float32 of the item after each history: ``[MASK]`` appended after
    its last ``maxlen - 1`` items, the logits at ``[MASK]``, without dropout. Histories must be
    non-empty; the model's train/eval mode is restored afterwards."""
    items = left_padded(histories, model.n_items, model.config.maxlen - 1)
    mask = np.full((len(items), 1), model.mask_token, dtype=np.int64)
    tokens = torch.from_numpy(np.concatenate([items, mask], axis=1))
    scores = np.empty((len(tokens), model.n_items), dtype=np.float32)
    device = model.item_embedding.weight.device
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            for start in range(0, len(tokens), batch):
                (chunk,) = _trim(tokens[start : start + batch].to(device))
                last = model.logits(model(chunk)[:, -1])
                scores[start : start + len(chunk)] = last.float().cpu().numpy()
    finally:
        model.train(was_training)
    return scores


def train_bert4rec(
    train_sequences: Sequence[np.ndarray],
    n_items: int,
    valid_histories: Sequence[np.ndarray] | None,
    valid_targets: np.ndarray | None,
    config: BERT4RecConfig = BERT4RecConfig(),
    log: Callable[[str], None] | None = None,
    device: str | torch.device | None = None,
    settings: LoopSettings | None = None,
) -> tuple[BERT4Rec, list[dict]]:
    """Train BERT4Rec by softmax cross-entropy over all items at the masked positions of the
    training windows (:func:`item_windows`, masked afresh each epoch by :func:`cloze_masked`).

    Validation, the kept epoch and the rows are those of :func:`.sasrec.train_sasrec`, except that
    ``train_loss`` is the mean CE per masked position and ``tokens`` counts the real input
    positions of an epoch (every training item once: the work of a forward pass, comparable with
    SASRec's), so ``tokens_per_s`` is items processed per second. ``device`` and ``settings`` (the
    common loop's checkpoint, one mini-batch per step) as there; an epoch's masks and shuffle are drawn
    at its first batch and checkpointed with it. Raises FloatingPointError (``loop.Diverged``) naming
    the epoch and batch where the loss becomes non-finite.
    """
    return train_bert4rec_seeds(
        train_sequences, n_items, valid_histories, valid_targets, [config], log, device, settings
    )[0]


def train_bert4rec_seeds(
    train_sequences: Sequence[np.ndarray],
    n_items: int,
    valid_histories: Sequence[np.ndarray] | None,
    valid_targets: np.ndarray | None,
    configs: Sequence[BERT4RecConfig],
    log: Callable[[str], None] | None = None,
    device: str | torch.device | None = None,
    settings: LoopSettings | None = None,
) -> list[tuple[BERT4Rec, list[dict]]]:
    """:func:`train_bert4rec` for several seeds at once (``configs`` equal but for their seeds), trained as one
    batched ensemble (:func:`.seeds.train_seeds`): each seed draws its own Cloze masks, order and dropout, and its
    (model, rows) equals its run alone up to float rounding. The rows' ``seconds`` are each seed's share."""
    configs = check_seed_configs(configs)
    config = configs[0]
    valid_targets = _validation_targets(valid_histories, valid_targets, n_items)
    windows = item_windows(train_sequences, n_items, config.maxlen)
    n_tokens = int((windows > 0).sum())

    def epoch_data(rng: np.random.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        inputs, targets = cloze_masked(windows, n_items, config.mask_prob, rng)
        order = rng.permutation(len(windows))
        return torch.from_numpy(inputs), torch.from_numpy(targets), torch.from_numpy(order)

    def validate(model: BERT4Rec) -> dict[str, float]:
        return _validation_row(lambda h: score_bert4rec(model, h), valid_histories, valid_targets)

    return train_seeds(
        "BERT4Rec",
        configs,
        lambda config: BERT4Rec(n_items, config),
        len(windows),
        epoch_data,
        n_tokens,
        (0.9, 0.999),
        None if valid_targets is None else validate,
        log,
        device_of(device),
        settings,
    )
