"""Paper 01's measured values for its claims and checks (config/claims/pred_loss_space.yaml decides them).

Everything is read from the long-form metrics table of the trained cells. The two checks (C1, C2) are
identities of the conversions between spaces evaluated on the trained models' test-set outputs: they hold
whatever the model learned. The claims (C3 to C6) compare the trained cells of the 3x3 matrix; each is
computed on every seed's own matrix, and decided from the spread of those per-seed values (a t interval
over seeds). A regime whose cells are missing or not finite, or whose variance decomposition fails, makes
the claim's value NaN (inconclusive) with the regime named in the note: it is never dropped.

Every claim is measured beside its null (`Measured.null`), the same measurement without the paper's mechanism:
the bottleneck claims (C5b, C6) beside the regimes of the same kind without a bottleneck, the FD gap across
prediction spaces (C4a) beside the FD gap across seeds of one cell, the small MSE gap across prediction spaces (C4b)
beside the MSE gap across loss spaces. A claim whose null passes too is inconclusive
(neurips26.common.claims.verdict). The no-bottleneck role split (C3) has no null: the same statistic over the
bottleneck regimes cannot pass (the rank floors), so its note gives it as a reference only. C5, whose null passed
too at quick scale (x also wins FD without a bottleneck), has its null inside its value instead (issue 41): per
seed, the margin with a bottleneck minus the harder of the same margin without one on the same data and 0
(`x_margin_beyond_null`). The check C5m
verifies why the MSE half of the bottleneck comparison is not a claim: a linear head of rank `width` on a token of
dimension `token_dim` leaves eps- and v-prediction an x error of at least (token_dim - width)/token_dim times their
conversion weight, whatever the network learned.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from neurips26.common.claims import Measured, beyond_null, measured_from_spread, t_interval
from neurips26.pred_loss_space import effects
from neurips26.pred_loss_space.names import REGIME, SPACES
from neurips26.pred_loss_space.summary import quality_view, regime_name

NAN = float("nan")


class Unmeasurable(ValueError):
    """A per-seed statistic could not be computed: the message names the regime, seed and cell."""


# ----------------------------------------------------------------------------------------- checks (C1, C2)


def _per_t(metrics: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """One row per (regime, pred, loss, seed, t) and a column per metric of `names`; NaN values are kept."""
    rows = metrics[metrics["metric"].isin(names) & metrics["t"].notna()]
    return rows.set_index([*REGIME, "pred", "loss", "seed", "t", "metric"])["value"].unstack("metric")


def _worst(deviation: pd.Series, table: pd.DataFrame, what: str) -> tuple[float, str]:
    """The largest deviation (NaN if any is not finite), and a note naming where it is."""
    cells = len(table.index.droplevel("t").unique())
    if deviation.empty:
        return NAN, f"no per-t {what} rows in the metrics"
    bad = deviation[~np.isfinite(deviation.to_numpy(dtype=float))]
    if len(bad):
        where = bad.index[0]
        return NAN, (
            f"{len(bad)} per-t {what} value(s) not finite, first at {where[0]}/{where[1]} "
            f"{where[3]}x{where[4]} s{where[5]} t={where[6]:g}"
        )
    where = deviation.idxmax()
    return float(deviation.max()), (
        f"{cells} cells x {table.index.get_level_values('t').nunique()} noise levels; "
        f"largest at {where[0]}/{where[1]} {where[3]}x{where[4]} s{where[5]} "
        f"t={where[6]:g}"
    )


def reweighting_check(metrics: pd.DataFrame, t_eps: float) -> Measured:
    """C1: at every t of the evaluation grid and every trained cell, the test-set eps- and v-space errors
    over the x-space error, against w_eps(t) = t^2/(1-t)^2 and w_v(t) = 1/(1-t)^2 (1 - t clamped at t_eps)."""
    table = _per_t(metrics, ["mse_x", "mse_eps", "mse_v"])
    if table.empty or not {"mse_x", "mse_eps", "mse_v"} <= set(table.columns):
        return Measured("C1", NAN, 0, "no per-t mse_x / mse_eps / mse_v rows in the metrics")
    t = table.index.get_level_values("t").to_numpy(dtype=float)
    one_minus = np.maximum(1.0 - t, t_eps)
    weights = {"mse_eps": t**2 / one_minus**2, "mse_v": 1.0 / one_minus**2}
    deviation = pd.concat([(table[name] / table["mse_x"] / w - 1.0).abs() for name, w in weights.items()], axis=1)
    value, note = _worst(deviation.max(axis=1, skipna=False), table, "error ratio")
    runs = len(table.index.droplevel("t").unique())
    return Measured("C1", value, runs, note)


def amplification_check(metrics: pd.DataFrame) -> Measured:
    """C2: the finite-difference amplification |d x_hat| / |d o| of the output-to-x conversion, measured at
    the trained models' test-set outputs, against the analytic 1, (1-t)/t, 1-t."""
    table = _per_t(metrics, ["amp_x_emp", "amp_x_theory"])
    if table.empty or not {"amp_x_emp", "amp_x_theory"} <= set(table.columns):
        return Measured("C2", NAN, 0, "no per-t amp_x_emp / amp_x_theory rows in the metrics")
    value, note = _worst((table["amp_x_emp"] / table["amp_x_theory"] - 1.0).abs(), table, "amplification")
    return Measured("C2", value, len(table.index.droplevel("t").unique()), note)


