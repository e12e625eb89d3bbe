"""Paper 16 (multistage training): the measurements of the four phenomena (complementarity, pretraining ceiling,
allocation shift, selective amplification) and the power-law fit."""

import numpy as np
import pandas as pd
import pytest

from neurips26.multistage_training.dynamics import rl_time_to_success
from neurips26.multistage_training.evaluation import (
    allocation_shift,
    amplification_summary,
    bonferroni_quantile,
    budget_scaling,
    ceiling_sweep,
    complementarity_table,
    fit_power_law,
    monotone_violation,
    plateau_table,
    predicted_ceiling_exponent,
    pretraining_ceiling,
    pretraining_loss_scaling,
    rl_amplification,
)
from neurips26.multistage_training.model import ModelParams, initial_u, skill_strength
from neurips26.multistage_training.sweeps import optimal_allocation

SMALL = ModelParams(n_skills=60, chain_length=4)


def test_power_law_fit_recovers_a_known_exponent():
    x = np.logspace(0, 4, 9)
    exact = fit_power_law(x, 3.0 * x**-0.4)
    assert exact.slope == pytest.approx(-0.4) and exact.intercept == pytest.approx(np.log(3.0))
    assert exact.r2 == pytest.approx(1.0) and exact.n == 9
    noisy = fit_power_law(x, 3.0 * x**-0.4 * np.exp(np.random.default_rng(0).normal(0, 0.05, 9)))
    assert noisy.slope == pytest.approx(-0.4, abs=0.03) and 0.95 < noisy.r2 < 1.0


def test_power_law_fit_refuses_what_it_cannot_fit():
    with pytest.raises(ValueError, match="at least 3"):
        fit_power_law([1, 2], [1, 2])
    with pytest.raises(ValueError, match="finite, positive"):
        fit_power_law([1, 2, 3], [1, 0, 2])
    with pytest.raises(ValueError, match="two distinct x"):
        fit_power_law([2, 2, 2], [1, 2, 3])


def test_pretraining_loss_exponent_is_recovered():
    for alpha in (1.5, 2.5):
        _, fit, expected = pretraining_loss_scaling(ModelParams(n_skills=20_000, alpha=alpha), np.logspace(2, 4, 7))
        assert expected == pytest.approx((alpha - 1) / alpha)
        assert -fit.slope == pytest.approx(expected, rel=0.1) and fit.r2 > 0.99


def test_predicted_ceiling_exponent_and_its_range():
    assert predicted_ceiling_exponent(ModelParams()) == pytest.approx(2 / 9)
    assert predicted_ceiling_exponent(ModelParams(), wrt="budget") == pytest.approx(1 / 9)
    with pytest.raises(ValueError, match="needs alpha_task > 1"):
        predicted_ceiling_exponent(ModelParams(alpha_task=1.0))
    with pytest.raises(ValueError, match="wrt must be one of"):
        predicted_ceiling_exponent(ModelParams(), wrt="tokens")


def test_complementarity_the_best_split_beats_both_single_stages():
    table = complementarity_table(SMALL, [1e4], [30.0, 3e3], n_grid=8)
    assert (table["mixed"] >= table[["sft_only", "rl_only"]].max(axis=1)).all()
    single = table[["sft_only", "rl_only"]].max(axis=1)
    assert np.allclose(table["margin"], table["interior"] - single) and (table["margin"] <= table["gain"] + 1e-12).all()
    assert table["interior_share"].between(0, 1, inclusive="neither").all()
    assert (table["gain"] > 0.03).all() and table["sft_share"].between(0.05, 0.95).all()
    assert (table["sft_only"] <= table["sft_limit"] + 1e-12).all()  # SFT alone stays under its rho^L ceiling
    assert table["sft_limit"].iloc[-1] == pytest.approx(0.9**4)


def test_rl_plateau_grows_with_the_chain_length():
    table = plateau_table(SMALL, [2, 4, 8], base_compute=1e3)
    updates = table["updates_to_level"].to_numpy()
    # faster than linear in L, and faster with every doubling: the Pbar^(L-1) factor of the outcome reward
    assert updates[2] / updates[1] > updates[1] / updates[0] > 2
    assert table["initial_step_success"].nunique() == 1  # the same pretrained start for every length
    with pytest.raises(ValueError, match="level must be a finite number in"):
        plateau_table(SMALL, [2], 1e3, level=1.0)


