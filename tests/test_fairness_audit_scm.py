"""Paper 06 SCM generator: parameter validation and JSON round trip, the label threshold, the generation
order of label-descendant features, what each scenario family is built to show, and the prior's random draws."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import norm

from neurips26.fairness_audit.scm import (
    SCENARIO_DESCRIPTIONS,
    SCENARIOS,
    SCMParams,
    SCMPrior,
    label_threshold,
    post_label_features,
    random_draw,
    sample_scm,
    scenario,
)

N = 20_000


def _corr(u: np.ndarray, v: np.ndarray) -> float:
    return float(np.corrcoef(u, v)[0, 1])


def _partial_corr_given_y(x: np.ndarray, a: np.ndarray, y: np.ndarray) -> float:
    """Largest |corr(x, a)| within a label stratum."""
    return max(abs(_corr(x[y == label], a[y == label])) for label in (0, 1))


def _params(**changes) -> dict:
    d = 3
    base = {
        "p_a": 0.4,
        "alpha": np.zeros(d),
        "beta": np.ones(d),
        "gamma": np.zeros((d, d)),
        "eta": np.zeros(d),
        "sigma": np.ones(d),
        "w": np.ones(d),
        "c": 0.5,
        "base_rate": 0.3,
    }
    return {**base, **changes}


@pytest.fixture(scope="module")
def samples():
    return {name: (scenario(name, 6, seed=1), sample_scm(scenario(name, 6, seed=1), N, seed=2)) for name in SCENARIOS}


def test_six_documented_scenarios():
    assert list(SCENARIOS) == [
        "fair",
        "direct_label_bias",
        "predictive_proxy",
        "nonpredictive_proxy",
        "redundant_proxy",
        "eo_leakage",
    ]
    assert set(SCENARIO_DESCRIPTIONS) == set(SCENARIOS)


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_base_rate_matches_the_threshold_quantile(name, samples):
    params, data = samples[name]
    assert data.y.mean() == pytest.approx(params.base_rate, abs=0.015)
    assert data.a.mean() == pytest.approx(params.p_a, abs=0.015)
    assert data.players == ("X1", "X2", "X3", "X4", "X5", "X6")


def test_threshold_solves_the_mixture_quantile_in_a_hand_case():
    # one feature X = A + eps, Y* = X + eps_Y: Y* | A ~ N(A, 2)
    params = SCMParams(p_a=0.5, alpha=[1.0], beta=[0.0], gamma=[[0.0]], eta=[0.0], sigma=[1.0], w=[1.0], base_rate=0.3)
    tau = label_threshold(params)
    tail = 0.5 * norm.sf((tau - 1) / np.sqrt(2)) + 0.5 * norm.sf(tau / np.sqrt(2))
    assert tail == pytest.approx(0.3, abs=1e-9)


def test_fair_scenario_keeps_a_independent_of_everything(samples):
    _, data = samples["fair"]
    x = data.features.to_numpy()
    assert max(abs(_corr(x[:, j], data.a)) for j in range(6)) < 0.04
    assert abs(_corr(data.y, data.a)) < 0.04
    assert max(abs(_corr(x[:, j], data.y)) for j in range(6)) > 0.3  # the features do predict Y


def test_direct_label_bias_biases_y_but_not_x(samples):
    params, data = samples["direct_label_bias"]
    x = data.features.to_numpy()
    assert params.c > 0.5 and np.all(params.alpha == 0)
    assert _corr(data.y, data.a) > 0.2
    assert max(abs(_corr(x[:, j], data.a)) for j in range(6)) < 0.04
    assert max(_partial_corr_given_y(x[:, j], data.a, data.y) for j in range(6)) > 0.05  # collider at Y


def test_predictive_proxies_carry_a_and_predict_y(samples):
    params, data = samples["predictive_proxy"]
    x = data.features.to_numpy()
    assert params.roles[:2] == ("predictive_proxy", "predictive_proxy")
    for j in (0, 1):
        assert params.w[j] > 0 and params.alpha[j] > 0
        assert abs(_corr(x[:, j], data.a)) > 0.15
        assert abs(_corr(x[:, j], data.y)) > 0.1
    assert _corr(data.y, data.a) > 0.05  # the proxies bias Y too (a_tot = w . (I - Gamma)^-1 alpha > 0)


def test_nonpredictive_proxy_has_no_weight_and_is_independent_of_y(samples):
    params, data = samples["nonpredictive_proxy"]
    x = data.features.to_numpy()
    for j in (4, 5):
        assert params.roles[j] == "proxy"
        assert params.w[j] == 0 and params.beta[j] == 0 and params.alpha[j] != 0
        assert not params.gamma[j].any() and not params.gamma[:, j].any()
        assert abs(_corr(x[:, j], data.a)) > 0.25
        assert abs(_corr(x[:, j], data.y)) < 0.04
    assert abs(_corr(data.y, data.a)) < 0.04


def test_redundant_copy_is_the_original_plus_small_noise(samples):
    params, data = samples["redundant_proxy"]
    x = data.features.to_numpy()
    assert params.roles[0] == "predictive_proxy" and params.roles[5] == "copy"
    assert params.w[5] == 0
    assert np.std(x[:, 5] - x[:, 0]) == pytest.approx(0.05, rel=0.05)
    assert _corr(x[:, 5], x[:, 0]) > 0.99
    assert abs(_corr(x[:, 0], data.a)) > 0.25


def test_eo_leakage_feature_depends_on_a_only_through_y(samples):
    params, data = samples["eo_leakage"]
    x = data.features.to_numpy()
    leak = x[:, 5]
    assert params.roles[5] == "leak" and params.eta[5] > 0 and params.w[5] == 0
    assert post_label_features(params).tolist() == [False] * 5 + [True]
    assert _corr(data.y, data.a) > 0.2
    assert abs(_corr(leak, data.a)) > 0.1  # marginally dependent on A ...
    assert _partial_corr_given_y(leak, data.a, data.y) < 0.04  # ... but not given Y
    for label in (0, 1):  # X = eta Y + eps exactly
        assert np.mean(leak[data.y == label]) == pytest.approx(params.eta[5] * label, abs=0.05)
        assert np.std(leak[data.y == label]) == pytest.approx(1.0, abs=0.05)


def test_descendants_of_a_leak_are_post_label_and_may_not_enter_y():
    gamma = np.zeros((3, 3))
    gamma[2, 0] = 1.0  # X3 depends on X1, which depends on Y
    ok = SCMParams(**_params(eta=[1.0, 0.0, 0.0], gamma=gamma, w=[0.0, 1.0, 0.0]))
    assert post_label_features(ok).tolist() == [True, False, True]
    data = sample_scm(ok, 5000, seed=0)
    x1, x3 = data.features["X1"].to_numpy(), data.features["X3"].to_numpy()
    assert np.std(x3 - x1) == pytest.approx(np.sqrt(1 + 1), rel=0.05)  # beta U + eps on top of X1
    with pytest.raises(ValueError, match=r"feature\(s\) \['X3'\] depend on Y .* cycle"):
        SCMParams(**_params(eta=[1.0, 0.0, 0.0], gamma=gamma, w=[0.0, 1.0, 1.0]))


def test_same_seed_same_data_and_other_seed_other_data():
    params = scenario("predictive_proxy", 6, seed=0)
    one, two = sample_scm(params, 500, seed=7), sample_scm(params, 500, seed=7)
    np.testing.assert_array_equal(one.features.to_numpy(), two.features.to_numpy())
    np.testing.assert_array_equal(one.y, two.y)
    assert not np.array_equal(sample_scm(params, 500, seed=8).features.to_numpy(), one.features.to_numpy())
    assert scenario("fair", 6, seed=0).to_dict() == scenario("fair", 6, seed=0).to_dict()
    assert scenario("fair", 6, seed=0).to_dict() != scenario("fair", 6, seed=1).to_dict()


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_params_round_trip_through_json(name):
    params = scenario(name, 6, seed=5)
    back = SCMParams.from_dict(json.loads(json.dumps(params.to_dict())))
    assert back.to_dict() == params.to_dict()
    np.testing.assert_array_equal(
        sample_scm(back, 300, 0, min_group=0).features.to_numpy(),
        sample_scm(params, 300, 0, min_group=0).features.to_numpy(),
    )


@pytest.mark.parametrize(
    "changes, match",
    [
        ({"beta": np.ones(2)}, r"beta must have shape \(3,\) like alpha, got \(2,\)"),
        ({"gamma": np.ones((3, 3))}, r"strictly lower triangular"),
        ({"gamma": np.zeros((3, 2))}, r"gamma must have shape \(3, 3\)"),
        ({"w": [1.0, np.nan, 0.0]}, r"w has non-finite entries"),
        ({"p_a": 1.0}, r"p_a \(P\(A=1\)\) must lie in \(0, 1\), got 1.0"),
        ({"base_rate": 0.0}, r"base_rate \(P\(Y=1\)\) must lie in \(0, 1\)"),
        ({"sigma": [1.0, 0.0, 1.0]}, r"feature noise sigma must be > 0"),
        ({"sigma_y": -1.0}, r"label noise sigma_y must be > 0"),
        ({"c": np.inf}, r"non-finite scalar\(s\) \['c'\]"),
        ({"roles": ("proxy",)}, r"roles must be 3 strings"),
    ],
)
def test_bad_params_raise_naming_the_knob(changes, match):
    with pytest.raises(ValueError, match=match):
        SCMParams(**_params(**changes))


def test_unknown_keys_scenarios_and_sizes_are_refused():
    with pytest.raises(ValueError, match=r"unknown SCM parameter\(s\) \['kappa'\]"):
        SCMParams.from_dict({**scenario("fair", 3).to_dict(), "kappa": 1.0})
    with pytest.raises(ValueError, match=r"unknown scenario 'biased'"):
        scenario("biased", 6, 0)
    with pytest.raises(ValueError, match=r"needs d >= 3 features, got d=2"):
        scenario("eo_leakage", 2, 0)
    with pytest.raises(ValueError, match=r"n must be a positive integer, got 0"):
        sample_scm(scenario("fair", 3), 0, 0)


def test_random_draws_are_valid_seeded_and_varied():
    draws = [random_draw(6, seed) for seed in range(40)]
    assert random_draw(6, 3).to_dict() == draws[3].to_dict()
    roles = {role for params in draws for role in params.roles}
    assert roles == {"predictive", "predictive_proxy", "proxy", "copy", "leak"}
    for params in draws[:10]:
        data = sample_scm(params, 4000, seed=0, min_group=0)
        assert data.y.mean() == pytest.approx(params.base_rate, abs=0.035)
        for j, role in enumerate(params.roles):
            if role == "proxy":
                assert params.w[j] == 0 and params.beta[j] == 0
            if role in ("copy", "leak"):
                assert params.w[j] == 0
    only_fair = SCMPrior(role_concentration=(("predictive", 1.0),), c_sd=0.0)
    fair = random_draw(5, 0, only_fair)
    assert set(fair.roles) == {"predictive"} and fair.c == 0 and not fair.alpha.any()
    with pytest.raises(ValueError, match=r"unknown role\(s\) \['hidden'\]"):
        SCMPrior(role_concentration=(("hidden", 1.0),))
    with pytest.raises(ValueError, match=r"base_rate_range must satisfy 0 < lo <= hi < 1"):
        SCMPrior(base_rate_range=(0.5, 1.0))
