"""The tables paper 11's report and figures render besides the claims: the published accuracy beside ours (the
README's quote of Tables 1 and 7, claims P1-P6), the main metric table (class means, mean and sd over seeds, per
dataset, method and setting, as the paper's Tables 1 and 7), per-class and per-defect image AUROC, the complexity
table (Table 2), training and data summaries."""

from __future__ import annotations

import pandas as pd

__all__ = ["METRICS", "metric_table", "published_table", "report_tables"]

METRICS = ("i_auroc", "p_auroc", "aupro")


def _cell(mean: float, sd: float) -> str:
    if mean != mean:
        return "n/a"
    return f"{mean:.4f}" + (f" ± {sd:.4f}" if sd == sd else "")


def metric_table(metrics: pd.DataFrame, group: str = "class") -> pd.DataFrame:
    """One row per (dataset, method, setting, name of the group): seeds, and each metric's mean and sd over seeds."""
    rows = []
    chosen = metrics[metrics["group"] == group]
    for keys, part in chosen.groupby(["dataset", "method", "setting", "name"], sort=False):
        row = dict(zip(["dataset", "method", "setting", "name"], keys), seeds=int(part["seed"].nunique()))
        for m in METRICS:
            row[m] = part[m].mean()
            row[f"{m}_sd"] = part[m].std(ddof=1) if len(part) > 1 else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)


def _compact(table: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    out = table[keys].copy()
    for m in METRICS:
        out[m] = [_cell(v, s) for v, s in zip(table[m], table[f"{m}_sd"])]
    return out


def _wide(table: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Rows (dataset, method, setting), a column per class or defect: the metric's mean ± sd over seeds."""
    table = table.assign(cell=[_cell(v, s) for v, s in zip(table[metric], table[f"{metric}_sd"])])
    wide = table.pivot_table(index=["dataset", "method", "setting"], columns="name", values="cell", aggfunc="first",
                             sort=False)  # fmt: skip
    return wide.reset_index().rename_axis(columns=None)


def published_table(claims: pd.DataFrame, means: pd.DataFrame, sources: dict[str, str], primary: str,
                    proposed: str, scale: str) -> pd.DataFrame:  # fmt: skip
    """One row per published number (claims P1-P6): the paper's value beside the proposed method's unified class
    mean (mean ± sd over seeds) on the dataset of the same source where this scale runs one. A scale that runs no
    real dataset sets the primary (synthetic) dataset's beside every row, labelled as not comparable; a scale that
    runs a real dataset gives a published dataset it does not run no number ("n/a (not run)")."""
    from .claims import PUBLISHED

    names = {"mvtec3d": "MVTec 3D-AD", "eyecandies": "Eyecandies"}
    labels = {"i_auroc": "I-AUROC", "p_auroc": "P-AUROC", "aupro": "AUPRO"}
    ours = means[(means["method"] == proposed) & (means["setting"] == "unified") & (means["name"] == "mean")]
    claims = claims.set_index("claim_id")
    runs_real = any(s in names for s in sources.values())
    rows = []
    for claim_id, (source, column) in PUBLISHED.items():
        same = [name for name, s in sources.items() if s == source]
        if same or not runs_real:
            dataset = same[0] if same else primary
            row = ours[ours["dataset"] == dataset]
            cell = _cell(row[column].iloc[0], row[f"{column}_sd"].iloc[0]) if len(row) else "n/a"
            where = f"{dataset} ({scale} scale)" if same else f"{dataset} ({scale} scale): not comparable"
        else:
            cell, where = "n/a (not run)", f"not run at {scale} scale"
        rows.append({"published on": names[source], "metric": labels[column],
                     "paper": f"{claims.loc[claim_id, 'paper_value']:.4f}", "ours": cell, "ours on": where,
                     "claim": f"{claim_id}: {claims.loc[claim_id, 'verdict']}"})  # fmt: skip
    return pd.DataFrame(rows)


def report_tables(inp, params, scale: str) -> dict:
    metrics = pd.read_parquet(inp.metrics)
    means = metric_table(metrics)
    main = _compact(means[means["name"] == "mean"], ["dataset", "method", "setting", "seeds"])
    defects = metric_table(metrics, "defect")
    complexity = pd.read_parquet(inp.complexity)
    complexity = complexity[[c for c in complexity.columns if c not in ("git_commit", "config_hash")]]
    traces = pd.read_parquet(inp.traces).sort_values("step")
    training = (
        traces.groupby(["dataset", "method", "setting", "seed", "group"])
        .agg(steps=("step", "max"), first_loss=("loss", "first"), final_loss=("loss", "last"),
             seconds=("seconds", "first"))
        .reset_index()
        .groupby(["dataset", "method", "setting"])
        .agg(fitted_models=("group", "size"), steps_per_model=("steps", "mean"), first_loss=("first_loss", "mean"),
             final_loss=("final_loss", "mean"), seconds_per_run=("seconds", "mean"))
        .reset_index()
    )  # fmt: skip
    data = pd.read_parquet(inp.data)
    data_table = (
        data.assign(kind=lambda d: d["defect"].where(d["defect"] == "good", "defective"))
        .groupby(["dataset", "split", "kind"])
        .agg(images=("images", "sum"), invalid_depth=("invalid_depth", "sum"), pixels=("pixels", "sum"))
        .reset_index()
    )
    data_table["invalid_share"] = data_table["invalid_depth"] / data_table["pixels"]
    teacher = pd.read_parquet(inp.teacher).sort_values("step")
    tail = teacher.tail(max(1, len(teacher) // 10))  # the last tenth of the pretext steps
    sources = {name: d["source"] for name, d in params.datasets.items()}
    comp = params.comparisons
    published = published_table(pd.read_parquet(inp.claims), means, sources, comp["primary"], comp["proposed"], scale)
    return {
        "published_table": published,
        "published_comparable": any(s in sources.values() for s in ("mvtec3d", "eyecandies")),
        "teacher_picture": float(tail["picture_accuracy"].mean()) if "picture_accuracy" in tail else float("nan"),
        "teacher_rotation": float(tail["rotation_accuracy"].mean()) if "rotation_accuracy" in tail else float("nan"),
        "main_table": main,
        "class_table": _wide(means[means["name"] != "mean"], "i_auroc"),
        "defect_table": _wide(defects, "i_auroc"),
        "defect_aupro_table": _wide(defects, "aupro"),
        "complexity_table": complexity,
        "training_table": training,
        "data_table": data_table.drop(columns="pixels"),
    }
