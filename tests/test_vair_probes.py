"""Per-layer probes (neurips26.vair.probes) on hidden states built so that the answer is known: one layer encodes
"the answer is right", one "the reasoning is valid", one nothing."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.vair.probes import PROBE_COLUMNS, control_split, cv_accuracy, fit_probe, probe_layers


def _states(seed: int = 0):
    rng = np.random.default_rng(seed)
    n = 60  # per category
    category = np.repeat(["VAVR", "IAIR", "VAIR"], n)
    answer_right = category != "IAIR"
    reasoning_valid = category == "VAVR"
    hidden = rng.normal(size=(3 * n, 3, 8))
    hidden[:, 1, 0] += np.where(answer_right, 2.5, -2.5)  # layer 1: the answer's correctness
    hidden[:, 2, 0] += np.where(reasoning_valid, 2.5, -2.5)  # layer 2: the reasoning's validity
    grades = np.where(category == "IAIR", 0, 3)  # the model is fooled by every VAIR item
    return hidden, reasoning_valid, grades, category == "VAIR", np.arange(3 * n) % 40


def test_probe_protocol_tells_an_answer_probe_from_a_reasoning_probe():
    hidden, valid, grades, is_vair, groups = _states()
    table = probe_layers(hidden, valid, grades, is_vair, groups=groups, seed=1)
    assert tuple(table.columns) == PROBE_COLUMNS and table.layer.tolist() == [0, 1, 2]
    by_layer = table.set_index("layer")
    assert (by_layer.n_fooled == 60).all() and (by_layer.n_train + by_layer.n_test == 120).all()
    assert by_layer.auroc_controls[1] > 0.97 and by_layer.auroc_controls[2] > 0.97  # controls separate either way
    assert abs(by_layer.auroc_controls[0] - 0.5) < 0.25  # noise
    assert by_layer.cv_accuracy[1] > 0.9 and by_layer.cv_accuracy[2] > 0.9 and by_layer.cv_accuracy[0] < 0.75
    assert by_layer.fooled_flagged[1] < 0.1  # an answer probe calls the fooled items valid, as the model did
    assert by_layer.fooled_flagged[2] > 0.9  # a reasoning probe flags them


def test_controls_are_only_the_correctly_graded_items():
    hidden, valid, grades, is_vair, _ = _states()
    grades = grades.copy()
    grades[:10] = 1  # ten VAVR items graded wrongly: not controls
    table = probe_layers(hidden, valid, grades, is_vair, seed=0)
    assert (table.n_train + table.n_test == 110).all()


def test_a_probe_with_one_class_is_rejected():
    hidden, valid, grades, is_vair, _ = _states()
    with pytest.raises(ValueError, match="no invalid-graded-invalid item"):
        probe_layers(hidden, valid, np.full_like(grades, 3), is_vair)
    with pytest.raises(ValueError, match="both classes"):
        fit_probe(hidden[:5, 0], np.zeros(5, dtype=bool))


def test_grouped_split_keeps_each_problem_on_one_side():
    labels = np.tile([True, False], 50)
    groups = np.arange(100) // 4
    train, test = control_split(labels, 0.3, seed=0, groups=groups)
    assert not set(groups[train]) & set(groups[test])
    assert len(train) + len(test) == 100


def test_cross_validated_accuracy_within_training_items():
    rng = np.random.default_rng(0)
    labels = np.tile([True, False], 30)
    separable = rng.normal(size=(60, 4))
    separable[:, 0] += np.where(labels, 3.0, -3.0)
    assert cv_accuracy(separable, labels) == pytest.approx(1.0)
    assert abs(cv_accuracy(rng.normal(size=(60, 4)), labels) - 0.5) < 0.2  # no signal
    assert cv_accuracy(separable, labels, groups=np.arange(60) // 6) == pytest.approx(1.0)
    assert np.isnan(cv_accuracy(separable[:4], np.array([True, False, False, False])))  # one invalid: no 3 folds
