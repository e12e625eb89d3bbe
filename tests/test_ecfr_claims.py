"""Paper 11's claims decided on built metric, complexity and trace tables: every claim and check has a case where it
holds, one where it fails and one where it is inconclusive (too few seeds, seeds that disagree, a missing run or a
non-finite value, a dataset this scale does not run)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from conftest import ROOT
from neurips26.common.claims import decide, load_definitions
from neurips26.ecfr.claims import PAPER_GMACS, PAPER_PARAMS_M, PUBLISHED, PUBLISHED_VALUES, measure_claims

DEFINITIONS = load_definitions(ROOT / "config/claims/ecfr.yaml")
COMP = {"primary": "synthetic", "proposed": "ecfr", "same_modal": "same_modal", "mapping": "cfm",
        "single_modality": {"contamination": "rgb", "bump_depth": "depth"},
        "same_modal_null": "same_modal_b"}  # fmt: skip
SOURCES = {"synthetic": "synthetic"}  # quick scale's datasets; paper scale's are {"mvtec3d": "mvtec3d"}
CLASSES = ("ring", "dome")
DEFECTS = ("crack", "contamination", "bump_depth")
# (method, setting) -> class-level I-AUROC, AUPRO, I-AUROC on the RGB-only and depth-only defects and on the defects
# both modalities show (``both``, default ``i``: C4's null)
GOOD = {
    ("ecfr", "unified"): dict(i=0.80, pro=0.60, rgb=0.85, depth=0.75, both=0.70),
    ("same_modal", "unified"): dict(i=0.70, pro=0.50, rgb=0.80, depth=0.60),
    ("same_modal_b", "unified"): dict(i=0.70, pro=0.50, rgb=0.80, depth=0.60),  # C1's refit spread: same_modal refitted
    ("cfm", "unified"): dict(i=0.65, pro=0.40, rgb=0.90, depth=0.55),
    ("ecfr", "per_class"): dict(i=0.82, pro=0.60, rgb=0.85, depth=0.75),
    ("same_modal", "per_class"): dict(i=0.80, pro=0.55, rgb=0.80, depth=0.70),
}
# seed-to-seed jitter, different per run, so that paired differences spread and t intervals have a width
JITTER = {("ecfr", "unified"): (0.0, 0.01, -0.01), ("same_modal", "unified"): (0.01, -0.01, 0.0),
          ("cfm", "unified"): (-0.005, 0.005, 0.01), ("ecfr", "per_class"): (0.005, 0.0, -0.005),
          ("same_modal", "per_class"): (0.0, -0.005, 0.005),
          ("same_modal_b", "unified"): (-0.01, 0.0, 0.01)}  # fmt: skip


def metrics(values=GOOD, seeds=(0, 1, 2), flip=None, drop=None, defects=DEFECTS, dataset="synthetic",
            per_class_seeds=None):  # fmt: skip
    """Rows as the evaluate job writes them; ``flip`` = (method, setting, seed, column, value) overrides the class
    mean's cell, ``drop`` = (method, setting, seed) removes a run; ``per_class_seeds`` (default ``seeds``) the seeds
    of the per-class runs."""
    rows = []
    for (m, setting), v in values.items():
        for s in (per_class_seeds or seeds) if setting == "per_class" else seeds:
            e = JITTER[(m, setting)][s % 3]
            base = dict(dataset=dataset, method=m, setting=setting, seed=s)
            cells = {"i_auroc": v["i"] + e, "p_auroc": v.get("p", 0.9) + e, "aupro": v["pro"] + e}
            for c in CLASSES:
                rows.append({**base, "group": "class", "name": c, **cells})
            rows.append({**base, "group": "class", "name": "mean", **cells})
            for d in defects:
                value = {"contamination": v["rgb"], "bump_depth": v["depth"]}.get(d, v.get("both", v["i"]))
                rows.append({**base, "group": "defect", "name": d, "i_auroc": value + e, "p_auroc": 0.9, "aupro": 0.5})
    frame = pd.DataFrame(rows)
    if flip:
        m, setting, s, column, value = flip
        frame.loc[(frame["method"] == m) & (frame["setting"] == setting) & (frame["seed"] == s)
                  & (frame["name"] == "mean"), column] = value  # fmt: skip
    if drop:
        m, setting, s = drop
        frame = frame[~((frame["method"] == m) & (frame["setting"] == setting) & (frame["seed"] == s))]
    return frame


def complexity(ecfr_params=41.6, ecfr_gmacs=15.6, cfm_params=113.0, cfm_gmacs=158.0, paper=True):
    rows = [{"configuration": "this scale", "method": "ecfr", "size": 64, "params_total_m": 1.9, "gmacs": 0.04}]
    if paper:
        paper_row = {"configuration": "paper", "size": 256}
        rows += [
            {**paper_row, "method": "ecfr", "params_total_m": ecfr_params, "gmacs": ecfr_gmacs},
            {**paper_row, "method": "cfm", "params_total_m": 9.6, "gmacs": 13.8},  # ours: not what C6/C7 read
            {**paper_row, "method": "cfm_published", "params_total_m": cfm_params, "gmacs": cfm_gmacs},
        ]
    return pd.DataFrame(rows)


def traces(final=0.5, nan=False):
    rows = []
    for m, setting in GOOD:
        for s in (0, 1, 2):
            losses = np.linspace(1.0, final, 20)
            if nan and m == "cfm":
                losses[-1] = np.nan
            rows += [{"dataset": "synthetic", "method": m, "setting": setting, "seed": s, "group": "all", "step": i + 1,
                      "loss": x} for i, x in enumerate(losses)]  # fmt: skip
    return pd.DataFrame(rows)


def changed(key, **values):
    return {**GOOD, key: {**GOOD[key], **values}}


def shifted(frame: pd.DataFrame, method: str, defect: str, seed: int, delta: float) -> pd.DataFrame:
    """``frame`` with the unified I-AUROC of ``method`` on ``defect``'s images at ``seed`` moved by ``delta``."""
    frame = frame.copy()
    cells = (frame["method"] == method) & (frame["setting"] == "unified") & (frame["seed"] == seed)
    cells &= (frame["group"] == "defect") & (frame["name"] == defect)
    frame.loc[cells, "i_auroc"] += delta
    return frame