# ----------------------------------------------------------------------------------- claims on the matrix


def seed_cells(metrics: pd.DataFrame, metric: str) -> pd.DataFrame:
    """One row per (regime, pred, loss, seed): the run-level `metric` (NaN where the run recorded NaN)."""
    rows = metrics[(metrics["metric"] == metric) & metrics["t"].isna()]
    return rows[[*REGIME, "pred", "loss", "seed", "value"]].reset_index(drop=True)


def _grid(frame: pd.DataFrame, regime: tuple, seed: int, metric: str) -> pd.DataFrame:
    """The pred x loss matrix of one regime and seed (every present pred x loss cell, finite and > 0)."""
    preds = [s for s in SPACES if s in set(frame["pred"])]
    losses = [s for s in SPACES if s in set(frame["loss"])]
    rows = frame[frame["seed"] == seed]
    table = rows.set_index(["pred", "loss"])["value"].unstack("loss").reindex(index=preds, columns=losses)
    name = f"{regime_name(regime)} seed {seed}"
    present = set(zip(rows["pred"], rows["loss"]))
    missing = [f"{p}x{q}" for p in preds for q in losses if (p, q) not in present]
    if missing:
        raise Unmeasurable(f"{name}: no {metric} for cell(s) {', '.join(missing)}")
    values = table.to_numpy(dtype=float)
    bad = [
        f"{p}x{q}={values[i, j]:g}"
        for i, p in enumerate(preds)
        for j, q in enumerate(losses)
        if not (np.isfinite(values[i, j]) and values[i, j] > 0)
    ]
    if bad:
        raise Unmeasurable(f"{name}: {metric} not finite and positive at {', '.join(bad)}")
    return table


@dataclass(frozen=True)
class Selection:
    """The regimes a claim is about: with or without a bottleneck, and (where `toy` is set) only the toy
    regimes (the mlp_toy architecture, JiT's toy) or only the image regimes."""

    bottleneck: bool
    toy: bool | None = None
    dataset: str | None = None  # where set, only that dataset's regimes

    def __contains__(self, key: tuple) -> bool:
        return (
            bool(key[2]) == self.bottleneck
            and (self.toy is None or (key[1] == TOY_ARCH) == self.toy)
            and (self.dataset is None or key[0] == self.dataset)
        )

    def text(self) -> str:
        kind = {None: "", True: "toy ", False: "image "}[self.toy]
        where = "" if self.dataset is None else f" on {self.dataset}"
        return f"{kind}{'bottleneck' if self.bottleneck else 'no-bottleneck'} regime{where}"


TOY_ARCH = "mlp_toy"
NO_BOTTLENECK, BOTTLENECK = Selection(False), Selection(True)
IMAGE_BOTTLENECK, TOY_BOTTLENECK = Selection(True, toy=False), Selection(True, toy=True)
IMAGE_NO_BOTTLENECK, TOY_NO_BOTTLENECK = Selection(False, toy=False), Selection(False, toy=True)


def _regimes(metrics: pd.DataFrame, selection: Selection) -> list[tuple]:
    keys = metrics[REGIME].drop_duplicates().itertuples(index=False, name=None)
    return [key for key in keys if key in selection]


