"""Paper 10: full-ranking Recall/NDCG against brute-force sorting and hand cases, and the shortcut
diagnostics on hand-solved graphs."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.seqrec_audit.baselines import itemknn_last_scores, itemknn_profile_scores
from neurips26.seqrec_audit.diagnostics import (
    feature_auc,
    feature_smoothness,
    history_dependence,
    mean_out_degree,
    ring_coverage,
    shortcut_diagnostics,
    transition_perplexity,
    transitions_per_edge,
)
from neurips26.seqrec_audit.graph import transition_counts
from neurips26.seqrec_audit.metrics import (
    PROTOCOL,
    history_mask,
    metrics_from_scores,
    metrics_from_topk,
    rank_of_target,
    topk_from_scores,
)

ORDER_KEYS = {  # sort key of a competitor relative to the target, for the brute force
    "pessimistic": lambda i, t: i == t,
    "optimistic": lambda i, t: i != t,
    "id": lambda i, t: i,
}


def brute_force_ranks(scores, targets, mask, tie_break):
    """Sort each user's candidates (target kept, masked items dropped) and read off its position."""
    ranks = []
    for u, t in enumerate(targets):
        cand = [i for i in range(scores.shape[1]) if i == t or mask is None or not mask[u, i]]
        order = sorted(cand, key=lambda i: (-scores[u, i], ORDER_KEYS[tie_break](i, t)))
        ranks.append(order.index(t) + 1)
    return np.array(ranks, dtype=float)


def brute_force_metrics(ranks, ks=(1, 5, 10)):
    out = {}
    for k in ks:
        out[f"Recall@{k}"] = float(np.mean([r <= k for r in ranks]))
        out[f"NDCG@{k}"] = float(np.mean([1 / np.log2(r + 1) if r <= k else 0.0 for r in ranks]))
    return out


@pytest.fixture
def tied_scores():
    rng = np.random.default_rng(5)
    scores = rng.integers(0, 6, size=(60, 30)).astype(np.float32)  # many ties
    targets = rng.integers(0, 30, size=60)
    mask = rng.random((60, 30)) < 0.2
    return scores, targets, mask


@pytest.mark.parametrize("tie_break", ["pessimistic", "optimistic", "id"])
@pytest.mark.parametrize("masked", [False, True])
def test_rank_of_target_matches_brute_force_sorting(tied_scores, tie_break, masked):
    scores, targets, mask = tied_scores
    mask = mask if masked else None
    want = brute_force_ranks(scores, targets, mask, tie_break)
    got = rank_of_target(scores, targets, mask, tie_break=tie_break)
    np.testing.assert_array_equal(got, want)
    assert metrics_from_scores(scores, targets, history_mask=mask, tie_break=tie_break) == (
        pytest.approx(brute_force_metrics(want))
    )


def test_random_ties_lie_between_optimistic_and_pessimistic(tied_scores):
    scores, targets, _ = tied_scores
    low = rank_of_target(scores, targets, tie_break="optimistic")
    high = rank_of_target(scores, targets, tie_break="pessimistic")
    draw = rank_of_target(scores, targets, tie_break="random", seed=1)
    assert (low <= draw).all() and (draw <= high).all() and (low < high).any()
    np.testing.assert_array_equal(draw, rank_of_target(scores, targets, tie_break="random", seed=1))
    draws = [rank_of_target(scores, targets, tie_break="random", seed=s) for s in range(300)]
    mean = np.mean(draws, axis=0)
    np.testing.assert_allclose(mean, (low + high) / 2, atol=0.6)


def test_default_tie_break_gives_constant_scores_no_credit():
    scores = np.zeros((3, 50), dtype=np.float32)
    ranks = rank_of_target(scores, np.array([0, 7, 49]))
    np.testing.assert_array_equal(ranks, [50, 50, 50])
    assert metrics_from_scores(scores, np.array([0, 7, 49]))["NDCG@10"] == 0.0


def test_hand_ranks_give_hand_ndcg():
    scores = np.array([[0.1, 0.9, 0.5, 0.7, 0.0]], dtype=np.float32)
    top = metrics_from_scores(scores, np.array([1]))
    assert top["NDCG@1"] == top["Recall@1"] == top["NDCG@10"] == 1.0
    third = metrics_from_scores(scores, np.array([2]))
    assert third["Recall@1"] == third["NDCG@1"] == 0.0
    assert third["Recall@5"] == 1.0
    assert third["NDCG@5"] == pytest.approx(1 / np.log2(4)) == pytest.approx(0.5)
    assert metrics_from_topk(np.array([[3, 9, 2, -1, -1]]), np.array([2]), ks=(1, 5)) == (
        pytest.approx({"Recall@1": 0.0, "NDCG@1": 0.0, "Recall@5": 1.0, "NDCG@5": 0.5})
    )


def test_history_mask_removes_competitors_but_keeps_the_target():
    scores = np.array([[0.9, 0.8, 0.5]], dtype=np.float32)
    mask = history_mask([np.array([0, 2])], 3)
    assert rank_of_target(scores, np.array([2]), mask)[0] == 2  # item 0 gone, item 1 remains
    assert rank_of_target(scores, np.array([0]), mask)[0] == 1  # a masked target stays a candidate
    excluded = np.array([[-np.inf, 0.8, 0.5]], dtype=np.float32)
    assert rank_of_target(excluded, np.array([0]), tie_break="optimistic")[0] == np.inf


