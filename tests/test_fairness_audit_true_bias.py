"""Paper 06 true bias of a tuned predictor and the feature-selection experiment: hand-computed gaps and plug-in
mutual informations, the validation-selected MLP, the constant predictor on no features, the per-coalition table,
and the removal of top-ranked players."""

from __future__ import annotations

import json
from math import log

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import mutual_info_score

from neurips26.fairness_audit.data import make_audit_data
from neurips26.fairness_audit.scm import sample_scm, scenario
from neurips26.fairness_audit.selection import (
    random_rankings,
    rank_by_score,
    removal_curve,
    selection_table,
)
from neurips26.fairness_audit.true_bias import (
    GAP_METRICS,
    SE_METRICS,
    bias_gaps,
    coalition_key,
    fit_tuned_classifier,
    information_bootstrap_se,
    parse_coalition,
    standard_coalitions,
    true_bias_table,
)

SMALL_GRID = ({"hidden_layer_sizes": 8, "alpha": 1e-3}, {"hidden_layer_sizes": (8,), "alpha": 10.0})
FAST = {"grid": SMALL_GRID, "max_iter": 150}


@pytest.fixture(scope="module")
def proxy_data():
    """X1 = 2A + noise drives Y; X2 drives Y and is independent of A; X3 is noise."""
    rng = np.random.default_rng(0)
    n = 1500
    a = rng.integers(0, 2, n)
    x = rng.normal(size=(n, 3))
    x[:, 0] += 2 * a
    y = (x[:, 0] + x[:, 1] + 0.5 * rng.normal(size=n) > 1).astype(int)
    return make_audit_data(pd.DataFrame(x, columns=["X1", "X2", "X3"]), a, y, name="proxy")


def test_bias_gaps_match_hand_computed_values():
    a = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 1])
    y = np.array([0, 0, 1, 1, 0, 0, 1, 1, 1, 1])
    yhat = np.array([0, 1, 1, 1, 0, 0, 0, 1, 1, 1])
    gaps = bias_gaps(yhat, a, y)
    assert gaps["accuracy"] == pytest.approx(0.8)
    assert gaps["sp_gap"] == pytest.approx(abs(3 / 6 - 3 / 4))
    assert gaps["eo_gap"] == pytest.approx(max(abs(0 / 2 - 1 / 2), abs(3 / 4 - 2 / 2)))
    i_yhat_a = (
        0.1 * log(0.1 / (0.4 * 0.4))
        + 0.3 * log(0.3 / (0.6 * 0.4))
        + 0.3 * log(0.3 / (0.4 * 0.6))
        + 0.3 * log(0.3 / (0.6 * 0.6))
    )
    assert gaps["i_yhat_a"] == pytest.approx(i_yhat_a)
    i_y0 = 0.25 * log(0.25 / (0.75 * 0.5)) + 0.25 * log(0.25 / (0.25 * 0.5)) + 0.5 * log(0.5 / (0.75 * 0.5))
    i_y1 = (
        1 / 3 * log((1 / 3) / (5 / 6 * 1 / 3))
        + 1 / 6 * log((1 / 6) / (1 / 6 * 2 / 3))
        + 1 / 2 * log((1 / 2) / (5 / 6 * 2 / 3))
    )
    assert gaps["i_yhat_a_given_y"] == pytest.approx(0.4 * i_y0 + 0.6 * i_y1)


def test_bias_gaps_agree_with_sklearn_mutual_information_and_extremes():
    rng = np.random.default_rng(1)
    a, y = rng.integers(0, 2, 500), rng.integers(0, 2, 500)
    yhat = (rng.random(500) < 0.3 + 0.4 * a * y).astype(int)
    gaps = bias_gaps(yhat, a, y)
    assert gaps["i_yhat_a"] == pytest.approx(mutual_info_score(a, yhat))
    conditional = sum(np.mean(y == v) * mutual_info_score(a[y == v], yhat[y == v]) for v in (0, 1))
    assert gaps["i_yhat_a_given_y"] == pytest.approx(conditional)
    copy = bias_gaps(a, a, y)  # Yhat = A: maximal SP gap, I(Yhat; A) = H(A)
    p = a.mean()
    assert copy["sp_gap"] == 1.0 and copy["eo_gap"] == 1.0
    assert copy["i_yhat_a"] == pytest.approx(-p * log(p) - (1 - p) * log(1 - p))
    constant = bias_gaps(np.ones(500, dtype=int), a, y)
    assert constant["sp_gap"] == constant["eo_gap"] == constant["i_yhat_a"] == constant["i_yhat_a_given_y"] == 0


def test_bias_gaps_refuse_non_binary_and_empty_cells():
    a, y = np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match=r"yhat must be a binary 0/1 vector; values seen: \[0, 1, 2\]"):
        bias_gaps(np.array([0, 1, 2, 1]), a, y)
    with pytest.raises(ValueError, match=r"empty cell\(s\) \(A=1, Y=1\)"):
        bias_gaps(np.array([0, 1, 1, 0]), a, np.array([0, 1, 0, 0]))


