"""Metrics of paper 15 (softlabel_audit) against hand-computed cases: accuracy, ECE, KL(human || model), seed
disagreement, rank correlation with human uncertainty; the paper's numbers; refusals."""

import math

import numpy as np
import pytest
from scipy.stats import entropy as scipy_kl
from scipy.stats import spearmanr

from neurips26.softlabel_audit import metrics

# four items, two classes: confidences 0.6 (right), 0.8 (wrong), 0.9 (right), 0.5 (argmax 0, wrong)
P4 = np.array([[0.6, 0.4], [0.8, 0.2], [0.9, 0.1], [0.5, 0.5]])
Y4 = np.array([0, 1, 0, 1])


def test_accuracy_over_all_items_and_a_subset():
    assert metrics.accuracy(P4, Y4) == 0.5
    assert metrics.accuracy(P4, Y4, subset=np.array([True, False, True, False])) == 1.0
    assert metrics.accuracy(P4, np.array([0, 0, 0, 0])) == 1.0  # against other labels (e.g. the human majority)


def test_ece_of_a_hand_computed_case_with_two_bins():
    # bin (0.5, 1]: items 0-2, confidence 0.7667, accuracy 2/3, weight 3/4; bin [0, 0.5]: item 3, 0.5 vs 0, weight 1/4
    expected = 0.75 * abs((0.6 + 0.8 + 0.9) / 3 - 2 / 3) + 0.25 * 0.5
    assert metrics.expected_calibration_error(P4, Y4, n_bins=2) == pytest.approx(expected)
    assert expected == pytest.approx(0.2)
    bins = metrics.reliability_bins(P4, Y4, n_bins=2)
    np.testing.assert_array_equal(bins.counts, [1, 3])
    np.testing.assert_allclose(bins.accuracy, [0.0, 2 / 3])


def test_ece_bins_are_closed_on_the_right_and_empty_bins_are_nan():
    probs = np.array([[0.3, 0.3, 0.2, 0.2]])  # confidence exactly 0.3 belongs to (0.2, 0.3]
    bins = metrics.reliability_bins(probs, np.array([0]), n_bins=10)
    assert bins.counts[2] == 1 and bins.counts.sum() == 1
    assert np.isnan(bins.accuracy[0]) and np.isnan(bins.confidence[5])


def test_ece_equals_a_loop_over_bins_and_its_subset_is_the_ece_of_the_subset():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(200, 5)) * 2
    p = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    y = rng.integers(0, 5, 200)
    conf, right = p.max(1), p.argmax(1) == y
    expected = 0.0
    for lo, hi in zip(np.linspace(0, 1, 16)[:-1], np.linspace(0, 1, 16)[1:]):
        inside = (conf > lo) & (conf <= hi)
        if inside.any():
            expected += inside.mean() * abs(right[inside].mean() - conf[inside].mean())
    assert metrics.expected_calibration_error(p, y) == pytest.approx(expected)
    hard = rng.random(200) < 0.3
    assert metrics.expected_calibration_error(p, y, subset=hard) == pytest.approx(
        metrics.expected_calibration_error(p[hard], y[hard])
    )


def test_ece_is_zero_for_confident_right_predictions_and_one_for_confident_wrong_ones():
    sure = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert metrics.expected_calibration_error(sure, np.array([0, 1])) == 0.0
    assert metrics.expected_calibration_error(sure, np.array([1, 0])) == 1.0


