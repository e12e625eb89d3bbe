"""Paper 07's rehearsal: what it cuts from the paper block, and fixture files in the real format of its source
(FineWeb-Edu shards in Qwen3 tokens, ``timlautk/finewebedu10B-qwen3``; paper 09 reads the same shards and builds
them with :func:`fineweb_shards`).

What runs: one training job per model (dense and MoE) and the step-time job, each one optimizer step of one
1,024-token window (and of two, for the memory at twice the micro-batch), at the real vocabulary (the 151,936 x 1,024
embedding and head), widths and sequence length; one validation window; the spectra of the vocabulary-indexed
matrices and the router at that step (float64 singular values of four 151,936 x 1,024 matrices a job: the largest
part of its time); one FineWeb-Edu training shard.

Sweeps: one job per model, the baseline (AdamW on the embedding and head, AdamW on the router): the methods differ
only in the optimizer of those two matrices (dense) or of the 32 x 1,024 router (MoE), and ``check_config`` refuses a
sweep without its baseline, so the baseline is the one kept. AdamW's two moments make it the largest state; the
other methods' steps at the real shapes are counted by :func:`step_memory` (their own optimizers' code on the meta
device; tests/test_symm_optim_rehearsal.py). The step-time job times the kept methods with no untimed warmup step
(``step_time_warmup`` 0) and one repeat.

Shapes (``shapes``): both models run 1 layer (the dense model 1 of 20, the MoE 1 of 12), every matrix of it at its
real shape (attention of 16 query and 8 key/value heads, SwiGLU width 3,072; 32 experts of width 512, top 8, the
router). At this scale a job has one thread (``torch_threads``) and a step's vocabulary part alone (the head's
forward and backward of a window, a validation window, AdamW on 311M weights, the four spectra) takes about a minute;
each further layer adds its Muon and hybrid steps (an eigendecomposition of 1,024 x 1,024 per MLP matrix: 96 a MoE
layer) and its share of the 20-layer step that did not finish in 30 min. Their real depth's memory is counted by
:func:`step_memory` (the step's own code on the meta device; the numbers in ``DENSE_REASON`` and ``MOE_REASON``,
held by the tests).
"""

from __future__ import annotations

import zlib

import numpy as np

from neurips26.common.rehearsal import Plan, largest
from neurips26.common.token_files import HEADER_WORDS, MAGIC, VERSION

from . import experiment
from .sources import shard_files

FOLDER = "symm_optim/fineweb_edu_qwen3"  # the registry's folder (config/sources.yaml)
QWEN3_VOCAB = 151936  # the embedding's rows (Qwen3's padded vocabulary)
QWEN3_EOT = 151643  # <|endoftext|>: precedes every document; ids from it up are special tokens
SHARD_TOKENS = 32768  # tokens per shard at items=1: paper 07's one-step job reads 3 windows of 1,025
REHEARSAL_SHARDS = 1  # training shards the rehearsal reads (its `corpus.train_shards`)

REHEARSED_LAYERS = 1  # of the dense model's 20 and the MoE's 12
# step_memory's peak at the real depth, GB of tensors of a one-seed job: (micro-batch 1, the paper's 28 windows), from
# its counts at 1 and 2 layers (linear in the depth: the dense model's full 20-layer count at micro-batch 1, 15.62 GB,
# is the extrapolation's 15.63); the test holds the dense model's
COUNTED_GB = {
    ("dense", "adamw"): (15.6, 170.4),
    ("dense", "hybrid"): (14.4, 170.4),
    ("moe", "adamw"): (20.9, 236.6),
    ("moe", "centered_left_polar"): (20.9, 236.6),
}


def _counted(arch: str, other: str) -> str:
    (a1, a28), (o1, o28) = COUNTED_GB[(arch, "adamw")], COUNTED_GB[(arch, other)]
    return (
        f"its real depth is counted by symm_optim.rehearsal.step_memory (the step's own code on the meta device, at 1"
        f" and 2 layers, linear in depth): a step's tensors peak at {a1:.1f} GB with AdamW ({o1:.1f} GB with {other})"
        f" at micro-batch 1 and {a28:.0f} GB ({o28:.0f} GB) at the paper's 28 windows, over an 80 GB GPU (the CPU's"
        " code path: attention scores held, experts evaluated densely)"
    )


DENSE_REASON = (
    "the 625.8M dense model's 20-layer step did not finish in 30 min on this 2-core machine (one thread a job) and"
    " held 11.7-15 GB of host memory; 1 of its 20 layers runs, every matrix at its real shape (the 151,936 x 1,024"
    " embedding and head, attention 16/8 heads of 128, SwiGLU 3,072): 3.3-7.6 min a job here (one step, a"
    " validation window and four float64 spectra, beside other jobs); " + _counted("dense", "hybrid")
)
MOE_REASON = (
    "the 953.3M MoE's job was killed by the kernel at 22-23 GB of host memory with 4 of its 12 layers at micro-batch 2;"
    " 1 of its 12 layers runs, every matrix at its real shape (the 151,936 x 1,024 embedding and head, 32 experts of"
    " width 512, top 8, the router), its experts' 96 hybrid steps (an eigendecomposition of 1,024 x 1,024 each) a"
    " layer; " + _counted("moe", "centered_left_polar")
)

HOST_REASON = (
    "the 625.8M dense model's job held 11.7 GB of host memory alone at micro-batch 2 and was killed at 14.4 and"
    " 17.3 GB beside another job; at one layer the rehearsal's jobs held 11.0-13.0 GB (tensors 10.8 GB dense, 11.4 GB"
    " MoE, as step_memory counts them: the vocabulary-indexed matrices, their stacked copy, gradients, AdamW moments,"
    " the spectra's copies), so still one at a time; the step-time job 3.6 GB"
)


