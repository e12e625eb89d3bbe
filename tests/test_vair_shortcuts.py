"""The surface baseline (neurips26.vair.shortcuts): a length cue that separates the classes perfectly is found
(balanced accuracy 1), texts without a cue stay near 0.5, and the per-flaw table on real items has one row per view
and flaw type."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.vair.dataset import build_items
from neurips26.vair.items import FLAWS
from neurips26.vair.problems import generate_problems
from neurips26.vair.shortcuts import SHORTCUT_COLUMNS, VIEWS, length_features, shortcut_table, surface_accuracy

WORDS = np.array(["ava", "has", "pens", "buys", "more", "gives", "away", "then", "so", "total"])


def _texts(rng, lengths):
    return [" ".join(rng.choice(WORDS, size=n)) for n in lengths]


def test_a_length_cue_that_separates_the_classes_is_found():
    rng = np.random.default_rng(0)
    labels = [True, False] * 40
    texts = _texts(rng, [4 if flawed else 12 for flawed in labels])  # same words, the flawed texts shorter
    assert surface_accuracy(texts[:40], labels[:40], texts[40:], labels[40:]) == 1.0
    assert length_features(["a b\nc.", "d"]).tolist() == [[3, 2, 1], [1, 1, 0]]


def test_texts_without_a_cue_stay_near_chance():
    rng = np.random.default_rng(1)
    labels = [True, False] * 200
    texts = _texts(rng, rng.integers(5, 15, size=len(labels)))  # words and lengths independent of the label
    assert abs(surface_accuracy(texts[:200], labels[:200], texts[200:], labels[200:]) - 0.5) < 0.12


def test_one_class_is_refused():
    with pytest.raises(ValueError, match="both classes in its training"):
        surface_accuracy(["a", "b"], [True, True], ["a", "b"], [True, False])


def test_the_table_has_one_row_per_view_and_flaw():
    items = build_items(generate_problems(50, seed=3), np.random.default_rng(0))
    table = shortcut_table(items)
    assert tuple(table.columns) == SHORTCUT_COLUMNS and len(table) == len(VIEWS) * len(FLAWS)
    assert set(table.flaw) == set(FLAWS) and table["balanced_accuracy"].between(0, 1).all()
    with pytest.raises(ValueError, match="unknown views"):
        shortcut_table(items, views=("html",))


def test_counts_are_no_cue_for_a_missing_premise_or_step():
    """On generated items at the quick scale's settings, the surface baseline tells a missing premise or a missing
    step from a valid solution hardly better than chance (without distractors it scored 1.0 on both: a complete
    problem had one sentence more than its solution had steps)."""
    quick = {"max_steps": 3, "bound": 20, "max_premise": 6, "distractor_ops": 1, "lone_rate": 0.0}  # config/vair.yaml
    problems = generate_problems(600, seed=0, **quick)
    items = build_items(problems, np.random.default_rng(0), eval_fraction=0.3)
    table = shortcut_table(items, views=("small_model",)).set_index("flaw")["balanced_accuracy"]
    assert table["missing_premise"] <= 0.65 and table["missing_step"] <= 0.65, table
    bare = build_items(generate_problems(300, seed=0, **{**quick, "distractor_ops": 0}), np.random.default_rng(0),
                       eval_fraction=0.3)  # fmt: skip
    assert shortcut_table(bare, views=("small_model",)).set_index("flaw").loc["missing_step", "balanced_accuracy"] > 0.9
