"""Paper 11's claims decided on built metric, complexity and trace tables: every claim and check has a case where it
holds, one where it fails and one where it is inconclusive (too few seeds, seeds that disagree, a missing run or a
non-finite value)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from conftest import ROOT
from neurips26.common.claims import decide, load_definitions
from neurips26.ecfr.claims import PAPER_GMACS, PAPER_PARAMS_M, measure_claims

DEFINITIONS = load_definitions(ROOT / "config/claims/ecfr.yaml")
COMP = {"primary": "synthetic", "proposed": "ecfr", "same_modal": "same_modal", "mapping": "cfm",
        "single_modality": {"contamination": "rgb", "bump_depth": "depth"}}  # fmt: skip
CLASSES = ("ring", "dome")
DEFECTS = ("crack", "contamination", "bump_depth")
# (method, setting) -> class-level I-AUROC, AUPRO, and I-AUROC on the RGB-only and depth-only defects
GOOD = {
    ("ecfr", "unified"): dict(i=0.80, pro=0.60, rgb=0.85, depth=0.75),
    ("same_modal", "unified"): dict(i=0.70, pro=0.50, rgb=0.80, depth=0.60),
    ("cfm", "unified"): dict(i=0.65, pro=0.40, rgb=0.90, depth=0.55),
    ("ecfr", "per_class"): dict(i=0.82, pro=0.60, rgb=0.85, depth=0.75),
    ("same_modal", "per_class"): dict(i=0.80, pro=0.55, rgb=0.80, depth=0.70),
}
# seed-to-seed jitter, different per run, so that paired differences spread and t intervals have a width
JITTER = {("ecfr", "unified"): (0.0, 0.01, -0.01), ("same_modal", "unified"): (0.01, -0.01, 0.0),
          ("cfm", "unified"): (-0.005, 0.005, 0.01), ("ecfr", "per_class"): (0.005, 0.0, -0.005),
          ("same_modal", "per_class"): (0.0, -0.005, 0.005)}  # fmt: skip


def metrics(values=GOOD, seeds=(0, 1, 2), flip=None, drop=None, defects=DEFECTS):
    """Rows as the evaluate job writes them; ``flip`` = (method, setting, seed, column, value) overrides the class
    mean's cell, ``drop`` = (method, setting, seed) removes a run."""
    rows = []
    for (m, setting), v in values.items():
        for s in seeds:
            e = JITTER[(m, setting)][s % 3]
            base = dict(dataset="synthetic", method=m, setting=setting, seed=s)
            for c in CLASSES:
                rows.append({**base, "group": "class", "name": c, "i_auroc": v["i"] + e, "p_auroc": 0.9,
                             "aupro": v["pro"] + e})  # fmt: skip
            rows.append({**base, "group": "class", "name": "mean", "i_auroc": v["i"] + e, "p_auroc": 0.9,
                         "aupro": v["pro"] + e})  # fmt: skip
            for d in defects:
                value = {"contamination": v["rgb"], "bump_depth": v["depth"]}.get(d, v["i"])
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


def decided(frame=None, comp=None, trace=None, comparisons=COMP) -> pd.DataFrame:
    frame = metrics() if frame is None else frame
    comp = complexity() if comp is None else comp
    trace = traces() if trace is None else trace
    return decide(DEFINITIONS, measure_claims(frame, comp, trace, comparisons)).set_index("claim_id")


M = metrics
WORSE = changed(("ecfr", "unified"), i=0.60, pro=0.30, rgb=0.45, depth=0.40)
VERDICT_CASES = [
    ("C1", "holds", {}),
    ("C1", "fails", {"frame": M(WORSE)}),
    ("C1", "inconclusive", {"frame": M(seeds=(0, 1))}),
    ("C1", "inconclusive", {"frame": M(flip=("ecfr", "unified", 2, "i_auroc", 0.40))}),  # seeds disagree
    ("C1", "inconclusive", {"frame": M(flip=("ecfr", "unified", 1, "i_auroc", np.nan))}),
    ("C1", "inconclusive", {"frame": M(drop=("same_modal", "unified", 2))}),
    ("C2", "holds", {}),
    ("C2", "fails", {"frame": M(WORSE)}),
    ("C2", "inconclusive", {"frame": M(flip=("ecfr", "unified", 2, "aupro", 0.2))}),
    ("C3", "holds", {}),
    ("C3", "fails", {"frame": M(WORSE)}),
    ("C3", "inconclusive", {"frame": M({k: v for k, v in GOOD.items() if k[0] != "cfm"})}),  # no CFM runs
    ("C4", "holds", {}),
    ("C4", "fails", {"frame": M(WORSE)}),
    ("C4", "fails", {"frame": M(changed(("ecfr", "unified"), depth=0.40))}),  # the depth-only defect is missed
    ("C4", "inconclusive", {"frame": M(defects=("crack", "contamination"))}),  # no depth-only defect tested
    ("C4", "inconclusive", {"frame": M(changed(("ecfr", "unified"), depth=0.505))}),  # within the seed spread
    ("C4", "inconclusive", {"comparisons": {**COMP, "single_modality": {}}}),  # a dataset that labels none
    ("C5", "holds", {}),  # ecfr loses 0.02 from per class to unified, same_modal 0.10
    ("C5", "fails", {"frame": M(changed(("ecfr", "per_class"), i=0.95))}),
    ("C5", "inconclusive", {"frame": M(drop=("ecfr", "per_class", 0))}),
    ("C5", "inconclusive", {"frame": M(changed(("ecfr", "per_class"), i=0.90))}),  # the gaps are equal
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
    assert np.isclose(table.loc["C4", "value"], 0.75)  # the smaller of the two single-modality defects
    assert np.isclose(table.loc["C6", "value"], 41.6 / 113.0) and np.isclose(table.loc["C7", "value"], 15.6 / 158.0)
    assert np.isclose(table.loc["K1", "value"], abs(41.6 / PAPER_PARAMS_M - 1))
    assert np.isclose(table.loc["K2", "value"], abs(15.6 / PAPER_GMACS - 1))
    assert np.isclose(table.loc["K3", "value"], 1 - 0.5 / 1.0, atol=0.05)


def test_a_non_finite_value_is_named_never_dropped():
    row = decided(metrics(flip=("same_modal", "unified", 0, "i_auroc", np.inf))).loc["C1"]
    assert row["verdict"] == "inconclusive" and "non-finite values (seed 0: inf)" in row["note"]
