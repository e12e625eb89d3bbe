"""Paper 09's tables: the runs with their divergence outcome and mechanism proxies (:func:`runs_table`), the
divergence rates per cell (:func:`divergence_table`), the classifier's inputs (:func:`classifier_table`) and what
the report renders (:func:`report_tables`)."""

from __future__ import annotations

import json
import math

import pandas as pd

from . import classifier
from .divergence import rates
from .noise import CLEAN, parse_setting
from .pilot import UNIGRAM_MARGIN, outcome

__all__ = [
    "CELL",
    "classifier_table",
    "corpus_description",
    "divergence_table",
    "failure_mode_cells",
    "report_tables",
    "runs_table",
    "setting_columns",
]

CELL = ["shape", "qk_norm", "lr_multiplier", "setting"]
PROXY_STEPS = 3  # a run's proxy: the median over its last three diagnostic steps (one probe batch each)
KEYS = [*CELL, "seed"]
# diag column -> runs column
NOISY_PROXIES = {"noise_mass_ratio": "noise_mass_ratio", "max_logit_noisy": "max_attn_logit_noisy"}


def setting_columns(setting: str) -> dict:
    """kind, vocab, alpha, doc_fraction of a setting name (clean: kind ``clean``, alpha 0)."""
    if setting == CLEAN:
        return {"kind": CLEAN, "vocab": "", "alpha": 0.0, "doc_fraction": 0.0}
    s = parse_setting(setting)
    return {"kind": s.kind, "vocab": s.vocab, "alpha": s.alpha, "doc_fraction": s.doc_fraction}


def runs_table(
    summary: pd.DataFrame, curves: pd.DataFrame, diag: pd.DataFrame, divergence: dict, unigram: float
) -> pd.DataFrame:
    """One row per run: its summary, the detector's verdict (``diverged``, ``div_kind``, ``onset``), whether it
    ``failed_to_learn`` by the pilot's rule (:func:`.pilot.outcome`: the final smoothed training loss,
    ``final_smoothed_loss``, within :data:`.pilot.UNIGRAM_MARGIN` nats of ``unigram``, the unigram entropy of the clean
    training stream, kept as ``unigram_entropy``; the training loss counts the noise positions), and the
    proxies on the clean probe batch, each the median over the last ``PROXY_STEPS`` diagnostic steps before any
    divergence (``max_attn_logit``: largest over layers; ``logit_max``: largest |output logit|; ``resid_rms``:
    largest over layers), plus the attention logit's peak over the run; ``proxy_step`` is the last of those steps.
    Read on the noisy probe every run shares, at the same steps: ``noise_mass_ratio`` (largest over layers of the
    attention mass from clean queries onto noise keys, over its uniform-attention value), ``max_attn_logit_noisy``
    and the reference noise ids' embedding norm ratio ``embed_noise_ratio``."""
    rows = []
    curves_by = dict(tuple(curves.groupby(KEYS, sort=False)))
    diag_by = dict(tuple(diag.groupby(KEYS, sort=False)))
    for run in summary.to_dict("records"):
        key = tuple(run[k] for k in KEYS)
        c = curves_by.get(key, pd.DataFrame(columns=["step", "train_loss"]))
        d = diag_by.get(key, pd.DataFrame(columns=["step", "max_logit", "resid_rms"]))
        nf = None if run["non_finite_step"] < 0 else int(run["non_finite_step"])
        learned = outcome(c["train_loss"].to_numpy(), unigram, **divergence, non_finite_step=nf)
        diverged, kind, onset = learned["diverged"], learned["kind"], learned["onset"]
        until = onset if diverged else math.inf
        d_before = d[d["step"] <= until]
        recorded = sorted(d_before["step"].unique())[-PROXY_STEPS:]
        last = recorded[-1] if recorded else None
        noisy = [col for col in NOISY_PROXIES if col in d_before]
        per_step = d_before[d_before["step"].isin(recorded)].groupby("step")[["max_logit", "resid_rms", *noisy]].max()
        c_last = c[c["step"].isin(recorded)]
        rows.append(
            {
                **run,
                **setting_columns(run["setting"]),
                "diverged": diverged,
                "div_kind": kind,
                "onset": onset,
                "final_train_loss": float(c["train_loss"].iloc[-1]) if len(c) else math.nan,
                "final_smoothed_loss": learned["final_loss"],
                "unigram_entropy": unigram,
                "failed_to_learn": learned["failed_to_learn"],
                "proxy_step": -1 if last is None else int(last),
                "max_attn_logit": float(per_step["max_logit"].median()) if len(per_step) else math.nan,
                "logit_max": float(c_last["logit_max"].median()) if len(c_last) else math.nan,
                "resid_rms": float(per_step["resid_rms"].median()) if len(per_step) else math.nan,
                "peak_attn_logit": float(d["max_logit"].max()) if len(d) else math.nan,
                **{
                    NOISY_PROXIES[col]: float(per_step[col].median()) if col in per_step and len(per_step) else math.nan
                    for col in NOISY_PROXIES
                },
                "embed_noise_ratio": float(c_last["embed_noise_ratio"].median())
                if "embed_noise_ratio" in c_last and len(c_last)
                else math.nan,
            }
        )
    return pd.DataFrame(rows)


