"""Paper 10's tables from the per-dataset results: the long metrics table, the NDCG@10 table across datasets and
methods with TGH's relative gain over the best other method, the heuristic's gain beside each diagnostic, and the
cost of TGH (time per 1,000 users) beside the trained models' training and inference time; and the tables the
report shows (:func:`report_tables`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from neurips26.seqrec_audit.claims import relative_gain, run_scores
from neurips26.seqrec_audit.experiment import replicate_of
from neurips26.seqrec_audit.methods import is_tgh
from neurips26.seqrec_audit.metrics import PROTOCOL

METHOD_ORDER = ("pop", "markov1", "itemknn_last", "itemknn_profile", "sasrec", "bert4rec", "tiger")


def method_order(methods) -> list[str]:
    """Baselines in a fixed order, then the trained models, then any other name (sorted), then the TGH variants."""
    methods = list(dict.fromkeys(methods))
    known = [m for m in METHOD_ORDER if m in methods]
    tgh = sorted(m for m in methods if is_tgh([m])[0])
    return known + sorted(set(methods) - set(known) - set(tgh)) + tgh


def ndcg_wide(metrics: pd.DataFrame, datasets: list[str], k: int = 10) -> pd.DataFrame:
    """NDCG@k per dataset (rows, in `datasets` order) and method (columns; trained models: mean over seeds), plus the
    best non-TGH method, the best TGH variant and TGH's relative gain (tgh / best other - 1)."""
    rows = metrics[metrics["metric"] == f"NDCG@{k}"]
    wide = rows.pivot_table(index="dataset", columns="method", values="value", aggfunc="mean")
    wide = wide.reindex(index=[d for d in datasets if d in wide.index], columns=method_order(wide.columns))
    tgh = is_tgh(wide.columns)
    others = wide.loc[:, ~tgh]
    out = wide.reset_index()
    out["best_other"] = others.idxmax(axis=1).to_numpy() if others.shape[1] else "none"
    out["best_tgh"] = wide.loc[:, tgh].idxmax(axis=1).to_numpy() if tgh.any() else "none"
    out["tgh_relative_gain"] = [relative_gain(metrics, d) for d in out["dataset"]]
    out.columns.name = None
    return out


def seed_spread(metrics: pd.DataFrame, metric: str = "NDCG@10") -> pd.DataFrame:
    """Per (dataset, method): mean, standard deviation and count over seeds of `metric` (the training-free
    methods have one deterministic value each)."""
    rows = metrics[metrics["metric"] == metric]
    return rows.groupby(["dataset", "method"])["value"].agg(mean="mean", std="std", seeds="size").reset_index()


def _split_replicates(frame: pd.DataFrame, data_seed: int) -> pd.DataFrame:
    """`dataset` as the regime's name and `data_seed` as the replicate's seed; any other dataset keeps its name and
    gets `data_seed` (the scale's seed)."""
    parsed = [replicate_of(name) for name in frame["dataset"]]
    return frame.assign(
        dataset=[regime for regime, _ in parsed], data_seed=[data_seed if seed is None else seed for _, seed in parsed]
    )


def ndcg_runs(metrics: pd.DataFrame, data_seed: int, k: int = 10) -> pd.DataFrame:
    """NDCG@k of every run, long form (dataset, data_seed, seed, method, value): the datasets of the scale and their
    replicates (`<regime>_seed<k>`, listed under the regime with data seed k); `seed` is the trained model's seed,
    -1 for the deterministic training-free methods."""
    rows = metrics.loc[metrics["metric"] == f"NDCG@{k}", ["dataset", "seed", "method", "value"]]
    rows = _split_replicates(rows, data_seed)
    return (
        rows[["dataset", "data_seed", "seed", "method", "value"]]
        .sort_values(["dataset", "data_seed", "seed", "method"])
        .reset_index(drop=True)
    )


def diagnostics_runs(diagnostics: pd.DataFrame, data_seed: int) -> pd.DataFrame:
    """The diagnostics of every dataset and replicate: one row per (dataset, data_seed)."""
    table = _split_replicates(diagnostics, data_seed)
    first = ["dataset", "data_seed"]
    return table[first + [c for c in table.columns if c not in first]].sort_values(first).reset_index(drop=True)


def gains_with_diagnostics(wide: pd.DataFrame, diagnostics: pd.DataFrame) -> pd.DataFrame:
    """One row per dataset: TGH's relative gain and every diagnostic."""
    return wide[["dataset", "tgh_relative_gain"]].merge(diagnostics, on="dataset", how="inner")


