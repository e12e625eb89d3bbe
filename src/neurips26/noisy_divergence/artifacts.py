"""What one training job of paper 09 writes: per-step rows (``steps``), per-layer diagnostics (``diag``), one summary
row per run (``summary``) and the job's throughput beside the machine's measured matmul rate (``throughput``); every
row keyed by the run (``RUN_KEYS``). Also the job's matmul measurement itself, and the token files of the inject
step read and written a piece at a time (``TokenStream``, ``open_token_file``)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from neurips26.common.costs import decoder_params
from neurips26.common.timing import timed
from neurips26.common.token_files import HEADER_WORDS, MAGIC, VERSION

__all__ = [
    "RUN_KEYS",
    "TokenStream",
    "job_tables",
    "matmul_rate",
    "model_flops_per_token",
    "open_token_file",
    "training_seconds",
]

RUN_KEYS = ("shape", "qk_norm", "lr_multiplier", "setting", "seed")


def model_flops_per_token(model: dict, seq_len: int) -> float:
    """Training FLOPs per token: 6 x the weights a token passes through (``common.costs.decoder_params``) plus
    the attention scores and values over the full T x T matrices our explicit attention computes: forward
    2 x seq_len x heads x head_dim for q k^T and as much for the weighted values, per layer, and backward twice the
    forward, so 12 x layers x seq_len x heads x head_dim."""
    weights = decoder_params(
        d_model=model["d_model"],
        n_layers=model["n_layers"],
        n_heads=model["n_heads"],
        n_kv_heads=model["n_heads"],
        head_dim=model["head_dim"],
        d_ff=model["d_ff"],
        vocab=model["vocab_size"],
    )
    return 6.0 * weights + 12.0 * model["n_layers"] * seq_len * model["n_heads"] * model["head_dim"]


def matmul_rate(m: int, k: int, n: int, repeats: int = 5, device: str = "cpu") -> float:
    """Measured float32 GEMM rate (FLOP/s) of an (m x k) @ (k x n) product on ``device`` with the process's
    threads: 2 m k n over the median of ``repeats`` timed products."""
    import torch

    if min(m, k, n) < 1 or repeats < 1:
        raise ValueError(f"matmul sizes and repeats must be >= 1, got {m}x{k}x{n}, repeats {repeats}")
    a, b = torch.randn(m, k, device=device), torch.randn(k, n, device=device)
    calls = max(1, int(2e8 // (2 * m * k * n)))  # enough products per timing to beat the timer's resolution

    def run():
        for _ in range(calls):
            torch.mm(a, b)
        if device != "cpu":
            torch.cuda.synchronize()

    _, seconds = timed(run, repeats=repeats)
    return 2.0 * m * k * n * calls / seconds


def training_seconds(results) -> float:
    """Wall time of the ensemble's steps: each step counted once (its ``step_seconds``, logged by every live member)."""
    per_step: dict[int, float] = {}
    for result in results:
        for row in result.steps:
            per_step[row["step"]] = row["step_seconds"]
    return float(sum(per_step.values()))


def job_tables(params: dict, job: str, results, seconds: float, gemm: dict[str, float]) -> dict[str, pd.DataFrame]:
    """The four tables of a job from its runs (``params["runs"]``) and their :class:`training.MemberResult`s;
    ``seconds``: the training wall time (:func:`training_seconds`)."""
    steps, diag, summary = [], [], []
    for run, result in zip(params["runs"], results):
        keys = {
            "job": job,
            "shape": params["shape"],
            "qk_norm": params["qk_norm"],
            "lr_multiplier": params["lr_multiplier"],
            "setting": run["setting"],
            "seed": run["seed"],
        }
        steps += [{**keys, **row} for row in result.steps]
        diag += [{**keys, **row} for row in result.diag]
        summary.append(
            {
                **keys,
                "non_finite_step": -1 if result.non_finite_step is None else result.non_finite_step,
                "non_finite_where": result.non_finite_where,
                "final_val_loss": result.final_val_loss,
                "steps_done": len(result.steps),
            }
        )
    train = params["train"]
    tokens = len(params["runs"]) * train["steps"] * train["batch_size"] * train["seq_len"]
    per_token = model_flops_per_token(params["model"], train["seq_len"])
    rate = tokens / seconds if seconds > 0 else math.nan
    throughput = pd.DataFrame(
        [
            {
                "job": job,
                "shape": params["shape"],
                "members": len(params["runs"]),
                "tokens": tokens,
                "seconds": seconds,
                "tokens_per_s": rate,
                "model_flops_per_token": per_token,
                "model_flops_per_s": rate * per_token,
                **{f"gemm_{name}_flops_per_s": value for name, value in gemm.items()},
            }
        ]
    )
    return {
        "steps": pd.DataFrame(steps),
        "diag": pd.DataFrame(diag),
        "summary": pd.DataFrame(summary),
        "throughput": throughput,
    }


class TokenStream:
    """Token arrays (memory maps of shards) read as one stream: ``len`` and slices copy only the slice."""

    def __init__(self, parts):
        self.parts = list(parts)
        self.dtype = np.result_type(*(p.dtype for p in self.parts))
        self.offsets = np.cumsum([0, *(len(p) for p in self.parts)])

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer)):
            return self[int(key) : int(key) + 1][0]
        start, stop, _ = key.indices(len(self))
        out = [
            np.asarray(part[max(start - a, 0) : min(stop - a, len(part))])
            for part, a in zip(self.parts, self.offsets[:-1])
            if a < stop and a + len(part) > start
        ]
        return np.concatenate(out).astype(self.dtype, copy=False) if out else np.zeros(0, dtype=self.dtype)


def open_token_file(path, length: int, dtype, delimiter_id: int) -> np.memmap:
    """A token file of ``length`` tokens as ``common.token_files.write_tokens`` writes it, its tokens a writable
    memory map to fill (the same bytes once filled)."""
    dtype = np.dtype(dtype)
    if dtype not in (np.uint16, np.uint32):
        raise ValueError(f"tokens must be uint16 or uint32, got {dtype}")
    header = np.zeros(HEADER_WORDS, dtype=np.int32)
    header[:7] = (MAGIC, VERSION, length, dtype.itemsize, delimiter_id, 1, 0)
    with open(path, "wb") as handle:
        handle.write(header.tobytes())
        handle.truncate(HEADER_WORDS * 4 + length * dtype.itemsize)
    if length == 0:
        return np.zeros(0, dtype=dtype.newbyteorder("<"))
    return np.memmap(path, dtype=dtype.newbyteorder("<"), mode="r+", offset=HEADER_WORDS * 4, shape=(length,))
