"""Paper 15's claims: each decided holds, fails and inconclusive on hand-made metrics tables (per-seed values whose
paired differences are known), and the measured values equal hand-computed differences."""

import numpy as np
import pandas as pd
import pytest

from conftest import ROOT
from neurips26.common.claims import decide, load_definitions
from neurips26.softlabel_audit import claims

DEFINITIONS = load_definitions(ROOT / "config/claims/softlabel_audit.yaml")
ROLES = {"primary": "d", "original": "hard_orig", "majority": "hard_majority", "human": "human_soft",
         "aligned": "human_soft_aligned", "shuffled": "human_soft_shuffled", "teacher": "teacher_soft",
         "teacher_aligned": "teacher_soft_aligned", "smoothing": "label_smooth"}  # fmt: skip
# (role, metric, subset) -> value shared by every seed; a seed's value adds JITTER[seed] * its condition's spread
GOOD = {
    ("teacher_aligned", "kl_human", "difficult"): 1.0,
    ("aligned", "kl_human", "difficult"): 0.5,
    ("shuffled", "kl_human", "difficult"): 1.2,
    ("smoothing", "kl_human", "difficult"): 1.0,
    ("original", "ece", "difficult"): 0.2,
    ("aligned", "ece", "difficult"): 0.1,
    ("shuffled", "ece", "difficult"): 0.3,
    ("aligned", "accuracy", "all"): 0.9,
    ("original", "accuracy", "all"): 0.8,
    ("human", "accuracy", "all"): 0.85,
    ("majority", "accuracy", "all"): 0.82,
    ("original", "seed_disagreement", "all"): 0.2,
    ("aligned", "seed_disagreement", "all"): 0.1,
    ("shuffled", "seed_disagreement", "all"): 0.3,
    ("teacher", "spearman_confidence", "train"): -0.1,
    ("human", "spearman_confidence", "train"): -0.7,
    ("majority", "spearman_confidence", "train"): 0.0,
}
JITTER = np.array([-1.0, 0.0, 1.0])


def _metric_rows(dataset, values, seeds, spread):
    rows = []
    for (role, metric, subset), value in values.items():
        noise = (spread or {}).get(role, 0.0) * JITTER
        if metric == "seed_disagreement":
            pairs = [f"{a}-{b}" for i, a in enumerate(seeds) for b in seeds[i + 1 :]]
            rows += [(dataset, ROLES[role], -1, p, subset, metric, value + noise[k]) for k, p in enumerate(pairs)]
        else:
            rows += [(dataset, ROLES[role], s, "", subset, metric, value + noise[k]) for k, s in enumerate(seeds)]
    return rows


def tables(overrides=None, seeds=(0, 1, 2), spread=None, morph_share=0.3, real=None, real_overrides=None,
           entropy_gap=0.0, mode_original=1.0):  # fmt: skip
    """The metrics table and data summary: GOOD's values with `overrides` on the simulated dataset "d"; `spread`
    (role -> amount) adds seed noise to that role's values, which paired differences then keep. `real`: the seeds
    of a second dataset "h" whose votes are human (GOOD's values with `real_overrides`), none by default.
    `entropy_gap` and `mode_original`: the aligned members' target checks (metrics rows of every seed)."""
    checks = {("aligned", "target_entropy_gap", "train"): entropy_gap,
              ("aligned", "target_mode_original", "train"): mode_original}  # fmt: skip
    rows = _metric_rows("d", {**GOOD, **checks, **(overrides or {})}, seeds, spread)
    if real is not None:
        rows += _metric_rows("h", {**GOOD, **(real_overrides or {})}, real, None)
    metrics = pd.DataFrame(rows, columns=["dataset", "condition", "seed", "pair", "subset", "metric", "value"])
    data = pd.DataFrame({"dataset": "d", "split": ["train", "train"], "kind": ["clean", "morph"], "items": [70, 30],
                         "mode_shift_share": [0.0, morph_share], "annotators": "simulated"})  # fmt: skip
    if morph_share is None:
        data = data[data["kind"] == "clean"]
    if real is not None:
        data = pd.concat([data, pd.DataFrame({"dataset": ["h"], "split": ["train"], "kind": ["real"], "items": [50],
                                              "mode_shift_share": [0.1], "annotators": ["human"]})])  # fmt: skip
    return metrics, data