def test_topk_matches_brute_force_sort_with_ties_and_masks(tied_scores):
    scores, _, mask = tied_scores
    scores = scores.copy()
    scores[:5, 3:] = -np.inf  # rows with fewer than k candidates
    got = topk_from_scores(scores, 10, valid=~mask)
    for u in range(scores.shape[0]):
        cand = [i for i in range(30) if not mask[u, i] and scores[u, i] > -np.inf]
        want = sorted(cand, key=lambda i: (-scores[u, i], i))[:10]
        assert got[u].tolist() == want + [-1] * (10 - len(want))


def test_topk_metrics_agree_with_score_metrics_under_id_ties(tied_scores):
    scores, targets, _ = tied_scores
    from_lists = metrics_from_topk(topk_from_scores(scores, 10), targets)
    assert from_lists == pytest.approx(metrics_from_scores(scores, targets, tie_break="id"))


def test_metrics_reject_bad_inputs():
    with pytest.raises(ValueError, match="exceeds"):
        metrics_from_topk(np.zeros((2, 5), int), np.array([0, 1]), ks=(1, 10))
    with pytest.raises(ValueError, match="NaN"):
        rank_of_target(np.array([[np.nan, 1.0]]), np.array([0]))
    with pytest.raises(ValueError, match="tie_break"):
        rank_of_target(np.zeros((1, 2)), np.array([0]), tie_break="best")
    assert "pessimistic" in PROTOCOL and "full ranking" in PROTOCOL


# ── diagnostics ───────────────────────────────────────────────────────────────

CHAIN = [[0, 1, 2, 3, 4, 5]] * 4


def arc_features(n):
    """Unit vectors at angles 0, 50, 90, 120, 140, ... degrees: the gaps shrink, so each item's
    successor is strictly its nearest neighbour."""
    gaps = np.radians(np.arange(n - 1, 0, -1) * 10.0)
    angle = np.concatenate([[0.0], np.cumsum(gaps)])
    return np.stack([np.cos(angle), np.sin(angle)], axis=1)


def test_deterministic_chain_has_perplexity_one_and_full_coverage():
    counts = transition_counts(CHAIN, 6)
    histories = [[0, 1, 2], [1, 2, 3], [3, 4]]
    targets = [3, 4, 5]
    assert mean_out_degree(counts) == 1.0
    assert transition_perplexity(counts) == pytest.approx(1.0)
    assert ring_coverage(counts, histories, targets) == (1.0, 1.0)
    # every target is the last item's nearest neighbour: it beats every other item
    assert feature_auc(arc_features(6), histories, targets) == 1.0
    out = shortcut_diagnostics(counts, arc_features(6), CHAIN, histories, targets)
    assert set(out) == {"mean_out_degree", "perplexity", "transitions_per_edge", "cov1", "cov2", "FS", "FeatAUC", "HD"}


def test_perplexity_and_degree_on_a_hand_graph():
    # row 0: 0->1, 0->2 once each (H = log 2); row 3: 3->4 twice (H = 0); weights 1/2, 1/2
    counts = transition_counts([[0, 1], [0, 2], [3, 4], [3, 4]], 5)
    assert transition_perplexity(counts) == pytest.approx(np.sqrt(2))
    assert mean_out_degree(counts) == 1.5
    assert transitions_per_edge(counts) == pytest.approx(4 / 3)  # 4 transitions on 3 distinct edges


def test_ring_coverage_counts_ring_one_and_ring_two_separately():
    counts = transition_counts([[0, 1, 2], [0, 3]], 5)
    cov1, cov2 = ring_coverage(counts, [[0], [0], [0], [0]], [1, 2, 4, 3])
    assert (cov1, cov2) == (0.5, 0.75)


def test_feature_smoothness_and_auc_by_hand():
    feats = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0], [-1.0, 0.0]])
    # last 0, target 1: cos 0.8; others' mean cos (0.8 + 0 - 1) / 3
    assert feature_smoothness(feats, [[0]], [1]) == pytest.approx(0.8 - (-0.2 / 3))
    # target 2 (cos 0) vs the others {1: 0.8, 3: -1}: above one of two
    assert feature_auc(feats, [[0]], [2]) == 0.5
    assert feature_auc(feats, [[0]], [1]) == 1.0


def test_history_dependence_is_zero_for_one_item_histories_and_matches_its_definition():
    rng = np.random.default_rng(2)
    feats = rng.normal(size=(40, 6))
    feats /= np.linalg.norm(feats, axis=1, keepdims=True)
    targets = rng.integers(0, 40, size=50)
    short = [[int(i)] for i in rng.integers(0, 40, size=50)]
    assert history_dependence(None, 40, short, targets, feats) == pytest.approx(0.0)
    long = [rng.integers(0, 40, size=6) for _ in range(50)]
    ratio = (
        metrics_from_scores(itemknn_profile_scores(None, 40, long, feats), targets)["NDCG@10"]
        / metrics_from_scores(itemknn_last_scores(None, 40, long, feats), targets)["NDCG@10"]
    )
    assert history_dependence(None, 40, long, targets, feats) == pytest.approx(ratio - 1)
