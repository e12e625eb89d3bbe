"""Paper 15's SIMULATED annotator panels: the psychometric choice between the two candidate classes, lapses through
the confusion matrix, distinct annotators per item, and the ambiguity read off morphs and clean digits."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.softlabel_audit import annotators as ann
from neurips26.softlabel_audit.annotators import (
    Ambiguity,
    PanelModel,
    clean_ambiguity,
    distinct_annotators,
    morph_ambiguity,
    prototype_confusion,
    simulate_panel,
    vote_counts,
)
from neurips26.softlabel_audit.digits import Digits
from neurips26.softlabel_audit.morph import MorphSet

SHARP = PanelModel(n_annotators=50, per_item=6, slope_median=500.0, slope_log_sd=0.0, bias_sd=0.0, lapse_mean=1e-9)


def _ambiguity(weight, a=2, b=5) -> Ambiguity:
    weight = np.asarray(weight, dtype=float)
    return Ambiguity(np.full(len(weight), a), np.full(len(weight), b), weight)


def test_the_expected_votes_are_the_limit_of_the_simulated_vote_shares():
    model = PanelModel(n_annotators=40, per_item=6, lapse_mean=0.2)
    weights = np.repeat([0.45, 0.55, 0.9], 6000)
    amb = _ambiguity(weights)
    probs = ann.expected_votes(amb, model, seed=5)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    shares = simulate_panel(amb, model, seed=5).counts.reshape(3, 6000, 10).sum(1) / 36000
    np.testing.assert_allclose(shares, probs[::6000], atol=0.01)
    assert probs[0, 0] == pytest.approx(0.2 / 9, rel=0.2)  # lapses spread evenly over the other classes


def test_vote_counts_of_a_hand_made_panel():
    counts = vote_counts(np.array([[1, 1, 9], [0, 3, 3]]))
    assert counts.shape == (2, 10)
    assert counts[0].tolist() == [0, 2, 0, 0, 0, 0, 0, 0, 0, 1] and counts[1].tolist() == [1, 0, 0, 2] + [0] * 6


def test_each_item_gets_distinct_annotators_and_the_pool_is_used_evenly():
    who = distinct_annotators(20000, pool=12, per_item=6, rng=np.random.default_rng(0))
    assert who.shape == (20000, 6)
    assert (np.sort(who, axis=1)[:, 1:] != np.sort(who, axis=1)[:, :-1]).all()
    share = np.bincount(who.ravel(), minlength=12) / who.size
    np.testing.assert_allclose(share, 1 / 12, atol=0.005)
    first = np.bincount(who[:, 0], minlength=12) / len(who)  # the slot order is random too
    np.testing.assert_allclose(first, 1 / 12, atol=0.01)


def test_clear_items_get_unanimous_votes_for_the_heavier_class():
    panel = simulate_panel(_ambiguity([1.0, 0.9, 0.1, 0.0]), SHARP, seed=0)
    assert panel.votes.shape == panel.annotator.shape == (4, 6)
    assert panel.votes[:2].tolist() == [[2] * 6] * 2 and panel.votes[2:].tolist() == [[5] * 6] * 2
    assert panel.counts.sum(axis=1).tolist() == [6] * 4


def test_the_share_of_votes_for_class_a_follows_the_psychometric_curve():
    model = PanelModel(n_annotators=200, slope_median=10.0, slope_log_sd=0.0, bias_sd=0.0, lapse_mean=1e-9)
    weights = np.repeat([0.3, 0.5, 0.6], 4000)
    votes = simulate_panel(_ambiguity(weights), model, seed=1).votes
    share_a = (votes == 2).reshape(3, -1).mean(axis=1)
    expected = 1 / (1 + np.exp(-10 * (np.array([0.3, 0.5, 0.6]) - 0.5)))  # 0.119, 0.5, 0.731
    np.testing.assert_allclose(share_a, expected, atol=0.015)
    assert set(np.unique(votes)) == {2, 5}


def test_lapses_go_through_the_confusion_row_of_the_class_seen():
    confusion = np.zeros((10, 10))
    confusion[np.arange(10), (np.arange(10) + 1) % 10] = 1.0  # a lapse reports the next class
    model = PanelModel(n_annotators=100, slope_median=500.0, slope_log_sd=0.0, bias_sd=0.0, lapse_mean=0.3)
    votes = simulate_panel(_ambiguity(np.ones(3000)), model, seed=2, confusion=confusion).votes
    assert set(np.unique(votes)) == {2, 3}
    assert (votes == 3).mean() == pytest.approx(0.3, abs=0.02)


def test_panels_are_seeded_and_bad_confusions_are_refused():
    amb = _ambiguity(np.linspace(0, 1, 50))
    a, b = simulate_panel(amb, PanelModel(), seed=3), simulate_panel(amb, PanelModel(), seed=3)
    np.testing.assert_array_equal(a.votes, b.votes)
    np.testing.assert_array_equal(a.annotator, b.annotator)
    assert not np.array_equal(a.annotator, simulate_panel(amb, PanelModel(), seed=4).annotator)
    with pytest.raises(ValueError, match="rows must sum to 1"):
        simulate_panel(amb, PanelModel(), seed=3, confusion=np.eye(10) * 0.5)
    with pytest.raises(ValueError, match="per_item=7 exceeds n_annotators=6"):
        PanelModel(n_annotators=6, per_item=7)
    with pytest.raises(ValueError, match="first bad item 1"):
        _ambiguity([0.5, 1.5])


def test_morph_ambiguity_is_the_ink_share_of_class_a():
    sources = np.zeros((2, 28, 28))
    sources[0, :1, :10] = 1.0  # ink 10
    sources[1, :3, :10] = 1.0  # ink 30
    morphs = MorphSet(
        images=np.zeros((2, 28, 28)),
        class_a=np.array([1, 8]),
        class_b=np.array([8, 1]),
        w=np.array([0.6, 0.6]),
        source_a=np.array([0, 1]),
        source_b=np.array([1, 0]),
    )
    amb = morph_ambiguity(morphs, sources)
    np.testing.assert_allclose(amb.weight, [6 / (6 + 12), 18 / (18 + 4)])  # the lighter 1 loses despite w = 0.6
    assert amb.class_a.tolist() == [1, 8] and amb.class_b.tolist() == [8, 1]


def test_clean_ambiguity_is_a_coin_flip_for_a_digit_nearer_another_class():
    rng = np.random.default_rng(0)
    base = np.zeros((3, 28, 28))
    base[0, 8:20, 12:16] = 1.0  # a bar
    base[1, 12:16, 8:20] = 1.0  # a cross bar
    base[2, 8:12, 8:20] = 1.0
    labels = np.repeat([0, 1, 2], 30)
    images = np.clip(base[labels] + 0.05 * rng.random((90, 28, 28)), 0, 1)
    images[0] = base[1]  # labelled 0, drawn as a 1
    amb = clean_ambiguity(Digits(images.astype(np.float32), labels), n_prototypes=1, seed=0)
    assert amb.class_a.tolist() == labels.tolist()
    assert amb.class_b[0] == 1 and amb.weight[0] == 0.5
    assert (amb.weight[1:] > 0.5).all() and np.median(amb.weight) == pytest.approx(ann.CLEAN_MEDIAN_WEIGHT)


def test_prototype_confusion_is_a_stochastic_matrix_leaning_to_similar_classes():
    images = np.zeros((30, 28, 28))
    images[:, 10:18, 10:18] = np.linspace(0, 1, 10).repeat(3)[:, None, None]  # class c has intensity c / 9
    confusion = prototype_confusion(images, np.repeat(np.arange(10), 3))
    np.testing.assert_allclose(confusion.sum(axis=1), 1.0)
    assert (np.diag(confusion) == 0).all()
    assert confusion[4].argmax() in (3, 5) and confusion[0].argmax() == 1
    with pytest.raises(ValueError, match="missing"):
        prototype_confusion(images[:6], np.arange(6))
