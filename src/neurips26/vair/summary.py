r"""The tables of paper 08's report (Sun, Yeo, Solar-Lezama and Zhi-Xuan 2026, arXiv 2606.01462), built from the
grading results (:data:`.grading.RESULT_COLUMNS`), the probe and patching tables and the dataset counts.

The small model's results carry a row per (member, task, item) with the member's ``regime``, ``heldout_flaw`` and
``seed``. :func:`small_views` reads them by the held-out protocol of the paper's explanation (training that rewards
answers):

* ``small_outcome``: every row of the outcome members (no VAIR item in their training);
* ``small_process``: the process members, each VAIR item graded by the member that never saw its flaw type (the
  held-out evaluation), the controls (VAVR, IAIR) and solving by every process member of the seed;
* ``small_process_seen``: the process members' VAIR grades on the flaw types they trained on, reported apart.

Problem ids are qualified by member, so that a problem solved by several members counts once per member in the
solving accuracy of the flaw cells it sits behind. Per seed the tables are :func:`.grading.accuracy_table` and
:func:`.grading.gap_table` (Wilson and Newcombe intervals over items); the rows ``seed == -1`` with ``over ==
"seeds"`` give the mean over seeds with a 95% t interval. Backends without seeds (the model-free references and the
external models) have ``seed == -1`` and ``over == "items"``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from neurips26.common.claims import t_interval
from neurips26.vair.items import FLAWS

__all__ = [
    "MEMBER_COLUMNS",
    "NO_SEED",
    "PAPER_GAP_RANGE",
    "SMALL",
    "accuracy_rows",
    "accuracy_wide",
    "best_probe_layers",
    "counts_table",
    "flaw_order",
    "gap_rows",
    "gap_beside_paper",
    "gap_wide",
    "grading_tables",
    "paper_beside_ours",
    "patching_beside_paper",
    "patching_summary",
    "probe_best_table",
    "probe_summary",
    "report_tables",
    "seed_means",
    "shortcut_beside_grading",
    "shortcut_separated",
    "small_views",
    "unparseable_rows",
    "vair_by_flaw",
    "with_seed_means",
]

# Names and numbers repeated from the library (tests/test_vair_summary.py checks that they agree): the report's jobs
# run in the report environment, without the grading harness's checker (sympy), torch or scikit-learn, so this
# module imports none of grading, patching or probes; the tables job passes grading's table functions in.
ALL_FLAWS = "all"  # grading.ALL_FLAWS: the rows pooling every flaw of a category
SOLVE_CATEGORY = "problem"  # grading.SOLVE_CATEGORY: the category of solve rows
ALL_LAYERS = -1  # patching.ALL_LAYERS: the rows patching every residual state at once
PAPER_FLIP_RATES = {  # patching.PAPER_FLIP_RATES (arXiv 2606.01462): all layers / the peak-probe layer
    "Qwen3-0.6B": {"all_layers": 0.805, "peak_probe_layer": 0.472},
    "Qwen3-4B": {"all_layers": 0.522, "peak_probe_layer": 0.276},
    "gpt-oss-20b": {"all_layers": 0.556, "peak_probe_layer": 0.142},
}
PAPER_PROBE = {"controls_accuracy": 0.89, "fooled_flagged_below": 0.5, "model": "gpt-oss-20b", "layer": 18}  # probes'
MEMBER_COLUMNS = ("member", "regime", "heldout_flaw", "seed")
NO_SEED = -1  # the seed of rows that pool no seed (a reference backend) or summarise several (mean over seeds)
SMALL = {"outcome": "small_outcome", "process": "small_process", "seen": "small_process_seen"}
SEED_INTERVAL = "95% t interval over seeds"
PROVENANCE = ["git_commit", "config_hash"]  # the provenance columns of every written table


def _check_columns(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} needs the columns {missing}; it has {list(frame.columns)}")


def small_views(small: pd.DataFrame) -> pd.DataFrame:
    """The small model's results as the three backends of the module docstring (``backend`` relabelled, problem ids
    qualified by member); ValueError when a flaw type of the VAIR items has no process member holding it out in some
    seed (its held-out evaluation would be missing, not empty)."""
    _check_columns(small, MEMBER_COLUMNS, "the small model's results")
    frame = small.assign(problem_id=small["member"].astype(str) + "|" + small["problem_id"].astype(str))
    vair = (frame["task"] == "grade") & (frame["category"] == "VAIR")
    outcome = frame["regime"] == "outcome"
    process = frame["regime"] == "process"
    heldout = frame["flaw"] == frame["heldout_flaw"]
    flaws = set(frame.loc[vair, "flaw"])
    for seed, members in frame[process].groupby("seed"):
        missing = sorted(flaws - set(members["heldout_flaw"]))
        if missing:
            raise ValueError(f"seed {seed}: no process member holds out the flaw types {missing}")
    views = [
        frame[outcome].assign(backend=SMALL["outcome"]),
        frame[process & (~vair | heldout)].assign(backend=SMALL["process"]),
        frame[process & ((frame["task"] == "solve") | (vair & ~heldout))].assign(backend=SMALL["seen"]),
    ]
    return pd.concat(views, ignore_index=True)


LEADING = ["dataset", "backend", "seed", "over"]  # the first columns of every per-seed table


def _per_seed(results: pd.DataFrame, table, dataset: str) -> pd.DataFrame:
    """``table`` (a grading table function) per seed where the results have seeds, once otherwise; the columns
    :data:`LEADING` first, then the table's."""
    if "seed" in results.columns and len(results):
        parts = [table(part).assign(seed=int(seed)) for seed, part in results.groupby("seed", sort=True)]
        out = pd.concat(parts, ignore_index=True)
    else:
        out = table(results).assign(seed=NO_SEED)
    out = out.assign(dataset=dataset, over="items")
    return out[[*LEADING, *[c for c in out.columns if c not in LEADING]]]


