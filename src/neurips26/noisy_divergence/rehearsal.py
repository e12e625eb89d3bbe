"""Paper 09's rehearsal: what it cuts from the paper block, and fixture files in the real format of its source.

Source: FineWeb-Edu sample-10BT in Qwen3 tokens, the shards of paper 07 (``symm_optim/fineweb_edu_qwen3``, a Hugging
Face folder), built by paper 07's :func:`neurips26.symm_optim.rehearsal.fineweb_shards` (the same bytes: the driver
refuses two papers' fixtures of one source that differ): the validation shard and the first training shard, each
the reference's 256-word header and little-endian uint32 Qwen3 ids, ``<|endoftext|>`` before every document.

What runs: one training job, the largest (``B1p3w``, 2.01B parameters; its one setting, the reference noise
``insert-k5-a0.55-d1``, so that the inject job runs for the stream it trains on), seed 3, one optimizer step of 2
windows of 2,048 tokens (two micro-batches of 1 window, then one of 2 for the memory extrapolation) in bf16 autocast
with SDPA, the diagnostic probe and one validation window; the tables, classifier, claims, figures and report on its
tables. Kept: the vocabulary (151,936), the sequence length and context (2,048), the depth (12 layers), the head
size (128), bf16 and SDPA, the accumulation of micro-batches.

Shape cut (``shapes``): B1p3w's float32 weights, gradients and AdamW state alone are 32.2 GB (16 bytes x 2.01B), B1p3's
29.7 GB, more than this 24 GB machine; their device memory is counted at the real shapes by
:func:`neurips26.noisy_divergence.memory.step_memory` (peak of a diagnostic step at micro-batch 2: B1p3w 56.4 GB,
B1p3 52.0 GB, M480 26.9 GB; tests/test_noisy_divergence_memory.py holds them under an 80 GB card). The width that
runs is bounded by time, not memory: a 2,048-token window's logits over 151,936 ids cost 6 x 151,936 x d_model x
2,048 FLOPs whatever the depth, and this CPU has no bfloat16 arithmetic (autocast emulates it at about a third of the
float32 rate): a window of forward and backward took 58 s in float32 and 3 min in bf16 at width 1,024 with 2 layers,
40 s in bf16 at width 256 with 2 layers (2 cores shared). So B1p3w runs at width 256: d_model 256, 2 heads of 128,
d_ff 704 (its 2.73 x d_model, rounded to 64), its 12 layers (87.4M parameters, 78M of them the embedding and head).
"""

from __future__ import annotations

from neurips26.common.costs import decoder_params
from neurips26.common.rehearsal import Plan, largest
from neurips26.symm_optim.rehearsal import REHEARSAL_SHARDS, SHARD_TOKENS, fineweb_shards

from . import experiment

REHEARSED_SHAPE = "B1p3w"  # the jobs' largest model (2,014,974,720 parameters; B1p3 1,855,555,584; M480 713,868,288)
CUT_WIDTH = {"d_model": 256, "n_heads": 2, "d_ff": 704}  # B1p3w's widths / 11 (d_ff rounded to 64): head_dim 128 kept
SHAPE_REASON = (
    "B1p3w's float32 weights, gradients and AdamW state are 32.2 GB (2.01B parameters; B1p3 29.7 GB), over this"
    " 24 GB machine; counted at the real shapes by noisy_divergence.memory.step_memory (peak of a diagnostic step at"
    " micro-batch 2: B1p3w 56.4 GB, B1p3 52.0 GB, M480 26.9 GB, of an 80 GB GPU). Run at width 256 (2 heads of 128,"
    " d_ff 704, its 12 layers, 151,936-id vocabulary, 2,048 tokens), the same code path: a 2,048-token window's"
    " logits cost 6 x 151,936 x d_model x 2,048 FLOPs and this CPU emulates bf16 (3 min a window at width 1,024)"
)


def _rehearsed_job(jobs: list[dict]) -> list[dict]:
    """The job of the largest model, with its noise setting (B1p3w has one: the reference's insert-k5-a0.55-d1)."""
    return [job for job in jobs if job["shape"] == REHEARSED_SHAPE][:1]


def _train_work(cfg: dict, wildcards: dict) -> float:
    """Tokens through the model times the weights a token passes through (a sixth of the training FLOPs): the
    optimizer steps' windows (forward and backward), plus the validation windows and the diagnostic probe's
    windows (forward only: a third of a training token each)."""
    job, runs = experiment.job_members(cfg, wildcards["job"])
    shape, train = cfg["shapes"][job["shape"]], cfg["train"]
    steps, seq = train["steps"], train["seq_len"]
    evaluations = -(-steps // train["eval_every"])  # every eval_every steps and at the last
    probes = -(-steps // train["diag_every"])
    forward_windows = evaluations * (train["eval_tokens"] // seq) + probes * train["micro_batch"]
    tokens = len(runs) * seq * (steps * train["batch_size"] + forward_windows / 3)
    weights = decoder_params(
        d_model=shape["d_model"],
        n_layers=shape["n_layers"],
        n_heads=shape["n_heads"],
        n_kv_heads=shape["n_heads"],
        head_dim=shape["head_dim"],
        d_ff=shape["d_ff"],
        vocab=cfg["corpus"]["vocab_size"],
    )
    return tokens * weights


PLAN = Plan(
    budgets={
        "corpus.train_shards": REHEARSAL_SHARDS,
        "train.steps": 1,
        "train.warmup": 0,
        "train.batch_size": 2,
        "train.micro_batch": 1,
        "train.diag_every": 1,
        "train.eval_every": 1,
        "train.eval_tokens": 2048,  # one validation window of the 2,048-token sequence
        "matmul_repeats": 1,
    },
    sweeps={
        "jobs": _rehearsed_job,
        "seeds": largest,
    },
    micro_batch=("train.micro_batch",),
    shapes={f"shapes.{REHEARSED_SHAPE}.{key}": (value, SHAPE_REASON) for key, value in CUT_WIDTH.items()},
    fixture_paths={},
    work={
        "noisy_divergence_train": _train_work,
        # renders the tables it is given (tens of runs): the same work whatever the budgets it carries as text
        "noisy_divergence_report": lambda cfg, wildcards: 1,
    },
    note=(
        "one job (B1p3w at width 256, its 12 layers, the reference noise, seed 3): one optimizer step of 2 windows of"
        " 2,048 tokens as 2 micro-batches of 1 (and 1 of 2), bf16 autocast and SDPA, one probe and one validation"
        " window; one FineWeb-Edu training shard; one timing repeat"
    ),
)

# The inject job reads, noises and writes the clean training stream in chunks: linear in its tokens, but the real
# stream is 27,000 times the fixture's and no work function sees a shard's size, so the driver measures it at two
# fixture sizes: the rehearsal's one fixture shard of SHARD_TOKENS tokens against the paper block's 9 training
# shards of 100M tokens (config/sources.yaml: dataset_train_000001.bin ... 100M tokens each).
REAL_SHARD_TOKENS = 100_000_000
PAPER_TRAIN_SHARDS = 9
DATA_GROWTH = {"noisy_divergence_inject": (REHEARSAL_SHARDS * SHARD_TOKENS, PAPER_TRAIN_SHARDS * REAL_SHARD_TOKENS)}


def fixtures(items: int = 1) -> dict[str, bytes]:
    """Registry path -> bytes: FineWeb-Edu's validation shard and first training shard in Qwen3 tokens, paper 07's
    fixture bytes (``items`` x 32,768 tokens a shard)."""
    return fineweb_shards(items, REHEARSAL_SHARDS)
