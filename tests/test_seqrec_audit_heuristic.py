"""TGH (paper 10): the transition graph, its rings, the heuristic's picks, and the baselines.

The hand-made graph (``HAND_SEQS``), with its rings from item 0::

    0 -> 1 (x3), 0 -> 2, 0 -> 3;  1 -> 4, 1 -> 5, 2 -> 5, 3 -> 4;  4 -> 6, 5 -> 7;  8 -> 9
    ring1(0) = {1, 2, 3}, ring2(0) = {4, 5}, ring3(0) = {6, 7}

Features are 2-D unit vectors ``(cos, sin)``; ``cos(e_0, e_i)`` is the first coordinate. Ring-1
scores from source 0 (alpha = 0.5, edge bonus ``log1p(c)/log1p(3)``: 1 for item 1, 1/2 for items
2 and 3): item 1: 0.7 + 0.5 = 1.2, item 3: 0.8 + 0.25 = 1.05, item 2: 0.6 + 0.25 = 0.85, so ring 1
ranks [1, 3, 2] (by cosine alone it would be [3, 1, 2]); ring 2 ranks [5 (0.9), 4 (0.1)]; ring 3
[6 (0.3), 7 (-0.5)]; outside the graph's reach from 0, item 9 (0.4) beats item 8 (0.2).
"""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import shortest_path

from neurips26.seqrec_audit.baselines import (
    itemknn_last_scores,
    itemknn_profile_scores,
    markov1_scores,
    popularity_scores,
)
from neurips26.seqrec_audit.graph import ring_masks, rings, transition_counts
from neurips26.seqrec_audit.heuristic import TGH_VARIANTS, TGHConfig, edge_weights, recommend_tgh
from neurips26.seqrec_audit.metrics import topk_from_scores

HAND_SEQS = [[0, 1, 4, 6], [0, 1, 5, 7], [0, 1], [0, 2, 5], [0, 3, 4], [8, 9]]
HAND_COS = [1.0, 0.7, 0.6, 0.8, 0.1, 0.9, 0.3, -0.5, 0.2, 0.4]
HAND_SIGN = [1, 1, 1, 1, 1, 1, 1, -1, -1, -1]


def hand_features() -> np.ndarray:
    c = np.array(HAND_COS)
    return np.stack([c, np.array(HAND_SIGN) * np.sqrt(1 - c**2)], axis=1).astype(np.float32)


def hand_tgh(histories, budgets, k, **kw) -> np.ndarray:
    counts = transition_counts(HAND_SEQS, 10)
    return recommend_tgh(counts, hand_features(), histories, TGHConfig(budgets=budgets, **kw), k)


# ── graph ─────────────────────────────────────────────────────────────────────


def test_transition_counts_count_consecutive_pairs():
    counts = transition_counts(HAND_SEQS, 10)
    assert counts[0, 1] == 3 and counts[0, 2] == 1 and counts[1, 5] == 1 and counts[8, 9] == 1
    assert counts.sum() == sum(len(s) - 1 for s in HAND_SEQS)
    assert counts[1, 0] == 0
    with pytest.raises(ValueError, match="outside"):
        transition_counts([[0, 10]], 10)


def test_rings_on_hand_made_graph():
    counts = transition_counts(HAND_SEQS, 10)
    r = rings(counts, 0, 4)
    assert [x.tolist() for x in r] == [[1, 2, 3], [4, 5], [6, 7], []]
    assert [x.tolist() for x in rings(counts, 8, 2)] == [[9], []]


def test_rings_keep_self_loop_in_ring_one_only():
    # GraphRec's ring 1 is the adjacency row (s itself after s -> s); deeper rings exclude s.
    counts = transition_counts([[5, 5, 6, 5], [6, 7]], 8)
    assert [x.tolist() for x in rings(counts, 5, 3)] == [[5, 6], [7], []]


def test_rings_match_unweighted_shortest_paths():
    rng = np.random.default_rng(3)
    n = 40
    seqs = [rng.integers(0, n, size=rng.integers(2, 6)) for _ in range(60)]
    counts = transition_counts(seqs, n)
    dist = shortest_path((counts > 0).astype(float), unweighted=True)
    masks = ring_masks(counts, np.arange(n), 4)
    for s in range(n):
        assert set(np.nonzero(counts[s].toarray().ravel())[0]) == set(masks[0][s].indices)
        for h in range(2, 5):
            expected = {i for i in range(n) if dist[s, i] == h and i != s}
            assert set(masks[h - 1][s].indices) == expected


