"""Tables of paper 01's report, from the long-form metrics."""

from __future__ import annotations

import numpy as np
import pandas as pd

from neurips26.pred_loss_space import effects
from neurips26.pred_loss_space.names import REGIME, SPACES

RUN_METRICS = ["loss_native_final", "loss_x_final", "mse", "fd", "fid", "nonfinite", "train_seconds"]


def regimes(metrics: pd.DataFrame) -> list[tuple[tuple, str]]:
    keys = metrics[REGIME].drop_duplicates().itertuples(index=False, name=None)
    return [(key, f"{key[0]} / {key[1]} ({'bottleneck' if key[2] else 'no bottleneck'})") for key in keys]


def matrix(metrics: pd.DataFrame, regime: tuple, metric: str) -> pd.DataFrame:
    """3x3 table of a run-level metric (mean over seeds): rows pred, columns loss."""
    rows = metrics[(metrics["metric"] == metric) & metrics["t"].isna()]
    for column, value in zip(REGIME, regime):
        rows = rows[rows[column] == value]
    table = rows.pivot_table(index="pred", columns="loss", values="value", aggfunc="mean")
    table = table.reindex(
        index=[s for s in SPACES if s in table.index], columns=[s for s in SPACES if s in table.columns]
    )
    table.columns = [f"{c}-loss" for c in table.columns]
    return table.reset_index().rename(columns={"pred": "pred"})


def run_table(metrics: pd.DataFrame) -> pd.DataFrame:
    rows = metrics[metrics["metric"].isin(RUN_METRICS) & metrics["t"].isna()]
    table = rows.pivot_table(
        index=["dataset", "arch", "pred", "loss"], columns="metric", values="value", aggfunc="mean"
    )
    return table[[m for m in RUN_METRICS if m in table.columns]].reset_index()


def cells(metrics: pd.DataFrame, metric: str) -> pd.DataFrame:
    """One row per (regime, pred, loss): the run-level metric averaged over seeds."""
    rows = metrics[(metrics["metric"] == metric) & metrics["t"].isna()]
    return rows.groupby([*REGIME, "pred", "loss"], as_index=False)["value"].mean()


def regime_name(key: tuple) -> str:
    dataset, arch, bottleneck = key
    return f"{dataset}/{arch} ({'bottleneck' if bottleneck else 'no bottleneck'})"


def shares(metrics: pd.DataFrame) -> pd.DataFrame:
    """Variance shares of log-MSE and log-FD explained by the pred and the loss factor, per regime."""
    rows = []
    for metric in ("mse", "fd"):
        table = cells(metrics, metric)
        for key, group in table.groupby(REGIME):
            logged = group.assign(value=np.log(group["value"].clip(lower=1e-12)))
            try:
                share = effects.variance_shares(logged, "value")
            except ValueError:
                share = {"pred": np.nan, "loss": np.nan, "residual": np.nan}
            rows.append({"regime": regime_name(key), "bottleneck": key[2], "metric": metric, **share})
    return pd.DataFrame(rows)


def fid_regimes(metrics: pd.DataFrame) -> list[tuple]:
    """The regimes scored with true FID (Inception-v3 features), as (dataset, arch, bottleneck) keys."""
    rows = metrics[metrics["metric"] == "fid"]
    return list(rows[REGIME].drop_duplicates().itertuples(index=False, name=None))


def quality_view(metrics: pd.DataFrame) -> pd.DataFrame:
    """The metrics with each regime's sample-quality metric under the name "fd": true FID where the regime
    has it (paper scale, images), else the proxy FD. Claims and the FD heatmaps read this view."""
    with_fid = metrics[REGIME].apply(tuple, axis=1).isin(fid_regimes(metrics))
    proxy_replaced = with_fid & (metrics["metric"] == "fd")
    view = metrics[~proxy_replaced].copy()
    view.loc[view["metric"] == "fid", "metric"] = "fd"
    return view


def regimes_list(regimes: list[dict], steps: int, seeds: list[int]) -> str:
    """The report's Markdown list of regimes: dataset, architecture, bottleneck, steps and seeds (the paper's
    `steps` and `seeds` unless the regime sets its own)."""
    return "\n".join(
        f"- `{r['dataset']}` with `{r['arch']}` ({'bottleneck' if r['bottleneck'] else 'no bottleneck'}), "
        f"{r.get('steps', steps)} steps, seeds {r.get('seeds', seeds)}"
        for r in regimes
    )


def matrices_markdown(metrics: pd.DataFrame) -> str:
    """One section per regime: its 3x3 MSE and FD (proxy) tables, and its FID table where it was scored."""
    from neurips26.common.report import markdown_table

    def section(key: tuple, name: str) -> str:
        text = (
            f"### {name}\n\nDenoising MSE (x-space, mean over the t grid); rows: prediction space, columns: loss "
            f"space\n\n{markdown_table(matrix(metrics, key, 'mse'))}\n\nFD (proxy)\n\n"
            f"{markdown_table(matrix(metrics, key, 'fd'))}"
        )
        if key in fid_regimes(metrics):
            text += (
                "\n\nFID (Inception-v3 pool3 features, against the training set; the claims use it)\n\n"
                f"{markdown_table(matrix(metrics, key, 'fid'))}"
            )
        return text

    return "\n\n".join(section(key, name) for key, name in regimes(metrics))


def report_tables(inputs, params) -> dict:
    """The tables of report.md from the report rule's inputs (metrics) and params (regimes, steps, seeds)."""
    metrics = pd.read_parquet(inputs.metrics)
    return {
        "regimes": regimes_list(params.regimes, params.steps, params.seeds),
        "matrices": matrices_markdown(metrics),
        "shares": shares(quality_view(metrics)),
        "runs": run_table(metrics),
    }