def decided(frame=None, comp=None, trace=None, comparisons=COMP, sources=SOURCES) -> pd.DataFrame:
    frame = metrics() if frame is None else frame
    comp = complexity() if comp is None else comp
    trace = traces() if trace is None else trace
    return decide(DEFINITIONS, measure_claims(frame, comp, trace, comparisons, sources)).set_index("claim_id")


def with_real(dataset="mvtec3d", **ecfr):
    """The synthetic runs plus a real dataset's, ECFR's unified class means there set by ``ecfr`` (i, p, pro)."""
    real = metrics(changed(("ecfr", "unified"), **ecfr), dataset=dataset)
    return pd.concat([metrics(), real], ignore_index=True)


def near(column: str, value: float, dataset: str = "mvtec3d") -> pd.DataFrame:
    """``with_real`` runs whose unified ECFR class-mean ``column`` on ``dataset`` is ``value`` give or take 0.002
    over seeds (the default jitter of 0.01 gives a t interval of half-width 0.025, wider than the 2-point margin)."""
    frame = with_real(dataset)
    cells = (frame["dataset"] == dataset) & (frame["method"] == "ecfr") & (frame["setting"] == "unified")
    cells &= frame["name"] == "mean"
    frame.loc[cells, column] = value + frame.loc[cells, "seed"].map({0: 0.0, 1: 0.002, 2: -0.002})
    return frame