def test_kl_uses_the_human_distribution_as_reference_and_clips_zero_model_probabilities():
    human = np.array([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [1.0, 0.0, 0.0]])
    model = np.array([[0.25, 0.75, 0.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    kl = metrics.kl_human_model(human, model)
    assert kl[0] == pytest.approx(0.5 * math.log(2) + 0.5 * math.log(0.5 / 0.75))  # 0 log 0 = 0 in class 2
    assert kl[1] == pytest.approx(0.5 * math.log(0.5) + 0.5 * math.log(0.5 / metrics.KL_EPSILON))
    assert kl[2] == 0.0
    assert metrics.mean_kl(human, model, subset=np.array([True, False, True])) == pytest.approx(kl[0] / 2)


def test_kl_agrees_with_scipy_where_the_model_gives_every_class_mass():
    rng = np.random.default_rng(1)
    h, p = rng.dirichlet(np.ones(4), 6), rng.dirichlet(np.ones(4), 6)
    np.testing.assert_allclose(metrics.kl_human_model(h, p), scipy_kl(h, p, axis=1))
    assert metrics.mean_kl(h, p) != pytest.approx(metrics.mean_kl(p, h))  # not symmetric: the order matters


def test_seed_disagreement_and_total_variation_of_hand_computed_seeds():
    # argmaxes: seed 0 [0, 1], seed 1 [0, 0], seed 2 [1, 1]; pairs differ on 1/2, 1/2, 2/2 items
    probs = np.array(
        [
            [[0.9, 0.1], [0.2, 0.8]],
            [[0.6, 0.4], [0.7, 0.3]],
            [[0.3, 0.7], [0.2, 0.8]],
        ]
    )
    assert metrics.seed_disagreement(probs) == pytest.approx(2 / 3)
    # TV per pair and item: (0.3, 0.5), (0.6, 0.0), (0.3, 0.5)
    assert metrics.pairwise_total_variation(probs) == pytest.approx((0.3 + 0.5 + 0.6 + 0.0 + 0.3 + 0.5) / 6)
    with pytest.raises(ValueError, match="at least two seeds"):
        metrics.seed_disagreement(probs[:1])


def test_predictive_entropy_is_the_entropy_of_the_seeds_mean():
    probs = np.array([[[1.0, 0.0]], [[0.0, 1.0]]])  # two confident seeds that disagree: mean (0.5, 0.5)
    np.testing.assert_allclose(metrics.predictive_entropy(probs), [math.log(2)])
    np.testing.assert_allclose(metrics.predictive_entropy(probs[0]), [0.0])


def test_uncertainty_correlation_is_spearmans_rho_and_nan_when_constant():
    human = np.array([0.0, 0.1, 0.5, 0.5, 1.2])
    assert metrics.uncertainty_correlation(human * 3 + 1, human) == pytest.approx(1.0)
    assert metrics.uncertainty_correlation(-human, human) == pytest.approx(-1.0)
    model = np.array([0.3, 0.1, 0.2, 0.9, 0.4])
    assert metrics.uncertainty_correlation(model, human) == pytest.approx(spearmanr(model, human).statistic)
    assert math.isnan(metrics.uncertainty_correlation(np.ones(5), human))


def test_paper_numbers_are_the_quoted_table():
    frame = metrics.paper_numbers_frame()
    kl = frame[frame.metric == "kl_high_variation"].set_index("paper_condition")["paper_value"]
    assert kl.to_dict() == {"original": 2.214, "majority hard": 1.661, "human soft": 0.669, "synthetic": 1.612}
    rho = frame[frame.metric == "spearman_human_uncertainty"].set_index("paper_condition")["paper_value"]
    assert rho.to_dict() == {"human soft": -0.70, "one-hot": -0.47, "synthetic": -0.09}
    assert frame["source"].str.contains("2605.18648").all()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: metrics.accuracy(P4 * 2, Y4), "sum to 1"),
        (lambda: metrics.accuracy(P4, Y4 + 1), r"0\.\.1"),
        (lambda: metrics.expected_calibration_error(P4, Y4, n_bins=1), "n_bins"),
        (lambda: metrics.expected_calibration_error(P4, Y4, subset=np.zeros(4, bool)), "no item"),
        (lambda: metrics.kl_human_model(P4[:3], P4), "differ in shape"),
        (lambda: metrics.kl_human_model(-P4, P4), "non-negative"),
        (lambda: metrics.uncertainty_correlation(np.ones(3), np.ones(4)), "two \\(N,\\) arrays"),
    ],
)
def test_bad_inputs_are_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()
