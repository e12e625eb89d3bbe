"""Paper 10's training-free evaluation on a prepared synthetic regime."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from neurips26.seqrec_audit import catalog, evaluation, heuristic, metrics, prepare


@pytest.fixture(scope="module")
def rich():
    return prepare.prepare_synthetic(catalog.regime_spec("shortcut_rich", n_users=400, n_items=200), min_length=3)


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


def test_scoring_users_in_chunks_gives_the_ranks_of_the_full_matrix():
    rng = np.random.default_rng(0)
    n_users, n_items = 23, 17
    scores = rng.integers(0, 4, size=(n_users, n_items)).astype(float)  # many ties
    histories = [rng.choice(n_items, size=rng.integers(1, 6), replace=False) for _ in range(n_users)]
    targets = rng.integers(0, n_items, size=n_users)
    rows = {id(h): i for i, h in enumerate(histories)}

    def score_rows(chunk):
        return scores[[rows[id(h)] for h in chunk]]

    for exclude in (False, True):
        mask = metrics.history_mask(histories, n_items) if exclude else None
        for tie_break in ("pessimistic", "optimistic", "id"):
            full = metrics.rank_of_target(scores, targets, mask, tie_break)
            for chunk_size in (1, 5, 100):
                chunked = metrics.ranks_in_chunks(
                    score_rows, histories, targets, n_items, exclude, tie_break, chunk_size
                )
                assert np.array_equal(chunked, full)
    with pytest.raises(ValueError, match="expected"):
        metrics.ranks_in_chunks(lambda chunk: scores[:2], histories, targets, n_items)


def test_the_chunk_size_does_not_change_the_training_free_table(rich):
    methods = ["pop", "markov1", "itemknn_profile", "tgh2"]
    whole = evaluation.evaluate_training_free(rich, methods)
    chunked = evaluation.evaluate_training_free(rich, methods, chunk_size=37)
    assert np.array_equal(whole["value"].to_numpy(), chunked["value"].to_numpy())


def test_tgh_variants_come_from_the_caller_and_the_history_flag_applies_to_all(rich):
    custom = {"tgh_wide": heuristic.TGHConfig(budgets=((4, 3, 3),))}
    table = evaluation.evaluate_training_free(rich, ["tgh_wide", "markov1"], exclude_history=True, tgh=custom)
    assert set(table["method"]) == {"tgh_wide", "markov1"}
    kept = evaluation.evaluate_training_free(rich, ["tgh_wide"], tgh=custom)
    assert not np.array_equal(table[table["method"] == "tgh_wide"]["value"].to_numpy(), kept["value"].to_numpy())