# ── TGH picks computed by hand ─────────────────────────────────────────────────


def test_edge_weight_bonus_is_log1p_count_over_row_max():
    ew = edge_weights(transition_counts(HAND_SEQS, 10)).toarray()
    assert ew[0, 1] == pytest.approx(1.0)
    assert ew[0, 2] == pytest.approx(np.log(2) / np.log(4))
    assert ew[1, 4] == ew[1, 5] == pytest.approx(1.0)


def test_tgh_budgets_take_ring_tops_in_ring_order():
    # ring 1 [1, 3, 2] -> 2 picks, ring 2 [5, 4] -> 1, ring 3 [6, 7] -> 1
    assert hand_tgh([[9, 0]], ((2, 1, 1),), 4).tolist() == [[1, 3, 5, 6]]


def test_tgh_surplus_fills_a_short_later_ring_before_its_own_picks():
    # ring 1 gives [1] and queues [3, 2]; ring 2 holds 2 < 3, so 3 comes first, then 5, 4
    assert hand_tgh([[0]], ((1, 3),), 4).tolist() == [[1, 3, 5, 4]]


def test_tgh_short_first_ring_is_filled_at_the_end_from_later_surplus():
    # ring 1 holds 3 < 4: its deficit is not carried forward; ring 2's surplus (4) ends the list
    assert hand_tgh([[0]], ((4, 1, 1),), 6).tolist() == [[1, 3, 2, 5, 6, 4]]


def test_tgh_catch_all_last_ring_when_rings_are_capped():
    # max_explicit_depth=2: ring 3 becomes NOT({0} | rings 1-2 | history) = {6, 7, 8, 9} -> 9 (0.4)
    assert hand_tgh([[0]], ((2, 1, 1),), 4, max_explicit_depth=2).tolist() == [[1, 3, 5, 9]]


def test_tgh_exclude_history_removes_history_from_every_ring():
    history = [[5, 3, 0]]
    assert hand_tgh(history, ((2, 1, 1),), 4).tolist() == [[1, 3, 5, 6]]
    assert hand_tgh(history, ((2, 1, 1),), 4, exclude_history=True).tolist() == [[1, 2, 4, 6]]


def test_tgh2_second_source_skips_items_already_picked():
    # source 0 (item 0): [1, 3] + [5]; source 1 (item 1, own anchor): ring 1 {4, 5} minus 5 -> 4,
    # ring 2 {6, 7} ranked by cos(e_1, .): 6 (0.89) before 7 (-0.97)
    assert hand_tgh([[1, 0]], ((2, 1), (1, 1)), 5).tolist() == [[1, 3, 5, 4, 6]]


def test_tgh_pads_semantically_or_with_the_seeded_random_draw():
    # rings give 7 items for 8 slots; the catch-all outside {0} | rings 1-3 is {8, 9}
    assert hand_tgh([[0]], ((4, 2, 2),), 8, pad="semantic").tolist() == [[1, 3, 2, 5, 4, 6, 7, 9]]
    drawn = random.Random(42 + 0).sample([0, 8, 9], 1)
    assert hand_tgh([[0]], ((4, 2, 2),), 8).tolist() == [[1, 3, 2, 5, 4, 6, 7, *drawn]]


def test_tgh2_one_item_history_has_no_second_source_and_is_padded():
    # TGH-2 materialises rings 1-2 only, so the catch-all is {6, 7, 8, 9}: source 0's top 3 there
    # by cos(e_0, .) are [9, 6, 8], and the two empty source-1 slots take 9 and 6
    got = hand_tgh([[0]], ((2, 1), (1, 1)), 5, pad="semantic")
    assert got.tolist() == [[1, 3, 5, 9, 6]]


def test_tgh_ties_go_to_the_lower_item_id():
    feats = np.array([[1, 0], [0.6, 0.8], [0.6, 0.8]], dtype=np.float32)
    for seqs in ([[0, 1], [0, 2]], [[0, 2], [0, 1]]):
        counts = transition_counts(seqs, 3)
        got = recommend_tgh(counts, feats, [[0]], TGHConfig(budgets=((2,),)), k=2)
        assert got.tolist() == [[1, 2]]