@pytest.mark.parametrize("alpha", [1.5, 2.0])
def test_pretraining_ceiling_follows_the_derived_exponent(alpha):
    params = ModelParams(n_skills=1000, alpha=alpha, alpha_task=alpha)
    ceiling = pretraining_ceiling(params, 1e6, np.logspace(1, 3, 4), n_grid=6)
    failure = ceiling.table["step_failure"].to_numpy()
    assert np.all(np.diff(failure) < 0) and ceiling.fit.r2 > 0.99
    notes_heuristic = (alpha - 1) / alpha
    assert -ceiling.fit.slope == pytest.approx(ceiling.predicted_exponent, rel=0.2)
    assert abs(-ceiling.fit.slope - ceiling.predicted_exponent) < abs(-ceiling.fit.slope - notes_heuristic)


def test_ceiling_window_selects_the_fitted_points():
    ceiling = pretraining_ceiling(SMALL, 1e4, [10.0, 30.0, 100.0, 300.0, 1e4], n_grid=4, window=(10.0, 300.0))
    assert ceiling.table["in_window"].tolist() == [True, True, True, True, False]
    assert ceiling.fit.n == 4


def test_optimal_sft_share_rises_with_demo_quality_and_falls_with_pretraining():
    table = allocation_shift(SMALL, 3e4, [30.0, 3e3], [0.7, 0.95], n_grid=8)
    shares = table.set_index(["demo_quality", "base_compute"])["sft_share"]
    assert shares[0.95, 30.0] > shares[0.7, 30.0] and shares[0.95, 3e3] > shares[0.7, 3e3]
    assert shares[0.7, 30.0] > shares[0.7, 3e3]
    assert monotone_violation(table, "demo_quality", +1) == 0.0
    assert monotone_violation(table, "base_compute", -1, within=("demo_quality",)) == 0.0


def test_monotone_violation_by_hand():
    table = pd.DataFrame({"g": [0, 0, 0, 1, 1], "x": [1, 2, 3, 1, 2], "sft_share": [0.1, 0.4, 0.3, 0.5, 0.5]})
    assert monotone_violation(table, "x", +1, within=("g",)) == pytest.approx(0.1)
    assert monotone_violation(table, "x", -1, within=("g",)) == pytest.approx(0.3)
    with pytest.raises(ValueError, match="direction must be"):
        monotone_violation(table, "x", 0)


def test_rl_amplifies_task_relevant_pretrained_skills_only():
    table = rl_amplification(SMALL, base_compute=300.0, rl_updates=1000.0)
    off = table[~table["task_relevant"]]
    assert (off["delta_u"] == 0).all() and (off["success_after"] == off["success_before"]).all()
    summary = amplification_summary(table)
    assert summary["off_task_max_abs_delta_u"] == 0.0
    assert summary["spearman_gain_strength"] > 0.8
    assert summary["success_gain_strong"] > 10 * summary["success_gain_weak"]
    after_sft = rl_amplification(SMALL, base_compute=300.0, rl_updates=1000.0, sft_demos=200.0)
    assert (after_sft["u_before"] != SMALL.u0).any()
    assert amplification_summary(after_sft)["off_task_max_abs_delta_u"] == 0


def test_amplification_summary_by_hand():
    table = pd.DataFrame(
        {
            "task_relevant": [True, True, True, True, False],
            "task_weight": [0.25, 0.25, 0.25, 0.25, 0.0],
            "strength": [0.1, 0.2, 0.3, 0.4, 0.9],
            "delta_u": [0.4, 0.3, 0.2, 0.1, -0.5],
            "success_before": [0.1, 0.1, 0.1, 0.1, 0.5],
            "success_after": [0.2, 0.1, 0.1, 0.4, 0.5],
        }
    )
    summary = amplification_summary(table)
    assert summary["off_task_max_abs_delta_u"] == 0.5
    assert summary["spearman_gain_strength"] == pytest.approx(-1.0)
    assert summary["success_gain_strong"] == pytest.approx(0.3) and summary["success_gain_weak"] == pytest.approx(0.1)