def _per_seed(
    metrics: pd.DataFrame,
    selection: Selection,
    metric_names: tuple[str, ...],
    statistic: Callable[[dict[str, pd.DataFrame], tuple, int], float],
    combine: Callable[[list[float]], float],
) -> tuple[list[float], list[int], str]:
    """statistic(grids by metric, regime, seed) for every selected regime and every seed they share,
    combined over regimes per seed; raises Unmeasurable naming the regime where a grid cannot be built."""
    regimes = _regimes(metrics, selection)
    if not regimes:
        raise Unmeasurable(f"no {selection.text()} in the metrics")
    frames = {m: seed_cells(metrics, m) for m in metric_names}
    seed_sets = []
    for key in regimes:
        mask = np.logical_and.reduce([frames[metric_names[0]][c] == v for c, v in zip(REGIME, key)])
        seed_sets.append(set(frames[metric_names[0]].loc[mask, "seed"].astype(int)))
    seeds = sorted(set.intersection(*seed_sets))
    note = ""
    if any(s != set(seeds) for s in seed_sets):
        note = f"seeds shared by all {len(regimes)} regimes: {seeds}"
    if not seeds:
        raise Unmeasurable(f"the regimes {[regime_name(k) for k in regimes]} share no seed")
    values = []
    for seed in seeds:
        per_regime = []
        for key in regimes:
            grids = {}
            for m in metric_names:
                frame = frames[m]
                mask = np.logical_and.reduce([frame[c] == v for c, v in zip(REGIME, key)])
                grids[m] = _grid(frame[mask], key, seed, m)
            per_regime.append(statistic(grids, key, seed))
        values.append(combine(per_regime))
    return values, seeds, note


def _shares(grid: pd.DataFrame, regime: tuple, seed: int, metric: str) -> dict[str, float]:
    long = grid.stack().rename("value").reset_index()
    long["value"] = np.log(long["value"])
    try:
        return effects.variance_shares(long, "value")
    except ValueError as error:
        raise Unmeasurable(
            f"{regime_name(regime)} seed {seed}: variance shares of log-{metric} failed ({error})"
        ) from error


Null = tuple[float, str]  # the null's value (mean over seeds, NaN where it cannot be measured) and its note


def _null_spread(
    metrics: pd.DataFrame, selection: Selection, metric_names: tuple[str, ...], statistic, combine
) -> Null:
    """The claim's own per-seed statistic on the regimes of `selection` (the same measurement without the
    mechanism): its mean over seeds, and a note with the per-seed values and interval."""
    try:
        values, seeds, note = _per_seed(metrics, selection, metric_names, statistic, combine)
    except Unmeasurable as error:
        return NAN, f"null ({selection.text()}) not measurable: {error}"
    if not all(np.isfinite(values)):
        return NAN, f"null ({selection.text()}) per-seed values {values} not finite"
    spread = t_interval(values)
    parts = [f"null ({selection.text()}) {spread.text()}", f"per seed {dict(zip(seeds, np.round(values, 4).tolist()))}"]
    return spread.mean, "; ".join([*parts, note] if note else parts)


def _spread_claim(
    claim_id: str,
    metrics: pd.DataFrame,
    selection: Selection,
    metric_names: tuple[str, ...],
    statistic,
    combine,
    describe: Callable[[list[float], list[int]], str] = None,
    null: Null | None = None,
) -> Measured:
    null_value, null_note = (None, "") if null is None else null
    try:
        values, seeds, note = _per_seed(metrics, selection, metric_names, statistic, combine)
    except Unmeasurable as error:
        return Measured(claim_id, NAN, 0, "; ".join(p for p in (f"not measurable: {error}", null_note) if p))
    if not all(np.isfinite(values)):
        return Measured(claim_id, NAN, 0, f"per-seed values {values} not finite")
    parts = [f"per seed {dict(zip(seeds, np.round(values, 4).tolist()))}", note]
    if describe is not None:
        parts.append(describe(values, seeds))
    parts.append(null_note)
    measured = measured_from_spread(claim_id, t_interval(values), "; ".join(p for p in parts if p))
    return measured if null is None else replace(measured, null=null_value)


def factor_roles(metrics: pd.DataFrame) -> Measured:
    """C3: without a bottleneck, min(loss - pred share of log-MSE variance, pred - loss share of log-FD
    variance) over regimes, per seed; mean and t interval over seeds. No null (issue 41's outside review, #8): the
    same statistic in the bottleneck regimes cannot pass (the rank floors of C5m give pred nearly all of their
    log-MSE variance), so it is reported in the note, not as a null."""

    def statistic(grids, regime, seed):
        mse, fdv = _shares(grids["mse"], regime, seed, "MSE"), _shares(grids["fd"], regime, seed, "FD")
        return min(mse["loss"] - mse["pred"], fdv["pred"] - fdv["loss"])

    _, reference_note = _null_spread(metrics, BOTTLENECK, ("mse", "fd"), statistic, min)
    measured = _spread_claim("C3", metrics, NO_BOTTLENECK, ("mse", "fd"), statistic, min)
    reference_note = reference_note.replace("null (", "the same statistic (", 1)
    return replace(measured, note=f"{measured.note}; {C3_NO_NULL}; {reference_note}")