ACC_KEYS = ["dataset", "backend", "task", "category", "flaw"]
GAP_KEYS = ["dataset", "backend", "flaw"]


def accuracy_rows(results: pd.DataFrame, dataset: str, accuracy_table) -> pd.DataFrame:
    """Accuracy per (backend, seed, task, category, flaw) with its Wilson interval over items
    (``accuracy_table``: :func:`.grading.accuracy_table`)."""
    return _per_seed(results, accuracy_table, dataset).assign(interval="95% Wilson interval over items")


def gap_rows(results: pd.DataFrame, dataset: str, gap_table) -> pd.DataFrame:
    """The production-evaluation gap per (backend, seed, flaw) with its Newcombe interval over items
    (``gap_table``: :func:`.grading.gap_table`)."""
    return _per_seed(results, gap_table, dataset)


def seed_means(table: pd.DataFrame, value: str, keys: Sequence[str], carry: Sequence[str] = ()) -> pd.DataFrame:
    """Per ``keys``, the mean over the seeded rows (``seed >= 0``) of ``value`` with its 95% t interval (``low``,
    ``high``; NaN with fewer than two seeds), ``runs`` the number of seeds, and the means of the ``carry`` columns;
    ``seed`` is :data:`NO_SEED` and ``over`` "seeds"."""
    seeded = table[table["seed"] >= 0]
    rows = []
    for key, part in seeded.groupby(list(keys), sort=False):
        spread = t_interval(part[value].astype(float).tolist())
        row = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
        row.update({c: float(part[c].astype(float).mean()) for c in carry})
        row.update(
            {value: spread.mean, "low": spread.low, "high": spread.high, "runs": spread.runs, "interval": SEED_INTERVAL}
        )
        rows.append(row)
    out = pd.DataFrame(rows, columns=[*keys, *carry, value, "low", "high", "runs", "interval"])
    return out.assign(seed=NO_SEED, over="seeds")


