"""Paper 15's label conditions on hand-made votes, and the refusal of bad labels naming the first offending index."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.softlabel_audit.labels import (
    LABEL_CONDITIONS,
    LabelInputs,
    align_to_labels,
    check_label_indices,
    check_soft_labels,
    check_vote_counts,
    entropy,
    label_targets,
    majority_labels,
    matched_smoothing_epsilon,
    matched_temperature,
    mode_shift_share,
    shuffle_within_class,
    smooth_labels,
    smoothing_entropy,
    teacher_soft_labels,
)


def _counts(*rows: dict[int, int]) -> np.ndarray:
    counts = np.zeros((len(rows), 10), dtype=np.int64)
    for i, row in enumerate(rows):
        for cls, n in row.items():
            counts[i, cls] = n
    return counts


# item 0: unanimous for its label 3; item 1: 4 of 6 for 5 against its label 2 (a mode shift);
# item 2: a 3-3 tie between its label 7 and 1 (no shift); item 3: a 3-3 tie between 4 and 6, label 0 (shift to 4)
COUNTS = _counts({3: 6}, {5: 4, 2: 2}, {7: 3, 1: 3}, {6: 3, 4: 3})
ORIGINAL = np.array([3, 2, 7, 0])
INPUTS = LabelInputs(ORIGINAL, COUNTS, teacher_logits=np.log(np.eye(10)[[3, 5, 7, 0]] * 8 + 1), temperature=1.0)


def test_majority_ties_go_to_the_original_label_else_the_lowest_class():
    assert majority_labels(COUNTS, ORIGINAL).tolist() == [3, 5, 7, 4]
    assert mode_shift_share(COUNTS, ORIGINAL) == 0.5


def test_hard_conditions_are_one_hot_of_the_original_and_of_the_majority():
    assert label_targets("hard_orig", INPUTS).argmax(axis=1).tolist() == [3, 2, 7, 0]
    majority = label_targets("hard_majority", INPUTS)
    assert majority.argmax(axis=1).tolist() == [3, 5, 7, 4] and (majority.sum(axis=1) == 1).all()


def test_human_soft_labels_are_the_vote_proportions():
    soft = label_targets("human_soft", INPUTS)
    assert soft[1, 5] == pytest.approx(4 / 6) and soft[1, 2] == pytest.approx(2 / 6) and soft[0, 3] == 1.0


def test_aligned_soft_labels_put_the_original_class_on_top_and_keep_the_shape():
    soft = label_targets("human_soft", INPUTS)
    aligned = label_targets("human_soft_aligned", INPUTS)
    assert aligned[1, 2] == pytest.approx(4 / 6) and aligned[1, 5] == pytest.approx(2 / 6)  # swapped
    assert aligned[3, 0] == 0.5 and aligned[3, 4] == 0.0 and aligned[3, 6] == 0.5  # mode 4 and label 0 swapped
    np.testing.assert_array_equal(aligned[[0, 2]], soft[[0, 2]])  # no shift, nothing moves
    assert (majority_labels(aligned, ORIGINAL) == ORIGINAL).all()
    np.testing.assert_allclose(entropy(aligned), entropy(soft))
    np.testing.assert_allclose(np.sort(aligned, axis=1), np.sort(soft, axis=1))


def test_label_smoothing_and_the_entropy_matched_epsilon():
    smooth = smooth_labels(np.array([2]), epsilon=0.1)
    assert smooth[0, 2] == pytest.approx(0.91) and smooth[0, 0] == pytest.approx(0.01)
    assert label_targets("label_smooth", INPUTS)[1, 2] == pytest.approx(0.91)
    eps = matched_smoothing_epsilon(0.5)
    assert smoothing_entropy(eps) == pytest.approx(0.5, abs=1e-9) and 0 < eps < 0.9
    assert matched_smoothing_epsilon(0.0) == 0.0 and matched_smoothing_epsilon(np.log(10)) == pytest.approx(0.9)


def test_teacher_soft_labels_are_the_tempered_softmax():
    logits = np.array([[0.0, np.log(3.0)]])
    np.testing.assert_allclose(teacher_soft_labels(logits, 1.0), [[0.25, 0.75]])
    np.testing.assert_allclose(teacher_soft_labels(logits, np.log(3.0) / np.log(2.0)), [[1 / 3, 2 / 3]])
    teacher = label_targets("teacher_soft", INPUTS)
    assert teacher[1, 5] == pytest.approx(9 / 18)
    aligned = label_targets("teacher_soft_aligned", INPUTS)
    assert aligned[1].argmax() == 2 and aligned[1, 2] == pytest.approx(9 / 18)
    with pytest.raises(ValueError, match="need teacher_logits"):
        label_targets("teacher_soft", LabelInputs(ORIGINAL, COUNTS))
    with pytest.raises(ValueError, match="temperature"):
        teacher_soft_labels(logits, 0.0)


def test_every_registered_condition_gives_probability_rows():
    for name in LABEL_CONDITIONS:
        targets = label_targets(name, INPUTS)
        assert targets.shape == (4, 10) and np.allclose(targets.sum(axis=1), 1) and (targets >= 0).all()
    with pytest.raises(ValueError, match="unknown label condition 'soft'"):
        label_targets("soft", INPUTS)


@pytest.mark.parametrize(
    ("soft", "message"),
    [
        ([[0.5, 0.5] + [0] * 8, [1.2, -0.2] + [0] * 8], "negative probability at index 1"),
        ([[0.5, 0.5] + [0] * 8, [1.0] * 10, [0.3] * 10], "does not sum to 1 .* at index 1"),
        ([[np.nan] * 10], "non-finite value at index 0"),
    ],
)
def test_bad_soft_labels_are_refused_naming_the_first_item(soft, message):
    with pytest.raises(ValueError, match=message):
        check_soft_labels(np.array(soft, dtype=float))


def test_soft_labels_within_the_tolerance_pass():
    check_soft_labels(np.full((1, 10), 0.1 + 5e-8))


def test_items_without_annotators_and_labels_outside_the_classes_are_refused():
    with pytest.raises(ValueError, match="zero annotators for item at index 2"):
        check_vote_counts(_counts({1: 2}, {0: 1}, {}))
    with pytest.raises(ValueError, match="negative or non-integer counts at index 0"):
        check_vote_counts(np.full((1, 10), -1))
    with pytest.raises(ValueError, match=r"outside 0..9 at index 1 \(10\)"):
        check_label_indices([3, 10, -1])
    with pytest.raises(ValueError, match="outside 0..9 at index 0"):
        LabelInputs(np.array([-1]), _counts({1: 1}))
    with pytest.raises(ValueError, match="zero annotators"):
        LabelInputs(np.array([1]), _counts({}))
    with pytest.raises(ValueError, match="sum to 1"):
        align_to_labels(np.zeros((1, 10)), [0])


def test_the_matched_temperature_gives_the_target_mean_entropy():
    logits = np.random.default_rng(0).normal(0, 5, (50, 10))
    t = matched_temperature(logits, 0.3)
    assert entropy(teacher_soft_labels(logits, t)).mean() == pytest.approx(0.3, abs=1e-6)
    assert matched_temperature(logits, 1.0) > t
    with pytest.raises(ValueError, match="outside"):
        matched_temperature(logits, 2.5)  # above log 10


def test_the_shuffle_permutes_soft_labels_within_each_original_class():
    original = np.repeat([0, 1], 20)
    soft = np.eye(10)[original] * 0.5 + np.random.default_rng(1).dirichlet(np.ones(10), 40) * 0.5
    out = shuffle_within_class(soft, original, seed=3)
    for c in (0, 1):
        mine = original == c
        assert sorted(map(tuple, out[mine])) == sorted(map(tuple, soft[mine]))
    assert not np.array_equal(out, soft)
    np.testing.assert_array_equal(out, shuffle_within_class(soft, original, seed=3))
    assert not np.array_equal(out, shuffle_within_class(soft, original, seed=4))