C3_NO_NULL = (
    "no null: in the bottleneck regimes the rank floors (C5m) give pred nearly all of the log-MSE variance, so the "
    "same statistic there is below 0 by construction and could not pass"
)


def seed_ratio_null(metrics: pd.DataFrame, selection: Selection) -> Null:
    """C4a's null: the max/min FD across the seeds of one (regime, pred, loss) cell (the same ratio over as many
    runs, without changing the prediction space), averaged over the cells of `selection`'s regimes."""
    frame = seed_cells(metrics, "fd")
    frame = frame[[key in selection for key in frame[REGIME].itertuples(index=False, name=None)]]
    if frame.empty:
        return NAN, f"null (FD across seeds of one cell) not measurable: no {selection.text()} in the metrics"
    values = frame["value"].to_numpy(dtype=float)
    if not (np.isfinite(values) & (values > 0)).all():
        return NAN, "null (FD across seeds of one cell) not measurable: an FD is not finite and positive"
    cells = frame.groupby([*REGIME, "pred", "loss"])["value"]
    if (cells.size() < 2).any():
        return NAN, "null (FD across seeds of one cell) not measurable: a cell has fewer than 2 seeds"
    ratios = cells.max() / cells.min()
    return float(ratios.mean()), (
        f"null (max/min FD across the {int(cells.size().min())} seeds of one cell, mean over {len(ratios)} cells) "
        f"{ratios.mean():.4g} (largest {ratios.max():.4g})"
    )


def fd_ratio(metrics: pd.DataFrame) -> Measured:
    """C4a: without a bottleneck, the mean over (regime, loss) of max/min FD across predictions, per seed.
    Null: the same max/min FD across the seeds of one cell."""

    def statistic(grids, regime, seed):
        table = grids["fd"]
        return list((table.max(axis=0) / table.min(axis=0)).to_numpy(dtype=float))

    return _spread_claim(
        "C4a",
        metrics,
        NO_BOTTLENECK,
        ("fd",),
        statistic,
        lambda per_regime: float(np.mean([v for r in per_regime for v in r])),
        null=seed_ratio_null(metrics, NO_BOTTLENECK),
    )


def mse_spread(metrics: pd.DataFrame) -> Measured:
    """C4b: without a bottleneck, the max over (regime, loss) of (max - min)/min MSE across predictions.
    Null: the same spread across loss spaces (max over (regime, pred)), which the paper has control the MSE: if
    it too is below the threshold, the MSE does not tell any choice apart and a small gap says nothing."""

    def statistic(grids, regime, seed):
        table = grids["mse"]
        return float(((table.max(axis=0) - table.min(axis=0)) / table.min(axis=0)).max())

    def across_losses(grids, regime, seed):
        table = grids["mse"]
        return float(((table.max(axis=1) - table.min(axis=1)) / table.min(axis=1)).max())

    null = _null_spread(metrics, NO_BOTTLENECK, ("mse",), across_losses, max)
    null = (null[0], null[1].replace("null (", "null (MSE spread across loss spaces, ", 1))
    return _spread_claim("C4b", metrics, NO_BOTTLENECK, ("mse",), statistic, max, null=null)


def _fd_margin(grids, regime, seed) -> list[tuple[str, float]]:
    """(loss, log(min(FD eps, FD v) / FD x)) for each loss space of one regime and seed."""
    table = grids["fd"]
    if not {"x", "eps", "v"} <= set(table.index):
        raise Unmeasurable(f"{regime_name(regime)}: the fd matrix lacks a prediction space (has {list(table.index)})")
    return [
        (loss, float(np.log(min(table.loc["eps", loss], table.loc["v", loss]) / table.loc["x", loss])))
        for loss in table.columns
    ]