def with_seed_means(table: pd.DataFrame, value: str, keys: Sequence[str], carry: Sequence[str] = ()) -> pd.DataFrame:
    """``table`` followed by its :func:`seed_means` rows (other columns NaN there)."""
    means = seed_means(table, value, keys, carry)
    if means.empty:
        return table
    return pd.concat([table, means[[c for c in means.columns if c != "runs"]]], ignore_index=True)[table.columns]


def unparseable_rows(results: pd.DataFrame, dataset: str, unparseable_table) -> pd.DataFrame:
    """Unparseable replies per (backend, seed, task) (``unparseable_table``: :func:`.grading.unparseable_table`),
    with the small model's rate of invalid unconstrained verdicts (``invalid_verdict_rate``; NaN for others)."""
    table = _per_seed(results, unparseable_table, dataset).drop(columns="over")
    table["invalid_verdict_rate"] = math.nan
    if "invalid_verdict" in results.columns and len(table):
        graded = results[results["task"] == "grade"]
        groups = ["backend", "seed"] if "seed" in graded.columns else ["backend"]
        rates = graded.groupby(groups)["invalid_verdict"].mean()
        for i, row in table[table["task"] == "grade"].iterrows():
            key = (row["backend"], row["seed"]) if len(groups) == 2 else row["backend"]
            table.loc[i, "invalid_verdict_rate"] = float(rates.get(key, math.nan))
    return table


SELECT_PROBE = "cv_accuracy"  # the probe table's column that picks the layer (probes.py: within training controls)


def best_probe_layers(probes: pd.DataFrame) -> pd.DataFrame:
    """Per member, the probe layer chosen by cross-validation within the probe's TRAINING controls: the highest
    ``cv_accuracy`` (:func:`.probes.cv_accuracy`), ties broken by the earlier layer, never by the held-out controls
    it reports (``accuracy_controls`` is reported at that layer); with ``tied_layers`` (the layers sharing the top
    cross-validated accuracy) and the range of ``fooled_flagged`` over them."""
    needed = [*MEMBER_COLUMNS, "layer", SELECT_PROBE, "accuracy_controls", "fooled_flagged"]
    _check_columns(probes, needed, "the probe table")
    rows = []
    for _, part in probes.groupby("member", sort=True):
        scored = part[[SELECT_PROBE, "accuracy_controls"]].astype(float)
        part = part[np.isfinite(scored).all(axis=1)]
        if part.empty:
            continue
        top = part[part[SELECT_PROBE] == part[SELECT_PROBE].max()]
        ranked = top.sort_values("layer")
        best = ranked.iloc[0]
        rows.append(
            {
                **{c: best[c] for c in MEMBER_COLUMNS},
                **{c: best[c] for c in part.columns if c not in MEMBER_COLUMNS},
                "tied_layers": len(top),
                "fooled_flagged_min_tied": float(top["fooled_flagged"].min()),
                "fooled_flagged_max_tied": float(top["fooled_flagged"].max()),
            }
        )
    extra = ["tied_layers", "fooled_flagged_min_tied", "fooled_flagged_max_tied"]
    columns = [*MEMBER_COLUMNS, *(c for c in probes.columns if c not in MEMBER_COLUMNS), *extra]
    return pd.DataFrame(rows, columns=columns)


PROBE_VALUES = ("auroc_controls", "accuracy_controls", "fooled_flagged", "iair_flagged")


def probe_summary(probes: pd.DataFrame) -> pd.DataFrame:
    """Per (regime, layer): the mean over members (seeds, and held-out flaws for process members) of each probe
    value with its 95% t interval over members, and the number of fooled items summed."""
    rows = []
    values = [v for v in PROBE_VALUES if v in probes.columns]
    for (regime, layer), part in probes.groupby(["regime", "layer"], sort=True):
        row = {"regime": regime, "layer": int(layer), "members": part["member"].nunique()}
        row["n_fooled"] = int(part["n_fooled"].sum()) if "n_fooled" in part else 0
        for v in values:
            spread = t_interval(part[v].astype(float).tolist())
            row.update({v: spread.mean, f"{v}_low": spread.low, f"{v}_high": spread.high})
        rows.append(row)
    return pd.DataFrame(rows)


