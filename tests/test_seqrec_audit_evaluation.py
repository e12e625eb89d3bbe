"""Paper 10's training-free evaluation on a prepared synthetic regime."""

from __future__ import annotations

import pandas as pd
import pytest

from neurips26.seqrec_audit import data, evaluation, prepare


@pytest.fixture(scope="module")
def rich():
    return prepare.prepare_synthetic(data.regime_spec("shortcut_rich", n_users=400, n_items=200), min_length=3)


def test_every_training_free_method_gives_bounded_metrics(rich):
    table = evaluation.evaluate_training_free(rich, list(evaluation.TRAINING_FREE))
    evaluation.sanity_ranges(table)
    assert set(table["method"]) == set(evaluation.TRAINING_FREE)
    assert set(table["metric"]) == {f"{m}@{k}" for m in ("Recall", "NDCG") for k in (1, 5, 10)}
    assert (table["seconds_per_1000_users"] > 0).all()
    ndcg = evaluation.ndcg_table(table.assign(dataset="shortcut_rich")).loc["shortcut_rich"]
    # on a low-branching, feature-smooth regime the transition graph carries the signal: far above popularity
    assert ndcg["tgh1"] > 3 * ndcg["pop"] and ndcg["markov1"] > 3 * ndcg["pop"]


def test_unknown_methods_are_refused(rich):
    with pytest.raises(ValueError, match="unknown training-free methods \\['sasrec'\\]"):
        evaluation.evaluate_training_free(rich, ["pop", "sasrec"])


def test_out_of_range_metrics_are_caught():
    with pytest.raises(ValueError, match="outside"):
        evaluation.sanity_ranges(pd.DataFrame({"method": ["x"], "metric": ["NDCG@10"], "value": [1.5]}))