M = metrics
WORSE = changed(("ecfr", "unified"), i=0.60, pro=0.30, rgb=0.45, depth=0.40)
MVTEC = {"synthetic": "synthetic", "mvtec3d": "mvtec3d"}
VERDICT_CASES = [
    ("C1", "holds", {}),
    ("C1", "fails", {"frame": M(WORSE)}),
    ("C1", "inconclusive", {"frame": M(seeds=(0, 1))}),
    ("C1", "inconclusive", {"frame": M(flip=("ecfr", "unified", 2, "i_auroc", 0.40))}),  # seeds disagree
    ("C1", "inconclusive", {"frame": M(flip=("ecfr", "unified", 1, "i_auroc", np.nan))}),
    ("C1", "inconclusive", {"frame": M(drop=("same_modal", "unified", 2))}),
    # no null since issue 41's review: the refit spread (same_modal refitted minus same_modal) is reported, not gated
    ("C1", "holds", {"frame": M(changed(("same_modal_b", "unified"), i=0.80))}),
    ("C1", "holds", {"frame": M({k: v for k, v in GOOD.items() if k[0] != "same_modal_b"})}),  # no refit run
    ("C1", "holds", {"comparisons": {k: v for k, v in COMP.items() if k != "same_modal_null"}}),
    ("C1", "holds", {"frame": M(changed(("same_modal_b", "unified"), i=0.73))}),
    ("C1", "holds", {"frame": M(seeds=tuple(range(6)), per_class_seeds=(0, 1, 2))}),  # six seeds, per class three
    ("C2", "holds", {}),
    ("C2", "fails", {"frame": M(WORSE)}),
    ("C2", "inconclusive", {"frame": M(flip=("ecfr", "unified", 2, "aupro", 0.2))}),
    ("C3", "holds", {}),
    ("C3", "fails", {"frame": M(WORSE)}),
    ("C3", "inconclusive", {"frame": M({k: v for k, v in GOOD.items() if k[0] != "cfm"})}),  # no CFM runs
    ("C4", "holds", {}),  # contamination 0.85 against 0.80, the depth-only bump 0.75 against 0.60
    ("C4", "fails", {"frame": M(WORSE)}),
    # ECFR detects the depth-only bump above chance (0.55, the old C4 held) but worse than same-modal (0.60)
    ("C4", "fails", {"frame": M(changed(("ecfr", "unified"), depth=0.55))}),
    ("C4", "inconclusive", {"frame": M(defects=("crack", "contamination"))}),  # no depth-only defect tested
    ("C4", "inconclusive", {"frame": M(changed(("ecfr", "unified"), rgb=0.80))}),  # equal on contamination
    ("C4", "inconclusive", {"frame": M(drop=("same_modal", "unified", 1))}),  # a control run is missing
    ("C4", "inconclusive", {"comparisons": {**COMP, "single_modality": {}}}),  # a dataset that labels none
    # the null: ECFR gains more on the defects both modalities show (no stream has to infer them) than on the
    # RGB-only contamination (0.10 against 0.05): nothing beyond the null
    ("C4", "fails", {"frame": M(changed(("ecfr", "unified"), both=0.80))}),
    ("C4", "inconclusive", {"frame": M(defects=("contamination", "bump_depth"))}),  # no both-modality defect: no null
    ("C4", "fails", {"frame": M(changed(("ecfr", "unified"), both=0.80, depth=0.55))}),
    # a null above 0 but below the gain: the gain beyond it (0.05 - 0.02) holds
    ("C4", "holds", {"frame": M(changed(("ecfr", "unified"), both=0.72))}),
    # issue 41's review: a null about as large as the gain, whose own interval contains 0 (it blocked nothing before)
    ("C4", "inconclusive", {"frame": shifted(M(changed(("ecfr", "unified"), both=0.75)), "ecfr", "crack", 0, -0.03)}),
    ("C5", "holds", {}),  # ecfr loses 0.02 from per class to unified, same_modal 0.10
    ("C5", "fails", {"frame": M(changed(("ecfr", "per_class"), i=0.95))}),
    ("C5", "inconclusive", {"frame": M(drop=("ecfr", "per_class", 0))}),
    ("C5", "inconclusive", {"frame": M(changed(("ecfr", "per_class"), i=0.90))}),  # the gaps are equal
    ("C5", "holds", {"frame": M(seeds=tuple(range(6)), per_class_seeds=(0, 1, 2))}),  # on the per-class seeds
    ("C5", "inconclusive", {"frame": M(seeds=(0, 1), per_class_seeds=(0, 1, 2))}),  # a per-class seed unpaired
    ("C6", "holds", {}),
    ("C6", "fails", {"comp": complexity(cfm_params=9.6)}),
    ("C6", "inconclusive", {"comp": complexity(paper=False)}),
    ("C7", "holds", {}),
    ("C7", "fails", {"comp": complexity(cfm_gmacs=13.8)}),
    ("C7", "inconclusive", {"comp": complexity(cfm_gmacs=np.nan)}),
    ("K1", "holds", {}),
    ("K1", "fails", {"comp": complexity(ecfr_params=30.0)}),
    ("K1", "inconclusive", {"comp": complexity(paper=False)}),
    ("K2", "holds", {}),
    ("K2", "fails", {"comp": complexity(ecfr_gmacs=25.0)}),
    ("K2", "inconclusive", {"comp": complexity(ecfr_gmacs=np.nan)}),
    ("K3", "holds", {}),
    ("K3", "fails", {"trace": traces(final=1.2)}),
    ("K3", "inconclusive", {"trace": traces(nan=True)}),
    ("P1", "holds", {"frame": near("i_auroc", 0.93), "sources": MVTEC}),
    ("P1", "fails", {"frame": with_real(i=0.99), "sources": MVTEC}),  # far above: a leak, say
    ("P1", "fails", {"frame": with_real(i=0.85), "sources": MVTEC}),
    ("P1", "inconclusive", {"frame": with_real(i=0.90), "sources": MVTEC}),  # the interval holds 0.8985
    ("P1", "inconclusive", {}),  # quick scale: no MVTec 3D-AD runs
    ("P2", "holds", {"frame": near("p_auroc", 0.995), "sources": MVTEC}),
    ("P2", "fails", {"frame": with_real(p=0.90), "sources": MVTEC}),
    ("P2", "inconclusive", {"frame": with_real(p=0.98), "sources": {"synthetic": "synthetic"}}),
    ("P3", "holds", {"frame": near("aupro", 0.96), "sources": MVTEC}),
    ("P3", "fails", {"frame": with_real(pro=0.60), "sources": MVTEC}),
    ("P3", "inconclusive", {"frame": M(drop=("ecfr", "unified", 2)), "sources": {"synthetic": "mvtec3d"}}),
    # Eyecandies under a dataset name of the user's: found by its source
    ("P4", "holds", {"frame": near("i_auroc", 0.88, "candies"), "sources": {"candies": "eyecandies"}}),
    ("P4", "fails", {"frame": with_real("candies", i=0.70), "sources": {"candies": "eyecandies"}}),
    ("P4", "inconclusive", {"frame": with_real(i=0.88), "sources": MVTEC}),  # paper scale without Eyecandies
    ("P5", "holds", {"frame": near("p_auroc", 0.98, "candies"), "sources": {"candies": "eyecandies"}}),
    ("P5", "fails", {"frame": with_real("candies", p=0.90), "sources": {"candies": "eyecandies"}}),
    ("P5", "inconclusive", {"frame": with_real("candies", p=0.95), "sources": {"candies": "eyecandies"}}),
    ("P6", "holds", {"frame": near("aupro", 0.91, "candies"), "sources": {"candies": "eyecandies"}}),
    ("P6", "fails", {"frame": with_real("candies", pro=0.96), "sources": {"candies": "eyecandies"}}),  # far above
    ("P6", "fails", {"frame": with_real("candies", pro=0.80), "sources": {"candies": "eyecandies"}}),
    ("P6", "inconclusive", {"sources": MVTEC}),  # the set is named but has no runs
]


