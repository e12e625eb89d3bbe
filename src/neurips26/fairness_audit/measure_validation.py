r"""The analysis tables of paper 06 (the abstract's empirical study: how well the measures
"predict the true bias of an extensively tuned neural network", and "a simple feature selection experiment";
claims C1, C3, C5, C6): the data-side measures read against the true bias of the
tuned predictor.

Inputs are the pipeline's long tables:

* ``coalitions``: :func:`~.coalitions.coalition_values` frames concatenated, with extra columns ``dataset`` and
  ``estimator``. Its ``players`` column joins the player names with '+' *in player order* ('' for the empty
  coalition).
* ``true_bias``: :func:`~.true_bias.true_bias_table` frames concatenated. Its ``coalition`` column is
  :func:`~.true_bias.coalition_key`, the *sorted* names ("x10+x2" where the coalitions table says "x2+x10").

The two spellings differ, so every join here goes through the frozenset of player names
(:func:`coalition_lookup`), never through the string. One row of the true-bias table is one (dataset, S) pair;
several seeds of one dataset would be several pairs (the pipeline names datasets per seed).

* :func:`validation_table`: Spearman and Kendall (tau-b) correlation of ``mu(S)`` with the true SP and EO gaps over
  the (dataset, S) pairs with non-empty S (:func:`measure_pairs`), per (estimator, measure), with a percentile
  bootstrap CI of Spearman (:func:`spearman_bootstrap`: pairs resampled, all resamples ranked at once).
* :func:`pairs_table`: those pairs in long form (claims C4 and C5 resample them by data set).
* :func:`dpi_table`: claim C1, the data-processing bound ``I(Yhat; A) <= B_SP(S)`` and ``I(Yhat; A | Y) <=
  B_EO(S)`` with the slack of two test-split bootstrap SEs.
* :func:`selection_from_true_bias`, :func:`expected_random_removal`, :func:`random_removal_table`: the
  feature-selection experiment (claim C6) read off the true-bias table, which holds one tuned fit per feature set.
  Removing a uniformly random k-subset is evaluated exactly, as the mean over all k-subsets.
* :func:`rankings_from_shapley`, :func:`rankings_from_singletons`: removal orders from the Shapley table.
* :func:`redundancy_check`: claim C3, Shapley values before and after appending an exact copy of a player.
* :func:`analysis_tables`: all of the above that the ``tables`` step stores, with the Shapley attributions of
  every data set (:func:`shapley_by_dataset`) and a summary of the data sets (:func:`datasets_table`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats

from .coalitions import coalition_values, shapley_table
from .measures import MEASURES
from .selection import SELECTION_COLUMNS, rank_by_score
from .true_bias import SE_METRICS, coalition_key, parse_coalition

__all__ = [
    "GAPS",
    "VALIDATION_COLUMNS",
    "analysis_tables",
    "datasets_table",
    "coalition_lookup",
    "dpi_table",
    "expected_random_removal",
    "measure_pairs",
    "pairs_table",
    "random_removal_table",
    "rankings_from_shapley",
    "rankings_from_singletons",
    "redundancy_check",
    "redundancy_table",
    "selection_from_true_bias",
    "shapley_by_dataset",
    "spearman_bootstrap",
    "validation_table",
]

GAPS = {"sp_gap": "SP", "eo_gap": "EO"}  # true gap -> the notion it measures
VALIDATION_COLUMNS = (
    "estimator",
    "measure",
    "notion",
    "family",
    "gap",
    "aligned",
    "spearman",
    "kendall",
    "n_pairs",
    "ci_low",
    "ci_high",
)
OUTCOME_METRICS = ("accuracy", "sp_gap", "eo_gap")

LookupKey = tuple[str, str, str, frozenset]


def _players_of(text: str) -> frozenset:
    return frozenset(parse_coalition(text))


def _require_columns(frame: pd.DataFrame, columns: Iterable[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} lacks column(s) {missing}; it has {list(frame.columns)}")


def coalition_lookup(coalitions: pd.DataFrame) -> dict[LookupKey, float]:
    """``{(dataset, estimator, measure, frozenset(players)): value}`` of a coalitions table (module docstring);
    ValueError when a key occurs twice."""
    _require_columns(coalitions, ("dataset", "estimator", "measure", "players", "value"), "coalitions table")
    keys = [
        (str(d), str(e), str(m), _players_of(p))
        for d, e, m, p in zip(
            coalitions["dataset"], coalitions["estimator"], coalitions["measure"], coalitions["players"].fillna("")
        )
    ]
    lookup = dict(zip(keys, coalitions["value"].astype(np.float64)))
    if len(lookup) != len(keys):
        twice = next(key for key, count in Counter(keys).items() if count > 1)
        raise ValueError(f"coalitions table holds {twice[:3]} coalition {coalition_key(twice[3])!r} twice")
    return lookup


def _measure_info(coalitions: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """``measure -> (notion, family)``, from the table's columns where present, else the registry."""
    info = {}
    for measure in coalitions["measure"].unique():
        rows = coalitions[coalitions["measure"] == measure]
        if "notion" in rows and "family" in rows:
            info[measure] = (str(rows["notion"].iat[0]), str(rows["family"].iat[0]))
        elif measure in MEASURES:
            info[measure] = (MEASURES[measure].notion, MEASURES[measure].family)
        else:
            info[measure] = ("none", "")
    return info


