"""Paper 13's measured values for the claims and checks of ``config/claims/spectral_zo.yaml``.

The paper was not found: SZO-kappa is OUR RECONSTRUCTION, and every claim tests it. Each compared quantity is
computed per seed (a seed is one network initialisation, data draw or training run), and the claim is decided by the
95% t interval over seeds; a missing method, seed or a non-finite value leaves it inconclusive with the reason. A hard
claim names its nulls: the same measurement by methods that carry the activation information but not the spectral
shaping (a probe along the mean activation direction alone, AGZO's rank-r activation subspace; for Z4 a correction
by a mismatched C). kappa = 0 is NOT a null: it is weight perturbation with the same draws (K1), so it equals the
denominator. A holds whose harder null (the one nearest to passing) passes too is inconclusive.

``comparisons`` (config-free names the claims compare): szo (the SZO methods for Z1), null (the kappa = 0 method,
the denominator of the cosine ratios), nulls (Z1, Z2 and Z6's null methods), centred (Z1c), wp, spsa, orth and iid
(Z3), raw/corrected pairs (Z4), corrected_null (Z4's mismatched correction beside its raw twin), probes (Z1's K),
szo_train (the SZO variants Z5 picks the best of, on the validation split), train_null (Z5's null), backprop,
node_perturbation (Z5), spectral_szo (Z2, Z6), spectral_layer (Z6's layer).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from neurips26.common.claims import Measured, measured_from_spread, t_interval
from neurips26.spectral_zo.alignment import OVERALL

__all__ = ["dimension_slopes", "measure_claim", "measure_claims"]


class Incomplete(ValueError):
    """A compared method or seed is missing, or a value is not finite: the claim cannot be decided."""


def _per_seed(frame: pd.DataFrame, method: str, what: str) -> pd.Series:
    rows = frame[frame["method"] == method]
    if rows.empty:
        raise Incomplete(f"no {what} rows of {method}")
    return rows


def _complete(values: pd.Series, what: str) -> pd.Series:
    if values.empty:
        raise Incomplete(f"no values of {what}")
    bad = [f"seed {s}: {v}" for s, v in values.items() if not np.isfinite(v)]
    if bad:
        raise Incomplete(f"{what}: non-finite values ({'; '.join(bad)})")
    return values


def _spread(claim_id: str, values: pd.Series, note: str, null: float | None = None) -> Measured:
    spread = t_interval(values.to_numpy())
    measured = measured_from_spread(claim_id, spread, f"{note}; {spread.text()} over seeds {sorted(values.index)}")
    return Measured(measured.claim_id, measured.value, measured.runs, measured.note, measured.low, measured.high,
                    null=null)  # fmt: skip


def _null_end(values: pd.Series, comparison: str) -> float:
    """A null is compared with the threshold by the end of its t interval nearest to passing, so it passes exactly
    when it would hold by the claim's own rule."""
    if len(values) < 2 or not np.isfinite(values).all():
        return math.nan
    spread = t_interval(values.to_numpy())
    if spread.low == spread.high:
        return float(spread.mean)
    return float(spread.low if comparison in (">", ">=") else spread.high)


def _hardest_null(compute, names, comparison: str) -> tuple[float, str]:
    """The end nearest to passing over the null methods `names` (`compute(name)` gives its per-seed values); NaN,
    with the reason, where one is missing (a missing null leaves a holds inconclusive)."""
    ends = {}
    for name in names:
        try:
            ends[name] = _null_end(compute(name), comparison)
        except Incomplete as error:
            return math.nan, f"null {name}: {error}"
    if not ends or not all(np.isfinite(v) for v in ends.values()):
        return math.nan, f"nulls {ends}"
    pick = max if comparison in (">", ">=") else min
    name = pick(ends, key=ends.get)
    return ends[name], ", ".join(f"{n} {v:.4g}" for n, v in ends.items())


def _guard(claim_id: str, compute) -> Measured:
    try:
        return compute()
    except Incomplete as error:
        return Measured(claim_id, math.nan, 0, note=str(error))


# ---------------------------------------------------------------------------------------------------- alignment
def mean_cosine(alignment: pd.DataFrame, method: str, probes: int) -> pd.DataFrame:
    """Mean over repeats of the cosine, per (seed, step, layer), at `probes`."""
    rows = _per_seed(alignment, method, "alignment")
    rows = rows[rows["probes"] == probes]
    if rows.empty:
        raise Incomplete(f"no alignment rows of {method} at K={probes}")
    return rows.groupby(["seed", "step", "layer"])["cosine"].mean()