def _dependent_bits(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a, y = rng.integers(0, 2, n), rng.integers(0, 2, n)
    yhat = (rng.random(n) < 0.2 + 0.3 * a + 0.3 * y).astype(int)
    return yhat, a, y


def test_bootstrap_se_agrees_with_resampling_rows():
    yhat, a, y = _dependent_bits(400, seed=2)
    fast = information_bootstrap_se(yhat, a, y, n_boot=4000, seed=0)
    rng = np.random.default_rng(1)
    rows = [bias_gaps(yhat[i], a[i], y[i]) for i in rng.integers(0, 400, size=(400, 400))]
    for metric, se in (("i_yhat_a", "i_yhat_a_se"), ("i_yhat_a_given_y", "i_yhat_a_given_y_se")):
        slow = np.std([r[metric] for r in rows], ddof=1)
        assert fast[se] == pytest.approx(slow, rel=0.2)
    assert information_bootstrap_se(yhat, a, y, 50, seed=3) == information_bootstrap_se(yhat, a, y, 50, seed=3)
    with pytest.raises(ValueError, match=r"n_boot must be >= 2"):
        information_bootstrap_se(yhat, a, y, n_boot=1)


def test_bootstrap_se_shrinks_like_one_over_root_n():
    small = information_bootstrap_se(*_dependent_bits(1_000, seed=4), n_boot=400, seed=0)
    large = information_bootstrap_se(*_dependent_bits(16_000, seed=5), n_boot=400, seed=0)
    for se in SE_METRICS:
        assert 0 < large[se] < small[se]
        assert small[se] / large[se] == pytest.approx(4.0, rel=0.3)  # sqrt(16000 / 1000)
    constant = information_bootstrap_se(np.ones(500, dtype=int), *_dependent_bits(500, seed=6)[1:], n_boot=20)
    assert constant == pytest.approx({"i_yhat_a_se": 0.0, "i_yhat_a_given_y_se": 0.0}, abs=1e-12)


def test_tuned_classifier_picks_lowest_validation_log_loss(proxy_data):
    x, y = proxy_data.block(["X1", "X2"]), proxy_data.y
    tuned = fit_tuned_classifier(x[:1000], y[:1000], x[1000:], y[1000:], SMALL_GRID, seed=0, max_iter=150)
    losses = [
        fit_tuned_classifier(x[:1000], y[:1000], x[1000:], y[1000:], [point], 0, 150).val_log_loss
        for point in SMALL_GRID
    ]
    assert tuned.val_log_loss == pytest.approx(min(losses))
    assert tuned.hparams["alpha"] == 1e-3  # the heavily regularised alpha=10 underfits
    assert tuned.hparams["hidden_layer_sizes"] == (8,) and tuned.hparams["max_iter"] == 150
    assert np.mean(tuned.predict(x[1000:]) == y[1000:]) > 0.85
    again = fit_tuned_classifier(x[:1000], y[:1000], x[1000:], y[1000:], SMALL_GRID, seed=0, max_iter=150)
    np.testing.assert_array_equal(again.predict(x), tuned.predict(x))


def test_empty_feature_set_is_the_constant_base_rate_predictor():
    y_train, y_val = np.array([1, 0, 0, 0]), np.array([1, 0])
    tuned = fit_tuned_classifier(np.empty((4, 0)), y_train, np.empty((2, 0)), y_val)
    assert tuned.hparams == {"constant": 0.25}
    assert tuned.val_log_loss == pytest.approx(-(log(0.25) + log(0.75)) / 2)
    assert tuned.predict(np.empty((3, 0))).tolist() == [0, 0, 0]


def test_tuned_classifier_refuses_bad_grids_and_one_class():
    x, y = np.random.default_rng(0).normal(size=(20, 2)), np.arange(20) % 2
    with pytest.raises(ValueError, match=r"unknown grid key\(s\) \['solver'\]"):
        fit_tuned_classifier(x, y, x, y, [{"solver": "lbfgs"}])
    with pytest.raises(ValueError, match=r"grid is empty"):
        fit_tuned_classifier(x, y, x, y, [])
    with pytest.raises(ValueError, match=r"training labels are all 0"):
        fit_tuned_classifier(x, np.zeros(20), x, y)
    with pytest.raises(ValueError, match=r"have 2 and 1 features"):
        fit_tuned_classifier(x, y, x[:, :1], y)


def test_coalition_keys():
    assert coalition_key(["b", "a"]) == "a+b" and coalition_key([]) == ""
    assert parse_coalition("a+b") == ("a", "b") and parse_coalition("") == ()
    with pytest.raises(ValueError, match=r"named twice"):
        coalition_key(["a", "a"])
    grid = standard_coalitions(["a", "b", "c"], empty=True)
    assert [coalition_key(s) for s in grid] == ["a+b+c", "b+c", "a+c", "a+b", "a", "b", "c", ""]
    assert len(standard_coalitions(["a", "b"])) == 3  # leave-one-out sets are the singletons


def test_true_bias_table_follows_the_coalition_columns(proxy_data):
    table = true_bias_table(proxy_data, [("X2", "X1"), ("X2",), ("X1",), ()], seed=0, **FAST)
    assert table["coalition"].tolist() == ["X1+X2", "X2", "X1", ""]
    assert list(table.columns[4:11]) == [*GAP_METRICS, *SE_METRICS]
    assert (table.loc[:2, list(SE_METRICS)] > 0).all().all()
    assert np.allclose(table.loc[3, list(SE_METRICS)], 0, atol=1e-12)  # the constant predictor
    assert table["size"].tolist() == [2, 1, 1, 0]
    by = table.set_index("coalition")
    assert by.loc["X1", "sp_gap"] > 0.4 and by.loc["X1+X2", "sp_gap"] > 0.3  # X1 carries A
    assert by.loc["X2", "sp_gap"] < 0.1  # X2 is independent of A
    assert by.loc["X1+X2", "accuracy"] > by.loc["X2", "accuracy"] > by.loc["", "accuracy"]
    assert by.loc["", "sp_gap"] == 0 and by.loc["", "i_yhat_a"] == 0
    assert json.loads(by.loc["", "hparams"])["constant"] == pytest.approx(proxy_data.y.mean(), abs=0.02)
    assert json.loads(by.loc["X1", "hparams"])["hidden_layer_sizes"] == [8]
    assert (table["i_yhat_a"] >= 0).all() and (table["i_yhat_a_given_y"] >= 0).all()
    with pytest.raises(ValueError, match=r"coalition 'X1\+X2' is listed twice"):
        true_bias_table(proxy_data, [("X1", "X2"), ("X2", "X1")], **FAST)
    with pytest.raises(ValueError, match=r"unknown player\(s\) \['X9'\]"):
        true_bias_table(proxy_data, [("X9",)], **FAST)


def test_true_bias_on_a_fair_scm_is_small():
    data = sample_scm(scenario("fair", 4, seed=0), 1500, seed=0)
    table = true_bias_table(data, [data.players], seed=0, **FAST)
    assert table.loc[0, "sp_gap"] < 0.08 and table.loc[0, "accuracy"] > 0.7


def test_rankings():
    assert rank_by_score({"b": 1.0, "a": 1.0, "c": 3.0}) == ["c", "a", "b"]
    assert rank_by_score({"b": 1.0, "c": 3.0}, descending=False) == ["b", "c"]
    with pytest.raises(ValueError, match="finite"):
        rank_by_score({"a": float("nan")})
    perms = random_rankings(["a", "b", "c", "d"], 5, seed=0)
    assert perms == random_rankings(["a", "b", "c", "d"], 5, seed=0)
    assert all(sorted(p) == ["a", "b", "c", "d"] for p in perms) and len({tuple(p) for p in perms}) > 1


def test_removing_the_proxy_cuts_the_sp_gap_and_removing_noise_does_not(proxy_data):
    table = selection_table(
        proxy_data, {"proxy_first": ["X1", "X2", "X3"], "noise_first": ["X3", "X2", "X1"]}, k_max=3, seed=0, **FAST
    )
    assert len(table) == 2 * 4
    by = table.set_index(["ranking", "k"])
    assert by.loc[("proxy_first", 0), "delta_sp_gap"] == 0 and by.loc[("noise_first", 0), "removed"] == ""
    assert by.loc[("proxy_first", 0), "sp_gap"] == by.loc[("noise_first", 0), "sp_gap"]  # one shared full fit
    assert by.loc[("proxy_first", 1), "removed"] == "X1"
    assert by.loc[("proxy_first", 1), "delta_sp_gap"] < -0.25
    assert abs(by.loc[("noise_first", 1), "delta_sp_gap"]) < 0.08
    assert by.loc[("proxy_first", 1), "delta_accuracy"] < 0
    assert by.loc[("proxy_first", 3), "sp_gap"] == 0 and by.loc[("proxy_first", 3), "removed"] == "X1+X2+X3"
    # the same feature set gives the same numbers whichever ranking reached it
    assert by.loc[("proxy_first", 3), "accuracy"] == by.loc[("noise_first", 3), "accuracy"]


def test_selection_refuses_bad_rankings(proxy_data):
    with pytest.raises(ValueError, match=r"k_max must lie in \[1, 2\]"):
        removal_curve(proxy_data, ["X1", "X2"], k_max=3, **FAST)
    with pytest.raises(ValueError, match=r"unknown player\(s\) \['X7'\]"):
        removal_curve(proxy_data, ["X7"], k_max=1, **FAST)
    with pytest.raises(ValueError, match=r"names a player twice"):
        removal_curve(proxy_data, ["X1", "X1"], k_max=1, **FAST)
