"""Paper 15's item sets, result files and experiment helpers: the item sets' splits, kinds and panels; bad item sets
refused naming the item; data.npz and runs.npz read back as written; the config checks name the bad key; the
conditions' targets and the teacher's logits."""

import copy

import numpy as np
import pytest
import yaml

from conftest import ROOT
from neurips26.softlabel_audit.annotators import PanelModel
from neurips26.softlabel_audit.artifacts import Runs, read_items, read_runs, write_items, write_runs
from neurips26.softlabel_audit.digits import load_mnist5k
from neurips26.softlabel_audit.experiment import (
    check_config,
    label_inputs,
    member_targets,
    needs_teacher,
    targets,
    teacher_logits,
)
from neurips26.softlabel_audit.itemset import CLEAN, MORPH, REAL, ItemSet, items_from_digits, items_from_votes
from neurips26.softlabel_audit.labels import entropy, matched_smoothing_epsilon, smoothing_entropy
from neurips26.softlabel_audit.members import Member, members_grid
from neurips26.softlabel_audit.splits import split_sizes

QUICK = yaml.safe_load((ROOT / "config/softlabel_audit.yaml").read_text())["quick"]


def _items(n=6, k=10, **changes) -> dict:
    counts = np.zeros((n, k), np.int64)
    counts[np.arange(n), np.arange(n) % k] = 3
    arrays = dict(
        images=np.zeros((n, 2, 2), np.float32),
        original=np.arange(n) % k,
        counts=counts,
        split=np.array([0, 0, 1, 1, 2, 2][:n], np.int8),
        kind=np.full(n, CLEAN, np.int8),
        simulated=True,
    )
    return {**arrays, **changes}


@pytest.fixture(scope="module")
def digit_items():
    return items_from_digits(load_mnist5k(), 60, 40, [0.7, 0.15, 0.15], 3, PanelModel(n_annotators=480, per_item=6))


def test_digit_items_split_clean_digits_and_morphs_by_the_fractions(digit_items):
    items = digit_items
    for code, (n_clean, n_morph) in enumerate(
        zip(split_sizes(60, [0.7, 0.15, 0.15]), split_sizes(40, [0.7, 0.15, 0.15]))
    ):
        in_split = items.split == code
        assert (items.kind[in_split] == CLEAN).sum() == n_clean and (items.kind[in_split] == MORPH).sum() == n_morph
    assert items.simulated and (items.counts.sum(1) == 6).all()  # six simulated annotators per item
    assert items.images.dtype == np.float32 and 0.0 <= items.images.min() and items.images.max() <= 1.0
    assert items.human_entropy[items.kind == MORPH].mean() > items.human_entropy[items.kind == CLEAN].mean()


def test_digit_items_are_the_same_for_the_same_seed(digit_items):
    again = items_from_digits(load_mnist5k(), 60, 40, [0.7, 0.15, 0.15], 3, PanelModel(n_annotators=480, per_item=6))
    for name, array in digit_items.arrays().items():
        np.testing.assert_array_equal(array, again.arrays()[name])


def test_vote_items_scale_uint8_images_and_are_real_and_stratified():
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(10), 10)
    counts = np.eye(10, dtype=np.int64)[labels] * 50
    items = items_from_votes(rng.integers(0, 256, (100, 4, 4, 3), dtype=np.uint8), labels, counts, [0.7, 0.15, 0.15], 0)
    assert not items.simulated and (items.kind == REAL).all() and len(items.original) == 100
    assert items.images.dtype == np.float32 and items.images.max() <= 1.0
    assert [len(items.indices(s)) for s in ("train", "val", "test")] == [70, 15, 15]
    assert set(np.bincount(items.original[items.indices("train")])) == {7}  # seven of each class


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (dict(counts=np.zeros((6, 10), np.int64)), "zero annotators for item at index 0"),
        (dict(original=np.array([0, 1, 2, 10, 4, 5])), r"original labels: class index outside 0..9 at index 3"),
        (dict(original=np.array([0, -1, 2, 3, 4, 5])), "outside 0..9 at index 1"),
        (dict(kind=np.full(5, CLEAN, np.int8)), "ItemSet.kind has 5 items, the labels 6"),
    ],
)
def test_bad_item_sets_are_refused_naming_the_item(changes, message):
    with pytest.raises(ValueError, match=message):
        ItemSet(**_items(**changes))


