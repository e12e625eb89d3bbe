"""The tables paper 03's report renders beside the claims (arXiv 2608.23014, project page Tables 1, 2 and Fig. 4a):
the regional Frechet distances and Cohen's |d| per method, the r_inj ablation, the editing scores, memorization, and
the published numbers beside ours.

Every number of ours is a mean over the generative models' training seeds with its 95% t interval over seeds (what
the claims decide on); the subject-cluster bootstrap intervals of the evaluation (per method and seed, as the paper
reports them) are shown beside as the mean over seeds of each end. Published rows are the project page's; at a scale
that does not score ADNI with MedicalNet features ours stand beside them for orientation only, labelled not
comparable (a synthetic cohort, a proxy feature network, a proxy segmenter, small models).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from neurips26.anadiffusion import published
from neurips26.anadiffusion.claims import responds
from neurips26.anadiffusion.metrics import bootstrap_mean
from neurips26.common.claims import t_interval

__all__ = ["METHOD_LABELS", "TABLES", "cell", "comparable", "editing_table", "mark_seg_cldm", "memorization_table",
           "morphometry_table",
           "published_editing", "published_table1", "published_table2", "regional_long", "regional_wide",
           "report_tables"]  # fmt: skip

METHOD_LABELS = {
    "ldm": "LDM (monolithic, alpha = 0)",
    "paste": "naive paste (no refinement)",
    "ae_roundtrip": "paste through the autoencoder (no diffusion)",
    "ana": "AnaDiffusion (alpha = 1, r_inj = 10)",
    "ana_r7": "AnaDiffusion r_inj = 7",
    "ana_r15": "AnaDiffusion r_inj = 15",
    "ana_separate": "AnaDiffusion, separate hemisphere models (r_inj = 10)",
    "seg_cldm": "Seg. cLDM (conditioned on training subjects' part maps: not on equal footing with the unconditioned)",
    "real": "real vs real (disjoint training subsets)",
}
# the regions of our FD tables: the page's, with the template brain only (C1's second region) after the whole volume
REGIONS = ("whole", "brain", *published.FD_REGIONS[1:])
REGION_HEADERS = {**published.FD_HEADERS, "brain": "Brain"}


def cell(mean: float, low: float, high: float, digits: int = 4) -> str:
    """``mean [low, high]``; ``n/a`` without a mean, the mean alone without an interval."""
    if not np.isfinite(mean):
        return "n/a"
    if not (np.isfinite(low) and np.isfinite(high)):
        return f"{mean:.{digits}g}"
    return f"{mean:.{digits}g} [{low:.{digits}g}, {high:.{digits}g}]"


def _over_seeds(group: pd.DataFrame, column: str) -> dict:
    """Mean over seeds of ``column`` with its t interval, and the mean over seeds of the bootstrap ends (low, high)
    where the table has them."""
    spread = t_interval(group[column].tolist())
    row = {"seeds": spread.runs, "mean": spread.mean, "sd": group[column].std(ddof=1) if len(group) > 1 else math.nan,
           "low": spread.low, "high": spread.high}  # fmt: skip
    for end in ("low", "high"):
        row[f"bootstrap_{end}"] = float(group[end].mean()) if end in group.columns else math.nan
    return row


def _order(frame: pd.DataFrame, column: str, order) -> pd.DataFrame:
    rank = {name: i for i, name in enumerate(order)}
    return frame.sort_values(column, key=lambda s: s.map(lambda v: rank.get(v, len(rank))), kind="stable")


def regional_long(fd: pd.DataFrame) -> pd.DataFrame:
    """One row per (features, method, region): seeds, mean, sd, the t interval (low, high) over seeds of the raw FD
    and the mean over seeds of the subject-cluster bootstrap ends (bootstrap_low, bootstrap_high)."""
    rows = [{"features": f, "method": m, "region": r, **_over_seeds(g, "value")}
            for (f, m, r), g in fd.groupby(["features", "method", "region"], sort=False)]  # fmt: skip
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    out = _order(_order(out, "region", REGIONS), "method", METHOD_LABELS)
    return _order(out, "features", list(dict.fromkeys(fd["features"]))).reset_index(drop=True)


def regional_wide(long: pd.DataFrame, bootstrap: bool = False) -> pd.DataFrame:
    """Rows (features, method), every method of the table (the round trip and the real-vs-real reference
    included), a column per region (the page's names WB, LH, RH, CB, Seam, and Brain: the template brain only):
    ``mean [t interval]``, or with ``bootstrap`` ``mean [bootstrap interval]``."""
    ends = ("bootstrap_low", "bootstrap_high") if bootstrap else ("low", "high")
    table = long.assign(cell=[cell(r["mean"], r[ends[0]], r[ends[1]]) for _, r in long.iterrows()])
    wide = table.pivot_table(index=["features", "method"], columns="region", values="cell", aggfunc="first",
                             sort=False)  # fmt: skip
    wide = wide.reindex(columns=[r for r in REGIONS if r in wide.columns])
    return wide.rename(columns=REGION_HEADERS).reset_index().rename_axis(columns=None)


def morphometry_table(cohen_d: pd.DataFrame) -> pd.DataFrame:
    """Rows method, a column per structure: Cohen's |d| against the held-out reals, ``mean [t interval over seeds]``
    and the bootstrap interval (mean over seeds of its ends)."""
    rows = []
    for m, group in cohen_d.groupby("method", sort=False):
        row = {"method": m}
        for s in published.STRUCTURES:
            part = group[group["structure"] == s]
            stats = _over_seeds(part, "abs_d")
            row[s] = cell(stats["mean"], stats["low"], stats["high"], 3)
            row[f"{s} bootstrap"] = cell(stats["mean"], stats["bootstrap_low"], stats["bootstrap_high"], 3)
        rows.append(row)
    return _order(pd.DataFrame(rows), "method", METHOD_LABELS)


# the report's tables, by name (A/tables/<name>.parquet|md)
TABLES = ("regional_fd", "regional_fd_bootstrap", "regional_fd_long", "morphometry", "editing", "memorization",
          "published_table1", "published_table2", "published_editing")  # fmt: skip
EDIT_SHOWN = (*published.EDIT_COLUMNS, "off_target_drift", "baseline_transfer")


def editing_table(edits: pd.DataFrame, replicates: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Rows (method, part): each editing column's mean over seeds of the per-seed mean over edits, with its t interval
    over seeds, and beside it the subject-cluster bootstrap interval over the edits (clusters: the recipient sample;
    the mean over seeds of each end)."""
    rows = []
    for (m, part), group in edits.groupby(["method", "part"], sort=False):
        row = {"method": m, "part": part, "edits per seed": int(group.groupby("seed").size().max())}
        for column in (c for c in EDIT_SHOWN if c in group.columns):
            per_seed = group.groupby("seed")[column].mean()
            spread = t_interval(per_seed.tolist())
            boots = [bootstrap_mean(g[column].to_numpy(float), g["recipient"] if "recipient" in g else None,
                                    replicates, seed=seed) for _, g in group.groupby("seed")]  # fmt: skip
            row[column] = cell(spread.mean, spread.low, spread.high, 3)
            row[f"{column} bootstrap"] = cell(spread.mean, np.mean([b.low for b in boots]),
                                              np.mean([b.high for b in boots]), 3)  # fmt: skip
        rows.append(row)
    return _order(pd.DataFrame(rows), "method", METHOD_LABELS)


def memorization_table(memorization: pd.DataFrame) -> pd.DataFrame:
    """Rows method: the median nearest-training distances of samples and of held-out reals, and their ratio, each the
    mean over seeds (the ratio with its t interval)."""
    rows = []
    for m, group in memorization.groupby("method", sort=False):
        spread = t_interval(group["ratio"].tolist())
        rows.append({"method": m, "sample median": group["sample_median"].mean(),
                     "held-out median": group["held_out_median"].mean(),
                     "ratio": cell(spread.mean, spread.low, spread.high, 3)})  # fmt: skip
    return _order(pd.DataFrame(rows), "method", METHOD_LABELS)


def comparable(features: str, dataset: str) -> bool:
    """Whether our FD numbers are the paper's kind: MedicalNet features on ADNI."""
    return dataset == "adni" and str(features).startswith("medicalnet")


def _ours_label(scale: str, dataset: str, features: str, fd_comparable: bool) -> str:
    if fd_comparable:
        return f"ours ({scale}: {dataset}, {features} FID x 1e4)"
    return f"ours ({scale}: {dataset}, {features} raw FD): not comparable"


def published_table1(long: pd.DataFrame, cohen_d: pd.DataFrame, dataset: str, scale: str) -> pd.DataFrame:
    """The page's Table 1 (every method it lists) and below it our methods, FD per region and |d| per structure, each
    ours the mean over seeds; our FD x 1e4 where comparable (MedicalNet on ADNI), raw otherwise."""
    paper = published.table1_frame().assign(source="paper (ADNI, MedicalNet FID x 1e4; SynthSeg |d|)")
    frames = [paper]
    for features, part in long.groupby("features", sort=False):
        factor = 1e4 if comparable(features, dataset) else 1.0
        wide = part.pivot_table(index="method", columns="region", values="mean", sort=False) * factor
        wide = wide.rename(columns=published.FD_HEADERS)
        d = cohen_d.groupby(["method", "structure"])["abs_d"].mean().unstack()
        ours = wide.join(d, how="left").reset_index()
        frames.append(ours.assign(source=_ours_label(scale, dataset, features, factor != 1.0)))
    table = pd.concat(frames, ignore_index=True)
    columns = ["source", "method", *published.FD_HEADERS.values(), *published.STRUCTURES]
    return table.reindex(columns=columns)


def published_table2(long: pd.DataFrame, dataset: str, scale: str) -> pd.DataFrame:
    """The page's Table 2 beside ours: per configuration the paper's whole-brain and seam FID x 1e4 and our method
    of that setting (mean [t interval over seeds] per feature network); ``not built`` where we have none, ``not run
    at <scale>`` where the scale does not run it (the separate hemisphere models: paper scale only)."""
    rows, ran = [], set(long["method"]) if "method" in long.columns else set()
    for _, paper in published.table2_frame().iterrows():
        ours = paper["ours"] if isinstance(paper["ours"], str) else None
        label = "not built" if ours is None else ours if ours in ran else f"{ours} (not run at {scale})"
        row = {"configuration": paper["configuration"], "paper WB": paper["WB"], "paper Seam": paper["Seam"],
               "ours": label}  # fmt: skip
        for features, part in long.groupby("features", sort=False):
            factor = 1e4 if comparable(features, dataset) else 1.0
            for region in ("whole", "seam"):
                hit = part[(part["method"] == paper["ours"]) & (part["region"] == region)]
                value = cell(*(hit[["mean", "low", "high"]].iloc[0] * factor)) if len(hit) else "n/a"
                unit = "x 1e4" if factor != 1.0 else "raw"
                row[f"ours {published.FD_HEADERS[region]} ({features}, {unit})"] = value
        rows.append(row)
    table = pd.DataFrame(rows)
    table["ours on"] = f"{scale}: {dataset}" + ("" if dataset == "adni" else " (not comparable)")
    return table


def published_editing(edits: pd.DataFrame, dataset: str, scale: str) -> pd.DataFrame:
    """The page's Fig. 4a (Ours and Seg. cLDM per part) and our editing methods per part (means over seeds of the
    per-seed means over edits)."""
    paper = published.editing_frame().assign(source="paper (ADNI, 100 edits)")
    columns = [c for c in published.EDIT_COLUMNS if c in edits.columns]
    ours = edits.groupby(["method", "seed", "part"])[columns].mean().groupby(["part", "method"]).mean().reset_index()
    label = f"ours ({scale}: {dataset})" + ("" if dataset == "adni" else ": not comparable")
    table = pd.concat([paper, ours.assign(source=label)], ignore_index=True)
    table = _order(table, "part", published.PARTS)
    return table.reindex(columns=["part", "source", "method", *published.EDIT_COLUMNS])


SEG_CLDM = "seg_cldm"
UNTRAINED = "seg_cldm (untrained: ignores its conditioning, C13)"
UNCHECKED = "seg_cldm (conditioning not checked)"


def mark_seg_cldm(tables: Sequence[pd.DataFrame], conditioning: pd.DataFrame | None) -> list[pd.DataFrame]:
    """The tables with the Seg. cLDM's method name marked where its conditioning check (claims.responds, C13) does
    not show that it follows its label maps: ``untrained`` where the check says it does not, ``not checked`` where
    the check is missing; unchanged where it responds or the baseline is not in the tables."""
    verdict = responds(pd.DataFrame() if conditioning is None else conditioning)
    if verdict:
        return list(tables)
    label = UNTRAINED if verdict is False else UNCHECKED
    return [t.assign(method=t["method"].replace({SEG_CLDM: label})) if "method" in t.columns else t for t in tables]


def report_tables(fd: pd.DataFrame, cohen_d: pd.DataFrame, edits: pd.DataFrame, memorization: pd.DataFrame,
                  dataset: str, scale: str, replicates: int = 1000,
                  conditioning: pd.DataFrame | None = None) -> dict[str, pd.DataFrame]:  # fmt: skip
    """Every table of the report, by name (the tables job writes each as A/tables/<name>.parquet and .md); the Seg.
    cLDM's rows marked where its conditioning check does not pass (:func:`mark_seg_cldm`)."""
    fd, cohen_d, edits, memorization = mark_seg_cldm([fd, cohen_d, edits, memorization], conditioning)
    long = regional_long(fd)
    return {
        "regional_fd": regional_wide(long),
        "regional_fd_bootstrap": regional_wide(long, bootstrap=True),
        "regional_fd_long": long,
        "morphometry": morphometry_table(cohen_d),
        "editing": editing_table(edits, replicates),
        "memorization": memorization_table(memorization),
        "published_table1": published_table1(long, cohen_d, dataset, scale),
        "published_table2": published_table2(long, dataset, scale),
        "published_editing": published_editing(edits, dataset, scale),
    }