def _ratio_min(alignment, methods, null, probes) -> pd.Series:
    """Per seed, the smallest over layers (not the whole-network cosine), steps and methods of
    mean cos(method) / mean cos(null)."""
    denominator = mean_cosine(alignment, null, probes)
    ratios = []
    for method in methods:
        ratio = mean_cosine(alignment, method, probes) / denominator
        ratios.append(ratio[ratio.index.get_level_values("layer") != OVERALL])
    return _complete(pd.concat(ratios).groupby("seed").min(), "cosine ratios")


def _z1(tables, comp) -> Measured:
    a, k = tables["alignment"], comp["probes"]
    values = _ratio_min(a, comp["szo"], comp["null"], k)
    null, ends = _hardest_null(lambda m: _ratio_min(a, [m], comp["null"], k), comp["nulls"], ">=")
    return _spread(
        "Z1",
        values,
        f"min over layers, steps and {', '.join(comp['szo'])} of mean cos / mean cos({comp['null']}) at K={k}; "
        f"nulls (activation information without the spectral shaping), lower ends: {ends}",
        null,
    )


def _z1c(tables, comp) -> Measured:
    a, k = tables["alignment"], comp["probes"]
    return _spread("Z1c", _ratio_min(a, [comp["centred"]], comp["null"], k),
                   f"min over layers and steps of mean cos({comp['centred']}) / mean cos({comp['null']}) at K={k}: "
                   "SZO-1 shaped by the covariance (the mean activation removed)")  # fmt: skip


def _orth_gap(alignment, orth, iid) -> pd.Series:
    """Per seed, the smallest over K (step 0, whole network) of mean cos(orth) - mean cos(iid)."""
    gaps = []
    for k in sorted(alignment["probes"].unique()):
        a = mean_cosine(alignment, orth, k).xs(OVERALL, level="layer")
        b = mean_cosine(alignment, iid, k).xs(OVERALL, level="layer")
        gaps.append((a - b).groupby("seed").mean())
    return _complete(pd.concat(gaps, axis=1).min(axis=1), "orthogonalisation gaps")


def _z3(tables, comp) -> Measured:
    values = _orth_gap(tables["alignment"], comp["orth"], comp["iid"])
    return _spread("Z3", values, f"min over K of mean cos({comp['orth']}) - mean cos({comp['iid']}), whole network")


# ---------------------------------------------------------------------------------------------------- dimension
def dimension_slopes(dimension: pd.DataFrame) -> pd.DataFrame:
    """Per (method, seed): the least-squares slope of log(mean cosine over repeats) against log(parameter count)."""
    means = dimension.groupby(["method", "seed", "params"])["cosine"].mean().reset_index()
    rows = []
    for (method, seed), group in means.groupby(["method", "seed"]):
        ok = group["cosine"] > 0
        slope = np.polyfit(np.log(group.loc[ok, "params"]), np.log(group.loc[ok, "cosine"]), 1)[0] \
            if ok.sum() >= 2 else math.nan  # fmt: skip
        rows.append({"method": method, "seed": seed, "slope": float(slope)})
    return pd.DataFrame(rows, columns=["method", "seed", "slope"])


def _slope(slopes: pd.DataFrame, method: str) -> pd.Series:
    rows = _per_seed(slopes, method, "dimension")
    return _complete(rows.set_index("seed")["slope"].sort_index(), f"slope of {method}")


def _z2(tables, comp) -> Measured:
    slopes = dimension_slopes(tables["dimension"])
    szo_slope, wp = _slope(slopes, comp["spectral_szo"]), _slope(slopes, comp["wp"])
    null, ends = _hardest_null(lambda m: _slope(slopes, m) - wp, comp["nulls"], ">")
    return _spread(
        "Z2",
        szo_slope - wp,
        f"slope of log cos against log #params, {comp['spectral_szo']} minus {comp['wp']} (predicted +1/4 when C's "
        f"effective rank does not grow with width); nulls minus {comp['wp']}, lower ends: {ends}",
        null,
    )


