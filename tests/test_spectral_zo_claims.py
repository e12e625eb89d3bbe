"""Paper 13's claims (config/claims/spectral_zo.yaml) decided on hand-made tables: every claim holds, fails and is
inconclusive where it should, the nulls turn a holds inconclusive, and the report tables read the same tables."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from conftest import ROOT
from neurips26.common.claims import decide, load_definitions
from neurips26.spectral_zo.claims import best_on_validation, dimension_slopes, measure_claim, measure_claims

DEFINITIONS = load_definitions(ROOT / "config/claims/spectral_zo.yaml")
SEEDS = (0, 1, 2)
COMP = {
    "probes": 16, "szo": ["szo_k1", "szo_k2"], "null": "szo_k0", "wp": "wp_global", "spsa": "spsa",
    "orth": "szo_k1_orth", "iid": "szo_k1", "corrected": [["szo_k1", "szo_k1_bc"], ["szo_k2", "szo_k2_bc"]],
    "corrected_null": ["szo_k1", "szo_k1_bcx"], "szo_train": ["szo_k1", "szo_k1_top"], "backprop": "backprop",
    "node_perturbation": "node_perturbation", "spectral_szo": "szo_k1", "spectral_layer": "layer0",
    "nulls": ["szo_k1_mean", "agzo_r8"], "centred": "szo_k1_centred", "train_null": "agzo_r8",
}  # fmt: skip
COSINE = {"wp_global": 0.05, "szo_k0": 0.05, "szo_k1": 0.20, "szo_k2": 0.25, "szo_k1_orth": 0.21,
          "szo_k1_mean": 0.06, "agzo_r8": 0.07, "szo_k1_centred": 0.08}  # fmt: skip
SLOPE = {"wp_global": -0.5, "szo_k0": -0.5, "szo_k1": -0.3, "szo_k1_mean": -0.5, "agzo_r8": -0.55}
# per method: (relative bias, its chance floor, relative variance tr Cov/||g||^2, ||E g|| / ||g||, exact angle)
BIAS = {"szo_k1": (40.0, 5.0, 1e3, 40.0, 26.0), "szo_k1_bc": (10.0, 2.0, 1e4, 1.0, 0.1),
        "szo_k2": (2000.0, 50.0, 1e7, 2000.0, 27.0), "szo_k2_bc": (20.0, 4.0, 1e5, 1.0, 3.5),
        "szo_k1_bcx": (41.0, 5.0, 1e3, 40.0, 25.0)}  # fmt: skip
GAIN = {"wp_global": (1.0, 1.0), "szo_k0": (1.0, 1.0), "szo_k1": (2.0, 6.0), "szo_k1_mean": (1.5, 1.4),
        "agzo_r8": (1.2, 1.1)}  # (a = 0, a = 2) over szo_k0  # fmt: skip
ACCURACY = {"backprop": 0.97, "wp_global": 0.80, "spsa": 0.82, "szo_k0": 0.80, "szo_k1": 0.60, "szo_k1_top": 0.88,
            "node_perturbation": 0.90, "agzo_r8": 0.78}  # fmt: skip
VALIDATION = {"szo_k1": 0.60, "szo_k1_top": 0.87, "wp_global": 0.79, "spsa": 0.81}


def _jitter(seed: int) -> float:
    return 0.002 * (seed - 1)


def tables(seeds=SEEDS, cosine=COSINE, slope=SLOPE, bias=BIAS, gain=GAIN, accuracy=ACCURACY,
           validation=VALIDATION, diverged=(), mezo_bytes=(1000, 1000), checks=(0.0, 0.0, 1.0)) -> dict:  # fmt: skip
    alignment = pd.DataFrame([
        {"seed": s, "step": t, "probes": k, "layer": layer, "repeat": 0, "method": m, "cosine": c * (1 + _jitter(s))}
        for s in seeds for t in (0, 200) for k in (1, 4, 16) for layer in ("layer0", "layer1", "overall")
        for m, c in cosine.items()
    ])  # fmt: skip
    dimension = pd.DataFrame([
        {"seed": s, "width": p, "params": p, "repeat": r, "method": m, "cosine": (p / 1000) ** (b + _jitter(s))}
        for s in seeds for p in (1000, 4000, 16000) for m, b in slope.items() for r in range(5)
    ])  # fmt: skip
    bv = pd.DataFrame([
        {"seed": s, "method": m, "layer": layer, "bias": b * (1 + _jitter(s)), "bias_floor": f,
         "bias_sq_debiased": (b * (1 + _jitter(s))) ** 2 - f**2, "variance": v, "expected_norm": e,
         "angle_expected": a}
        for s in seeds for layer in ("layer0", "layer1") for m, (b, f, v, e, a) in bias.items()
    ])  # fmt: skip
    spectral = pd.DataFrame([
        {"seed": s, "alpha": alpha, "repeat": 0, "method": m, "probes": 16, "layer": "layer0",
         "cosine": 0.05 * g[i] * (1 + _jitter(s))}
        for s in seeds for i, alpha in enumerate((0.0, 2.0)) for m, g in gain.items()
    ])  # fmt: skip
    curves = pd.DataFrame([
        {"dataset": "digits", "method": m, "seed": s, "step": step, "forward_passes": step * 16,
         "test_accuracy": (acc + _jitter(s)) * step / 250, "passes_per_step": 16, "budget": 4000,
         "diverged_step": (7.0 if (m, s) in diverged else math.nan), "lr": 0.1}
        for m, acc in accuracy.items() for s in seeds for step in (0, 250)
    ])  # fmt: skip
    tuning = pd.DataFrame([
        {"dataset": "digits", "method": m, "lr": 0.1, "val_accuracy": validation.get(m, acc), "chosen": True}
        for m, acc in accuracy.items()
    ])  # fmt: skip
    cost = pd.DataFrame([
        {"width": 64, "params": 5000, "probes": k, "method": m, "extra_bytes": b, "seconds": sec}
        for k, mezo in zip((8, 32), mezo_bytes)
        for m, b, sec in (("mezo_step", mezo, 0.003), ("mezo_gradient", 2 * mezo, 0.003),
                          ("spsa_batched", 40 * k * 1000, 0.001))
    ])  # fmt: skip
    check_rows = pd.DataFrame({"check": ["K1", "K2", "K3"], "value": list(checks), "note": ["", "", ""]})
    return {"alignment": alignment, "bias_variance": bv, "dimension": dimension, "spectral": spectral,
            "curves": curves, "tuning": tuning, "cost": cost, "checks": check_rows}  # fmt: skip


BY_ID = {d.claim_id: d for d in DEFINITIONS}


def decided_one(claim_id: str, comparisons=COMP, edit=None, **changes) -> pd.Series:
    """The claims table's row of one claim (measuring every claim on every case would cost a second each)."""
    data = tables(**changes)
    if edit is not None:
        edit(data)
    return decide([BY_ID[claim_id]], [measure_claim(claim_id, data, comparisons)]).set_index("claim_id").loc[claim_id]