def _with_players(true_bias: pd.DataFrame) -> pd.DataFrame:
    _require_columns(true_bias, ("dataset", "coalition"), "true-bias table")
    out = true_bias.copy()
    out["_players"] = out["coalition"].fillna("").map(_players_of)
    return out


def _measure_of_rows(lookup: Mapping[LookupKey, float], rows: pd.DataFrame, estimator: str, measure: str) -> np.ndarray:
    """``mu(S)`` for each true-bias row; the empty coalition is 0 by definition (mu(empty) = 0) when not tabled."""
    values = np.empty(len(rows))
    for i, (dataset, players) in enumerate(zip(rows["dataset"], rows["_players"])):
        key = (str(dataset), estimator, measure, players)
        if key in lookup:
            values[i] = lookup[key]
        elif not players:
            values[i] = 0.0
        else:
            raise ValueError(
                f"no {measure} value ({estimator} estimator) for dataset {dataset!r}, coalition "
                f"{coalition_key(players)!r} in the coalitions table"
            )
    return values


def measure_pairs(
    coalitions: pd.DataFrame,
    true_bias: pd.DataFrame,
    measure: str,
    estimator: str = "ce",
    datasets: Iterable[str] | None = None,
) -> pd.DataFrame:
    """The (dataset, S) pairs of :func:`validation_table` for one measure: dataset, coalition, ``mu``, sp_gap and
    eo_gap, over the true-bias rows with non-empty S (of ``datasets`` when given)."""
    rows = _nonempty_rows(true_bias, datasets)
    mu = _measure_of_rows(coalition_lookup(coalitions), rows, estimator, measure)
    return pd.DataFrame(
        {
            "dataset": rows["dataset"].to_numpy(),
            "coalition": rows["coalition"].to_numpy(),
            "mu": mu,
            **{gap: rows[gap].to_numpy(dtype=np.float64) for gap in GAPS},
        }
    )


def _nonempty_rows(true_bias: pd.DataFrame, datasets: Iterable[str] | None) -> pd.DataFrame:
    _require_columns(true_bias, tuple(GAPS), "true-bias table")
    rows = _with_players(true_bias)
    rows = rows[rows["_players"].map(len) > 0]
    if datasets is not None:
        rows = rows[rows["dataset"].astype(str).isin({str(d) for d in datasets})]
    return rows