# K6 tests a power law in expectation: a slope through fewer widths, or means of fewer draws, tests nothing (smoke
# has 2 widths and 1 draw each; set after smoke's K6 read -0.25 from one noisy pair of cosines)
K6_MIN_WIDTHS = 3
K6_MIN_DRAWS = 5


def _k6(tables, comp) -> Measured:
    rows = tables["dimension"][tables["dimension"]["method"] == comp["wp"]]
    widths = rows["params"].nunique()
    draws = int(rows.groupby(["seed", "params"]).size().min()) if len(rows) else 0
    if widths < K6_MIN_WIDTHS or draws < K6_MIN_DRAWS:
        raise Incomplete(
            f"{widths} widths with at least {draws} draws each: the sqrt(K/P) law needs >= {K6_MIN_WIDTHS} widths "
            f"and >= {K6_MIN_DRAWS} draws per width"
        )
    wp = _slope(dimension_slopes(tables["dimension"]), comp["wp"])
    note = f"max over seeds of |slope of {comp['wp']} + 0.5| (slopes {np.round(wp.to_numpy(), 3)})"
    return Measured("K6", float((wp + 0.5).abs().max()), len(wp), note=note)


# ------------------------------------------------------------------------------------------------ bias-variance
def _bv(frame: pd.DataFrame, method: str, column: str) -> pd.Series:
    return _per_seed(frame, method, "bias-variance").set_index(["seed", "layer"])[column]


def _debiased_bias(frame, method) -> pd.Series:
    """sqrt(max(0, bias^2 - tr Cov / (D ||g||^2))): the relative bias with the draws' chance part removed."""
    return np.sqrt(_bv(frame, method, "bias_sq_debiased").clip(lower=0.0))


def _bias_gain(frame, pairs) -> pd.Series:
    gains = [_debiased_bias(frame, raw) - _debiased_bias(frame, corrected) for raw, corrected in pairs]
    return _complete(pd.concat(gains).groupby("seed").min(), "bias differences")


# the K3 rule: a bias within this many chance floors is not resolved by the draws
FLOORS = 2.0


def _z4(tables, comp) -> Measured:
    frame = tables["bias_variance"]
    unresolved = []
    for _, corrected in comp["corrected"]:
        ratio = _bv(frame, corrected, "bias") / _bv(frame, corrected, "bias_floor")
        unresolved += [f"{corrected} seed {s} {layer}: {r:.2f}" for (s, layer), r in ratio.items() if r <= FLOORS]
    if unresolved:
        raise Incomplete(f"the corrected estimate's bias is within {FLOORS:g}x its chance floor (bias / floor: "
                         f"{'; '.join(unresolved[:4])}{' ...' if len(unresolved) > 4 else ''}): the draws do not "
                         "resolve it; the exact expectation is check K7")  # fmt: skip
    values = _bias_gain(frame, comp["corrected"])
    null, ends = _hardest_null(lambda _: _bias_gain(frame, [comp["corrected_null"]]), ["mismatched"], ">")
    pairs = ", ".join(f"{a}/{b}" for a, b in comp["corrected"])
    return _spread(
        "Z4",
        values,
        f"min over layers and pairs ({pairs}) of debiased relative bias raw - corrected; null: the correction by a "
        f"mismatched C ({'/'.join(comp['corrected_null'])}), lower end {ends}",
        null,
    )


def _k7(tables, comp) -> Measured:
    frame = tables["bias_variance"]
    gaps = pd.concat([_bv(frame, b, "angle_expected") - _bv(frame, a, "angle_expected")
                      for a, b in comp["corrected"]])  # fmt: skip
    if gaps.empty or not np.isfinite(gaps).all():
        return Measured("K7", math.nan, 0, note="no finite exact expectations of the corrected pairs")
    worst = pd.concat([_bv(frame, b, "angle_expected") for _, b in comp["corrected"]])
    note = (f"max over seeds, layers and pairs of angle(E corrected, g) - angle(E raw, g) in degrees, exact "
            f"expectations from G and C (largest corrected angle {worst.max():.3f} deg)")  # fmt: skip
    return Measured("K7", float(gaps.max()), len(gaps), note=note)


def _relative_variance(frame, method) -> pd.Series:
    """tr Cov / ||E g||^2 with E g the exact expectation: scale-free, comparable across estimators."""
    return _bv(frame, method, "variance") / _bv(frame, method, "expected_norm") ** 2