def test_item_sets_and_runs_read_back_as_written(tmp_path):
    items = ItemSet(**_items())
    write_items(tmp_path / "data.npz", items)
    back = read_items(tmp_path / "data.npz")
    assert back.simulated is True
    for name, array in items.arrays().items():
        np.testing.assert_array_equal(back.arrays()[name], array)
    members = members_grid(["hard_orig", "human_soft"], [0, 1])
    rng = np.random.default_rng(1)
    runs = Runs(members, rng.random((4, 3, 10)), rng.random((4, 2, 5)), rng.random((4, 2, 5)) > 0.5)
    write_runs(tmp_path / "runs.npz", runs)
    got = read_runs(tmp_path / "runs.npz")
    assert got.members == [
        Member("hard_orig", 0),
        Member("hard_orig", 1),
        Member("human_soft", 0),
        Member("human_soft", 1),
    ]
    np.testing.assert_allclose(got.test_probs, runs.test_probs, rtol=1e-6)  # stored as float32
    np.testing.assert_array_equal(got.correct, runs.correct)


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("conditions",), ["hard_orig", "soft_magic"], r"conditions: unknown \['soft_magic'\]"),
        (("model",), "vit_huge", "model: unknown 'vit_huge'"),
        (("seeds",), [0, 0, 1], "seeds: repeated seeds"),
        (("teacher", "seed"), 1, r"teacher.seed 1 makes teacher seeds \[1, 2, 3, 4\] that are also scored"),
        (("datasets", "mnist_ambiguous", "source"), "svhn", "datasets.mnist_ambiguous.source: unknown 'svhn'"),
        (("comparisons", "primary"), "cifar10h", "comparisons.primary 'cifar10h' is not among datasets"),
        (("conditions",), ["hard_orig", "human_soft"], "comparisons name conditions that are not run"),
    ],
)
def test_bad_configs_are_refused_naming_the_key(path, value, message):
    cfg = copy.deepcopy(QUICK)
    check_config(cfg)
    node = cfg
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(ValueError, match=message):
        check_config(cfg)


def test_targets_are_probability_rows_per_condition_and_the_teacher_logits_reproduce_its_probabilities():
    items = ItemSet(**_items())
    train = items.indices("train")
    probs = np.full((2, 10), 0.02)
    probs[:, 0] = 0.82
    inputs = label_inputs(items, train, teacher_logits(probs), 0.1, 1.0)
    conditions = ["hard_orig", "human_soft", "label_smooth", "teacher_soft"]
    q = targets(conditions, inputs)
    assert q.shape == (4, 2, 10) and q.dtype == np.float32
    np.testing.assert_allclose(q.sum(-1), 1.0, rtol=1e-6)
    np.testing.assert_array_equal(q[0].argmax(-1), items.original[train])
    np.testing.assert_allclose(q[3], probs, rtol=1e-6)  # temperature 1: the teacher's own distribution
    assert needs_teacher(conditions) and not needs_teacher(conditions[:3])


def test_digit_items_carry_the_panels_true_distribution_and_read_it_back(digit_items, tmp_path):
    probs = digit_items.panel_probs
    assert probs.shape == digit_items.counts.shape
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    np.testing.assert_array_equal(digit_items.reference, probs)
    # the votes are a sample of it: the observed majority is mostly the true mode
    assert (digit_items.counts.argmax(1) == probs.argmax(1)).mean() > 0.8
    write_items(tmp_path / "data.npz", digit_items)
    np.testing.assert_array_equal(read_items(tmp_path / "data.npz").panel_probs, probs)
    votes_only = ItemSet(**_items())
    assert votes_only.panel_probs is None and "panel_probs" not in votes_only.arrays()
    np.testing.assert_allclose(votes_only.reference, votes_only.counts / 3)


def test_member_targets_match_the_synthetic_labels_entropy_and_give_each_seed_its_teacher_and_shuffle(digit_items):
    train = digit_items.indices("train")
    rng = np.random.default_rng(0)
    logits = rng.normal(0, 6, (2, len(train), 10))
    conditions = ["human_soft", "human_soft_aligned", "human_soft_shuffled", "teacher_soft", "label_smooth"]
    q, settings, human = member_targets(conditions, [0, 1], digit_items, train,
                                        {"epsilon": "matched", "temperature": "matched"}, logits)  # fmt: skip
    assert q.shape == (10, len(train), 10)
    assert human == pytest.approx(entropy(q[0]).mean(), rel=1e-5)
    eps = settings[0][0]
    assert eps == pytest.approx(matched_smoothing_epsilon(human)) and smoothing_entropy(eps) == pytest.approx(human)
    for s in (0, 1):
        assert entropy(q[6 + s]).mean() == pytest.approx(human, abs=1e-5)  # each seed's teacher at its temperature
    assert settings[0][1] != settings[1][1]
    assert not np.array_equal(q[4], q[5])  # a shuffle per seed
    # the shuffle keeps each class's multiset of aligned labels
    for c in np.unique(digit_items.original[train]):
        mine = digit_items.original[train] == c
        np.testing.assert_allclose(np.sort(entropy(q[4][mine])), np.sort(entropy(q[2][mine])), atol=1e-6)
    _, fixed, _ = member_targets(["label_smooth"], [0], digit_items, train, {"epsilon": 0.1, "temperature": 2.0})
    assert fixed[0][0] == 0.1 and np.isnan(fixed[0][1])  # no teacher, no temperature
