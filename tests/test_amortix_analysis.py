"""Paper 19's advantages, decoration metrics, best-of-K and scorer budget on hand-computed cases (the claims:
test_amortix_claims.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from neurips26.amortix import budget, evaluation, objectives, oracles
from neurips26.amortix.advantages import advantages
from neurips26.amortix.environment import Outcome

REWARDS = np.array([[0.1, 0.3, 0.5], [0.9, 0.9, 0.6]])


def test_group_advantages_subtract_each_scaffolds_own_mean():
    adv = advantages(REWARDS, "drgrpo")
    assert np.allclose(adv, [[-0.2, 0.0, 0.2], [0.1, 0.1, -0.2]])
    grpo = advantages(REWARDS, "grpo")
    assert np.allclose(grpo.mean(axis=1), 0) and np.allclose(grpo.std(axis=1, ddof=1), 1, atol=1e-6)
    assert np.allclose(advantages(REWARDS, "global"), REWARDS - REWARDS.mean())
    assert np.array_equal(advantages(REWARDS, "none"), REWARDS)


def test_group_normalisation_removes_the_scaffolds_difficulty_and_global_does_not():
    # a hard scaffold (rewards near 0.1) and an easy one (near 0.9), same spread within each group
    rewards = np.array([[0.05, 0.15], [0.85, 0.95]])
    assert np.allclose(advantages(rewards, "drgrpo"), [[-0.05, 0.05], [-0.05, 0.05]])
    assert (advantages(rewards, "global")[0] < 0).all() and (advantages(rewards, "global")[1] > 0).all()


@pytest.mark.parametrize("variant", ["drgrpo", "grpo"])
def test_group_normalisation_needs_two_completions(variant):
    with pytest.raises(ValueError, match="at least 2 completions"):
        advantages(np.ones((4, 1)), variant)
    advantages(np.ones((4, 1)), "global")  # a batch baseline is defined with one completion per scaffold


def test_advantages_reject_bad_input():
    with pytest.raises(ValueError, match="NaN"):
        advantages(np.array([[0.1, np.nan]]), "drgrpo")
    with pytest.raises(ValueError, match="unknown advantage"):
        advantages(REWARDS, "ppo")


def candidates() -> pd.DataFrame:
    outcomes = [
        Outcome("CCO", True, True, 2),
        Outcome(None, False, False, 1),
        Outcome("CCN", True, True, 2),
        Outcome("CCO", True, True, 2),
    ]
    frame = evaluation.candidate_frame("m", ["s1", "s2"], outcomes, 2)
    return frame.assign(score=[0.4, 0.9, 0.2, 0.7], success=[False, True, False, True])


def test_the_returned_molecule_is_the_best_valid_candidate():
    best = evaluation.best_per_scaffold(candidates())
    assert best.set_index("scaffold")["score"].to_dict() == {"s1": 0.4, "s2": 0.7}  # the invalid 0.9 counts 0


def test_the_decoration_row_by_hand():
    row = evaluation.method_row(candidates(), train_smiles={"CCN"}, inference_calls=2, training_calls=0)
    assert row["score"] == pytest.approx(0.55) and row["success_rate"] == 0.5
    assert row["validity"] == 0.75 and row["retention"] == 1.0
    assert row["uniqueness"] == pytest.approx(2 / 3)  # CCO twice among three valid candidates
    assert row["novelty"] == 1.0  # the returned CCO and CCO are not in training (CCN is)


def test_best_of_k_and_break_even():
    curve = evaluation.best_of_k_curve(candidates(), [1, 2])
    assert curve["score"].tolist() == pytest.approx([0.3, 0.55])  # s1: 0.4 then 0.4; s2: 0.2 then 0.7
    assert evaluation.break_even_k(curve, 0.5) == 2
    assert evaluation.break_even_k(curve, 0.6) == np.inf
    with pytest.raises(ValueError, match="best-of-3"):
        evaluation.best_of_k_curve(candidates(), [3])


def test_the_scorer_counts_calls_caches_and_enforces_its_budget():
    scorer = objectives.Scorer(oracles.QEDOracle(), budget=3, cache=True)
    scorer(["CCO", "CCO", "c1ccccc1"])
    assert scorer.calls == 2 and [s for s, _ in scorer.log] == ["CCO", "c1ccccc1"]
    scorer(["CCO"])  # cached: free
    assert scorer.calls == 2
    with pytest.raises(budget.BudgetExceeded):
        scorer(["CCN", "CCC"])
    assert scorer.calls == 2  # nothing was scored by the refused call


def test_the_pmo_table_has_one_row_per_oracle_method_and_seed():
    from neurips26.amortix.summary import pmo_table

    calls = pd.DataFrame(
        [("qed", m, s, c, 0.1 * c + s, 1.0) for m in ("random", "amortized") for s in (0, 1, 2) for c in (1, 2)],
        columns=["oracle", "method", "seed", "call", "score", "seconds"],
    )
    table = pmo_table(calls, budget=2, top_k=1, freq=1)
    assert len(table) == 6 and sorted(table["seed"].unique()) == [0, 1, 2]
    assert table.set_index(["method", "seed"]).loc[("random", 2), "top1"] == pytest.approx(2.2)
    assert pmo_table(calls[calls["seed"] == 0].drop(columns="seed"), 2, 1, 1)["seed"].tolist() == [0, 0]
