"""The training-free methods on one prepared dataset: each method ranks every test user's next item from the
training transitions (the test history is seq[:-1]); Recall and NDCG at 1/5/10 under one stated protocol, and
each method's time per 1,000 users."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pandas as pd

from neurips26.seqrec_audit.baselines import BASELINES
from neurips26.seqrec_audit.graph import transition_counts
from neurips26.seqrec_audit.heuristic import TGH_VARIANTS, TGHConfig, recommend_tgh
from neurips26.seqrec_audit.metrics import metrics_from_ranks, metrics_from_topk, ranks_in_chunks
from neurips26.seqrec_audit.prepare import PreparedDataset

TRAINING_FREE = (*BASELINES, *TGH_VARIANTS)


def evaluate_training_free(
    ready: PreparedDataset,
    methods: list[str],
    exclude_history: bool = False,
    tie_break: str = "pessimistic",
    tgh: dict[str, TGHConfig] | None = None,
    log: Callable[[str], None] | None = None,
    chunk_size: int = 4096,
) -> pd.DataFrame:
    """Long-form table (method, metric, value) plus `seconds_per_1000_users` per method. Score-matrix methods are
    ranked with `tie_break` over all items; TGH returns ranked top-10 lists (its ties go to the lower item id).
    `tgh` names the TGH variants (default: the paper's TGH-1 and TGH-2); `exclude_history` applies to all.
    Score-matrix methods score `chunk_size` users at a time (`metrics.ranks_in_chunks`)."""
    tgh = TGH_VARIANTS if tgh is None else tgh
    unknown = sorted(set(methods) - set(BASELINES) - set(tgh))
    if unknown:
        raise ValueError(f"unknown training-free methods {unknown}; choose from {[*BASELINES, *tgh]}")
    say = log or (lambda line: None)
    split, n = ready.split, ready.n_items
    histories, targets = split.test_history, split.test_target
    counts = transition_counts(split.train, n)
    rows = []
    for method in methods:
        start = time.perf_counter()
        if method in tgh:
            config = replace(tgh[method], exclude_history=exclude_history)
            values = metrics_from_topk(recommend_tgh(counts, ready.features, histories, config, k=10), targets)
        else:

            def scores(chunk, method=method):
                return BASELINES[method](
                    split.train, n, chunk, features=ready.features, exclude_history=exclude_history
                )

            values = metrics_from_ranks(
                ranks_in_chunks(scores, histories, targets, n, exclude_history, tie_break, chunk_size)
            )
        per_1000 = (time.perf_counter() - start) / max(len(targets), 1) * 1000
        say(f"{method}: NDCG@10 {values['NDCG@10']:.4f}, {per_1000:.3f} s per 1,000 users")
        rows += [
            {"method": method, "metric": metric, "value": float(value), "seconds_per_1000_users": per_1000}
            for metric, value in values.items()
        ]
    return pd.DataFrame(rows)


def ndcg_table(metrics: pd.DataFrame, k: int = 10) -> pd.DataFrame:
    """NDCG@k per dataset (rows) and method (columns), from a long table with a `dataset` column."""
    rows = metrics[metrics["metric"] == f"NDCG@{k}"]
    return rows.pivot_table(index="dataset", columns="method", values="value", aggfunc="mean")


def sanity_ranges(metrics: pd.DataFrame) -> None:
    """Raise if any metric is outside [0, 1] or NaN (a broken ranking, not a result)."""
    bad = metrics[~np.isfinite(metrics["value"]) | (metrics["value"] < 0) | (metrics["value"] > 1)]
    if len(bad):
        raise ValueError(f"metrics outside [0, 1]:\n{bad.head()}")