def _z4b(tables, comp) -> Measured:
    frame = tables["bias_variance"]
    ratios = [np.log10(_relative_variance(frame, b) / _relative_variance(frame, a)) for a, b in comp["corrected"]]
    values = _complete(pd.concat(ratios).groupby("seed").min(), "relative variance ratios")
    return _spread("Z4b", values, "min over layers and pairs of log10 of the relative variance tr Cov / ||E g||^2, "
                   "corrected over raw (E g exact)")  # fmt: skip


# ----------------------------------------------------------------------------------------------------- training
def final_accuracy(curves: pd.DataFrame, method: str) -> pd.Series:
    """Per seed, the test accuracy at the run's last evaluation; NaN for a run that diverged."""
    rows = _per_seed(curves, method, "training")
    last = rows.sort_values("step").groupby("seed").tail(1).set_index("seed").sort_index()
    return last["test_accuracy"].where(last["diverged_step"].isna())


def best_on_validation(tuning: pd.DataFrame, methods: list[str]) -> str:
    """The method of `methods` with the highest validation accuracy at its chosen lr (never the test split)."""
    chosen = tuning[tuning["chosen"] & tuning["method"].isin(methods)].set_index("method")["val_accuracy"]
    chosen = chosen[np.isfinite(chosen)]
    if chosen.empty:
        raise Incomplete(f"no finite validation accuracy among {methods}")
    return str(chosen.idxmax())


def _paired(curves, a: str, b_methods: list[str]) -> pd.Series:
    va = _complete(final_accuracy(curves, a), f"{a} test accuracy")
    others = pd.concat([_complete(final_accuracy(curves, m), f"{m} test accuracy") for m in b_methods], axis=1)
    if set(va.index) != set(others.index):
        raise Incomplete(f"seeds {sorted(va.index)} of {a} against {sorted(others.index)} of {b_methods}")
    return va - others.max(axis=1).reindex(va.index)


def _z5(tables, comp) -> Measured:
    best = best_on_validation(tables["tuning"], comp["szo_train"])
    baseline = best_on_validation(tables["tuning"], [comp["wp"], comp["spsa"]])
    values = _paired(tables["curves"], best, [baseline])
    null, ends = _hardest_null(lambda m: _paired(tables["curves"], m, [baseline]), [comp["train_null"]], ">")
    return _spread(
        "Z5",
        values,
        f"test accuracy of {best} (best of {len(comp['szo_train'])} SZO variants on validation) minus {baseline} "
        f"(the better of {comp['wp']}, {comp['spsa']} on validation), paired by seed; null: "
        f"{comp['train_null']} minus the same, lower end {ends}",
        null,
    )


def _z5b(tables, comp) -> Measured:
    best = best_on_validation(tables["tuning"], comp["szo_train"])
    return _spread(
        "Z5b",
        _paired(tables["curves"], comp["backprop"], [best]),
        f"test accuracy of {comp['backprop']} minus {best}, paired by seed",
    )


def _z5c(tables, comp) -> Measured:
    best = best_on_validation(tables["tuning"], comp["szo_train"])
    return _spread(
        "Z5c",
        _paired(tables["curves"], best, [comp["node_perturbation"]]),
        f"test accuracy of {best} minus {comp['node_perturbation']}, paired by seed",
    )


# ----------------------------------------------------------------------------------------------------- spectral
def spectral_gain(spectral: pd.DataFrame, method: str, null: str, layer: str) -> pd.DataFrame:
    """Per (seed, a): mean cos(method) / mean cos(null) on `layer`, over repeats."""
    rows = spectral[spectral["layer"] == layer]
    means = rows.groupby(["method", "seed", "alpha"])["cosine"].mean()
    if method not in means.index.get_level_values(0) or null not in means.index.get_level_values(0):
        raise Incomplete(f"no spectral rows of {method} or {null}")
    return (means.loc[method] / means.loc[null]).unstack("alpha")


def _gain_rise(spectral, method, null, layer) -> pd.Series:
    gain = spectral_gain(spectral, method, null, layer)
    if gain.shape[1] < 2:
        raise Incomplete("fewer than two decay exponents")
    return _complete(gain[gain.columns.max()] - gain[gain.columns.min()], "spectral gains")