def divergence_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Divergence rate per cell (shape, QK-norm, LR multiplier, setting) with its Wilson interval, beside the runs
    that failed to learn (``failed_to_learn``, a count) and the median proxy over the cell's seeds."""
    table = rates(runs, CELL)
    per_cell = (
        runs.groupby(CELL, sort=False)
        .agg(failed_to_learn=("failed_to_learn", "sum"), median_max_attn_logit=("max_attn_logit", "median"))
        .reset_index()
    )
    return table.merge(per_cell, on=CELL, how="left")


def classifier_table(
    runs: pd.DataFrame, curves: pd.DataFrame, diag: pd.DataFrame, base_lr: float, shape: str
) -> pd.DataFrame:
    """The classifier's rows, one per run of ``shape`` without QK-norm it can use, with :data:`classifier.RECORDED`
    (one shape only: a one-layer model's depth feature is constant, so mixed shapes would let shape stand for the
    label):

    - ``task = onset``: diverged runs, ``label`` 1 for a clean run at a raised learning rate (LR-induced), 0 for a
      noisy run at the base learning rate (noise-induced); features at the onset;
    - ``task = null``: the runs that did not diverge, noisy at the base learning rate (0) or clean at a raised one (1);
      features at the end. What tells these apart is not a divergence: their balanced accuracy is the onset
      classifier's null.
    """
    rows = []
    curves_by = dict(tuple(curves.groupby(KEYS, sort=False)))
    diag_by = dict(tuple(diag.groupby(KEYS, sort=False)))
    for run in runs[~runs["qk_norm"] & (runs["shape"] == shape)].to_dict("records"):
        noisy_base = run["kind"] != CLEAN and run["lr_multiplier"] == base_lr
        clean_high = run["kind"] == CLEAN and run["lr_multiplier"] > base_lr
        if not (noisy_base or clean_high):
            continue
        key = tuple(run[k] for k in KEYS)
        if key not in diag_by:
            continue
        step = run["onset"] if run["diverged"] else math.inf
        features = classifier.features_at(diag_by[key], curves_by[key], step)
        base = {k: run[k] for k in KEYS} | {"label": int(clean_high), **features}
        rows.append({**base, "task": "onset" if run["diverged"] else "null"})
    return pd.DataFrame(rows, columns=["task", *KEYS, "label", *classifier.RECORDED])


def failure_mode_cells(runs: pd.DataFrame, comparisons: dict) -> list[dict]:
    """The cells the traces and loss curves show, those that were trained: clean and the reference noise at the base
    learning rate, clean at the largest multiplier (no QK-norm, the deep shape), and the reference noise with
    QK-norm."""
    deep, base, ref = comparisons["deep_shape"], comparisons["base_lr_multiplier"], comparisons["reference_setting"]
    high = runs["lr_multiplier"].max()
    wanted = [(deep, False, base, CLEAN), (deep, False, base, ref), (deep, False, high, CLEAN), (deep, True, base, ref)]
    trained = set(map(tuple, runs[CELL].itertuples(index=False)))
    return [dict(zip(CELL, cell)) for cell in dict.fromkeys(wanted) if cell in trained]


DOWNLOADED_CORPORA = {"fineweb_edu_qwen3": "FineWeb-Edu sample-10BT in Qwen3 tokens (paper 07's shards)"}