def test_the_interior_margin_is_negative_where_a_single_stage_is_best():
    """At a budget too small for RL to leave its plateau from a weak base, SFT alone is best: the gain over the
    grid (which holds f = 1) is 0, the margin of the best interior split is negative."""
    table = complementarity_table(SMALL, [30.0], [3.0], n_grid=4)
    row = table.iloc[0]
    assert row["sft_share"] in (0.0, 1.0) and row["gain"] == pytest.approx(0.0, abs=1e-12)
    assert row["margin"] < 0 and 0 < row["interior_share"] < 1


def test_ceiling_sweep_marks_the_main_rows_and_the_sweep_of_both_models():
    table = ceiling_sweep(SMALL, 1e4, [1e3, 1e4], [3.0, 10.0, 30.0, 100.0], n_grid=4, window=(3.0, 30.0))
    main = table[table["main"]]
    assert len(main) == 4 and (main["plasticity"] == "pretrained").all() and (main["budget"] == 1e4).all()
    swept = table[table["in_sweep"]]
    assert set(swept["plasticity"]) == {"pretrained", "full"} and swept["base_compute"].max() == 30.0
    assert swept.groupby("plasticity").size().to_dict() == {"full": 6, "pretrained": 6}  # 2 budgets x 3 computes
    assert table["predicted_budget_exponent"].iloc[0] == pytest.approx(predicted_ceiling_exponent(SMALL, "budget"))
    assert table["fit_points"].iloc[0] == 3


def test_budget_scaling_recovers_the_exponents_of_an_exact_power_law():
    computes, budgets = np.array([10.0, 100.0, 1000.0]), np.array([1e4, 1e5, 1e6])
    c, b = np.meshgrid(computes, budgets)
    failure = 2.0 * c**-0.25 * b**-0.1
    table = pd.DataFrame({"plasticity": "pretrained", "in_sweep": True, "base_compute": c.ravel(),
                          "budget": b.ravel(), "step_failure": failure.ravel()})  # fmt: skip
    found = budget_scaling(table)
    assert found["compute_exponent"] == pytest.approx(0.25) and found["budget_exponent"] == pytest.approx(0.1)
    assert found["r2"] == pytest.approx(1.0) and found["points"] == 9
    assert found["compute_exponent_1e+06"] == pytest.approx(0.25)
    with pytest.raises(ValueError, match="two of each"):
        budget_scaling(table[table["budget"] == 1e4])


def test_without_the_pretraining_gate_the_ceiling_fades_with_the_budget():
    """The mechanism behind C2: in the model the compute exponent of the failure does not fall as the budget grows;
    without the gate, more budget lets every base model converge."""
    params = ModelParams(n_skills=200, chain_length=4)
    table = ceiling_sweep(params, 1e5, [1e4, 1e6], [10.0, 30.0, 100.0, 300.0], n_grid=6, window=(10.0, 300.0))
    model, null = budget_scaling(table, "pretrained"), budget_scaling(table, "full")
    assert model["compute_exponent_1e+06"] >= model["compute_exponent_10000"]
    assert null["compute_exponent_1e+06"] < 0.5 * null["compute_exponent_10000"]


def test_allocation_shift_adds_the_rollouts_sweep_at_the_first_noise():
    table = allocation_shift(SMALL, 1e4, [1e2, 1e3], [0.6, 0.9], [0.0, 0.1], n_grid=4, rollouts=[1, 4])
    main = table[table["main"]]
    assert len(main) == 8 and (main["rollouts"] == SMALL.rollouts).all()
    swept = table[~table["main"]]
    assert len(swept) == 4 and (swept["rollouts"] == 1).all() and (swept["reward_noise"] == 0.0).all()
    # RL four times cheaper: every split buys four times the RL updates, and RL never lowers the success in the mean
    # field, so the best success is never lower at k = 1; the optimal share may move either way (at quick scale it
    # is larger at k = 1 for C = 100 and smaller for C = 10,000)
    joined = swept.merge(main[main["reward_noise"] == 0.0], on=["demo_quality", "base_compute"])
    assert (joined["success_x"] >= joined["success_y"] - 1e-9).all()
    assert (joined["sft_share_x"] != joined["sft_share_y"]).any()  # k prices RL: the allocation depends on it


