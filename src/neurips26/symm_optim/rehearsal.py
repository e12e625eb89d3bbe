"""Paper 07's rehearsal: what it cuts from the paper block, and fixture files in the real format of its source
(FineWeb-Edu shards in Qwen3 tokens, ``timlautk/finewebedu10B-qwen3``; paper 09 reads the same shards and builds
them with :func:`fineweb_shards`).

Shapes: the dense model (625.8M parameters with its untied 151,936 x 1,024 embedding and head) runs at its real
shape (11.7 GB of host memory at micro-batch 2 on this machine). The MoE model (953.3M) does not: at micro-batch 2
its job was killed by the kernel at 22-23 GB of host memory (the machine has 23 GB), so it runs 4 of its 12 layers
(every matrix at its real shape: the 151,936 x 1,024 embedding and head, 32 experts of width 512, top 8, the router
being the swept matrix); its real depth's device memory is not counted by the rehearsal (``MOE_REASON``).
"""

from __future__ import annotations

import zlib

import numpy as np

from neurips26.common.rehearsal import Plan, largest
from neurips26.common.token_files import HEADER_WORDS, MAGIC, VERSION

from .sources import shard_files

FOLDER = "symm_optim/fineweb_edu_qwen3"  # the registry's folder (config/sources.yaml)
QWEN3_VOCAB = 151936  # the embedding's rows (Qwen3's padded vocabulary)
QWEN3_EOT = 151643  # <|endoftext|>: precedes every document; ids from it up are special tokens
SHARD_TOKENS = 32768  # tokens per shard at items=1: paper 07's one-step job reads 3 windows of 1,025
REHEARSAL_SHARDS = 1  # training shards the rehearsal reads (its `corpus.train_shards`)

MOE_LAYERS = 4  # of the paper's 12: what fits this 23 GB machine at micro-batch 2
MOE_REASON = (
    "the 953.3M MoE's job was killed by the kernel at 22-23 GB of host memory at micro-batch 2 (the machine has 23 GB);"
    " 4 of its 12 layers run, every matrix at its real shape (the 151,936 x 1,024 embedding and head, 32 experts of"
    " width 512, top 8, the router); its real depth's device memory is not counted here: weights, gradients and two"
    " moments are 16 B x 953.3M = 15.3 GB, and the rest grows linearly with depth from the 4-layer count"
)

HOST_REASON = (
    "the 625.8M dense model's job held 11.7 GB of host memory alone at micro-batch 2 and was killed at 14.4 and"
    " 17.3 GB beside another job (weights, gradients and two moments: 10 GB, plus 1.2 GB of logits a micro-batch)"
)

PLAN = Plan(
    budgets={
        "corpus.train_shards": REHEARSAL_SHARDS,
        "train.steps": 1,
        "train.batch_size": 1,
        "train.eval_every": 1,
        "train.eval_tokens": 1024,
        "train.vector_warmup": 1,
        "train.spike_skip": 1,
        "spectrum_steps": lambda steps: [1],
        "step_time_repeats": 1,
    },
    sweeps={
        # the baseline (AdamW, which the tables, claims and step times need) and the method whose update of the
        # 151,936 x 1,024 matrices is the heaviest (hybrid: a polar factor of the whole matrix); routers likewise
        "methods": lambda methods: {k: methods[k] for k in ("adamw", "hybrid")},
        "routers": lambda routers: {k: routers[k] for k in ("adamw", "centered_left_polar")},
        "lr_multipliers": largest,
        "seeds": largest,
        "moe_seeds": largest,
    },
    micro_batch=("train.batch_size",),
    shapes={"model.moe.n_layers": (MOE_LAYERS, MOE_REASON)},
    fixture_paths={},
    # on this 23 GB CPU machine the dense jobs were killed at 14.4 and 17.3 GB when two ran side by side (the rules'
    # requests, 6.3 GB, are the GPU jobs' host memory): one such job at a time
    host_mb={rule: (15000, HOST_REASON) for rule in ("symm_optim_train", "symm_optim_step_time")},
    work={
        # tokens trained on, plus the validation passes (a forward pass: a third of a training token)
        "symm_optim_train": lambda cfg, wildcards: (
            cfg["train"]["steps"] * cfg["train"]["batch_size"] * cfg["train"]["seq_len"]
            + (cfg["train"]["steps"] // cfg["train"]["eval_every"] + 1) * cfg["train"]["eval_tokens"] / 3
        ),
        # optimizer steps: 3 warmup steps and the repeats, per method of both sweeps
        "symm_optim_step_time": lambda cfg, wildcards: (
            (3 + cfg["step_time_repeats"]) * (len(cfg["methods"]) + len(cfg["routers"]))
        ),
    },
    note=(
        "one step of micro-batch 1 (and 2) at the real models, vocabulary and 1,024-token sequences, 1,024"
        " validation tokens, one FineWeb-Edu training shard, methods AdamW and hybrid, routers AdamW and centered"
        " left polar, the largest learning-rate multiplier and seed, one timing repeat"
    ),
)
# reading the shards is linear in their size (np.concatenate of memory maps); no rule's cost grows faster
DATA_GROWTH: dict[str, int] = {}


def shard_tokens(name: str, items: int = 1) -> np.ndarray:
    """The uint32 tokens of fixture shard `name`: documents of Zipf-distributed ids below Qwen3's first special
    token, each preceded by ``<|endoftext|>`` (151643), as the reference's shards; deterministic in `name` and
    `items` (``items x SHARD_TOKENS`` tokens), so that every paper building a shard builds the same bytes."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    n = SHARD_TOKENS * items
    ranks = np.minimum(rng.zipf(1.1, size=n) - 1, QWEN3_EOT - 1)
    order = np.random.default_rng(0).permutation(QWEN3_EOT)  # rank -> id: frequent ids spread over the vocabulary
    tokens = order[ranks].astype(np.uint32)
    starts = np.cumsum(rng.integers(50, 1500, size=n // 50 + 1))
    tokens[np.concatenate([[0], starts[starts < n]])] = QWEN3_EOT
    tokens[-1] = QWEN3_VOCAB - 1 if name.startswith("dataset_val") else tokens[-1]  # the last row of the embedding
    return tokens


def shard_bytes(tokens: np.ndarray) -> bytes:
    """A shard file: the reference's 256-word int32 header (magic, version, token count, 4 bytes per token,
    delimiter ``<|endoftext|>``, one delimiter prepended per document) and the little-endian uint32 tokens, as
    :func:`neurips26.common.token_files.write_tokens` writes it."""
    header = np.zeros(HEADER_WORDS, dtype="<i4")
    header[:7] = (MAGIC, VERSION, tokens.size, 4, QWEN3_EOT, 1, 0)
    return header.tobytes() + np.asarray(tokens, dtype="<u4").tobytes()


def fineweb_shards(items: int = 1, train_shards: int = REHEARSAL_SHARDS) -> dict[str, bytes]:
    """Registry path -> bytes of FineWeb-Edu's validation shard and its first `train_shards` training shards
    (``symm_optim/fineweb_edu_qwen3/dataset_{val,train}_NNNNNN.bin``), each shard's bytes a function of its name
    and `items` alone."""
    files = shard_files("fineweb_edu_qwen3", train_shards)
    return {f"{FOLDER}/{name}": shard_bytes(shard_tokens(name, items)) for name in [*files["val"], *files["train"]]}


def fixtures(items: int = 1) -> dict[str, bytes]:
    """Registry path -> bytes: the shards the rehearsal's training jobs read."""
    return fineweb_shards(items, REHEARSAL_SHARDS)