def cost_table(training_free: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """Per dataset: each TGH variant's seconds per 1,000 users (it has no training) and, per trained model, the
    training seconds, inference seconds per 1,000 users, their total (means over seeds) and that total over the
    slowest TGH variant's time for all users, side by side.

    `training_free`: the long metrics table with `seconds_per_1000_users`; `runs`: one row per (dataset, model,
    seed) with train_seconds, inference_seconds and users."""
    per_method = training_free.groupby(["dataset", "method"])["seconds_per_1000_users"].first().unstack()
    table = per_method.loc[:, is_tgh(per_method.columns)].add_suffix("_s_per_1000_users")
    tgh_total = table.max(axis=1) * runs.groupby("dataset")["users"].first() / 1000
    for model, rows in runs.groupby("model", sort=False):
        mean = rows.groupby("dataset")[["train_seconds", "inference_seconds", "users"]].mean()
        table[f"{model}_train_s"] = mean["train_seconds"]
        table[f"{model}_inference_s_per_1000_users"] = mean["inference_seconds"] / mean["users"] * 1000
        table[f"{model}_total_s"] = mean["train_seconds"] + mean["inference_seconds"]
        table[f"{model}_total_over_tgh"] = table[f"{model}_total_s"] / tgh_total.replace(0, np.nan)
    table.columns.name = None
    return table.reset_index()


def training_runs(training: pd.DataFrame) -> pd.DataFrame:
    """One row per trained (dataset, model, seed): its training and inference seconds and test users."""
    return training.groupby(["dataset", "model", "seed"], as_index=False, sort=False)[
        ["train_seconds", "inference_seconds", "users"]
    ].first()


def data_table(counts: pd.DataFrame, datasets: list[str]) -> pd.DataFrame:
    """The preprocessing counts, one row per dataset (in `datasets` order), one column per count."""
    table = counts.pivot_table(index="dataset", columns="count", values="value", aggfunc="first")
    return table.reindex(datasets).reset_index().rename_axis(columns=None)


def result_tables(
    training_free: pd.DataFrame,
    trained: list[pd.DataFrame],
    training: pd.DataFrame,
    diagnostics: pd.DataFrame,
    counts: pd.DataFrame,
    replicate_metrics: list[pd.DataFrame],
    replicate_diagnostics: list[pd.DataFrame],
    datasets: list[str],
    seed: int,
) -> dict[str, pd.DataFrame]:
    """Every table of the pipeline's ``tables`` step: all metrics in long form (``metrics``), the NDCG@10 table
    (``ndcg``), the seed spread (``seeds``), the gains beside the diagnostics (``gains``), the cost (``cost``), NDCG@10
    and diagnostics per run including the replicates (``runs``, ``run_diagnostics``) and the counts (``data``)."""
    metrics = pd.concat([training_free, *trained], ignore_index=True)
    wide = ndcg_wide(metrics, datasets)
    cost = cost_table(training_free, training_runs(training)).set_index("dataset").reindex(datasets).reset_index()
    all_metrics = pd.concat([metrics, *replicate_metrics], ignore_index=True)
    all_diagnostics = pd.concat([diagnostics, *replicate_diagnostics], ignore_index=True)
    return {
        "metrics": metrics,
        "ndcg": wide,
        "seeds": seed_spread(metrics),
        "gains": gains_with_diagnostics(wide, diagnostics),
        "cost": cost,
        "runs": ndcg_runs(all_metrics, seed),
        "run_diagnostics": diagnostics_runs(all_diagnostics, seed),
        "data": data_table(counts, datasets),
    }


MODEL_NAMES = {
    "sasrec": "SASRec, cross-entropy over all items",
    "bert4rec": "BERT4Rec, Cloze task",
    "tiger": "TIGER-style generative retrieval of RQ-VAE semantic IDs",
}
FULL_METRICS = [f"{m}@{k}" for m in ("Recall", "NDCG") for k in (1, 5, 10)]
REPORT_DROP = ["git_commit", "config_hash", "seed"]


def all_metrics(metrics: pd.DataFrame, datasets: list[str]) -> pd.DataFrame:
    """Recall and NDCG at 1, 5, 10 per (dataset, method), trained models averaged over seeds, in dataset order and
    :func:`method_order`."""
    full = metrics.pivot_table(index=["dataset", "method"], columns="metric", values="value", aggfunc="mean")
    full = full[FULL_METRICS].reset_index()
    full["method"] = pd.Categorical(full["method"], method_order(full["method"]))
    full["dataset"] = pd.Categorical(full["dataset"], datasets)
    return full.sort_values(["dataset", "method"]).astype({"dataset": str, "method": str})


def per_run_ndcg(runs: pd.DataFrame, datasets: list[str]) -> pd.DataFrame:
    """NDCG@10 per run (data seed x trained seed) of every dataset with more than one run, methods in
    :func:`method_order`; empty when no dataset has more than one run."""
    paired = [run_scores(runs, name).assign(dataset=name) for name in datasets]
    paired = [table for table in paired if len(table) > 1]
    if not paired:
        return pd.DataFrame()
    per_run = pd.concat(paired).reset_index()
    return per_run[
        ["dataset", "data_seed", "seed", *method_order(per_run.columns.drop(["dataset", "data_seed", "seed"]))]
    ]


def model_descriptions(trained: list[str], models: dict) -> str:
    """One phrase per trained model (what it is, depth, width, epochs, learning rate), joined by '; '."""
    out = []
    for name in trained:
        m = models[name]
        layers = f"{m['n_blocks']} blocks" if "n_blocks" in m else f"{m.get('n_layers')} encoder and decoder layers"
        out.append(f"{MODEL_NAMES[name]} ({layers}, d = {m['d_model']}, {m['epochs']} epochs at lr {m['lr']:g})")
    return "; ".join(out)


def report_tables(inp, params) -> dict:
    """Everything the report template shows besides the claims and the closing sections, read from the report
    rule's inputs (``ndcg``, ``seeds``, ``gains``, ``cost``, ``data``, ``metrics``, ``runs``) and params
    (``datasets``, ``trained``, ``tgh``, ``protocol``, ``models``)."""
    ndcg, seeds, gains, cost, data = (
        pd.read_parquet(p).drop(columns=REPORT_DROP, errors="ignore")
        for p in (inp.ndcg, inp.seeds, inp.gains, inp.cost, inp.data)
    )
    datasets = list(params.datasets)
    return {
        "ndcg": ndcg,
        "full": all_metrics(pd.read_parquet(inp.metrics), datasets),
        "spread": seeds[seeds["seeds"] > 1],
        "per_run": per_run_ndcg(pd.read_parquet(inp.runs), datasets),
        "gains": gains,
        "cost": cost,
        "data": data,
        "models": model_descriptions(params.trained["models"], params.models),
        "variants": "; ".join(f"{name}: budgets {budgets}" for name, budgets in params.tgh["variants"].items()),
        "protocol_text": PROTOCOL,
    }
