r"""A TIGER-style generative recommender (Rajput et al., NeurIPS 2023), the paper's TIGER baseline
(snap-research/GRID): an encoder-decoder transformer reads the semantic IDs of a user's last items
and generates the next item's ID token by token, beam search restricted to real items' IDs.

* Tokens: an ID is a row of :func:`~.semantic_ids.unique_semantic_ids` (``L`` columns). Level ``l``
  has its own range, token ``2 + V_0 + ... + V_{l-1} + code`` (``V_l`` = largest code of column
  ``l`` + 1; GRID's repeating offsets); 0 is padding, 1 the decoder's BOS.
* :class:`TIGER`: one token embedding. Encoder: the flattened IDs of the last ``max_items`` items,
  left-padded, plus a learned position counted from the right (so trimming padded columns changes
  nothing), ``n_layers`` pre-LN ``nn.TransformerEncoderLayer`` (ReLU FFN of width ``ff``, dropout,
  padded keys masked), a final LayerNorm. Decoder: ``[BOS, t_0, ..., t_{L-2}]`` plus a learned
  position per level through as many pre-LN ``nn.TransformerDecoderLayer`` and a LayerNorm; a linear
  head scores the next token, level ``l``'s softmax running over its ``V_l`` codes only.
* :func:`train_tiger`: teacher forcing, CE summed over the ``L`` tokens, one example per transition
  (:func:`transition_windows`: each item after the first is the target of up to ``max_items``
  items before it), so every transition is a target once, as for SASRec. Adam at a constant lr;
  batches cut from pools sorted by history length (a bucket iterator, 2.5x faster on CPU);
  every ``valid_every`` epochs and at the last, top-10 lists of :func:`recommend_tiger` scored by
  :func:`~.metrics.metrics_from_topk`, keeping the epoch with the best validation NDCG@10. All
  randomness comes from ``config.seed`` (numpy, forked torch RNG): a fixed-thread CPU run repeats.
* :func:`recommend_tiger`: beam search over a batch of users at once; at each level the logits are
  masked to codes that extend the prefix towards a real ID (:class:`SemanticTrie`) and renormalised
  (as GRID's prefix check), so the finished beams are distinct real items scored by their
  log-probability (:func:`log_prob_tiger`). A user's beams share one decoder sequence under a
  block-diagonal causal mask, so the encoder output is never copied per beam (no KV cache).

Deliberate differences from TIGER/GRID: a small ``torch.nn`` transformer (TIGER: T5, 4+4 layers,
6 heads, ff 1024, a hashed user-ID token, inverse-sqrt schedule) without a user token; a constant
learning rate; the collision index has its own vocabulary instead of the codebook range.
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
from neurips26.common.optim import Adam
from neurips26.common.validation import integer, is_int, number, validate
from neurips26.seqrec_audit.epochs import BestEpoch, batch_loss, device_of, run_epochs

from .graph import as_sequences
from .metrics import metrics_from_topk
from .sasrec import left_padded

__all__ = [
    "BOS",
    "PAD",
    "SemanticTrie",
    "TIGER",
    "TIGERConfig",
    "log_prob_tiger",
    "recommend_tiger",
    "train_tiger",
    "transition_windows",
]

PAD, BOS = 0, 1


@dataclass(frozen=True)
class TIGERConfig:
    """TIGER settings: d_model 128 and 20 history items as in TIGER, a smaller network otherwise."""

    d_model: int = integer(1, default=128)
    n_layers: int = integer(1, default=2)
    n_heads: int = integer(1, default=4)
    ff: int = integer(1, default=512)
    dropout: float = number(0.0, 1.0, high_open=True, default=0.1)
    max_items: int = integer(1, default=20)
    lr: float = number(0.0, low_open=True, default=1e-3)
    batch: int = integer(1, default=128)
    epochs: int = integer(0, default=20)
    beam: int = integer(1, default=20)
    valid_every: int = integer(1, default=1)
    seed: int = integer(0, default=0)

    def __post_init__(self):
        validate(self)
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}")


def _checked_ids(semantic_ids: np.ndarray) -> np.ndarray:
    ids = np.asarray(semantic_ids)
    if ids.ndim != 2 or 0 in ids.shape or not np.issubdtype(ids.dtype, np.integer) or ids.min() < 0:
        raise ValueError(f"semantic_ids must be a non-empty 2-D array of integers >= 0, got {ids.dtype} {ids.shape}")
    return ids.astype(np.int64)


class SemanticTrie:
    """Prefix tree of the items' (unique) semantic IDs, for constrained decoding.

    Level ``l``'s nodes are the distinct ID prefixes of length ``l`` in lexicographic order;
    ``allowed[l]`` (n_nodes_l, width) marks the codes that extend node ``p`` to a real prefix,
    ``keys[l]`` (sorted ``p * width + code``) numbers the children by ``searchsorted``; ``path``
    (n_items, L) holds each item's node per level and ``leaf_item`` the item of each full ID.
    """

    def __init__(self, semantic_ids: np.ndarray, width: int, device: str | torch.device = "cpu"):
        ids = _checked_ids(semantic_ids)
        if ids.max() >= width:
            raise ValueError(f"semantic ID codes reach {ids.max()}; the model's levels hold {width}")
        parent, keys, allowed, path = np.zeros(len(ids), np.int64), [], [], []
        for level in range(ids.shape[1]):
            path.append(parent)
            key = parent * width + ids[:, level]
            unique = np.unique(key)
            mask = np.zeros((parent.max() + 1, width), dtype=bool)
            mask[unique // width, unique % width] = True
            keys.append(torch.from_numpy(unique).to(device))
            allowed.append(torch.from_numpy(mask).to(device))
            parent = np.searchsorted(unique, key)
        if len(keys[-1]) != len(ids):
            raise ValueError(
                f"{len(ids) - len(keys[-1])} items repeat another item's semantic ID: "
                f"make them unique with unique_semantic_ids"
            )
        leaf = np.empty(len(ids), dtype=np.int64)
        leaf[parent] = np.arange(len(ids))
        self.width, self.keys, self.allowed = width, keys, allowed
        self.ids = torch.from_numpy(ids).to(device)
        self.path = torch.from_numpy(np.stack(path, axis=1)).to(device)
        self.leaf_item = torch.from_numpy(leaf).to(device)


class TIGER(nn.Module):
    """Encoder-decoder over semantic-ID tokens, ``level_sizes[l]`` codes at level ``l``."""

    def __init__(self, level_sizes: Sequence[int], config: TIGERConfig = TIGERConfig()):
        super().__init__()
        if not level_sizes or not all(is_int(v, 1) for v in level_sizes):
            raise ValueError(f"level_sizes must be positive integers, got {level_sizes!r}")
        self.level_sizes, self.config = tuple(int(v) for v in level_sizes), config
        self.levels, self.width = len(self.level_sizes), max(self.level_sizes)
        d, n_codes = config.d_model, sum(self.level_sizes)
        self.token_embedding = nn.Embedding(2 + n_codes, d, padding_idx=PAD)
        self.encoder_position = nn.Embedding(config.max_items * self.levels, d)
        self.decoder_position = nn.Embedding(self.levels, d)
        self.embedding_dropout = nn.Dropout(config.dropout)
        layer = dict(
            d_model=d,
            nhead=config.n_heads,
            dim_feedforward=config.ff,
            dropout=config.dropout,
            batch_first=True,
            norm_first=True,
        )
        self.encoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(**layer), config.n_layers, norm=nn.LayerNorm(d), enable_nested_tensor=False
        )
        self.decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(**layer), config.n_layers, norm=nn.LayerNorm(d))
        self.head = nn.Linear(d, n_codes)
        codes, sizes = torch.arange(self.width), torch.tensor(self.level_sizes)[:, None]
        offsets = torch.cumsum(sizes, 0) - sizes
        # (L, width): head output of code c at level l, and whether level l has code c
        self.register_buffer("level_index", offsets + torch.minimum(codes, sizes - 1), persistent=False)
        self.register_buffer("level_valid", codes < sizes, persistent=False)

    def token_table(self, trie: SemanticTrie) -> torch.Tensor:
        """(n_items + 1, L) tokens: row 0 padding, row ``i + 1`` item ``i``'s ID."""
        sizes = torch.tensor(self.level_sizes, device=trie.ids.device)
        if trie.ids.shape[1] != self.levels or (trie.ids.amax(0) >= sizes).any():
            raise ValueError(f"semantic IDs do not fit the model's levels {self.level_sizes}")
        tokens = 2 + self.level_index.to(trie.ids.device).gather(1, trie.ids.T).T
        return torch.cat([tokens.new_full((1, self.levels), PAD), tokens])

    def encode(self, items: torch.Tensor, table: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Memory (B, T*L, d) and its padding mask from left-padded items (B, T) (id + 1, 0 pad)."""
        tokens = table[items].flatten(1)
        span = self.config.max_items * self.levels
        positions = torch.arange(span - tokens.shape[1], span, device=items.device)
        x = self.embedding_dropout(self.token_embedding(tokens) + self.encoder_position(positions))
        return self.encoder(x, src_key_padding_mask=tokens == PAD), tokens == PAD

    def decode(self, memory: torch.Tensor, pad: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        """Hidden states (B, G, t, d) of ``G`` decoder inputs (B, G, t) per user, run as one
        sequence of ``G * t`` positions under a block-diagonal causal mask (= G separate runs)."""
        batch, groups, steps = tokens.shape
        position = torch.arange(steps, device=tokens.device)
        x = self.token_embedding(tokens) + self.decoder_position(position)
        x = self.embedding_dropout(x.reshape(batch, groups * steps, x.shape[-1]))
        group = torch.arange(groups * steps, device=tokens.device).div(steps, rounding_mode="floor")
        step = position.repeat(groups)
        blocked = (group[:, None] != group[None]) | (step[None] > step[:, None])
        h = self.decoder(x, memory, tgt_mask=blocked, memory_key_padding_mask=pad)
        return h.reshape(batch, groups, steps, h.shape[-1])

    def level_logits(self, hidden: torch.Tensor, first_level: int = 0) -> torch.Tensor:
        """Logits (..., t, width) of levels ``first_level ..`` from hidden states (..., t, d);
        codes beyond a level's size get -inf."""
        levels = slice(first_level, first_level + hidden.shape[-2])
        logits = self.head(hidden)
        index = self.level_index[levels].expand(*logits.shape[:-1], self.width)
        return logits.gather(-1, index).masked_fill(~self.level_valid[levels], -math.inf)


def transition_windows(sequences: Sequence[np.ndarray], n_items: int, max_items: int) -> tuple[np.ndarray, np.ndarray]:
    """One example per transition: inputs (n, max_items) (the up to ``max_items`` items before
    the target, id + 1, left-padded with 0) and targets (n,), in sequence then time order."""
    seqs = [s for s in as_sequences(sequences, n_items) if s.size > 1]
    if not seqs:
        raise ValueError("no training sequence has two or more items: nothing to predict")
    lengths = np.array([s.size for s in seqs], dtype=np.int64)
    flat, starts = np.concatenate(seqs), np.cumsum(lengths) - lengths
    is_target = np.ones(flat.size, dtype=bool)
    is_target[starts] = False  # a sequence's first item has no history
    target = np.flatnonzero(is_target)
    source = target[:, None] - max_items + np.arange(max_items)
    start = np.repeat(starts, lengths - 1)[:, None]
    return np.where(source >= start, flat[np.maximum(source, 0)] + 1, 0), flat[target]


def _trim(items: torch.Tensor) -> torch.Tensor:
    """Drop leading columns that are padding in every row (positions count from the right)."""
    width = max(int((items > 0).sum(dim=1).max()), 1) if len(items) else 1
    return items[:, items.shape[1] - width :]


def _bucketed_batches(lengths: np.ndarray, batch: int, rng: np.random.Generator, pool: int = 32):
    """Shuffled mini-batches of example indices, each cut from a random pool of ``pool`` batches
    sorted by history length (a bucket iterator), so trimming drops most of the padding."""
    order = rng.permutation(len(lengths))
    pools = np.split(order, range(batch * pool, len(order), batch * pool))
    pools = [p[np.argsort(lengths[p], kind="stable")] for p in pools]
    batches = [b for p in pools for b in np.split(p, range(batch, len(p), batch))]
    return [torch.from_numpy(batches[i]) for i in rng.permutation(len(batches))]


def _n_bucketed_batches(n: int, batch: int, pool: int = 32) -> int:
    """How many batches :func:`_bucketed_batches` cuts from ``n`` examples (the same every epoch)."""
    full, rest = divmod(n, batch * pool)
    return full * pool + -(-rest // batch)


def _beam_search(model: TIGER, memory, pad, trie: SemanticTrie, beam: int):
    """Items (B, beam) and log-probabilities, best first; -1 / -inf for missing beams."""
    batch, width = memory.shape[0], model.width
    decoded = torch.full((batch, 1, 1), BOS, device=memory.device)
    scores = memory.new_zeros(batch, 1)
    node = torch.zeros(batch, 1, dtype=torch.long, device=memory.device)
    for level in range(model.levels):
        logits = model.level_logits(model.decode(memory, pad, decoded)[:, :, -1:], level)[:, :, 0]
        logits = logits.masked_fill(~trie.allowed[level][node], -math.inf)
        total = (scores[..., None] + F.log_softmax(logits, dim=-1)).reshape(batch, -1)
        total = F.pad(total, (0, max(beam - total.shape[1], 0)), value=-math.inf)
        scores, pick = total.topk(beam, dim=1)  # (B, beam), padded picks have score -inf
        source = pick.div(width, rounding_mode="floor").clamp(max=node.shape[1] - 1)
        code = pick % width
        key = node.gather(1, source) * width + code
        node = torch.searchsorted(trie.keys[level], key).clamp(max=len(trie.keys[level]) - 1)
        decoded = torch.cat(
            [
                decoded.gather(1, source[..., None].expand(-1, -1, level + 1)),
                2 + model.level_index[level][code][..., None],
            ],
            dim=2,
        )
    return trie.leaf_item[node].masked_fill(scores == -math.inf, -1), scores


def _by_user_batches(model: TIGER, semantic_ids, histories, batch: int, step: Callable):
    """``step(memory, pad, trie, table, rows)`` over batches of users of similar history length
    (eval mode, no gradient; the mode is restored), concatenated in user order (None: no users)."""
    device = model.head.weight.device
    trie = SemanticTrie(semantic_ids, model.width, device)
    table = model.token_table(trie)
    items = torch.from_numpy(left_padded(histories, len(trie.ids), model.config.max_items))
    if len(items) == 0:
        return None
    order = torch.argsort((items > 0).sum(dim=1), stable=True)
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            parts = [
                step(*model.encode(_trim(items[rows].to(device)), table), trie, table, rows.to(device))
                for rows in order.split(batch)
            ]
    finally:
        model.train(was_training)
    return torch.cat(parts).cpu()[torch.argsort(order)]


def recommend_tiger(
    model: TIGER,
    semantic_ids: np.ndarray,
    histories: Sequence[np.ndarray],
    k: int = 10,
    beam: int | None = None,
    batch: int = 256,
) -> np.ndarray:
    """Top-``k`` items (n_users, k) int64 after each (non-empty) history by constrained beam search
    of width ``beam`` (default ``model.config.beam``, at least ``k``): distinct real items by
    decreasing log-probability, -1 where fewer than ``k`` beams finish. No dropout."""
    beam = model.config.beam if beam is None else beam
    if not (is_int(k, 1) and is_int(beam, k)):
        raise ValueError(f"need k >= 1 and beam >= k, got k={k!r}, beam={beam!r}")
    out = _by_user_batches(
        model,
        semantic_ids,
        histories,
        batch,
        lambda memory, pad, trie, *_: _beam_search(model, memory, pad, trie, beam)[0][:, :k],
    )
    return np.full((0, k), -1, dtype=np.int64) if out is None else out.numpy()


def log_prob_tiger(
    model: TIGER, semantic_ids: np.ndarray, histories: Sequence[np.ndarray], candidates: np.ndarray, batch: int = 256
) -> np.ndarray:
    """log P(item | history) (n_users, C) float64 of candidate items (n_users, C) under the
    constrained decoding of :func:`recommend_tiger` (each level renormalised over real prefixes),
    by teacher forcing: with ``beam >= n_items`` beam search ranks all items by this score."""
    candidates = torch.as_tensor(np.asarray(candidates, dtype=np.int64).reshape(len(histories), -1))
    if candidates.numel() and (candidates.min() < 0 or candidates.max() >= len(semantic_ids)):
        raise ValueError(f"candidates outside 0..{len(semantic_ids) - 1}")

    def step(memory, pad, trie, table, rows):
        chosen = candidates.to(rows.device)[rows]
        decoder_in = torch.cat([torch.full_like(chosen[..., None], BOS), table[chosen + 1][..., :-1]], dim=-1)
        logits = model.level_logits(model.decode(memory, pad, decoder_in))  # (B, C, L, width)
        path = trie.path[chosen]
        allowed = torch.stack([trie.allowed[level][path[..., level]] for level in range(model.levels)], -2)
        logp = F.log_softmax(logits.masked_fill(~allowed, -math.inf), dim=-1)
        return logp.gather(-1, trie.ids[chosen][..., None])[..., 0].sum(-1).double()

    out = _by_user_batches(model, semantic_ids, histories, batch, step)
    return np.zeros((0, candidates.shape[1])) if out is None else out.numpy()


def train_tiger(
    train_sequences: Sequence[np.ndarray],
    semantic_ids: np.ndarray,
    valid_histories: Sequence[np.ndarray] | None,
    valid_targets: np.ndarray | None,
    config: TIGERConfig = TIGERConfig(),
    log: Callable[[str], None] | None = None,
    device: str | torch.device | None = None,
    settings: LoopSettings | None = None,
) -> tuple[TIGER, list[dict]]:
    """Train TIGER on the transitions of ``train_sequences`` (items ``0..len(semantic_ids)-1``,
    unique ID rows) by teacher-forced cross-entropy.

    Rows as :func:`~.sasrec.train_sasrec`'s: ``epoch``, ``train_loss`` (mean over examples of the
    CE summed over the ``L`` tokens, each level's softmax over its own codes: nats per item ID),
    ``tokens`` (examples per epoch), ``seconds`` and ``tokens_per_s`` (optimisation only),
    ``valid_ndcg10``/``valid_recall10`` (beam ``config.beam``, top 10) and ``valid_nll`` (mean
    -:func:`log_prob_tiger` of the targets, an NLL over real items), NaN in epochs without
    validation, and ``best``. The epoch with the best validation NDCG@10 (the earliest among
    equals) is returned, in eval mode; without validation data (both None) the last. ``device``
    (default: the job's) and ``settings`` (the common loop's checkpoint, one mini-batch per step; an
    epoch's batches are drawn at its first and checkpointed) as for SASRec. Raises
    FloatingPointError (``loop.Diverged``) naming the epoch and batch where the loss becomes non-finite.
    """
    ids = _checked_ids(semantic_ids)
    n_items = len(ids)
    if (valid_histories is None) != (valid_targets is None):
        raise ValueError("give both valid_histories and valid_targets, or neither")
    if valid_targets is not None:
        valid_targets = np.asarray(valid_targets, dtype=np.int64).ravel()
        if valid_targets.size != len(valid_histories):
            raise ValueError(f"{valid_targets.size} validation targets for {len(valid_histories)} histories")
        if valid_targets.size and (valid_targets.min() < 0 or valid_targets.max() >= n_items):
            raise ValueError(f"validation targets outside 0..{n_items - 1}")
        if config.beam < 10:
            raise ValueError(f"validation needs top-10 lists: TIGERConfig.beam={config.beam} < 10")
    inputs_np, targets_np = transition_windows(train_sequences, n_items, config.max_items)
    inputs_all, targets_all = torch.from_numpy(inputs_np), torch.from_numpy(targets_np)
    n_examples, lengths = len(targets_np), (inputs_np > 0).sum(axis=1)
    shuffle = np.random.default_rng(config.seed)

    device = device_of(device)
    hint = f"lower the learning rate (lr={config.lr}) or check the data"

    rows: list[dict] = []
    best = BestEpoch(config.epochs, log)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(config.seed)
        model = TIGER([int(v) + 1 for v in ids.max(axis=0)], config).to(device)
        trie = SemanticTrie(ids, model.width, device)
        table = model.token_table(trie)
        optimiser = Adam(model.parameters(), lr=config.lr)

        def begin_epoch(epoch: int) -> dict:
            return {"batches": _bucketed_batches(lengths, config.batch, shuffle), "total": 0.0}

        def train_batch(current: dict, epoch: int, batch: int, step: int) -> float:
            model.train()
            idx = current["batches"][batch - 1]
            items, targets = _trim(inputs_all[idx].to(device)), targets_all[idx].to(device)
            decoder_in = torch.cat([torch.full_like(targets[:, None], BOS), table[targets + 1][:, :-1]], dim=1)
            hidden = model.decode(*model.encode(items, table), decoder_in[:, None])[:, 0]
            logits = model.level_logits(hidden)  # (B, L, width)
            loss = F.cross_entropy(logits.flatten(0, 1), trie.ids[targets].flatten(), reduction="sum")
            value = batch_loss(loss, "TIGER cross-entropy", epoch, batch, step, model, hint)
            optimiser.zero_grad(set_to_none=True)
            (loss / logits.shape[:2].numel()).backward()
            optimiser.step()
            current["total"] += value
            return value / len(idx)  # nats per item ID of the batch, logged

        def end_epoch(epoch: int, current: dict) -> None:
            seconds = current["seconds"]
            row = {
                "epoch": epoch,
                "train_loss": current["total"] / n_examples,
                "tokens": n_examples,
                "seconds": seconds,
                "tokens_per_s": n_examples / seconds,
            }
            if valid_targets is not None:
                row |= dict.fromkeys(("valid_ndcg10", "valid_recall10", "valid_nll"), float("nan"))
                if epoch % config.valid_every == 0 or epoch == config.epochs:
                    topk = recommend_tiger(model, ids, valid_histories, k=10, beam=config.beam)
                    metrics = metrics_from_topk(topk, valid_targets, ks=(10,))
                    logp = log_prob_tiger(model, ids, valid_histories, valid_targets[:, None])
                    row |= {
                        "valid_ndcg10": metrics["NDCG@10"],
                        "valid_recall10": metrics["Recall@10"],
                        "valid_nll": float(-logp.mean()),
                    }
            rows.append(row)
            best.offer(model, row)

        run_epochs(
            "TIGER",
            config.epochs,
            _n_bucketed_batches(n_examples, config.batch),
            begin_epoch,
            train_batch,
            end_epoch,
            {"model": model, "optimiser": optimiser, "shuffle": shuffle, "rows": rows, "best": best},
            settings,
        )
    return best.restore(model, rows, config)