def test_tgh_rejects_bad_inputs():
    counts = transition_counts(HAND_SEQS, 10)
    feats = hand_features()
    with pytest.raises(ValueError, match=r"\(7, 2, 1\).*sum to 10.*k=5"):
        recommend_tgh(counts, feats, [[0]], TGHConfig(), k=5)
    with pytest.raises(ValueError, match="9 rows but there are 10 items"):
        recommend_tgh(counts, feats[:9], [[0]], TGHConfig())
    bad = feats.copy()
    bad[3, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        recommend_tgh(counts, bad, [[0]], TGHConfig())
    with pytest.raises(ValueError, match="empty transition graph"):
        recommend_tgh(sp.csr_matrix((10, 10)), feats, [[0]], TGHConfig())
    with pytest.raises(ValueError, match="non-empty history"):
        recommend_tgh(counts, feats, [[]], TGHConfig())


# ── agreement with a per-user reference reimplementation of GraphRec's tgh.py logic ──────


def _port_assemble(per_ring, hop_k, total_k, all_items, rng, already_set=None, pad_picks=None):
    """GraphRec ``_assemble_with_overflow`` + ``_random_pad_sample``, as written there."""
    result, overflow = [], []
    for h_idx, k_want in enumerate(hop_k):
        picks = [p for p in per_ring[h_idx] if already_set is None or p not in already_set]
        ring_size = len(picks)
        take_ov = min(len(overflow), max(0, k_want - ring_size))
        result += overflow[:take_ov]
        if already_set is not None:
            already_set.update(overflow[:take_ov])
        overflow = overflow[take_ov:]
        k_want -= take_ov
        if ring_size == 0:
            continue
        sel = picks[:k_want]
        result += sel
        if already_set is not None:
            already_set.update(sel)
        overflow += picks[k_want:]
    if len(result) < total_k:
        extra = [x for x in overflow if already_set is None or x not in already_set]
        result += extra[: total_k - len(result)]
        if already_set is not None:
            already_set.update(extra[: total_k - len(result)])
    if len(result) < total_k:
        used = set(result) if already_set is None else already_set
        for p in pad_picks or []:
            if len(result) >= total_k:
                break
            if p in used:
                continue
            result.append(p)
            used.add(p)
        if len(result) < total_k:
            pool = [x for x in all_items if x not in used]
            result += rng.sample(pool, min(total_k - len(result), len(pool)))
    return result[:total_k]


def _port_tgh(counts, feats, histories, sources_budgets, semantic, seed=42, alpha=0.5):
    """Per-user port of run_tgh1 / run_tgh2 (last_n = 1), ties to the lower id."""
    n = counts.shape[0]
    succ = [set(counts[i].indices) for i in range(n)]
    cnt = counts.toarray().astype(np.float32)
    logc = np.log1p(cnt)
    row_max = logc.max(axis=1)
    scale = (np.float32(1.0) / np.where(row_max == 0, 1, row_max)).astype(np.float32)
    bonus = logc * scale[:, None] * np.float32(alpha)
    depth = max(2, *(len(b) for b in sources_budgets))
    all_items = list({int(x) for a, b in zip(*counts.nonzero()) for x in (a, b)})
    out = []
    for uid, hist in enumerate(histories):
        combined, already, pad0 = [], set(), None
        for j, hop_k in enumerate(sources_budgets):
            total = sum(hop_k)
            s = hist[-1 - j] if len(hist) > j else hist[-1]
            anchor = feats[s] / max(np.linalg.norm(feats[s]), 1e-8)
            score = (anchor[None, :].astype(np.float32) @ feats.T)[0]
            rings_, seen, frontier = [], {s}, {s}
            for h in range(depth):
                nxt = set().union(*(succ[i] for i in frontier)) if frontier else set()
                ring = nxt if h == 0 else nxt - seen
                seen |= ring
                rings_.append(ring)
                frontier = ring
            per_ring = []
            for h in range(len(hop_k)):
                sc = score + bonus[s] if h == 0 else score
                cand = sorted((i for i in rings_[h] if i not in already), key=lambda i: (-sc[i], i))
                per_ring.append(cand[:total])
            catch = [i for i in range(n) if i not in seen and i not in hist and i not in already]
            pad = sorted(catch, key=lambda i: (-score[i], i))[:total] if semantic else None
            pad0 = pad if j == 0 else pad0
            picks = _port_assemble(
                per_ring,
                hop_k,
                total,
                all_items,
                random.Random(seed + uid),
                set(already) if j else None,
                pad,
            )
            if len(hist) > j:
                combined += picks
                already |= set(picks)
        if len(combined) < sum(map(sum, sources_budgets)):
            used = set(combined)
            for p in pad0 or []:
                if len(combined) < sum(map(sum, sources_budgets)) and p not in used:
                    combined.append(p)
                    used.add(p)
            pool = [x for x in all_items if x not in used]
            missing = sum(map(sum, sources_budgets)) - len(combined)
            combined += random.Random(seed + uid).sample(pool, min(missing, len(pool)))
        out.append(combined)
    return out


@pytest.mark.parametrize("variant", ["tgh1", "tgh2"])
@pytest.mark.parametrize("pad", ["random", "semantic"])
def test_tgh_matches_a_per_user_port_of_graphrec(variant, pad):
    rng = np.random.default_rng(11)
    n_items, n_users = 70, 80
    # sparse graph: many rings under-fill, so overflow and both pads are exercised
    seqs = [rng.integers(0, n_items - 5, size=rng.integers(2, 5)) for _ in range(45)]
    counts = transition_counts(seqs, n_items)
    feats = rng.normal(size=(n_items, 8)).astype(np.float32)
    feats /= np.linalg.norm(feats, axis=1, keepdims=True)
    histories = [rng.integers(0, n_items, size=rng.integers(1, 5)) for _ in range(n_users)]
    config = replace(TGH_VARIANTS[variant], pad=pad, chunk_size=32)
    got = recommend_tgh(counts, feats, histories, config)
    want = _port_tgh(
        counts,
        feats,
        [list(map(int, h)) for h in histories],
        config.budgets,
        semantic=pad == "semantic",
    )
    assert got.tolist() == want
    assert all(len(set(row)) == 10 for row in got.tolist())


# ── baselines ─────────────────────────────────────────────────────────────────


def test_popularity_counts_training_occurrences_and_masks_history():
    seqs = [[0, 1, 2], [1, 2], [2]]
    scores = popularity_scores(seqs, 4, [[0], [2]])
    assert scores.tolist() == [[1, 2, 3, 0], [1, 2, 3, 0]]
    masked = popularity_scores(seqs, 4, [[0], [2]], exclude_history=True)
    assert topk_from_scores(masked, 2).tolist() == [[2, 1], [1, 0]]


def test_markov1_ranks_next_item_counts_then_popularity():
    seqs = [[0, 1], [0, 1], [0, 2], [3, 2]]
    scores = markov1_scores(seqs, 5, [[3, 0], [4]])
    # from 0: c = 2 (item 1), 1 (item 2); pop 0:3 1:2 2:2 3:1 4:0 -> bonus 0.5 * pop / 3
    assert scores[0].tolist() == pytest.approx([0.5, 2 + 1 / 3, 1 + 1 / 3, 1 / 6, 0.0])
    assert topk_from_scores(scores, 5).tolist() == [[1, 2, 0, 3, 4], [0, 1, 2, 3, 4]]
    masked = markov1_scores(seqs, 5, [[1, 0]], exclude_history=True)
    assert topk_from_scores(masked, 3).tolist() == [[2, 3, 4]]


def test_itemknn_last_and_profile_on_hand_cosines():
    feats = np.array([[1.0, 0.0], [0.8, 0.6], [0.6, 0.8]])
    last = itemknn_last_scores(None, 3, [[2, 0]], feats)
    assert last[0].tolist() == pytest.approx([0.0, 0.8, 0.6])
    # weights: item 0 (last) 1, item 2 0.8; cos(0,1) .8, cos(0,2) .6, cos(1,2) .96, self 0
    profile = itemknn_profile_scores(None, 3, [[2, 0]], feats)
    assert profile[0].tolist() == pytest.approx([0.8 * 0.6, 0.8 + 0.8 * 0.96, 0.6], abs=1e-6)
    one = itemknn_profile_scores(None, 3, [[0]], feats)
    assert one.tolist() == pytest.approx(last_one := itemknn_last_scores(None, 3, [[0]], feats))
    assert last_one[0, 0] == 0.0


def test_itemknn_without_features_uses_cooccurrence_cosine():
    seqs = [[0, 1], [0, 1, 2], [2, 3]]
    scores = itemknn_last_scores(seqs, 4, [[0], [2]])
    # S_0 = S_1 = {a, b}, S_2 = {b, c}, S_3 = {c}
    assert scores[0].tolist() == pytest.approx([0.0, 1.0, 0.5, 0.0])
    assert scores[1].tolist() == pytest.approx([0.5, 0.5, 0.0, 1 / np.sqrt(2)])