def _rank_correlations(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Spearman and Kendall tau-b; NaN for fewer than two pairs or a constant input (no warning)."""
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return np.nan, np.nan
    return float(stats.spearmanr(x, y).statistic), float(stats.kendalltau(x, y).statistic)


def spearman_bootstrap(
    x: np.ndarray, y: np.ndarray, n_boot: int = 500, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap CI of Spearman's rho, resampling the pairs: the ``n_boot`` resamples are ranked at once
    (``rankdata`` along rows, ties averaged) and correlated row-wise. Resamples with a constant side are dropped;
    NaN when fewer than three pairs or no usable resample."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if len(x) < 3 or n_boot < 1:
        return np.nan, np.nan
    rng = np.random.default_rng(seed)
    index = rng.integers(0, len(x), size=(n_boot, len(x)))
    rx, ry = stats.rankdata(x[index], axis=1), stats.rankdata(y[index], axis=1)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    scale = np.sqrt((rx**2).sum(axis=1) * (ry**2).sum(axis=1))
    usable = scale > 1e-12
    if not usable.any():
        return np.nan, np.nan
    rho = (rx * ry).sum(axis=1)[usable] / scale[usable]
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(rho, [tail, 100 - tail])
    return float(low), float(high)


def validation_table(
    coalitions: pd.DataFrame,
    true_bias: pd.DataFrame,
    n_boot: int = 500,
    seed: int = 0,
    datasets: Iterable[str] | None = None,
) -> pd.DataFrame:
    """One row per (estimator, measure of notion SP or EO, gap in ``sp_gap, eo_gap``): VALIDATION_COLUMNS.

    The pairs are the true-bias rows with non-empty S (restricted to ``datasets`` when given: claim C5 reads the
    table of the non-predictive-proxy scenario's datasets only), each paired with ``mu(S)`` of the same dataset
    and estimator. ``aligned`` says the measure's notion is the gap's. A coalition of the true-bias table missing
    from the coalitions table is a ValueError."""
    lookup = coalition_lookup(coalitions)
    info = _measure_info(coalitions)
    rows = _nonempty_rows(true_bias, datasets)
    out = []
    for estimator in sorted(coalitions["estimator"].astype(str).unique()):
        for measure, (notion, family) in info.items():
            if notion not in GAPS.values():
                continue
            mu = _measure_of_rows(lookup, rows, estimator, measure)
            for gap, gap_notion in GAPS.items():
                truth = rows[gap].to_numpy(dtype=np.float64)
                spearman, kendall = _rank_correlations(mu, truth)
                low, high = spearman_bootstrap(mu, truth, n_boot, seed) if np.isfinite(spearman) else (np.nan,) * 2
                out.append(
                    (
                        estimator,
                        measure,
                        notion,
                        family,
                        gap,
                        notion == gap_notion,
                        spearman,
                        kendall,
                        len(rows),
                        low,
                        high,
                    )
                )
    return pd.DataFrame(out, columns=list(VALIDATION_COLUMNS))


def pairs_table(coalitions: pd.DataFrame, true_bias: pd.DataFrame) -> pd.DataFrame:
    """The (dataset, S) pairs behind :func:`validation_table` in long form, for every estimator and every measure of
    notion SP or EO: dataset, coalition, estimator, measure, notion, family, ``mu`` and the true ``sp_gap`` and
    ``eo_gap`` (true-bias rows with non-empty S). Claims C4 and C5 resample these pairs by data set."""
    lookup = coalition_lookup(coalitions)
    info = _measure_info(coalitions)
    rows = _nonempty_rows(true_bias, None)
    frames = []
    for estimator in sorted(coalitions["estimator"].astype(str).unique()):
        for measure, (notion, family) in info.items():
            if notion not in GAPS.values():
                continue
            frames.append(
                pd.DataFrame(
                    {
                        "dataset": rows["dataset"].astype(str).to_numpy(),
                        "coalition": rows["coalition"].to_numpy(),
                        "estimator": estimator,
                        "measure": measure,
                        "notion": notion,
                        "family": family,
                        "mu": _measure_of_rows(lookup, rows, estimator, measure),
                        **{gap: rows[gap].to_numpy(dtype=np.float64) for gap in GAPS},
                    }
                )
            )
    columns = ["dataset", "coalition", "estimator", "measure", "notion", "family", "mu", *GAPS]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)


def dpi_table(coalitions: pd.DataFrame, true_bias: pd.DataFrame, estimator: str = "ce") -> pd.DataFrame:
    """Claim C1 per true-bias row: ``B_SP``, ``B_EO`` of its coalition (``estimator``), the test-split
    informations and their bootstrap SEs, ``excess_sp = i_yhat_a - B_SP`` (``excess_eo`` likewise), and
    ``holds_sp = i_yhat_a <= B_SP + 2 se`` (``holds_eo`` likewise): the baseline bounds the bias of any predictor
    restricted to X_S (data processing; the abstract: "a baseline upper bounds the bias of any downstream
    restricted predictor")."""
    _require_columns(true_bias, ("i_yhat_a", "i_yhat_a_given_y", *SE_METRICS), "true-bias table")
    lookup = coalition_lookup(coalitions)
    rows = _with_players(true_bias)
    out = pd.DataFrame({"dataset": rows["dataset"].to_numpy(), "coalition": rows["coalition"].to_numpy()})
    out["size"] = rows["_players"].map(len).to_numpy()
    if "seed" in rows:
        out["seed"] = rows["seed"].to_numpy()
    out["estimator"] = estimator
    for measure in ("B_SP", "B_EO"):
        out[measure] = _measure_of_rows(lookup, rows, estimator, measure)
    for column in ("i_yhat_a", "i_yhat_a_se", "i_yhat_a_given_y", "i_yhat_a_given_y_se"):
        out[column] = rows[column].to_numpy(dtype=np.float64)
    out["excess_sp"] = out["i_yhat_a"] - out["B_SP"]
    out["excess_eo"] = out["i_yhat_a_given_y"] - out["B_EO"]
    out["holds_sp"] = out["excess_sp"] <= 2 * out["i_yhat_a_se"]
    out["holds_eo"] = out["excess_eo"] <= 2 * out["i_yhat_a_given_y_se"]
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Feature selection


def _outcomes_by_coalition(true_bias: pd.DataFrame, dataset: str) -> dict[frozenset, pd.Series]:
    rows = _with_players(true_bias)
    rows = rows[rows["dataset"].astype(str) == str(dataset)]
    if rows.empty:
        raise ValueError(f"dataset {dataset!r} is not in the true-bias table")
    counts = rows["_players"].value_counts()
    if (counts > 1).any():
        twice = counts.index[counts > 1][0]
        raise ValueError(
            f"dataset {dataset!r}: coalition {coalition_key(twice)!r} has {int(counts.max())} rows "
            "(several seeds?); give one row per coalition"
        )
    return {players: row for players, (_, row) in zip(rows["_players"], rows.iterrows())}


def _full_set(by_coalition: Mapping[frozenset, pd.Series]) -> frozenset:
    """Every player of the dataset: the union of its coalitions (the full set must be one of them)."""
    return frozenset().union(*by_coalition)


def _row_of(by_coalition: Mapping[frozenset, pd.Series], dataset: str, players: frozenset) -> pd.Series:
    if players not in by_coalition:
        raise ValueError(f"dataset {dataset!r}: coalition {coalition_key(players)!r} is not in the true-bias table")
    return by_coalition[players]


def _deltas(row: pd.Series, full: pd.Series) -> dict[str, float]:
    levels = {m: float(row[m]) for m in OUTCOME_METRICS}
    return {**levels, **{f"delta_{m}": levels[m] - float(full[m]) for m in OUTCOME_METRICS}}


def selection_from_true_bias(
    true_bias: pd.DataFrame, rankings: Mapping[str, Mapping[str, Sequence[str]]], k_max: int = 1
) -> pd.DataFrame:
    """The feature-selection experiment (claim C6) read off the true-bias table: for each dataset, ranking label
    and k = 0..k_max, the row of the feature set left after removing the ranking's top k (k = 0: the full set),
    with deltas against the full set (:data:`~.selection.SELECTION_COLUMNS`; ``removed`` in ranking order,
    ``seed`` of the full set's row). ValueError names the dataset and coalition when a needed set is missing."""
    if k_max < 0:
        raise ValueError(f"k_max must be >= 0, got {k_max}")
    out = []
    for dataset, by_label in rankings.items():
        by_coalition = _outcomes_by_coalition(true_bias, dataset)
        everyone = _full_set(by_coalition)
        full = _row_of(by_coalition, dataset, everyone)
        for label, ranking in by_label.items():
            ranking = list(ranking)
            unknown = sorted(set(ranking) - everyone)
            if unknown or len(set(ranking)) != len(ranking) or k_max > len(ranking):
                raise ValueError(
                    f"dataset {dataset!r}, ranking {label!r}: {ranking} must name distinct players of "
                    f"{sorted(everyone)} and at least k_max={k_max} of them (unknown: {unknown})"
                )
            for k in range(k_max + 1):
                row = _row_of(by_coalition, dataset, everyone - set(ranking[:k]))
                out.append(
                    {
                        "dataset": dataset,
                        "ranking": label,
                        "k": k,
                        "removed": "+".join(ranking[:k]),
                        "seed": full.get("seed", np.nan),
                        **_deltas(row, full),
                    }
                )
    return pd.DataFrame(out, columns=list(SELECTION_COLUMNS))


def expected_random_removal(true_bias: pd.DataFrame, dataset: str, k: int = 1) -> dict[str, float]:
    """The exact expectation of removing k uniformly random players: the mean level and delta (against the full
    set) over ALL k-subsets of the dataset's players (k = 1: every leave-one-out set), plus ``n_subsets``."""
    by_coalition = _outcomes_by_coalition(true_bias, dataset)
    everyone = _full_set(by_coalition)
    if not 0 <= k <= len(everyone):
        raise ValueError(f"dataset {dataset!r}: k must lie in [0, {len(everyone)}], got {k}")
    full = _row_of(by_coalition, dataset, everyone)
    subsets = [everyone - set(removed) for removed in combinations(sorted(everyone), k)]
    values = pd.DataFrame([_deltas(_row_of(by_coalition, dataset, kept), full) for kept in subsets])
    return {**values.mean().to_dict(), "n_subsets": len(subsets)}


def random_removal_table(
    true_bias: pd.DataFrame, datasets: Iterable[str] | None = None, k_max: int = 1
) -> pd.DataFrame:
    """:func:`expected_random_removal` for k = 0..k_max and each dataset (all of the table's by default): columns
    dataset, k, n_subsets, accuracy, sp_gap, eo_gap and their deltas."""
    datasets = sorted(true_bias["dataset"].astype(str).unique()) if datasets is None else list(datasets)
    rows = [
        {"dataset": d, "k": k, **expected_random_removal(true_bias, d, k)} for d in datasets for k in range(k_max + 1)
    ]
    columns = ["dataset", "k", "n_subsets", *OUTCOME_METRICS, *(f"delta_{m}" for m in OUTCOME_METRICS)]
    table = pd.DataFrame(rows, columns=columns)
    table["n_subsets"] = table["n_subsets"].astype(np.int64)
    return table


def _rankings(shapley: pd.DataFrame, measures: Sequence[str], column: str, prefix: str) -> dict[str, dict]:
    _require_columns(shapley, ("dataset", "measure", "player", column), "Shapley table")
    if "estimator" in shapley and shapley["estimator"].nunique() > 1:
        raise ValueError(f"Shapley table mixes estimators {sorted(shapley['estimator'].unique())}; pass one")
    out: dict[str, dict] = {}
    for dataset, rows in shapley.groupby("dataset", sort=True):
        out[dataset] = {}
        for measure in measures:
            chosen = rows[rows["measure"] == measure]
            if chosen.empty:
                raise ValueError(f"dataset {dataset!r}: measure {measure!r} is not in the Shapley table")
            if chosen["player"].duplicated().any():
                raise ValueError(f"dataset {dataset!r}, measure {measure!r}: a player appears twice")
            out[dataset][f"{prefix}_{measure}"] = rank_by_score(dict(zip(chosen["player"], chosen[column])))
    return out


def rankings_from_shapley(shapley: pd.DataFrame, measures: Sequence[str]) -> dict[str, dict[str, list[str]]]:
    """``{dataset: {"shapley_<measure>": players by descending phi (ties by name)}}`` from concatenated
    :func:`~.coalitions.shapley_table` outputs (extra column ``dataset``; one estimator)."""
    return _rankings(shapley, measures, "phi", "shapley")


def rankings_from_singletons(shapley: pd.DataFrame, measures: Sequence[str]) -> dict[str, dict[str, list[str]]]:
    """``{dataset: {"marginal_<measure>": ranking}}`` by ``mu({i}) - mu(empty)`` (the ``singleton`` column): for
    B_SP the marginal ``I(X_i; A)`` ranking."""
    return _rankings(shapley, measures, "singleton", "marginal")


def redundancy_check(
    blocks: Sequence[np.ndarray], a, y, player: int, measures: Sequence[str], estimator: str = "plugin", seed: int = 0
) -> pd.DataFrame:
    """Claim C3 (the abstract: Shapley values "moderate redundancy across feature coalitions"): exact Shapley values of
    the original players and of the players plus an exact copy of ``player`` (appended last). Per measure: ``phi_orig``
    (of ``player``), ``phi_i`` and ``phi_copy`` (with the copy), ``rel_err = |phi_i + phi_copy - phi_orig| /
    |phi_orig|`` (NaN when phi_orig is 0) and ``asym = |phi_i - phi_copy|``. The plug-in estimator merges identical bin
    columns, so a measure that depends on sigma(X_S) only splits its value exactly; fitted measures (CE, Bayes score)
    only approximately."""
    blocks = list(blocks)
    if not 0 <= player < len(blocks):
        raise ValueError(f"player must index one of the {len(blocks)} blocks, got {player}")
    names = [f"x{i + 1}" for i in range(len(blocks))]
    original = shapley_table(coalition_values(blocks, a, y, measures, estimator, seed, names=names))
    copied = shapley_table(
        coalition_values(
            blocks + [blocks[player]], a, y, measures, estimator, seed, names=names + [f"{names[player]}_copy"]
        )
    )
    rows = []
    for measure in measures:
        before = original[original["measure"] == measure].set_index("index")["phi"]
        after = copied[copied["measure"] == measure].set_index("index")["phi"]
        phi_orig, phi_i, phi_copy = float(before[player]), float(after[player]), float(after[len(blocks)])
        rel_err = abs(phi_i + phi_copy - phi_orig) / abs(phi_orig) if phi_orig != 0 else np.nan
        spec = MEASURES[measure]
        rows.append(
            (
                measure,
                spec.notion,
                spec.family,
                names[player],
                phi_orig,
                phi_i,
                phi_copy,
                rel_err,
                abs(phi_i - phi_copy),
            )
        )
    table = pd.DataFrame(
        rows, columns=["measure", "notion", "family", "player", "phi_orig", "phi_i", "phi_copy", "rel_err", "asym"]
    )
    table["estimator"] = estimator
    return table


def redundancy_table(
    datasets: Sequence, player: str, measures: Sequence[str], estimator: str, seed: int, log=None
) -> pd.DataFrame:
    """:func:`redundancy_check` of ``player`` on every data set (:class:`~.data.AuditData`), with ``dataset``,
    ``player`` and ``estimator`` columns; ``log`` (a logger) hears each measure's split of the attribution."""
    tables = []
    for data in datasets:
        players = list(data.players)
        table = redundancy_check(
            [data.block(p) for p in players], data.a, data.y, players.index(player), measures, estimator, seed
        )
        if log is not None:
            for r in table.itertuples():
                log.info(
                    "%s %-10s phi %.4f -> %.4f + %.4f (rel. err %.3f)",
                    data.name,
                    r.measure,
                    r.phi_orig,
                    r.phi_i,
                    r.phi_copy,
                    r.rel_err,
                )
        tables.append(table.assign(dataset=data.name, player=player, estimator=estimator))
    return pd.concat(tables, ignore_index=True)


def shapley_by_dataset(
    coalitions: pd.DataFrame, players: Mapping[str, Sequence[str]], method: str, permutations: int, seed: int
) -> pd.DataFrame:
    """Shapley attributions (:func:`~.attribution.attribution_table`) of every (dataset, estimator) group of the
    long coalitions table, with ``dataset`` and ``estimator`` columns."""
    from .attribution import attribution_table

    return pd.concat(
        [
            attribution_table(group, list(players[dataset]), method, permutations, seed).assign(
                dataset=dataset, estimator=estimator
            )
            for (dataset, estimator), group in coalitions.groupby(["dataset", "estimator"], sort=False)
        ],
        ignore_index=True,
    )


def datasets_table(metas: Sequence[Mapping], coalitions: pd.DataFrame) -> pd.DataFrame:
    """One row per data set: its scenario, players, imputed values, the SCM roles, and the coalitions per second of
    each estimator. ``metas`` are the JSON objects stored beside the data sets (:func:`~.artifacts.audit_meta`)."""
    from .experiment import scenario_of

    rate = coalitions.groupby(["dataset", "estimator"])[["coalitions_per_second", "seconds"]].first().reset_index()
    datasets = pd.DataFrame(
        [
            {
                "dataset": m["audit"]["name"],
                "scenario": scenario_of(m["audit"]["name"]),
                "players": len(m["audit"]["groups"]),
                "n_imputed": m["audit"].get("n_imputed", 0),
                "roles": ", ".join(m["params"].get("roles", [])) if isinstance(m["params"], dict) else "",
            }
            for m in metas
        ]
    )
    return datasets.merge(
        rate.pivot(index="dataset", columns="estimator", values="coalitions_per_second")
        .add_prefix("coalitions_per_s_")
        .reset_index(),
        on="dataset",
    )


def analysis_tables(
    coalitions: pd.DataFrame,
    true_bias: pd.DataFrame,
    metas: Sequence[Mapping],
    rankings: Mapping[str, Mapping[str, list[str]]],
    shapley: Mapping,
    n_boot: int,
    k_max: int,
    seed: int,
) -> dict[str, pd.DataFrame]:
    """Every table of the pipeline's ``tables`` step from the concatenated coalition values and true-bias tables,
    the data sets' JSON metas and each data set's selection rankings: Shapley attributions, the validation table
    (all data sets, and the non-predictive-proxy ones), the DPI check (CE), the (data set, feature set) pairs, the
    feature-selection table, the exact expectation of random removal (k = 1) and the data-set summary."""
    from .experiment import scenario_of

    players = {m["audit"]["name"]: list(m["audit"]["groups"]) for m in metas}
    nonpredictive = [d for d in players if scenario_of(d) == "nonpredictive_proxy"]
    return {
        "shapley": shapley_by_dataset(coalitions, players, shapley["method"], shapley["permutations"], seed),
        "validation": validation_table(coalitions, true_bias, n_boot=n_boot, seed=seed),
        "validation_nonpredictive": validation_table(
            coalitions, true_bias, n_boot=n_boot, seed=seed, datasets=nonpredictive
        ),
        "dpi": dpi_table(coalitions, true_bias, "ce"),
        "pairs": pairs_table(coalitions, true_bias),
        "selection": selection_from_true_bias(true_bias, rankings, k_max),
        "random_removal": pd.DataFrame([{"dataset": d, **expected_random_removal(true_bias, d, 1)} for d in players]),
        "datasets": datasets_table(metas, coalitions),
        "true_bias": true_bias,
        "coalitions": coalitions,
    }