def _z6(tables, comp) -> Measured:
    frame, layer = tables["spectral"], comp["spectral_layer"]
    values = _gain_rise(frame, comp["spectral_szo"], comp["null"], layer)
    null, ends = _hardest_null(lambda m: _gain_rise(frame, m, comp["null"], layer), comp["nulls"], ">")
    return _spread(
        "Z6",
        values,
        f"cos({comp['spectral_szo']})/cos({comp['null']}) on {layer} at the largest a minus "
        f"at the smallest; nulls, lower ends: {ends}",
        null,
    )


# --------------------------------------------------------------------------------------------------------- cost
def _cost(tables, method: str, column: str) -> pd.Series:
    cost = tables["cost"]
    top = cost[(cost["width"] == cost["width"].max()) & (cost["probes"] == cost["probes"].max())]
    values = top.set_index("method")[column]
    if method not in values or "mezo_step" not in values:
        raise Incomplete(f"no cost rows of {method} and mezo_step")
    return values


def _z7(tables, comp) -> Measured:
    values = _cost(tables, "spsa_batched", "extra_bytes")
    ratio = values["spsa_batched"] / max(values["mezo_step"], 1)
    return Measured("Z7", float(ratio), 1, note=f"extra bytes spsa_batched {values['spsa_batched']} / mezo_step "
                    f"{values['mezo_step']} at the largest width and K")  # fmt: skip


def _z8(tables, comp) -> Measured:
    values = _cost(tables, "spsa_batched", "seconds")
    return Measured(
        "Z8",
        float(values["mezo_step"] / values["spsa_batched"]),
        1,
        note=f"wall time mezo_step {values['mezo_step']:.2e} s / spsa_batched {values['spsa_batched']:.2e} s",
    )


# ------------------------------------------------------------------------------------------------------- checks
def _check(tables, claim_id: str) -> Measured:
    rows = tables["checks"].set_index("check")
    if claim_id not in rows.index:
        return Measured(claim_id, math.nan, 0, note="not measured")
    row = rows.loc[claim_id]
    return Measured(claim_id, float(row["value"]), 1, note=str(row["note"]))


def _mezo_memory(tables) -> Measured:
    cost = tables["cost"]
    rows = cost[cost["method"] == "mezo_step"]
    if rows.empty:
        return Measured("K4", math.nan, 0, note="no mezo_step rows")
    per = rows.groupby("width").apply(lambda g: g.sort_values("probes")["extra_bytes"].to_numpy(), include_groups=False)
    ratio = max(float(v[-1]) / max(float(v[0]), 1.0) for v in per)
    return Measured("K4", ratio, len(per), note="MeZO step extra bytes at the largest K / at the smallest, worst width")


def _budget(tables) -> Measured:
    curves = tables["curves"]
    if curves.empty:
        return Measured("K5", math.nan, 0, note="no training runs")
    per = curves.groupby("method")[["passes_per_step", "budget"]].first()
    used = (per["budget"] // per["passes_per_step"]) * per["passes_per_step"]
    shortfall = float(((per["budget"] - used) / per["budget"]).max())
    return Measured("K5", shortfall, len(per), note=f"largest unused share of the budget over {len(per)} methods")


MEASURES = {"Z1": _z1, "Z1c": _z1c, "Z2": _z2, "Z3": _z3, "Z4": _z4, "Z4b": _z4b, "Z5": _z5, "Z5b": _z5b,
            "Z5c": _z5c, "Z6": _z6, "Z7": _z7, "Z8": _z8, "K6": _k6, "K7": _k7}  # fmt: skip


def measure_claim(claim_id: str, tables: Mapping[str, pd.DataFrame], comparisons: Mapping) -> Measured:
    """One claim or check, measured from the pipeline's tables."""
    if claim_id in MEASURES:
        return _guard(claim_id, lambda: MEASURES[claim_id](tables, comparisons))
    if claim_id == "K4":
        return _mezo_memory(tables)
    if claim_id == "K5":
        return _budget(tables)
    return _check(tables, claim_id)


CLAIM_IDS = (*(k for k in MEASURES if not k.startswith("K")), "K1", "K2", "K3", "K4", "K5", "K6", "K7")


def measure_claims(tables: Mapping[str, pd.DataFrame], comparisons: Mapping) -> list[Measured]:
    """Every claim and check of the claims file, measured from the pipeline's tables."""
    return [measure_claim(claim_id, tables, comparisons) for claim_id in CLAIM_IDS]