@pytest.mark.parametrize(
    "claim_id, expected, scenario", VERDICT_CASES, ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(VERDICT_CASES)]
)
def test_claim_verdict_in_scenario(claim_id, expected, scenario):
    table = decided(**scenario)
    assert table.loc[claim_id, "verdict"] == expected, table.loc[claim_id, "note"]


def test_the_values_are_the_paired_differences_and_ratios_stated():
    table = decided()
    assert np.isclose(table.loc["C1", "value"], 0.10)
    assert np.isclose(table.loc["C3", "value"], 0.15 - 0.01 / 3)  # minus the mean of cfm's seed jitter
    assert np.isclose(table.loc["C5", "value"], (0.80 - 0.82) - (0.70 - 0.80), atol=1e-9)
    # contamination's difference per seed (0.04, 0.07, 0.04) minus max(the crack's, 0) = (0, 0.02, 0): the smaller of
    # the two defects' (the depth-only bump's is 0.15 - the same)
    assert np.isclose(table.loc["C4", "value"], np.mean([0.04, 0.05, 0.04]))
    assert np.isclose(table.loc["C6", "value"], 41.6 / 113.0) and np.isclose(table.loc["C7", "value"], 15.6 / 158.0)
    assert np.isclose(table.loc["K1", "value"], abs(41.6 / PAPER_PARAMS_M - 1))
    assert np.isclose(table.loc["K2", "value"], abs(15.6 / PAPER_GMACS - 1))
    assert np.isclose(table.loc["K3", "value"], 1 - 0.5 / 1.0, atol=0.05)


