"""Paper 10's claim checks on hand-made tables: they hold where the numbers support them and fail otherwise."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from neurips26.seqrec_audit import claims

DATASETS = ("shortcut_rich", "shortcut_poor", "only_lowbranch", "only_smooth", "ml100k")


def table(scores: dict[str, dict[str, float]]) -> pd.DataFrame:
    rows = [{"dataset": d, "method": m, "metric": "NDCG@10", "value": v}
            for d, by_method in scores.items() for m, v in by_method.items()]
    rows.append({"dataset": "shortcut_rich", "method": "tgh1", "metric": "Recall@10", "value": 0.99})  # ignored
    return pd.DataFrame(rows)


def diagnostics(rich_cov1=0.8, poor_cov1=0.1) -> pd.DataFrame:
    return pd.DataFrame({"dataset": list(DATASETS), "cov1": [rich_cov1, poor_cov1, 0.7, 0.2, 0.35],
                         "FeatAUC": [0.9, 0.6, 0.6, 0.9, 0.7], "HD": [-0.1, 0.5, 0.4, -0.05, 0.3]})


SUPPORTING = {
    "shortcut_rich": {"tgh1": 0.72, "tgh2": 0.70, "sasrec": 0.70, "markov1": 0.74, "pop": 0.02},
    "shortcut_poor": {"tgh1": 0.05, "tgh2": 0.06, "sasrec": 0.09, "markov1": 0.06, "pop": 0.01},
    "only_lowbranch": {"tgh1": 0.40, "tgh2": 0.41, "sasrec": 0.42, "markov1": 0.40},
    "only_smooth": {"tgh1": 0.20, "tgh2": 0.19, "sasrec": 0.30, "markov1": 0.25},
    "ml100k": {"tgh1": 0.05, "tgh2": 0.05, "sasrec": 0.09, "markov1": 0.08},
}


def checks(scores=SUPPORTING, diag=None):
    return {c.claim_id: c for c in claims.check_claims(table(scores), diagnostics() if diag is None else diag)}


def test_relative_gain_by_hand():
    assert claims.relative_gain(table(SUPPORTING), "shortcut_rich") == pytest.approx(0.72 / 0.74 - 1)
    assert np.isnan(claims.relative_gain(table(SUPPORTING), "missing"))


def test_claims_hold_where_the_numbers_support_them():
    c = checks()
    assert c["C1"].holds and "markov1" in c["C1"].note
    assert c["C2"].holds and c["C2"].value == pytest.approx(0.09 / 0.06 - 1)
    assert c["C3"].holds and c["C3"].value == pytest.approx(0.41 / 0.42 - 1)
    assert c["C4a"].holds and c["C4a"].value == 3
    assert c["C4b"].kind == "info" and c["C5"].kind == "info"


def test_claims_fail_where_the_numbers_do_not():
    against = {d: dict(s) for d, s in SUPPORTING.items()}
    against["shortcut_rich"]["markov1"] = 0.90  # TGH 20% below the best baseline
    against["shortcut_poor"]["sasrec"] = 0.062  # SASRec only 3% above TGH
    against["only_lowbranch"]["sasrec"] = 0.60
    against["only_smooth"]["sasrec"] = 0.50
    c = checks(against, diagnostics(rich_cov1=0.05))
    assert not any(c[i].holds for i in ("C1", "C2", "C3"))
    assert not c["C4a"].holds and c["C4a"].value == 2


def test_the_gain_over_one_method_by_hand():
    assert claims.gain_over(table(SUPPORTING), "shortcut_rich", "sasrec") == pytest.approx(0.72 / 0.70 - 1)
    assert np.isnan(claims.gain_over(table(SUPPORTING), "shortcut_rich", "bert4rec"))


def test_c2_takes_the_best_trained_model_and_ignores_training_free_ones():
    scores = {**SUPPORTING, "shortcut_poor": {"tgh1": 0.05, "tgh2": 0.06, "sasrec": 0.05, "bert4rec": 0.08,
                                              "itemknn_profile": 0.5}}
    c2 = checks(scores)["C2"]
    assert c2.value == pytest.approx(0.08 / 0.06 - 1) and "bert4rec" in c2.note