def patching_summary(patching: pd.DataFrame) -> pd.DataFrame:
    """Per (regime, layer, condition): the mean flip rate over members with its 95% t interval over members (members
    with no fooled item left out), the fooled items and flips summed."""
    rows = []
    for (regime, layer, condition), part in patching.groupby(["regime", "layer", "condition"], sort=True):
        spread = t_interval(part["flip_rate"].astype(float).tolist())
        rows.append(
            {
                "regime": regime,
                "layer": int(layer),
                "condition": condition,
                "members": spread.runs,
                "n_items": int(part["n_items"].sum()),
                "flips": int(part["flips"].sum()),
                "flip_rate": spread.mean,
                "low": spread.low,
                "high": spread.high,
            }
        )
    return pd.DataFrame(rows)


def flaw_order(flaws: Sequence[str]) -> list[str]:
    """The flaw types in the paper's order, then the others, then the pooled row."""
    known = [f for f in (*FLAWS, "none", "arithmetic_slip") if f in set(flaws)]
    rest = sorted(set(flaws) - set(known) - {ALL_FLAWS})
    return known + rest + ([ALL_FLAWS] if ALL_FLAWS in set(flaws) else [])


def counts_table(counts: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The datasets' item counts per category and flaw (:func:`.dataset.counts`) in one table, with the dataset."""
    parts = [frame.drop(columns=PROVENANCE, errors="ignore").assign(dataset=name) for name, frame in counts.items()]
    table = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    return table[["dataset", *[c for c in table.columns if c != "dataset"]]] if len(table) else table


BACKEND_KINDS = ("reference", "small", "external")


def grading_tables(
    reference: Mapping[str, pd.DataFrame],
    small: pd.DataFrame | None,
    external: Mapping[tuple[str, str], pd.DataFrame],
    functions: Mapping[str, Callable[[pd.DataFrame], pd.DataFrame]],
) -> dict[str, pd.DataFrame]:
    """The accuracy, gap and unparseable tables of every grading result, with ``backend_kind`` (reference, small,
    external): ``reference`` maps a dataset to the model-free backends' results, ``small`` is the small model's
    results on the synthetic eval items (per member; :func:`small_views`, with the mean over seeds), ``external``
    maps (dataset, backend) to an external model's results. ``functions`` are the harness's table functions by name
    ("accuracy", "gap", "unparseable": :func:`.grading.accuracy_table`, :func:`.grading.gap_table`,
    :func:`.grading.unparseable_table`)."""
    parts: dict[str, list[pd.DataFrame]] = {"accuracy": [], "gap": [], "unparseable": []}

    def add(results: pd.DataFrame, dataset: str, kind: str, views: pd.DataFrame | None = None) -> None:
        graded = results if views is None else views
        parts["accuracy"].append(accuracy_rows(graded, dataset, functions["accuracy"]).assign(backend_kind=kind))
        parts["gap"].append(gap_rows(graded, dataset, functions["gap"]).assign(backend_kind=kind))
        unparseable = unparseable_rows(results, dataset, functions["unparseable"])
        parts["unparseable"].append(unparseable.assign(backend_kind=kind))

    for dataset, results in reference.items():
        add(results, dataset, "reference")
    if small is not None and len(small):
        add(small, "synthetic", "small", small_views(small))
    for (dataset, _), results in (external or {}).items():
        add(results, dataset, "external")
    tables = {name: pd.concat(frames, ignore_index=True) for name, frames in parts.items()}
    tables["accuracy"] = with_seed_means(tables["accuracy"], "accuracy", [*ACC_KEYS, "backend_kind"], ["n", "correct"])
    tables["gap"] = with_seed_means(
        tables["gap"], "gap", [*GAP_KEYS, "backend_kind"], ["n_problems", "solve_accuracy", "n_items", "grade_accuracy"]
    )
    return tables


# the gap the paper's frontier numbers imply, pooled over flaw types: every model solves at least 94.7%; VAIR grading
# from 47.9% to 78.6%, so the gaps lie from at least 0.161 to at least 0.468
PAPER_GAP_RANGE = (0.947 - 0.786, 0.947 - 0.479)
# which of our backends stands beside which of the paper's graders, and why
COUNTERPARTS = {
    "frontier models": (SMALL["outcome"], "the small model trained on answers (outcome): not a frontier model"),
    "PRM Qwen2.5-Math-PRM-7B": (
        SMALL["process"],
        "the small model trained on step labels, flaw types held out: not a process reward model",
    ),
    "humans": (None, "not reproducible offline: the paper's study of 195 participants"),
}


def _paper_cell(row) -> str:
    if row.bound == "at least":
        return f">= {row.low:.3f}"
    if row.bound == "range":
        return f"{row.low:.3f} to {row.high:.3f}"
    return f"{row.low:.3f}"


def _accuracy_cell(accuracy: pd.DataFrame, backend: str, dataset: str, task: str, category: str) -> dict | None:
    """The mean over seeds (small model) or the pooled row (other backends) of one cell, every flaw pooled."""
    rows = accuracy[
        (accuracy["backend"] == backend)
        & (accuracy["dataset"] == dataset)
        & (accuracy["task"] == task)
        & (accuracy["category"] == category)
    ]
    if rows.empty:
        return None
    over = "seeds" if (rows["over"] == "seeds").any() else "items"
    rows = rows[rows["over"] == over]
    flaws = set(rows["flaw"])
    rows = rows[rows["flaw"] == (ALL_FLAWS if ALL_FLAWS in flaws else next(iter(flaws)))]
    if len(rows) != 1:
        return None
    r = rows.iloc[0]
    return {"ours": r["accuracy"], "low": r["low"], "high": r["high"], "over": over}


def paper_beside_ours(accuracy: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """The paper's accuracies (:func:`.grading.paper_numbers`) beside ours: frontier models beside the outcome member
    and every external backend, the PRM beside the process members (held-out flaw types), people beside nothing
    (not reproducible offline). ``ours`` is the mean over seeds with its t interval (small model) or the accuracy
    with its Wilson interval."""
    externals = accuracy.loc[accuracy.get("backend_kind", pd.Series(dtype=str)) == "external", ["backend", "dataset"]]
    externals = externals.drop_duplicates().itertuples(index=False)
    externals = list(externals)
    rows = []
    for r in paper.itertuples(index=False):
        base = {"who": r.who, "task": r.task, "category": r.category, "paper": _paper_cell(r)}
        backend, why = COUNTERPARTS.get(r.who, (None, "no counterpart"))
        candidates = [(backend, "synthetic", why)] if backend else []
        if r.who == "frontier models":
            candidates += [(b, d, "an external open-weight model") for b, d in externals]
        found = False
        for name, dataset, note in candidates:
            cell = _accuracy_cell(accuracy, name, dataset, r.task, r.category)
            if cell is not None:
                rows.append({**base, "ours_backend": name, "ours_dataset": dataset, **cell, "note": note})
                found = True
        if not found:
            rows.append(
                {
                    **base,
                    "ours_backend": "",
                    "ours_dataset": "",
                    "ours": math.nan,
                    "low": math.nan,
                    "high": math.nan,
                    "over": "",
                    "note": why,
                }
            )
    return pd.DataFrame(rows)


def _interval_cell(mean: float, low: float, high: float) -> str:
    if not np.isfinite(mean):
        return "n/a"
    if not (np.isfinite(low) and np.isfinite(high)):
        return f"{mean:.3f}"
    return f"{mean:.3f} [{low:.3f}, {high:.3f}]"


def accuracy_wide(accuracy: pd.DataFrame) -> pd.DataFrame:
    """One row per (dataset, backend): solving accuracy and grading accuracy per category (VAIR pooled), each with
    its interval; the small model's rows are means over seeds (t interval), the others over items (Wilson)."""
    shown = accuracy[(accuracy["over"] == "seeds") | ~accuracy["backend"].isin(list(SMALL.values()))]
    columns = {
        ("solve", SOLVE_CATEGORY): "solve",
        ("grade", "VAVR"): "VAVR",
        ("grade", "IAIR"): "IAIR",
        ("grade", "VAIR"): "VAIR",
    }
    rows = []
    for (dataset, backend), part in shown.groupby(["dataset", "backend"], sort=False):
        row = {"dataset": dataset, "backend": backend, "over": part["over"].iloc[0]}
        for (task, category), name in columns.items():
            cell = part[(part["task"] == task) & (part["category"] == category)]
            if cell["flaw"].nunique() > 1:
                cell = cell[cell["flaw"] == ALL_FLAWS]
            row[name] = _interval_cell(*cell[["accuracy", "low", "high"]].iloc[0]) if len(cell) == 1 else "n/a"
        rows.append(row)
    return pd.DataFrame(rows)


def _per_flaw_wide(table: pd.DataFrame, value: str) -> pd.DataFrame:
    """One row per (dataset, backend): ``value`` per flaw type and pooled with its interval (the small model's means
    over seeds, the other backends' rows over items)."""
    shown = table[(table["over"] == "seeds") | ~table["backend"].isin(list(SMALL.values()))]
    rows = []
    for (dataset, backend), part in shown.groupby(["dataset", "backend"], sort=False):
        row = {"dataset": dataset, "backend": backend, "over": part["over"].iloc[0]}
        for flaw in flaw_order(part["flaw"]):
            cell = part[part["flaw"] == flaw].iloc[0]
            row[flaw] = _interval_cell(cell[value], cell["low"], cell["high"])
        rows.append(row)
    return pd.DataFrame(rows)


def gap_wide(gap: pd.DataFrame) -> pd.DataFrame:
    """One row per (dataset, backend): the production-evaluation gap per flaw type and pooled, with its interval
    (small model: mean over seeds, t interval; others: Newcombe over items)."""
    return _per_flaw_wide(gap, "gap")


def vair_by_flaw(accuracy: pd.DataFrame) -> pd.DataFrame:
    """One row per (dataset, backend): VAIR grading accuracy per flaw type (the paper: shuffled and missing reasoning
    hardest, circular mostly caught)."""
    return _per_flaw_wide(accuracy[(accuracy["task"] == "grade") & (accuracy["category"] == "VAIR")], "accuracy")


# the paper on each flaw type's difficulty for frontier models (arXiv 2606.01462): qualitative only, no per-flaw
# number; pooled, VAIR grading 0.479-0.786 beside solving >= 0.947
PAPER_FLAW_GAP = {
    "missing_premise": "no per-flaw value",
    "missing_step": "among the hardest (missing reasoning)",
    "shuffled": "among the hardest",
    "circular": "smallest (mostly caught)",
    ALL_FLAWS: "VAIR 0.479-0.786, solving >= 0.947: gap >= {:.3f} to >= {:.3f}".format(*PAPER_GAP_RANGE),
}
PAPER_COLUMN = "paper (frontier models)"


def gap_beside_paper(gap: pd.DataFrame) -> pd.DataFrame:
    """One row per flaw type (and the pooled row): the paper's per-flaw statement (:data:`PAPER_FLAW_GAP`: a
    qualitative ranking per flaw, the pooled range on the pooled row, never an invented number), then one column per
    ``dataset: backend`` with its gap cell of :func:`gap_wide`."""
    wide = gap_wide(gap)
    if wide.empty:
        return pd.DataFrame(columns=["flaw", PAPER_COLUMN])
    labels = (wide["dataset"] + ": " + wide["backend"]).tolist()
    body = wide.drop(columns=["dataset", "backend", "over"]).T
    body.columns = labels
    body = body.loc[flaw_order(body.index)]
    body.insert(0, PAPER_COLUMN, [PAPER_FLAW_GAP.get(flaw, "not reported") for flaw in body.index])
    return body.rename_axis("flaw").reset_index().fillna("n/a")


NEAR_PERFECT = 0.95  # a surface baseline's balanced accuracy at or above which a flaw type is separated by its form


def shortcut_beside_grading(shortcuts: pd.DataFrame, accuracy: pd.DataFrame) -> pd.DataFrame:
    """One row per VAIR flaw type: the surface baseline's balanced accuracy per view (``surface_<view>``: the text
    the small model reads, the natural text) beside the small model's VAIR grading accuracy on the synthetic eval
    split (mean over seeds with its t interval, per small-model backend)."""
    _check_columns(shortcuts, ("view", "flaw", "balanced_accuracy"), "the shortcut table")
    surface = shortcuts.pivot_table(index="flaw", columns="view", values="balanced_accuracy", dropna=False)
    table = pd.DataFrame(index=pd.Index([f for f in flaw_order(surface.index)], name="flaw"))
    for view in surface.columns:
        table[f"surface_{view}"] = [_interval_cell(v, math.nan, math.nan) for v in surface.loc[table.index, view]]
    small = accuracy[
        (accuracy["over"] == "seeds")
        & (accuracy["task"] == "grade")
        & (accuracy["category"] == "VAIR")
        & (accuracy["dataset"] == "synthetic")
    ]
    for backend, part in small.groupby("backend", sort=False):
        cells = part.set_index("flaw")
        table[backend] = [
            _interval_cell(*cells.loc[f, ["accuracy", "low", "high"]]) if f in cells.index else "n/a"
            for f in table.index
        ]
    return table.reset_index()


def shortcut_separated(shortcuts: pd.DataFrame, threshold: float = NEAR_PERFECT) -> list[str]:
    """The "flaw (view)" pairs the surface baseline separates near-perfectly (balanced accuracy >= ``threshold``),
    in the paper's flaw order."""
    hits = shortcuts[shortcuts["balanced_accuracy"] >= threshold]
    order = {f: i for i, f in enumerate(flaw_order(shortcuts["flaw"]))}
    hits = hits.assign(rank=hits["flaw"].map(order)).sort_values(["rank", "view"])
    return [f"{flaw} ({view})" for flaw, view in zip(hits["flaw"], hits["view"])]


def probe_best_table(probes: pd.DataFrame) -> pd.DataFrame:
    """Per member, its probe at the best control layer (:func:`best_probe_layers`), with the members whose probe
    was not fitted (one class of correctly graded items) and why."""
    best = best_probe_layers(probes)
    keep = [
        c
        for c in (
            *MEMBER_COLUMNS,
            "layer",
            "cv_accuracy",
            "accuracy_controls",
            "auroc_controls",
            "n_fooled",
            "fooled_flagged",
            "iair_flagged",
            "tied_layers",
        )
        if c in best.columns
    ]
    table = best[keep] if len(best) else pd.DataFrame(columns=keep)
    if "note" in probes.columns:
        refused = probes[probes["note"].fillna("") != ""].drop_duplicates("member")
        extra = refused[list(MEMBER_COLUMNS)].assign(note=refused["note"])
        table = pd.concat([table.assign(note=""), extra], ignore_index=True)
    return table


def patching_beside_paper(patching: pd.DataFrame, probes: pd.DataFrame, paper: Mapping[str, Mapping[str, float]]):
    """The paper's flip rates (all layers; the layer where its probe peaks) beside ours per regime: the answer and
    control flip rates at every layer at once, and at each member's best control-probe layer (mean over members,
    t interval); a best layer with no patching row (the last residual state, never read by the verdict) is NaN."""
    rows = [
        {
            "who": f"paper: {model}",
            "condition": "answer",
            "all_layers": f"{rates['all_layers']:.3f}",
            "peak_probe_layer": f"{rates['peak_probe_layer']:.3f}",
        }
        for model, rates in paper.items()
    ]
    best = best_probe_layers(probes).set_index("member")["layer"]
    for (regime, condition), part in patching.groupby(["regime", "condition"], sort=True):
        every = part[part["layer"] == ALL_LAYERS]["flip_rate"].astype(float)
        at_best = [
            float(rows_m.loc[rows_m["layer"] == best[m], "flip_rate"].iloc[0])
            if m in best.index and (rows_m["layer"] == best[m]).any()
            else math.nan
            for m, rows_m in part.groupby("member")
        ]
        all_spread, best_spread = t_interval(every.tolist()), t_interval(at_best)
        rows.append(
            {
                "who": f"ours: small_{regime}",
                "condition": condition,
                "all_layers": _interval_cell(all_spread.mean, all_spread.low, all_spread.high),
                "peak_probe_layer": _interval_cell(best_spread.mean, best_spread.low, best_spread.high),
                "members": int(part["member"].nunique()),
                "fooled_items": int(part.drop_duplicates("member")["n_items"].sum()),
            }
        )
    return pd.DataFrame(rows)


def _interval_cells(table: pd.DataFrame, values: Sequence[str]) -> pd.DataFrame:
    """``table`` with each of ``values`` and its interval (``<value>_low``/``_high``, or ``low``/``high``) as one
    text cell "mean [low, high]"."""
    out = table.copy()
    for value in values:
        low, high = (f"{value}_low", f"{value}_high") if f"{value}_low" in out.columns else ("low", "high")
        out[value] = [_interval_cell(m, lo, hi) for m, lo, hi in zip(out[value], out[low], out[high])]
        out = out.drop(columns=[low, high])
    return out


def _read_all(paths: Sequence[str]) -> pd.DataFrame:
    frames = [pd.read_parquet(p) for p in paths]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def report_tables(inp, params) -> dict:
    """Everything the report template renders besides the claims (workflow/report/vair/report.md.j2)."""
    accuracy, gap = pd.read_parquet(inp.accuracy), pd.read_parquet(inp.gap)
    counts = pd.read_parquet(inp.counts).drop(columns=PROVENANCE, errors="ignore")
    # the paper's counts per category (the same on every dataset's rows: dataset.PAPER_COUNTS)
    paper_totals = counts.drop_duplicates(["category", "flaw"]).groupby("category")["paper"].sum().to_dict()
    probes, patching = pd.read_parquet(inp.probes), pd.read_parquet(inp.patching)
    trace = pd.read_parquet(inp.trace)
    final = trace.sort_values("step").groupby(["member", "regime", "heldout_flaw", "seed"], as_index=False).last()
    training = final[["member", "regime", "heldout_flaw", "seed", "step", "loss", "solve_loss", "grade_loss"]]
    unparseable = pd.read_parquet(inp.unparseable)
    skipped = _read_all(list(inp.skipped))
    shortcuts = pd.read_parquet(inp.shortcuts)
    probe_layers = probe_summary(probes)
    return {
        "counts_table": counts,
        "paper_counts_total": paper_totals,
        "skipped_table": skipped,
        "accuracy_table": accuracy_wide(accuracy),
        "gap_table": gap_beside_paper(gap),
        "flaw_table": vair_by_flaw(accuracy),
        "paper_gap_range": PAPER_GAP_RANGE,
        "paper_table": pd.read_parquet(inp.paper).drop(columns=PROVENANCE, errors="ignore"),
        "unparseable_table": unparseable.drop(columns=PROVENANCE, errors="ignore"),
        "probe_best_table": probe_best_table(probes),
        "probe_layer_table": _interval_cells(probe_layers, [v for v in PROBE_VALUES if v in probe_layers.columns]),
        "paper_probe": PAPER_PROBE,
        "patching_table": patching_beside_paper(patching, probes, PAPER_FLIP_RATES),
        "patching_layer_table": _interval_cells(patching_summary(patching), ["flip_rate"]),
        "training_table": training,
        "shortcut_table": shortcut_beside_grading(shortcuts, accuracy),
        "shortcut_separated": shortcut_separated(shortcuts),
        "near_perfect": NEAR_PERFECT,
    }