def _mezo_seconds(value):
    def edit(data):
        data["cost"].loc[data["cost"]["method"] == "mezo_step", "seconds"] = value

    return edit


def _coarse_steps(data):
    data["curves"]["passes_per_step"] = 1000  # 4000 // 1000 = 4 steps, none unused: make 1,500 per step


def _unused_budget(data):
    data["curves"]["passes_per_step"] = 1500  # 2 steps of 1,500 use 3,000 of 4,000 passes


def _no_runs(data):
    data["curves"] = data["curves"].iloc[0:0]


def _without(table: str, method: str, **changes) -> dict:
    data = tables(**changes)
    data[table] = data[table][data[table]["method"] != method]
    return data


def _decided_tables(data: dict) -> pd.DataFrame:
    return decide(DEFINITIONS, measure_claims(data, COMP)).set_index("claim_id")


SEEDS2 = {"seeds": (0, 1)}
VERDICT_CASES = [
    ("Z1", "holds", {}),
    ("Z1", "fails", {"cosine": {**COSINE, "szo_k1": 0.06, "szo_k2": 0.07}}),
    ("Z1", "inconclusive", SEEDS2),
    ("Z1", "inconclusive", {"cosine": {**COSINE, "szo_k1_mean": 0.2}}),  # the mean-direction null passes too
    ("Z1", "inconclusive", {"cosine": {k: v for k, v in COSINE.items() if k != "agzo_r8"}}),  # a null is missing
    ("Z1c", "holds", {"cosine": {**COSINE, "szo_k1_centred": 0.2}}),
    ("Z1c", "fails", {}),
    ("Z1c", "inconclusive", SEEDS2),
    ("Z2", "holds", {}),
    ("Z2", "fails", {"slope": {**SLOPE, "szo_k1": -0.7}}),
    ("Z2", "inconclusive", SEEDS2),
    ("Z2", "inconclusive", {"slope": {**SLOPE, "szo_k1_mean": -0.25}}),  # the null passes too
    ("K6", "holds", {}),
    ("K6", "fails", {"slope": {**SLOPE, "wp_global": -0.2}}),
    ("K6", "inconclusive", {"slope": {k: v for k, v in SLOPE.items() if k != "wp_global"}}),
    ("Z3", "holds", {}),
    ("Z3", "fails", {"cosine": {**COSINE, "szo_k1_orth": 0.15}}),
    ("Z3", "inconclusive", {"cosine": {k: v for k, v in COSINE.items() if k != "szo_k1_orth"}}),
    ("Z4", "holds", {}),
    ("Z4", "fails", {"bias": {**BIAS, "szo_k1_bc": (60.0, 2.0, 1e4, 1.0, 0.1)}}),
    ("Z4", "inconclusive", SEEDS2),
    # the corrected bias within 2x its chance floor: the draws do not resolve it (the quick data's case)
    ("Z4", "inconclusive", {"bias": {**BIAS, "szo_k1_bc": (30.0, 29.0, 1e5, 1.0, 0.1)}}),
    ("Z4", "inconclusive", {"bias": {**BIAS, "szo_k1_bcx": (5.0, 1.0, 1e3, 1.0, 0.1)}}),  # the null passes too
    ("Z4b", "holds", {}),
    ("Z4b", "fails", {"bias": {**BIAS, "szo_k2_bc": (20.0, 4.0, 1e5, 1e3, 3.5)}}),
    ("Z4b", "inconclusive", {"seeds": (0,)}),
    ("K7", "holds", {}),
    ("K7", "fails", {"bias": {**BIAS, "szo_k2_bc": (20.0, 4.0, 1e5, 1.0, 40.0)}}),
    ("K7", "inconclusive", {"bias": {**BIAS, "szo_k2_bc": (20.0, 4.0, 1e5, 1.0, math.nan)}}),
    ("Z5", "holds", {}),
    ("Z5", "fails", {"accuracy": {**ACCURACY, "szo_k1_top": 0.70}}),
    ("Z5", "inconclusive", {"diverged": (("szo_k1_top", 1),)}),  # a diverged seed: no test accuracy
    ("Z5", "inconclusive", {"accuracy": {**ACCURACY, "agzo_r8": 0.90}}),  # the null passes too
    ("Z5b", "holds", {}),
    ("Z5b", "fails", {"accuracy": {**ACCURACY, "backprop": 0.80}}),
    ("Z5b", "inconclusive", SEEDS2),
    ("Z5c", "holds", {"accuracy": {**ACCURACY, "node_perturbation": 0.80}}),
    ("Z5c", "fails", {}),
    ("Z5c", "inconclusive", {"validation": {"szo_k1": math.nan, "szo_k1_top": math.nan}}),
    ("Z6", "holds", {}),
    ("Z6", "fails", {"gain": {**GAIN, "szo_k1": (6.0, 2.0)}}),
    ("Z6", "inconclusive", SEEDS2),
    ("Z6", "inconclusive", {"gain": {**GAIN, "agzo_r8": (1.0, 3.0)}}),  # the null passes too
    ("Z7", "holds", {}),
    ("Z7", "fails", {"mezo_bytes": (10**7, 10**7)}),
    ("Z7", "inconclusive", {"mezo_bytes": (1000, math.nan)}),
    ("Z8", "holds", {}),
    ("Z8", "fails", {"edit": _mezo_seconds(1e-4)}),
    ("Z8", "inconclusive", {"edit": _mezo_seconds(math.nan)}),
    ("K5", "holds", {"edit": _coarse_steps}),
    ("K5", "fails", {"edit": _unused_budget}),
    ("K5", "inconclusive", {"edit": _no_runs}),
    ("K1", "holds", {}),
    ("K1", "fails", {"checks": (1e-3, 0.0, 1.0)}),
    ("K1", "inconclusive", {"checks": (math.nan, 0.0, 1.0)}),
    ("K2", "holds", {}),
    ("K2", "fails", {"checks": (0.0, 1e-2, 1.0)}),
    ("K2", "inconclusive", {"checks": (0.0, math.nan, 1.0)}),
    ("K3", "holds", {}),
    ("K3", "fails", {"checks": (0.0, 0.0, 5.0)}),
    ("K3", "inconclusive", {"checks": (0.0, 0.0, math.nan)}),
    ("K4", "holds", {}),
    ("K4", "fails", {"mezo_bytes": (1000, 4000)}),
    ("K4", "inconclusive", {"mezo_bytes": (0, math.nan)}),
]