VERDICT_CASES = [
    ("H1", "holds", {}),
    ("H1", "fails", dict(overrides={("aligned", "kl_human", "difficult"): 1.5})),
    ("H1", "inconclusive", dict(overrides={("shuffled", "kl_human", "difficult"): 0.5})),  # the null passes too
    ("H1", "inconclusive", dict(seeds=(0, 1))),  # two seeds, three needed
    ("H2", "holds", {}),
    ("H2", "fails", dict(overrides={("aligned", "kl_human", "difficult"): 1.4})),
    ("H2", "inconclusive", dict(overrides={("shuffled", "kl_human", "difficult"): 0.8})),  # the shuffle passes too
    ("H3", "holds", {}),
    ("H3", "fails", dict(overrides={("aligned", "ece", "difficult"): 0.3})),
    ("H3", "inconclusive", dict(overrides={("shuffled", "ece", "difficult"): 0.05})),
    ("S1", "holds", {}),
    ("S1", "fails", dict(overrides={("aligned", "accuracy", "all"): 0.7})),
    ("S1", "inconclusive", dict(overrides={("aligned", "accuracy", "all"): 0.81}, spread={"aligned": 0.1})),
    ("S2", "holds", {}),
    ("S2", "fails", dict(overrides={("aligned", "seed_disagreement", "all"): 0.3})),
    ("S2", "inconclusive", dict(overrides={("shuffled", "seed_disagreement", "all"): 0.05})),
    ("I1", "holds", {}),
    ("I1", "fails", dict(overrides={("human", "spearman_confidence", "train"): 0.2})),
    ("I1", "inconclusive", dict(overrides={("majority", "spearman_confidence", "train"): -0.6})),  # the null passes
    ("I1", "inconclusive", dict(seeds=(0, 1))),
    ("I2", "holds", {}),
    ("I2", "fails", dict(morph_share=0.1)),
    ("I2", "inconclusive", dict(morph_share=None)),  # no morphs
    ("R1", "holds", dict(real=(0, 1, 2))),
    ("R1", "fails", dict(real=(0, 1, 2), real_overrides={("human", "spearman_confidence", "train"): 0.3})),
    ("R1", "inconclusive", {}),  # no dataset with real human votes (quick, smoke)
    ("R1", "inconclusive", dict(real=(0, 1, 2), real_overrides={("majority", "spearman_confidence", "train"): -0.6})),
    ("R2", "holds", dict(real=(0, 1, 2))),
    ("R2", "fails", dict(real=(0, 1, 2), real_overrides={("aligned", "kl_human", "difficult"): 1.5})),
    ("R2", "inconclusive", dict(real=(0, 1))),  # two seeds
    ("R3", "holds", dict(real=(0, 1, 2))),
    ("R3", "fails", dict(real=(0, 1, 2), real_overrides={("aligned", "ece", "difficult"): 0.3})),
    ("R3", "inconclusive", dict(real=(0, 1, 2), real_overrides={("shuffled", "ece", "difficult"): 0.05})),
    ("K1", "holds", {}),
    ("K1", "fails", dict(entropy_gap=1e-3)),
    ("K1", "inconclusive", dict(entropy_gap=float("nan"))),
    ("K2", "holds", {}),
    ("K2", "fails", dict(mode_original=0.99)),
    ("K2", "inconclusive", dict(mode_original=float("nan"))),
]


def _decide(**scenario):
    return decide(DEFINITIONS, claims.measure_claims(*tables(**scenario), ROLES)).set_index("claim_id")


@pytest.mark.parametrize("claim_id, expected, scenario", VERDICT_CASES)
def test_claim_verdict(claim_id, expected, scenario):
    table = _decide(**scenario)
    assert table.loc[claim_id, "verdict"] == expected, table.loc[claim_id, "note"]


def test_values_are_the_hand_computed_paired_differences_and_nulls():
    table = _decide(spread={"aligned": 0.05})
    assert table.loc["H1", "value"] == pytest.approx(0.5) and table.loc["H1", "null_value"] == pytest.approx(-0.2)
    assert table.loc["H2", "value"] == pytest.approx(0.5) and table.loc["H2", "null_value"] == pytest.approx(-0.2)
    assert table.loc["H3", "value"] == pytest.approx(0.1) and table.loc["H3", "null_value"] == pytest.approx(-0.1)
    assert table.loc["S1", "value"] == pytest.approx(0.1)
    assert "human_soft - hard_majority: +0.03 " in table.loc["S1", "note"]
    assert table.loc["I1", "null_value"] == pytest.approx(-0.1)
    assert table.loc["I1", "value"] == pytest.approx(0.6) and table.loc["I2", "value"] == pytest.approx(0.3)
    # the aligned condition's seed noise (+-0.05) widens H1's interval symmetrically: t(2) * sd 0.05 / sqrt(3)
    half = 4.302653 * 0.05 / np.sqrt(3)
    assert table.loc["H1", "high"] - table.loc["H1", "value"] == pytest.approx(half, rel=1e-4)


def test_with_no_evidence_every_claim_is_inconclusive():
    metrics = pd.DataFrame(columns=["dataset", "condition", "seed", "pair", "subset", "metric", "value"])
    data = pd.DataFrame(columns=["dataset", "split", "kind", "items", "mode_shift_share", "annotators"])
    table = decide(DEFINITIONS, claims.measure_claims(metrics, data, ROLES))
    assert set(table["verdict"]) == {"inconclusive"}


def test_the_real_vote_claims_read_only_the_dataset_with_human_votes():
    # the simulated dataset's human_soft alignment fails R1's direction; the real one's holds: R1 reads the real one
    table = _decide(overrides={("human", "spearman_confidence", "train"): 0.3}, real=(0, 1, 2))
    assert table.loc["I1", "verdict"] == "fails" and table.loc["R1", "verdict"] == "holds"
    assert table.loc["R1", "value"] == pytest.approx(0.6) and table.loc["R1", "null_value"] == pytest.approx(-0.1)
    assert "of h" in table.loc["R1", "note"]
