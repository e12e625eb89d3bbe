r"""The tables paper 07's report shows, built from the results: the best learning rate of each method on
validation loss with the signed difference from the baseline and its seed spread (:func:`best_learning_rates`,
the tables rule), and everything else the report renders (:func:`report_tables`: setup, divergences, step
times, symmetry checks).

Best-LR selection: for each (arch, method) the grid point with the lowest mean final validation loss over seeds
among grid points where no seed diverged; the paper tunes each optimizer's learning rate and compares final
validation losses (Lau and Su 2026, arXiv 2605.18106, the pre-training experiments; the reference's README lists
the tuned learning rates of its runs). A best point at either end of the grid is flagged (``at_grid_edge``): the
sweep may not have bracketed that method's optimum. The difference from the baseline is paired by seed (same data
order, same initialisation): ``delta = loss(method) - loss(baseline)`` per seed at each one's best grid point, its
mean and sample standard deviation.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

__all__ = ["best_learning_rates", "corpus_sentence", "report_tables", "setup_tables", "symmetry_tables"]


def best_learning_rates(runs: pd.DataFrame, baselines: dict[str, str]) -> pd.DataFrame:
    """Per (arch, method): the best grid point and its loss, seed spread, spikes and the paired delta to the
    arch's baseline (``baselines``: the dense sweep's baseline method and the MoE sweep's baseline router)."""
    rows = []
    n_grid = int(runs["lr_index"].max()) + 1
    for (arch, method), group in runs.groupby(["arch", "method"], sort=False):
        by_lr = group.groupby("lr_index").agg(mean=("final_val_loss", "mean"), diverged=("diverged", "any"))
        ok = by_lr[~by_lr["diverged"] & np.isfinite(by_lr["mean"])]
        if ok.empty:
            rows.append({"arch": arch, "method": method, "best_lr_index": -1, "all_diverged": True})
            continue
        best = int(ok["mean"].idxmin())
        at_best = group[group["lr_index"] == best].sort_values("seed")
        losses = at_best["final_val_loss"].to_numpy()
        rows.append(
            {
                "arch": arch,
                "method": method,
                "best_lr_index": best,
                "multiplier": float(at_best["multiplier"].iloc[0]),
                **{c: float(at_best[c].iloc[0]) for c in at_best.columns if c.startswith("lr_") and c != "lr_index"},
                "val_loss_mean": float(losses.mean()),
                "val_loss_sd": float(losses.std(ddof=1)) if len(losses) > 1 else 0.0,
                "seeds": len(losses),
                "spikes": int(at_best["spikes"].sum()),
                "at_grid_edge": n_grid > 1 and best in (0, n_grid - 1),
                "all_diverged": False,
                "diverged_runs": int(group["diverged"].sum()),
            }
        )
    best = pd.DataFrame(rows)
    best["delta_mean"], best["delta_sd"] = math.nan, math.nan
    for arch, group in best.groupby("arch"):
        baseline = baselines[arch]
        base = group[group["method"] == baseline]
        if base.empty or bool(base["all_diverged"].iloc[0]):
            continue
        base_losses = _losses_at(runs, arch, baseline, int(base["best_lr_index"].iloc[0]))
        for i, row in group.iterrows():
            if row["all_diverged"]:
                continue
            losses = _losses_at(runs, arch, row["method"], int(row["best_lr_index"]))
            delta = (losses - base_losses).dropna().to_numpy()
            best.loc[i, "delta_mean"] = float(delta.mean()) if delta.size else math.nan
            best.loc[i, "delta_sd"] = float(delta.std(ddof=1)) if delta.size > 1 else 0.0
    return best


def _losses_at(runs: pd.DataFrame, arch: str, method: str, lr_index: int) -> pd.Series:
    sel = runs[(runs["arch"] == arch) & (runs["method"] == method) & (runs["lr_index"] == lr_index)]
    return sel.set_index("seed")["final_val_loss"]


# the columns of the best-LR table in the report, in order (those a sweep does not have are left out)
BEST_COLUMNS = [
    "arch",
    "method",
    "multiplier",
    "lr_embedding",
    "lr_lm_head",
    "lr_router",
    "val_loss_mean",
    "val_loss_sd",
    "seeds",
    "delta_mean",
    "delta_sd",
    "spikes",
    "at_grid_edge",
    "diverged_runs",
]
DIVERGED_COLUMNS = ["arch", "method", "multiplier", "seed", "diverged_step", "diverged_kind"]
PROVENANCE_COLUMNS = ["git_commit", "config_hash"]