@pytest.mark.parametrize(
    "claim_id, expected, scenario", VERDICT_CASES, ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(VERDICT_CASES)]
)
def test_claim_verdict_in_scenario(claim_id, expected, scenario):
    row = decided_one(claim_id, **scenario)
    assert row["verdict"] == expected, row["note"]


def test_a_missing_method_is_named_never_dropped():
    table = _decided_tables(_without("alignment", "szo_k2"))
    assert table.loc["Z1", "verdict"] == "inconclusive" and "szo_k2" in table.loc["Z1", "note"]


def test_z5_picks_the_baseline_on_validation_too():
    # SPSA is better on test, WP on validation: the baseline is WP, and SZO (0.88) beats it by its own margin
    data = tables(accuracy={**ACCURACY, "spsa": 0.86}, validation={**VALIDATION, "wp_global": 0.85, "spsa": 0.80})
    measured = measure_claim("Z5", data, COMP)
    assert "minus wp_global" in measured.note and np.isclose(measured.value, 0.08, atol=0.01)


def test_the_best_szo_is_picked_on_validation_not_test():
    data = tables(accuracy={**ACCURACY, "szo_k1": 0.95}, validation={"szo_k1": 0.5, "szo_k1_top": 0.87})
    assert best_on_validation(data["tuning"], COMP["szo_train"]) == "szo_k1_top"