def test_amplification_table_sets_the_null_model_beside_the_model():
    table = rl_amplification(SMALL, base_compute=300.0, rl_updates=1000.0)
    task = table[table["task_relevant"]]
    assert np.allclose(task["delta_z"], task["strength"] * task["delta_u"])
    assert np.allclose(table["success_before_null"], table["success_before"])  # the same pretrained start
    off = table[~table["task_relevant"]]
    assert (off["delta_z_null"] == 0).all()
    # without the gate, RL moves the weakly pretrained task skills far more than the model does
    weak = task[task["strength"] < task["strength"].median()]
    assert len(weak) and (weak["delta_z_null"] > weak["delta_z"]).all()
    found = amplification_summary(table)
    assert {"spearman_logit_strength", "spearman_logit_strength_null"} <= set(found)


def test_bonferroni_quantile_is_the_two_sided_normal_quantile_split_over_the_points():
    assert bonferroni_quantile(1) == pytest.approx(1.959964, abs=1e-6)  # one point: the usual 95% two-sided
    assert bonferroni_quantile(98) == pytest.approx(3.4753, abs=1e-4)  # quick's 98 recorded points (K2)
    assert bonferroni_quantile(10, alpha=0.1) == pytest.approx(bonferroni_quantile(20, alpha=0.2))
    with pytest.raises(ValueError, match="at least one point"):
        bonferroni_quantile(0)


def test_the_tables_set_the_null_model_without_the_gate_beside_the_model():
    """The nulls of C1, C3, C4, C5 and C7: the same measurement in the model without the pretraining gate, computed by
    the jobs beside the model's (the ceiling at its budget over every compute, the allocation in every setting, the
    plateau at every chain length, the complementarity grid)."""
    null = SMALL.replace(plasticity="full")
    computes, window = [3.0, 10.0, 30.0, 100.0], (3.0, 30.0)
    table = ceiling_sweep(SMALL, 1e4, [1e3, 1e4], computes, n_grid=4, window=window)
    main = table[table["main"]]
    alone = pretraining_ceiling(null, 1e4, computes, n_grid=4, window=window)
    assert np.allclose(main["success_null"], alone.table["success"]) and (table["r2_null"] == alone.fit.r2).all()
    assert table.loc[~table["main"], "success_null"].isna().all()
    # the null's sweep at the ceiling's budget reuses those rows: the same as solved on its own
    swept = table[(table["plasticity"] == "full") & (table["budget"] == 1e4)].sort_values("base_compute")
    fresh = pretraining_ceiling(null, 1e4, [3.0, 10.0, 30.0], n_grid=4).table
    assert np.allclose(swept["step_failure"], fresh["step_failure"]) and swept["in_window"].all()

    shift = allocation_shift(SMALL, 1e4, [1e2, 1e3], [0.6, 0.9], [0.0, 0.1], n_grid=4, rollouts=[1, 4])
    assert shift[["sft_share_null", "success_null"]].notna().all().all()
    row = shift[~shift["main"]].iloc[0]
    setting = null.replace(rollouts=1, demo_quality=row["demo_quality"], reward_noise=row["reward_noise"])
    best = optimal_allocation(setting, 1e4, row["base_compute"], n_grid=4)
    assert row["sft_share_null"] == pytest.approx(best.allocation.sft) and row["success_null"] == best.success

    plateau = plateau_table(SMALL, [4, 8], base_compute=1e3)
    at8 = null.replace(chain_length=8)
    expected = rl_time_to_success(at8, skill_strength(at8, 1e3), initial_u(at8), 0.5)
    assert plateau["updates_to_level_null"].iloc[1] == pytest.approx(expected)
    # without the gate RL is never slower here: every logit moves at least as fast (dz/du = 1 >= s)
    assert (plateau["updates_to_level_null"] <= plateau["updates_to_level"]).all()

    # C1's null: the complementarity table's null columns are the same table solved in the null model
    comp = complementarity_table(SMALL, [1e3, 1e4], [30.0, 3e3], n_grid=8)
    alone = complementarity_table(null, [1e3, 1e4], [30.0, 3e3], n_grid=8)
    for column in ("sft_only", "rl_only", "interior_share", "interior", "margin"):
        assert np.allclose(comp[f"{column}_null"], alone[column]), column
    assert not np.allclose(comp["margin_null"], comp["margin"])  # the null is solved, not copied
