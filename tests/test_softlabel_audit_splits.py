"""Paper 15's splits: sizes, stratification, no item in two splits, and the difficult items."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.softlabel_audit.splits import (
    PAPER_SUBSET_SIZES,
    check_disjoint,
    difficult_items,
    paper_fractions,
    split_items,
    split_sizes,
)


def test_paper_subset_sizes_give_seventy_fifteen_fifteen():
    assert PAPER_SUBSET_SIZES["mnist"] == (2131, 457, 457) and sum(PAPER_SUBSET_SIZES["ambiguous"]) == 2484
    np.testing.assert_allclose(paper_fractions("mnist"), [0.7, 0.15, 0.15], atol=0.001)
    assert split_sizes(3045, paper_fractions("mnist")) == (2131, 457, 457)
    assert split_sizes(2484, paper_fractions("ambiguous")) == (1738, 373, 373)
    with pytest.raises(ValueError, match="too few"):
        split_sizes(3)


def test_splits_are_disjoint_sized_seeded_and_stratified():
    labels = np.repeat(np.arange(10), 100)
    splits = split_items(labels, (700, 150, 150), seed=0)
    assert [len(splits[k]) for k in ("train", "val", "test")] == [700, 150, 150]
    assert len(np.unique(np.concatenate(list(splits.values())))) == 1000
    for name in ("train", "val", "test"):
        counts = np.bincount(labels[splits[name]], minlength=10)
        assert counts.max() - counts.min() <= 2, (name, counts)
    again = split_items(labels, (700, 150, 150), seed=0)
    assert all(np.array_equal(splits[k], again[k]) for k in splits)
    assert not np.array_equal(splits["test"], split_items(labels, (700, 150, 150), seed=1)["test"])


def test_a_split_may_leave_items_out_but_not_ask_for_too_many():
    splits = split_items(np.arange(50) % 2, (10, 5, 5), seed=0)
    assert sum(len(v) for v in splits.values()) == 20
    with pytest.raises(ValueError, match="at most 50"):
        split_items(np.arange(50) % 2, (40, 6, 5), seed=0)


def test_an_item_in_two_splits_is_named():
    with pytest.raises(ValueError, match="item 4 is in two splits: train and test"):
        check_disjoint({"train": np.array([1, 4, 9]), "val": np.array([2]), "test": np.array([9, 4])})
    with pytest.raises(ValueError, match="item 3 appears twice in split val"):
        check_disjoint({"train": np.array([1]), "val": np.array([3, 3])})
    check_disjoint({"train": np.array([0, 1]), "val": np.array([2]), "test": np.array([3])})


def test_difficult_items_are_the_top_third_of_human_entropy_by_rank():
    entropy = np.array([0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8])
    assert np.flatnonzero(difficult_items(entropy)).tolist() == [6, 7, 8]
    # ties: a third of the items all the same, the tie broken by item order (lower index first)
    assert np.flatnonzero(difficult_items(np.array([0, 0, 0, 0, 0, 0.3, 0, 0, 0.2]))).tolist() == [0, 5, 8]
    assert difficult_items(np.linspace(0, 1, 315)[::-1]).sum() == 105
    with pytest.raises(ValueError, match="finite"):
        difficult_items(np.array([0.1, np.nan]))
