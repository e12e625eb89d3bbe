"""What one training job of paper 07 reads and writes: the token streams it trains and validates on, and its three
tables (per-step losses, spectra of the vocabulary-indexed matrices and router, and the summary rows that
``runs.parquet`` gathers), each keyed by the run (arch, method, lr_index, seed): a job that trains the seeds of a
cell as one ensemble writes its runs' rows one after the other, in the order of its seeds."""

from __future__ import annotations

import numpy as np
import pandas as pd

from neurips26.common.token_files import read_tokens

__all__ = ["RUN_KEYS", "job_tables", "outcome_line", "read_stream", "run_row", "run_tables"]

RUN_KEYS = ("arch", "method", "lr_index", "seed")
SPECTRUM_COLUMNS = ["step", "kind", "matrix", "index", "sigma"]


def read_stream(paths) -> np.ndarray:
    """The tokens of one or more token files (the shared corpus's split, or the paper's shards), concatenated."""
    return np.concatenate([read_tokens(path) for path in paths])


def run_row(run: dict, result, assignment: dict) -> dict:
    """One row of ``runs.parquet`` from a finished :class:`training.TrainResult`."""
    swept = ("embedding", "lm_head") if run["arch"] == "dense" else ("router",)
    return {
        "arch": run["arch"],
        "method": run["method"],
        "lr_index": run["lr_index"],
        "multiplier": run["multiplier"],
        "seed": run["seed"],
        **{f"lr_{k}": assignment[k]["lr"] for k in swept},
        "final_val_loss": result.final_val_loss,
        "diverged": result.diverged,
        "diverged_step": result.diverged_step if result.diverged else -1,
        "diverged_kind": result.diverged_kind or "",
        "diverged_detail": result.diverged_detail,
        "spikes": int(sum(r["spike"] for r in result.steps)),
        "steps_done": len(result.steps),
        "optimizer_seconds": result.optimizer_seconds,
        "train_seconds": result.train_seconds,
        "epochs": result.epochs,
    }


def run_tables(run: dict, result, assignment: dict, counts: dict[str, int]) -> dict[str, pd.DataFrame]:
    """The run's ``steps``, ``spectra`` and ``summary`` tables (the train rule's outputs); ``counts`` are
    ``model.n_parameters`` (total, and the embedding and LM head that the summary adds up as vocabulary-indexed)."""
    keys = {k: run[k] for k in RUN_KEYS}
    row = {
        **run_row(run, result, assignment),
        "parameters": counts["total"],
        "parameters_vocab": counts["embedding"] + counts["lm_head"],
    }
    return {
        "steps": pd.DataFrame(result.steps).assign(**keys),
        "spectra": pd.DataFrame(result.spectra, columns=SPECTRUM_COLUMNS).assign(**keys),
        "summary": pd.DataFrame([row]),
    }


def job_tables(runs: list[dict], results: list, assignment: dict, counts: dict[str, int]) -> dict[str, pd.DataFrame]:
    """The job's ``steps``, ``spectra`` and ``summary`` tables: :func:`run_tables` of each run, concatenated."""
    tables = [run_tables(run, result, assignment, counts) for run, result in zip(runs, results, strict=True)]
    return {name: pd.concat([t[name] for t in tables], ignore_index=True) for name in tables[0]}


def outcome_line(name: str, result) -> str:
    """The log line of a finished run: final validation loss, divergence, spikes and optimizer time."""
    return (
        f"{name}: final validation loss {result.final_val_loss:.4f}, diverged {result.diverged} "
        f"(step {result.diverged_step}, {result.diverged_kind}), {int(sum(r['spike'] for r in result.steps))} spikes, "
        f"{result.optimizer_seconds:.1f} s of {result.train_seconds:.1f} s in optimizer steps"
    )