def test_a_non_finite_value_is_named_never_dropped():
    row = decided(metrics(flip=("same_modal", "unified", 0, "i_auroc", np.inf))).loc["C1"]
    assert row["verdict"] == "inconclusive" and "non-finite values (seed 0: inf)" in row["note"]


def test_the_published_values_are_the_readmes_tables_1_and_7_with_a_two_point_tolerance():
    """README of the official code: MVTec 3D-AD I-AUROC / P-AUROC / AUPRO 91.85 / 98.60 / 95.37, Eyecandies 86.64 /
    97.13 / 90.21 (in %)."""
    by_id = {d.claim_id: d for d in DEFINITIONS}
    readme = {"P1": 0.9185, "P2": 0.9860, "P3": 0.9537, "P4": 0.8664, "P5": 0.9713, "P6": 0.9021}
    assert set(PUBLISHED) == set(readme)
    for claim_id, value in readme.items():
        d, (source, column) = by_id[claim_id], PUBLISHED[claim_id]
        assert d.paper_value == pytest.approx(value)
        assert d.comparison == "<=" and d.threshold == pytest.approx(0.02) and d.kind == "info" and d.min_runs == 3
        assert PUBLISHED_VALUES[claim_id] == pytest.approx(d.paper_value)
        name = {"mvtec3d": "MVTec 3D-AD", "eyecandies": "Eyecandies"}[source]
        short = {"i_auroc": "I-AUROC", "p_auroc": "P-AUROC", "aupro": "AUPRO"}[column]
        assert name in d.metric and short in d.metric


def test_the_published_claims_read_ecfrs_unified_runs_on_the_dataset_of_their_source():
    row = decided(with_real(i=0.93), sources=MVTEC).loc["P1"]
    assert np.isclose(row["value"], abs(0.93 - 0.9185)) and row["runs"] == 3 and "mvtec3d" in row["note"]
    assert row["paper_value"] == pytest.approx(0.9185)
    quick = decided().loc["P1"]
    assert quick["verdict"] == "inconclusive" and "no mvtec3d runs at this scale" in quick["note"]


def test_c5s_note_gives_the_steps_every_fitted_model_trained():
    trace = traces()
    note = decided(trace=trace).loc["C5", "note"]
    assert "per_class 20, unified 20 steps per fitted model" in note
    fewer = trace[~((trace["setting"] == "per_class") & (trace["step"] > 4))]
    assert "per_class 4, unified 20 steps per fitted model" in decided(trace=fewer).loc["C5", "note"]


def test_c5s_note_says_an_equal_steps_verdict_does_not_carry_over_to_paper_scale():
    note = decided().loc["C5", "note"]
    assert "does not carry over to paper scale" in note and "as often as the unified model" in note
    trace = traces()
    fewer = trace[~((trace["setting"] == "per_class") & (trace["step"] > 4))]  # fewer steps: equal epochs
    assert "does not carry over" not in decided(trace=fewer).loc["C5", "note"]