def x_margin(
    metrics: pd.DataFrame,
    claim_id: str = "C5",
    selection: Selection = IMAGE_BOTTLENECK,
    null_selection: Selection = IMAGE_NO_BOTTLENECK,
) -> Measured:
    """C5 (image regimes) and C5b (toy regimes): with a bottleneck, min over (regime, loss) of
    log(min(FD eps, FD v) / FD x), per seed. Null: the same margin in the regimes of the same kind without a
    bottleneck. (The MSE half is fixed by the architecture: the check C5m.)"""
    lost: list[str] = []

    def statistic(grids, regime, seed):
        margins = _fd_margin(grids, regime, seed)
        lost.extend(f"{regime_name(regime)} s{seed} {loss}-loss" for loss, m in margins if m <= 0)
        return min(m for _, m in margins)

    def null_statistic(grids, regime, seed):
        return min(m for _, m in _fd_margin(grids, regime, seed))

    def describe(values, seeds):
        return ("x lost on FD: " + ", ".join(lost)) if lost else "x won every (regime, seed, loss) FD comparison"

    null = _null_spread(metrics, null_selection, ("fd",), null_statistic, min)
    return _spread_claim(claim_id, metrics, selection, ("fd",), statistic, min, describe, null=null)


def x_margin_beyond_null(
    metrics: pd.DataFrame,
    claim_id: str = "C5",
    selection: Selection = IMAGE_BOTTLENECK,
    null_selection: Selection = IMAGE_NO_BOTTLENECK,
) -> Measured:
    """C5 (issue 41): per dataset of `selection`'s regimes and per seed, the FD margin of `x_margin` in that dataset's
    bottleneck regimes minus the harder of the same margin in `null_selection`'s regimes on the same dataset and seed
    (the null: the same data and training without the bottleneck) and 0 (`beyond_null`); per seed the smallest over
    the datasets, t interval over the seeds every side shares. A bottleneck dataset without a no-bottleneck regime on
    the same data gives NaN, named (a null on other data is not the same measurement without the mechanism). The
    null is inside the value (no null field); the note keeps the former measurement (each side's margin with its
    interval)."""

    def statistic(grids, regime, seed):
        return min(m for _, m in _fd_margin(grids, regime, seed))

    datasets = sorted({key[0] for key in _regimes(metrics, selection)})
    if not datasets:
        return Measured(claim_id, NAN, 0, f"{selection.text()} not measurable: no {selection.text()} in the metrics")
    by_dataset, notes, lost = {}, [], []
    for dataset in datasets:
        sides = {}
        for name, chosen in (
            ("claim", replace(selection, dataset=dataset)),
            ("null", replace(null_selection, dataset=dataset)),
        ):
            try:
                values, seeds, note = _per_seed(metrics, chosen, ("fd",), statistic, min)
            except Unmeasurable as error:
                return Measured(claim_id, NAN, 0, f"{chosen.text()} not measurable: {error}")
            if not all(np.isfinite(values)):
                return Measured(claim_id, NAN, 0, f"{chosen.text()}: per-seed values {values} not finite")
            sides[name] = dict(zip(seeds, values))
            spread = t_interval(values)
            per_seed = dict(zip(seeds, np.round(values, 4).tolist()))
            label = f"former C5 ({chosen.text()}'s margin alone)" if name == "claim" else f"null ({chosen.text()})"
            notes.append("; ".join(p for p in (f"{label} {spread.text()}, per seed {per_seed}", note) if p))
        lost += [f"{dataset} s{s}" for s, v in sides["claim"].items() if v <= 0]
        by_dataset[dataset] = beyond_null(sides["claim"], sides["null"])
        unpaired = sorted(set(sides["claim"]) ^ set(sides["null"]))
        if unpaired:
            notes.append(f"{dataset}: seeds without a partner: {unpaired}")
    seeds = sorted(set.intersection(*(set(paired) for paired in by_dataset.values())))
    paired = {s: min(by_dataset[d][s] for d in datasets) for s in seeds}
    note = "; ".join(
        [
            f"{selection.text()} minus max({null_selection.text()} on the same dataset, 0), paired by seed, smallest "
            f"over {datasets}: per seed {dict((s, round(v, 4)) for s, v in paired.items())}",
            f"x lost on FD with a bottleneck on {lost}" if lost else "x won every bottleneck FD comparison",
            *notes,
        ]
    )
    return measured_from_spread(claim_id, t_interval(list(paired.values())), note)