def corpus_description(meta_path, corpus: dict) -> str:
    """The corpus in the report's words: the shared BPE corpus from its meta.json (smoke and quick), or, where the
    rule gives none (``meta_path`` empty: paper 07's downloaded shards at paper scale), from the corpus block."""
    if meta_path:
        with open(meta_path) as handle:
            meta = json.load(handle)
        return (
            f"{meta['corpus']} ({meta['documents']['train']} training documents, {meta['tokens']['train']:,} tokens,"
            f" byte-level BPE of {meta['vocab_size']})"
        )
    name = DOWNLOADED_CORPORA.get(corpus["name"], corpus["name"])
    return f"{name}: {corpus['train_shards']} training shards, vocabulary of {corpus['vocab_size']:,} ids"


def report_tables(inp, params) -> dict:
    """Everything the report template renders besides the claims and the closing sections."""
    runs = pd.read_parquet(inp.runs)
    divergence = pd.read_parquet(inp.divergence)
    clf = pd.read_parquet(inp.classifier).drop(columns=["git_commit", "config_hash"], errors="ignore")
    throughput = pd.read_parquet(inp.throughput)
    stats = pd.concat([pd.read_parquet(p) for p in inp.stats], ignore_index=True) if inp.stats else pd.DataFrame()
    cells = divergence.assign(
        rate=lambda f: [f"{k}/{n}" for k, n in zip(f["k"], f["n"])],
        failed_to_learn=lambda f: [f"{int(m)}/{n}" for m, n in zip(f["failed_to_learn"], f["n"])],
    )[[*CELL, "rate", "p", "low", "high", "failed_to_learn", "median_max_attn_logit"]]
    diverged = runs[runs["diverged"]][[*KEYS, "div_kind", "onset", "non_finite_where", "final_train_loss"]]
    proxies = (
        runs[~runs["diverged"]]
        .groupby(CELL, sort=False)
        .agg(
            runs=("seed", "size"),
            max_attn_logit=("max_attn_logit", "median"),
            max_attn_logit_noisy=("max_attn_logit_noisy", "median"),
            noise_mass_ratio=("noise_mass_ratio", "median"),
            embed_noise_ratio=("embed_noise_ratio", "median"),
            logit_max=("logit_max", "median"),
            resid_rms=("resid_rms", "median"),
            final_val_loss=("final_val_loss", "median"),
        )
        .reset_index()
    )
    gemm_cols = [c for c in throughput.columns if c.startswith("gemm_") and c.endswith("_flops_per_s")]
    speed = throughput[["job", "members", "tokens", "seconds", "tokens_per_s", "model_flops_per_s", *gemm_cols]].copy()
    for c in gemm_cols:
        speed[f"share_of_{c.removeprefix('gemm_').removesuffix('_flops_per_s')}"] = (
            speed["model_flops_per_s"] / speed[c]
        )
    injection = (
        stats[
            [
                "setting",
                *(["seed"] if "seed" in stats else []),
                "docs_noised",
                "docs",
                "tokens_noise",
                "noise_share",
                "count_error_max",
                "recovered_mismatches",
                "outside_vocab",
                "uniform_p",
            ]
        ]
        if len(stats)
        else stats
    )
    shapes = pd.DataFrame([{"shape": k, **v} for k, v in params.shapes.items()])
    pilot = (
        pd.read_parquet(inp.pilot).drop(columns=["git_commit", "config_hash"], errors="ignore") if inp.pilot else None
    )
    pilot_cells = (
        pilot.groupby(["variant", "lr_multiplier", "setting"], sort=False)
        .agg(
            runs=("seed", "size"),
            diverged=("diverged", "sum"),
            failed_to_learn=("failed_to_learn", "sum"),
            largest_rise_max=("largest_rise", "max"),
            min_loss_median=("min_loss", "median"),
            final_loss_median=("final_loss", "median"),
        )
        .reset_index()
        if pilot is not None
        else None
    )
    return {
        "cells": cells,
        "diverged": diverged,
        "proxies": proxies,
        "classifier": clf,
        "speed": speed,
        "injection": injection,
        "shapes": shapes,
        "pilot": pilot_cells,
        "pilot_unigram": float(pilot["unigram_entropy"].iloc[0]) if pilot is not None and len(pilot) else math.nan,
        "corpus": corpus_description(inp.corpus_meta, params.corpus),
        "n_runs": len(runs),
        "unigram": float(runs["unigram_entropy"].iloc[0]) if len(runs) else math.nan,
        "unigram_margin": UNIGRAM_MARGIN,
    }