def corpus_sentence(meta: dict | None, corpus: dict) -> str:
    """What the models were trained on: the shared corpus build's ``meta.json`` (sources, sizes, tokenizer,
    text hash), or the downloaded shards of ``corpus`` (the config's entry) when there is no meta."""
    if meta is None:
        return (
            f"`{corpus['name']}`, {corpus.get('train_shards')} training shards of 100M tokens and the validation shard"
        )
    return (
        f"the shared corpus `{meta['corpus']}` ({', '.join(meta['sources'])}: {meta['characters']:,} "
        f"characters; {meta['documents']['train']} training and {meta['documents']['val']} validation "
        f"documents, split by document), byte-level BPE with {meta['vocab_size']} tokens trained on the "
        f"training documents (tokenizers {meta['tokenizers_version']}): {meta['tokens']['train']:,} "
        f"training and {meta['tokens']['val']:,} validation tokens; text sha256 {meta['text_sha256'][:16]}"
    )


def setup_tables(runs: pd.DataFrame, model: dict, base: dict, methods: dict, routers: dict) -> dict[str, pd.DataFrame]:
    """The setup section: the two models with their parameter counts, the fixed optimizer of every other role,
    and the embedding + LM head and router methods (the config's entries)."""
    sizes = runs.groupby("arch")[["parameters", "parameters_vocab"]].first()
    models = pd.DataFrame(
        [
            {
                "arch": a,
                **model[a],
                "parameters": sizes.loc[a, "parameters"],
                "vocabulary-indexed": sizes.loc[a, "parameters_vocab"],
            }
            for a in ("dense", "moe")
        ]
    )
    return {
        "models": models,
        "roles": pd.DataFrame([{"role": k, **{kk: str(vv) for kk, vv in v.items()}} for k, v in base.items()]),
        "methods": pd.DataFrame(
            [{"method": m, "embedding": str(p["embedding"]), "lm_head": str(p["lm_head"])} for m, p in methods.items()]
        ),
        "routers": pd.DataFrame([{"router": m, "optimizer": str(p)} for m, p in routers.items()]),
    }


def symmetry_tables(equivariance: pd.DataFrame, identities: pd.DataFrame, shown: int = 12) -> dict:
    """The symmetry checks: the largest error of each rule under the groups it should commute with
    (``expected``), the ``shown`` smallest errors under the groups it should break (``broken``), and the
    identities as one line of text (``identities``)."""
    broken = equivariance[~equivariance["expected"]].sort_values("rel_err")
    expected = equivariance[equivariance["expected"]].groupby("optimizer")["rel_err"].max().reset_index()
    line = ", ".join(f"{r.identity} {r.value:.1e}" for r in identities.itertuples())
    return {"expected": expected, "broken": broken.head(shown), "identities": line}


def report_tables(inp, params) -> dict:
    """Everything the report template shows besides the claims and the closing sections, read from the report
    rule's inputs (``runs``, ``best``, ``step_time``, ``equivariance``, ``identities``, ``corpus_meta``) and
    params (``corpus``, ``model``, ``base``, ``methods``, ``routers``, ``train``)."""
    runs, best, step_time, equivariance, identities = (
        pd.read_parquet(p).drop(columns=PROVENANCE_COLUMNS, errors="ignore")
        for p in (inp.runs, inp.best, inp.step_time, inp.equivariance, inp.identities)
    )
    meta = json.loads(open(inp.corpus_meta).read()) if inp.corpus_meta else None
    return {
        "corpus": corpus_sentence(meta, params.corpus),
        "constant_share": f"{1 - params.train.get('cooldown_frac', 0.4):.0%}",
        "best": best.reindex(columns=[c for c in BEST_COLUMNS if c in best.columns]),
        "diverged": runs[runs["diverged"]][DIVERGED_COLUMNS],
        "step_time": step_time,
        **symmetry_tables(equivariance, identities),
        **setup_tables(runs, params.model, params.base, params.methods, params.routers),
    }