def pred_share(metrics: pd.DataFrame) -> Measured:
    """C6: with a bottleneck, min over regimes of the pred share of log-FD variance, per seed. Null: the same share in
    the regimes without a bottleneck. The MSE share is in the note only (issue 41's outside review, #8): with a
    bottleneck it is set by the rank floors of C5m, whatever was learned."""

    def statistic(grids, regime, seed):
        return _shares(grids["fd"], regime, seed, "FD")["pred"]

    def mse_statistic(grids, regime, seed):
        return _shares(grids["mse"], regime, seed, "MSE")["pred"]

    null = _null_spread(metrics, NO_BOTTLENECK, ("fd",), statistic, min)
    measured = _spread_claim("C6", metrics, BOTTLENECK, ("fd",), statistic, min, null=null)
    _, mse_note = _null_spread(metrics, BOTTLENECK, ("mse",), mse_statistic, min)
    mse_note = mse_note.replace("null (", "the pred share of log-MSE, not deciding (fixed by the rank floors, C5m; ", 1)
    return replace(measured, note=f"{measured.note}; {mse_note}")


def rank_floor(token_dim: int, width: int, pred: str, t: np.ndarray, t_min: float) -> np.ndarray:
    """The smallest expected per-coordinate x error that a linear head of rank `width` on a token of dimension
    `token_dim` leaves prediction space `pred` at noise levels t: the unit-variance noise (eps) has
    (token_dim - width) coordinates outside the head's range, which reach x_hat with the conversion's factor
    (1 - t)/max(t, t_min) (eps) or 1 - t (v)."""
    factor = {"eps": (1 - t) / np.maximum(t, t_min), "v": 1 - t}[pred]
    return factor**2 * (token_dim - width) / token_dim


def rank_floor_check(metrics: pd.DataFrame, ranks: dict[str, list[int]] | None, t_min: float) -> Measured:
    """C5m: in every bottleneck regime, the per-t test x error of eps- and v-prediction over its rank floor
    (`ranks`: 'dataset/arch' -> [token_dim, width]); the value is the smallest ratio over cells, seeds and t."""
    table = _per_t(metrics, ["mse_x"])
    if table.empty:
        return Measured("C5m", NAN, 0, "no per-t mse_x rows in the metrics")
    table = table[table.index.get_level_values("bottleneck").astype(bool)]
    if table.empty:
        return Measured("C5m", NAN, 0, "no bottleneck regime in the metrics")
    ratios, notes, cells = [], [], 0
    for (dataset, arch), rows in table.groupby(level=["dataset", "arch"]):
        name = f"{dataset}/{arch}"
        if not ranks or name not in ranks:
            return Measured("C5m", NAN, 0, f"no token dimension and width given for {name}")
        token_dim, width = ranks[name]
        parts = []
        for pred in SPACES:
            part = rows[rows.index.get_level_values("pred") == pred]["mse_x"]
            if part.empty:
                continue
            mean_error = float(part.groupby(level="t").mean().mean())
            if pred == "x":
                parts.append(f"x-prediction {mean_error:.4g}")
                continue
            t = part.index.get_level_values("t").to_numpy(dtype=float)
            ratios.append(part.to_numpy(dtype=float) / rank_floor(token_dim, width, pred, t, t_min))
            cells += len(part.index.droplevel("t").unique())
            floor = float(rank_floor(token_dim, width, pred, np.unique(t), t_min).mean())
            parts.append(f"{pred} {mean_error:.4g} (floor {floor:.4g})")
        notes.append(f"{name} (token {token_dim}, width {width}): mean x error over t, " + ", ".join(parts))
    values = np.concatenate(ratios) if ratios else np.array([NAN])
    if not np.isfinite(values).all():
        return Measured("C5m", NAN, 0, "an eps- or v-prediction x error is not finite; " + "; ".join(notes))
    note = "smallest error/floor over cells, seeds and t; " + "; ".join(notes)
    return Measured("C5m", float(values.min()), cells, note)


def measure_claims(
    metrics: pd.DataFrame, t_eps: float, t_min: float = 1e-3, ranks: dict[str, list[int]] | None = None
) -> list[Measured]:
    """Every claim and check of config/claims/pred_loss_space.yaml. FD is each regime's sample-quality metric:
    true FID where it was computed (paper scale, images), else the proxy. `ranks` gives each regime's token
    dimension and network width ('dataset/arch' -> [token_dim, width]) for the rank-floor check."""
    view = quality_view(metrics)
    return [
        reweighting_check(metrics, t_eps),
        amplification_check(metrics),
        factor_roles(view),
        fd_ratio(view),
        mse_spread(view),
        x_margin_beyond_null(view, "C5", IMAGE_BOTTLENECK, IMAGE_NO_BOTTLENECK),
        rank_floor_check(metrics, ranks, t_min),
        x_margin(view, "C5b", TOY_BOTTLENECK, TOY_NO_BOTTLENECK),
        pred_share(view),
    ]