def _train_work(cfg: dict, wildcards: dict) -> float:
    """Tokens through the model times its weights (a sixth of the FLOPs): the training windows, plus the validation
    passes (a forward pass: a third of a training token), one every ``eval_every`` steps and at the last."""
    train = cfg["train"]
    evaluations = -(-train["steps"] // train["eval_every"])
    tokens = train["steps"] * train["batch_size"] * train["seq_len"] + evaluations * train["eval_tokens"] / 3
    return tokens * experiment.parameter_count(cfg, wildcards["arch"])


def _step_time_work(cfg: dict, wildcards: dict) -> float:
    """Optimizer steps (the untimed warmup and the repeats, per method of both sweeps) times the weights stepped."""
    steps = cfg["step_time_warmup"] + cfg["step_time_repeats"]
    sweeps = {"dense": cfg["methods"], "moe": cfg["routers"]}
    return sum(steps * len(sweep) * experiment.parameter_count(cfg, arch) for arch, sweep in sweeps.items())


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
        "step_time_warmup": 0,
    },
    sweeps={
        # the baselines only (module docstring): a method differs from AdamW in two matrices' optimizer, a router in
        # the 32 x 1,024 router's; their steps at the real shapes are counted by step_memory
        "methods": lambda methods: {"adamw": methods["adamw"]},
        "routers": lambda routers: {"adamw": routers["adamw"]},
        "lr_multipliers": largest,
        "seeds": largest,
        "moe_seeds": largest,
    },
    micro_batch=("train.batch_size",),
    shapes={
        "model.dense.n_layers": (REHEARSED_LAYERS, DENSE_REASON),
        "model.moe.n_layers": (REHEARSED_LAYERS, MOE_REASON),
    },
    fixture_paths={},
    # one such job at a time on this 23 GB machine (the rules' requests are the GPU jobs' host memory)
    host_mb={rule: (15000, HOST_REASON) for rule in ("symm_optim_train", "symm_optim_step_time")},
    work={"symm_optim_train": _train_work, "symm_optim_step_time": _step_time_work},
    note=(
        "one step of micro-batch 1 (and 2) of AdamW on one layer of each model (every matrix at its real shape: the"
        " 151,936-token vocabulary, 1,024-token sequences), 1,024 validation tokens, the spectra at that step, one"
        " FineWeb-Edu training shard, the largest learning-rate multiplier and seed, one timing repeat, no warmup"
    ),
)
# reading the shards is linear in their size (np.concatenate of memory maps); no rule's cost grows faster
DATA_GROWTH: dict[str, int] = {}


def step_memory(cfg: dict, arch: str, method: str, batch_size: int, device: str = "meta") -> dict[str, int]:
    """Tensor bytes of one training step of a one-seed job of `arch` and `method` at `cfg`'s shapes with a
    micro-batch of `batch_size` windows, counted on `device` (the meta device: shapes, no values, so the real
    depth is counted on a machine that could not hold it) by :class:`neurips26.common.tensor_memory.TensorMemory`.

    It runs what a step of :func:`.training.train_ensemble` runs that holds memory, with its own code: the member
    model and the ensemble's stacked copy of its weights (the script keeps both), the forward and backward pass
    (:func:`.training._member_losses`), the copies of the watched matrices a spectrum step keeps, the mixed
    optimizer's step (its state created), the spectra's float64 singular values of one matrix and its update, and
    a validation pass of `batch_size` windows. Left out: the finiteness checks (they read values: a meta tensor has
    none; they hold one norm per parameter). Returns ``{"resident", "peak"}`` bytes (``resident``: the weights
    before the step; ``peak``: the most bytes alive at once)."""
    from unittest import mock

    import torch

    from neurips26.common.ensemble import Ensemble
    from neurips26.common.tensor_memory import TensorMemory

    from .model import LM, kind_of
    from .optimizers import build_optimizer
    from .training import SPECTRUM_KINDS, _member_losses

    # nn.Embedding's own initialisation (normal_ without a generator) computes its draws on the CPU even on the meta
    # device (28 s for the 151,936 x 1,024 embedding); LM redraws every weight from its seeded generator anyway
    with torch.device(device), mock.patch.object(torch.nn.Embedding, "reset_parameters", lambda self: None):
        model = LM(experiment.model_config(cfg, arch, 0))
    ens = Ensemble([model])
    optimizer = build_optimizer(ens.params.items(), experiment.assignment(cfg, arch, method, 0), kind_of, members=1)
    for inner in optimizer.optimizers.values():
        inner._check_finite = lambda: None  # reads values
    windows = torch.zeros((1, batch_size, cfg["train"]["seq_len"]), dtype=torch.long, device=device)
    resident = [model, *ens.params.values(), *ens.buffers.values()]  # not the ensemble's meta template
    with TensorMemory(device, resident=resident) as memory:
        losses = _member_losses(ens, windows, windows, "mean")
        optimizer.zero_grad()
        losses.sum().backward()
        watched = [p for name, p in ens.params.items() if kind_of(name, p[0]) in SPECTRUM_KINDS]
        before = [p.detach().clone() for p in watched]
        optimizer.step()
        update = before[0][0] - watched[0][0].detach()
        torch.linalg.svdvals(update.double())
        del update
        with torch.no_grad():
            _member_losses(ens, windows, windows, "sum")
    return {"resident": memory.resident, "peak": memory.peak}


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