def test_the_slopes_are_the_log_log_least_squares_slopes():
    slopes = dimension_slopes(tables()["dimension"]).set_index(["method", "seed"])["slope"]
    assert np.isclose(slopes[("wp_global", 1)], -0.5) and np.isclose(slopes[("szo_k1", 0)], -0.302)


def test_every_claim_is_measured_once_on_the_full_tables():
    table = _decided_tables(tables())
    assert list(table.index) == [d.claim_id for d in DEFINITIONS]
    assert (table.loc[table["kind"] == "check", "verdict"] == "holds").all()


def test_the_claims_file_is_marked_a_reconstruction():
    assert all(d.reconstruction for d in DEFINITIONS)
    hard = [d for d in DEFINITIONS if d.kind == "hard"]
    assert hard and all(d.min_runs >= 3 for d in hard) and all("null" in d.statement for d in hard)


@pytest.mark.parametrize("keep", [{"params": [1000, 4000]}, {"repeat": [0, 1, 2, 3]}])
def test_k6_is_inconclusive_on_too_few_widths_or_draws(keep):
    """Smoke's 2 widths of 1 draw each gave a slope of -0.25: a law in expectation is not tested by that."""
    data = tables()
    column, values = next(iter(keep.items()))
    data["dimension"] = data["dimension"][data["dimension"][column].isin(values)]
    measured = measure_claim("K6", data, COMP)
    assert np.isnan(measured.value) and "widths" in measured.note
