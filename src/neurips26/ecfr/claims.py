"""Paper 11's measured values for the claims and checks of ``config/claims/ecfr.yaml``.

Trained methods are compared over seeds: a seed's runs of every method share the data and the teacher, so
differences are paired by seed and decided by their 95% t interval. The compared value of a run is the mean over
classes of its per-class metric (the paper's tables' "m" prefix), on the primary dataset. Evidence must be complete:
a missing seed or a non-finite value of a compared run leaves the claim inconclusive with the reason in the note,
never a comparison of the rest.

C4 (hard) has its null inside its value (issue 41's review): per seed, the single-modality difference minus the harder
of the same difference on the defects both modalities show (the null) and 0 (``beyond_null``), with a t interval; an
undecided null can no longer leave a holds standing. C1 (soft) has no null: the same-modal control's refit from another
initialisation, 0 in expectation by construction, is reported in its note as the refit spread.

Complexity claims read the paper configuration's row of the complexity table (measured at 256 pixels with the
ImageNet ResNet-34 teacher's architecture, whatever the scale); they are properties of the networks, not of training,
so they rest on one measurement.

The published accuracy (P1-P6: the README's quote of Tables 1 and 7, the definitions' ``paper_value``) is set beside
ECFR's unified class-mean metric on the dataset of the same source (MVTec 3D-AD, Eyecandies); a scale without that
dataset (quick and smoke: synthetic only) has no evidence for them. They are two-sided: the compared value is the
distance |ours - published| with the interval of that distance implied by our t interval, so a value far above the
paper's (a leak, say) fails as a value far below it does.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd

from neurips26.common.claims import Measured, beyond_null, measured_from_spread, t_interval

__all__ = ["PAPER_GMACS", "PAPER_PARAMS_M", "PUBLISHED", "PUBLISHED_VALUES", "measure_claims", "published_distance",
           "run_values"]  # fmt: skip

PAPER_PARAMS_M = 44.627  # Table 2: parameters, frozen ResNet-34 included
PAPER_GMACS = 15.762  # Table 2: "GFLOPs" from fvcore, which counts a multiply-add once
PUBLISHED_CFM = "cfm_published"  # the complexity table's row of CFM as published (DINO ViT-B/8 + Point-MAE)
# the claims that set the published multi-class accuracy (README: Tables 1 and 7) beside ours: (source, metric)
PUBLISHED = {
    "P1": ("mvtec3d", "i_auroc"),
    "P2": ("mvtec3d", "p_auroc"),
    "P3": ("mvtec3d", "aupro"),
    "P4": ("eyecandies", "i_auroc"),
    "P5": ("eyecandies", "p_auroc"),
    "P6": ("eyecandies", "aupro"),
}
# the published values themselves (README, in % there; the definitions' paper_value, which a test ties to these)
PUBLISHED_VALUES = {"P1": 0.9185, "P2": 0.9860, "P3": 0.9537, "P4": 0.8664, "P5": 0.9713, "P6": 0.9021}


class Incomplete(ValueError):
    """A compared run lacks a seed or has a non-finite value: the claim cannot be decided."""


def run_values(metrics: pd.DataFrame, dataset: str, method: str, setting: str, column: str, group: str = "class",
               name: str = "mean") -> pd.Series:  # fmt: skip
    """Per seed, ``column`` of the row (group, name) of the runs of ``method`` in ``setting`` on ``dataset``."""
    rows = metrics[(metrics["dataset"] == dataset) & (metrics["method"] == method) & (metrics["setting"] == setting)
                   & (metrics["group"] == group) & (metrics["name"] == name)]  # fmt: skip
    return rows.set_index("seed")[column].sort_index()


def _complete(values: pd.Series, what: str) -> pd.Series:
    if values.empty:
        raise Incomplete(f"no runs of {what}")
    bad = [f"seed {s}: {v}" for s, v in values.items() if not np.isfinite(v)]
    if bad:
        raise Incomplete(f"{what}: non-finite values ({'; '.join(bad)})")
    return values


def _paired(a: pd.Series, b: pd.Series, what_a: str, what_b: str) -> pd.Series:
    a, b = _complete(a, what_a), _complete(b, what_b)
    if set(a.index) != set(b.index):
        raise Incomplete(f"seeds {sorted(a.index)} of {what_a} against {sorted(b.index)} of {what_b}")
    return a - b.reindex(a.index)


def _difference(claim_id, metrics, dataset, a, b, setting, column, note) -> Measured:
    try:
        va, vb = run_values(metrics, dataset, a, setting, column), run_values(metrics, dataset, b, setting, column)
        diff = _paired(va, vb, f"{a} {setting}", f"{b} {setting}")
    except Incomplete as error:
        return Measured(claim_id, math.nan, 0, note=f"{dataset}: {error}")
    return measured_from_spread(claim_id, t_interval(diff), f"{dataset}: {note}")


def _refit_spread(metrics: pd.DataFrame, dataset: str, control: str, refit: str | None) -> str:
    """C1's note: the refit spread, the same-modal control's refit from another initialisation (``refit``,
    comparisons.same_modal_null) minus the control, paired by seed, with its t interval: how far two fits of one model
    differ. Reported, not a null (issue 41's review): its expectation is 0 by construction, so as a null it could
    pass only by chance."""
    if not refit:
        return "refit spread: no refit of the same-modal control at this scale"
    try:
        diff = _paired(run_values(metrics, dataset, refit, "unified", "i_auroc"),
                       run_values(metrics, dataset, control, "unified", "i_auroc"), f"{refit} unified",
                       f"{control} unified")  # fmt: skip
    except Incomplete as error:
        return f"refit spread: {error}"
    return (
        f"refit spread (not a null: {refit}, {control} refitted from another initialisation, minus {control}; 0 in "
        f"expectation by construction) {t_interval(diff).text()}, per seed "
        f"{dict((int(k), round(float(v), 4)) for k, v in diff.items())}"
    )


def _c1(metrics: pd.DataFrame, dataset: str, proposed: str, control: str, refit: str | None) -> Measured:
    """C1: class-mean I-AUROC of the proposed method minus the same-modal control (unified, paired by seed); no null,
    the refit spread in the note (:func:`_refit_spread`)."""
    measured = _difference("C1", metrics, dataset, proposed, control, "unified", "i_auroc",
                           f"class-mean I-AUROC of {proposed} minus {control} (unified), paired by seed")  # fmt: skip
    return replace(measured, note=f"{measured.note}; {_refit_spread(metrics, dataset, control, refit)}")


def _defect_differences(metrics, dataset, proposed, control, defects) -> dict[str, pd.Series]:
    """Per defect type, the per-seed unified I-AUROC difference proposed - control on its images (raises Incomplete)."""
    out = {}
    for d in defects:
        values = {m: run_values(metrics, dataset, m, "unified", "i_auroc", "defect", d) for m in (proposed, control)}
        out[d] = _paired(values[proposed], values[control], f"{proposed} {d}", f"{control} {d}")
    return out


def _both_modality_null(metrics: pd.DataFrame, dataset: str, proposed: str, control: str,
                        single: list[str]) -> tuple[dict, str]:  # fmt: skip
    """C4's null: the same measurement on the defect types visible in *both* modalities (those of the dataset not
    labelled single-modality), where neither stream has to infer a defect its target modality does not show: per seed
    the mean over those types of the I-AUROC difference; ({seed: value}, a note). Empty where it cannot be measured
    (the note says why)."""
    rows = metrics[(metrics["dataset"] == dataset) & (metrics["group"] == "defect")]
    both = [d for d in dict.fromkeys(rows["name"]) if d not in single]
    if not both:
        return {}, "null: no defect type visible in both modalities"
    try:
        diffs = _defect_differences(metrics, dataset, proposed, control, both)
    except Incomplete as error:
        return {}, f"null: {error}"
    per_seed = pd.concat(diffs, axis=1).mean(axis=1)
    return per_seed.to_dict(), (
        f"null (the same on the defects both modalities show, {', '.join(both)}; mean over them) "
        f"{t_interval(per_seed).text()}"
    )


def _single_modality(metrics: pd.DataFrame, dataset: str, proposed: str, control: str,
                     modality_of: dict[str, str]) -> Measured:  # fmt: skip
    """C4: for each defect type visible in one modality only (``modality_of``, the config's
    comparisons.single_modality: a dataset's own labelling), per seed the unified I-AUROC on its images of the proposed
    method minus the same-modal control's, minus the harder of the null on the same seed (the same difference on the
    defects both modalities show, :func:`_both_modality_null`) and 0 (``beyond_null``, issue 41's review); the value
    is the smallest mean over those types, its interval the smallest of each end of their t intervals; inconclusive
    where the dataset labels none (MVTec 3D-AD) or the null cannot be measured. The null is inside the value (no null
    field); the note keeps each type's plain difference (the former C4) and the null's own interval."""
    defects = list(modality_of)
    if not defects:
        return Measured("C4", math.nan, 0, note=f"{dataset}: no defect type is labelled as visible in one modality")
    present = set(metrics.loc[(metrics["dataset"] == dataset) & (metrics["group"] == "defect"), "name"])
    missing = [d for d in defects if d not in present]
    if missing:
        return Measured("C4", math.nan, 0, note=f"{dataset}: no test images of {missing}")
    null, null_text = _both_modality_null(metrics, dataset, proposed, control, defects)
    spreads, parts = {}, []
    try:
        for d in defects:
            values = {m: run_values(metrics, dataset, m, "unified", "i_auroc", "defect", d)
                      for m in (proposed, control)}  # fmt: skip
            diff = _paired(values[proposed], values[control], f"{proposed} {d}", f"{control} {d}")
            beyond = beyond_null(diff.to_dict(), null)
            if null and set(beyond) != set(diff.index):
                raise Incomplete(f"{d}: seeds {sorted(diff.index)} against the null's {sorted(null)}")
            spreads[d] = t_interval(list(beyond.values()))
            parts.append(f"{d} ({modality_of[d]} only): {proposed} {t_interval(values[proposed]).text()}, {control} "
                         f"{t_interval(values[control]).text()}, difference {t_interval(diff).text()}, beyond "
                         f"max(null, 0) {spreads[d].text()}")  # fmt: skip
    except Incomplete as error:
        return Measured("C4", math.nan, 0, note=f"{dataset}: {error}; {null_text}")
    note = (f"{dataset}: unified I-AUROC on each single-modality defect's images against the same class's normal "
            "ones, averaged over classes, ecfr minus same_modal, per seed minus max(the null on that seed, 0); "
            + "; ".join(parts) + f"; {null_text}")  # fmt: skip
    if not null:
        return Measured("C4", math.nan, 0, note=f"{note}: nothing to subtract, so nothing is decided")
    worst = min(spreads, key=lambda d: spreads[d].mean)
    runs = min(s.runs for s in spreads.values())
    if runs < 2:
        return Measured("C4", spreads[worst].mean, runs, note=note)
    return Measured("C4", spreads[worst].mean, runs, low=min(s.low for s in spreads.values()),
                    high=min(s.high for s in spreads.values()), note=note)  # fmt: skip


def _steps_per_model(traces: pd.DataFrame, dataset: str, methods: tuple[str, str]) -> str:
    """The training steps of the compared fitted models (unified, per class), read from their traces."""
    rows = traces[(traces["dataset"] == dataset) & traces["method"].isin(methods)]
    if rows.empty:
        return "no training traces"
    steps = rows.groupby(["setting", "method", "seed", "group"])["step"].max().groupby("setting")
    return ", ".join(f"{s} {lo}" + (f"-{hi}" if hi != lo else "") for s, (lo, hi) in
                     steps.agg(["min", "max"]).iterrows()) + " steps per fitted model"  # fmt: skip


def _on_per_class_seeds(unified: pd.Series, per_class: pd.Series) -> tuple[pd.Series, pd.Series]:
    """The unified runs of the seeds that have per-class models (config per_class_seeds: a subset at quick); a
    per-class seed without a unified run is left for the pairing to name."""
    return (unified[unified.index.isin(per_class.index)] if len(per_class) else unified), per_class


def _setting_gap(metrics: pd.DataFrame, traces: pd.DataFrame, dataset: str, proposed: str, control: str) -> Measured:
    """C5: per seed, (unified - per_class) of the proposed method minus the same of the control, class-mean I-AUROC;
    the note gives the steps each fitted model trained (the per-class budget, config train.per_class)."""
    try:
        gap = {m: _paired(*_on_per_class_seeds(run_values(metrics, dataset, m, "unified", "i_auroc"),
                                               run_values(metrics, dataset, m, "per_class", "i_auroc")),
                          f"{m} unified", f"{m} per_class") for m in (proposed, control)}  # fmt: skip
        diff = _paired(gap[proposed], gap[control], f"{proposed} gap", f"{control} gap")
    except Incomplete as error:
        return Measured("C5", math.nan, 0, note=f"{dataset}: {error}")
    note = (f"{dataset}: class-mean I-AUROC unified minus per class, {proposed} {t_interval(gap[proposed]).text()}, "
            f"{control} {t_interval(gap[control]).text()}; their difference, paired by seed; "
            f"{_steps_per_model(traces, dataset, (proposed, control))}"
            f"{_exposure(traces, dataset, proposed)}")  # fmt: skip
    return measured_from_spread("C5", t_interval(diff), note)


def _exposure(traces: pd.DataFrame, dataset: str, method: str) -> str:
    """Where per-class models train as many steps as the unified one (quick, smoke), each sees its class's images
    about as many times more often as there are classes: the setting and the exposure change together, so the
    verdict does not carry over to paper scale's equal epochs."""
    rows = traces[(traces["dataset"] == dataset) & (traces["method"] == method)]
    steps = rows.groupby(["setting", "seed", "group"])["step"].max()
    if not {"unified", "per_class"} <= set(steps.index.get_level_values("setting")):
        return ""
    per_class, unified = steps.loc["per_class"], steps.loc["unified"]
    if per_class.median() < unified.median():
        return ""
    classes = per_class.groupby(level="seed").size().max()
    return (f"; equal steps per model: each per-class model sees its class's images about {classes}x as often as the "
            "unified model does, so exposure changes with the setting and this verdict does not carry over to paper "
            "scale (equal epochs)")  # fmt: skip


def _published(claim_id: str, metrics: pd.DataFrame, sources: dict[str, str], method: str) -> Measured:
    """P1-P6: the unified class-mean metric of ``method`` on the dataset whose source the published value is of
    (``sources``: the config's dataset names -> sources), mean and t interval over seeds."""
    source, column = PUBLISHED[claim_id]
    names = [name for name, s in sources.items() if s == source]
    if not names:
        run = ", ".join(f"{n} ({s})" for n, s in sources.items())
        return Measured(claim_id, math.nan, 0, note=f"no {source} runs at this scale (it runs {run}): not comparable")
    try:
        values = _complete(run_values(metrics, names[0], method, "unified", column), f"{method} unified")
    except Incomplete as error:
        return Measured(claim_id, math.nan, 0, note=f"{names[0]}: {error}")
    return published_distance(claim_id, t_interval(values), PUBLISHED_VALUES[claim_id],
                              f"{names[0]}: class-mean {column} of {method} (unified)")  # fmt: skip


def published_distance(claim_id: str, spread, paper: float, note: str) -> Measured:
    """|ours - paper| with the interval of that distance implied by the interval [low, high] of ours: 0 at the low
    end where the interval contains the paper's value, the nearer end's distance otherwise; the farther end's at the
    high end. A two-sided check of 'within the margin' then decides on this interval with '<='."""
    text = f"ours {spread.text()} beside the published {paper:.4f}; {note}"
    value = abs(spread.mean - paper)
    if spread.runs < 2 or not (math.isfinite(spread.low) and math.isfinite(spread.high)):
        return Measured(claim_id, value, spread.runs, note=text)
    ends = (abs(spread.low - paper), abs(spread.high - paper))
    low = 0.0 if spread.low <= paper <= spread.high else min(ends)
    return Measured(claim_id, value, spread.runs, note=text, low=low, high=max(ends))


def _paper_row(complexity: pd.DataFrame, method: str) -> pd.Series | None:
    rows = complexity[(complexity["configuration"] == "paper") & (complexity["method"] == method)]
    return rows.iloc[0] if len(rows) == 1 else None


def _ratio(claim_id: str, complexity: pd.DataFrame, a: str, b: str, column: str, what: str) -> Measured:
    ra, rb = _paper_row(complexity, a), _paper_row(complexity, b)
    if ra is None or rb is None or not (np.isfinite(ra[column]) and np.isfinite(rb[column])) or rb[column] <= 0:
        return Measured(claim_id, math.nan, 0, note=f"no paper-configuration {column} of {a} and {b} at this scale")
    sizes = f"{a} {ra[column]:.4g} ({ra['size']} px), {b} {rb[column]:.4g} ({rb['size']} px)"
    note = f"paper configurations: {what} {sizes}"
    return Measured(claim_id, float(ra[column] / rb[column]), 1, note=note)


def _relative(claim_id: str, complexity: pd.DataFrame, method: str, column: str, paper: float) -> Measured:
    row = _paper_row(complexity, method)
    if row is None or not np.isfinite(row[column]):
        return Measured(claim_id, math.nan, 0, note=f"no paper-configuration {column} of {method}")
    note = f"{method} at 256 px: {column} {row[column]:.4g} against the paper's {paper}"
    return Measured(claim_id, float(abs(row[column] / paper - 1)), 1, note=note)


def _training(traces: pd.DataFrame) -> Measured:
    """K3: over every fitted model (each run's unified model or each class's), the smallest relative fall of the
    loss from the first tenth of its steps to the last tenth."""
    falls = []
    for _, trace in traces.groupby(["dataset", "method", "setting", "seed", "group"]):
        loss = trace.sort_values("step")["loss"].to_numpy()
        tenth = max(1, len(loss) // 10)
        first, last = loss[:tenth].mean(), loss[-tenth:].mean()
        falls.append(1 - last / first if np.isfinite(first) and np.isfinite(last) and first > 0 else math.nan)
    if not falls:
        return Measured("K3", math.nan, 0, note="no training traces")
    if not np.isfinite(falls).all():
        return Measured("K3", math.nan, 0, note=f"{int((~np.isfinite(falls)).sum())} model(s) with a non-finite loss")
    note = f"smallest relative fall over {len(falls)} fitted models; median {np.median(falls):.3g}"
    return Measured("K3", float(min(falls)), len(falls), note=note)


def measure_claims(metrics: pd.DataFrame, complexity: pd.DataFrame, traces: pd.DataFrame, comp: dict,
                   sources: dict[str, str]) -> list[Measured]:  # fmt: skip
    """Every claim and check; ``comp`` is the config's comparisons block, ``sources`` the datasets' sources."""
    primary, proposed = comp["primary"], comp["proposed"]
    same, mapping = comp["same_modal"], comp["mapping"]
    return [
        _c1(metrics, primary, proposed, same, comp.get("same_modal_null")),
        _difference("C2", metrics, primary, proposed, same, "unified", "aupro",
                    f"class-mean AUPRO of {proposed} minus {same} (unified), paired by seed"),
        _difference("C3", metrics, primary, proposed, mapping, "unified", "i_auroc",
                    f"class-mean I-AUROC of {proposed} minus {mapping} (unified), paired by seed"),
        _single_modality(metrics, primary, proposed, same, comp["single_modality"]),
        _setting_gap(metrics, traces, primary, proposed, same),
        _ratio("C6", complexity, proposed, PUBLISHED_CFM, "params_total_m", "parameters (M, backbones included):"),
        _ratio("C7", complexity, proposed, PUBLISHED_CFM, "gmacs", "GMACs (fvcore's 'GFLOPs'):"),
        _relative("K1", complexity, proposed, "params_total_m", PAPER_PARAMS_M),
        _relative("K2", complexity, proposed, "gmacs", PAPER_GMACS),
        _training(traces),
        *(_published(claim_id, metrics, sources, proposed) for claim_id in PUBLISHED),
    ]  # fmt: skip