@pytest.mark.parametrize(
    "offset, verdict",
    [(0.05, "fails"), (0.005, "holds"), (0.0, "holds"), (-0.005, "holds"), (-0.05, "fails"), (0.02, "inconclusive")],
)
def test_the_published_claims_are_two_sided(offset, verdict):
    """Far above the paper's value (a leak, say) fails as far below it does; within 2 points on both sides holds."""
    row = decided(near("i_auroc", 0.9185 + offset), sources=MVTEC).loc["P1"]
    assert row["verdict"] == verdict, row["note"]
    assert np.isclose(row["value"], abs(offset))


def test_c4_subtracts_its_null_seed_by_seed_and_c1_reports_the_refit_spread_without_a_null():
    """Issue 41's review: C4 is, per seed, the single-modality difference minus max(the both-modality difference, 0),
    with a t interval and no null field; C1 has no null, its note gives the refit spread (same_modal_b - same_modal)."""
    table = decided()
    c1, c4 = table.loc["C1"], table.loc["C4"]
    assert np.isnan(c1["null_value"]) and np.isnan(c4["null_value"])
    # refit - control per seed: (-0.01 - 0.01, 0 + 0.01, 0.01 - 0) = (-0.02, 0.01, 0.01)
    assert "refit spread (not a null" in c1["note"] and "per seed {0: -0.02, 1: 0.01, 2: 0.01}" in c1["note"]
    # ecfr - same_modal on the crack (both modalities): jitters (0, .01, -.01) - (.01, -.01, 0) = (-0.01, 0.02, -0.01)
    beyond = np.array([0.04, 0.07, 0.04]) - np.maximum([-0.01, 0.02, -0.01], 0)
    half = 4.302652729911275 * beyond.std(ddof=1) / np.sqrt(3)
    assert np.isclose(c4["low"], beyond.mean() - half) and np.isclose(c4["high"], beyond.mean() + half)
    assert "defects both modalities show, crack" in c4["note"] and "beyond max(null, 0)" in c4["note"]
    assert c1["verdict"] == c4["verdict"] == "holds"
    # the null below 0 on every seed: nothing is subtracted, C4 is the plain difference
    plain = decided(metrics(changed(("ecfr", "unified"), both=0.60))).loc["C4"]
    assert np.isclose(plain["value"], np.mean([0.04, 0.07, 0.04]))


def test_c5_pairs_the_unified_runs_of_the_per_class_seeds_only():
    row = decided(metrics(seeds=tuple(range(6)), per_class_seeds=(0, 1, 2))).loc["C5"]
    assert row["runs"] == 3 and np.isclose(row["value"], (0.80 - 0.82) - (0.70 - 0.80), atol=1e-9)
    assert decided(metrics(seeds=tuple(range(6)), per_class_seeds=(0, 1, 2))).loc["C1", "runs"] == 6


def test_c1_is_soft_at_quick_scales_zero_effect_and_c4_stays_hard_with_its_null():
    """Issue 41: C1's effect is zero at quick scale on two independent sets of six seeds, so no seed count decides it
    (soft, the reason in the claims file); C4 stays hard, its null inside its value."""
    by_id = {d.claim_id: d for d in DEFINITIONS}
    assert by_id["C1"].kind == "soft" and by_id["C4"].kind == "hard"
    assert by_id["C1"].threshold == by_id["C4"].threshold == 0.0  # the thresholds stay
    text = (ROOT / "config/claims/ecfr.yaml").read_text()
    assert "quick scale cannot decide it at any number of seeds, because the effect there is zero" in text
    # the behaviour behind the wording (issue 41's review): a zero effect, ECFR equal to same_modal up to the seeds'
    # jitter, is inconclusive, not decided against the threshold 0
    zero = decided(metrics(changed(("ecfr", "unified"), i=0.70))).loc["C1"]
    assert zero["verdict"] == "inconclusive" and np.isclose(zero["value"], 0.0) and zero["low"] < 0 < zero["high"]
