"""Paper 12: the pipeline steps' library functions (simulate, per-round cost, theory table, LP and equivalence
checks, report tables) on small inputs."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from neurips26.common.report import render
from neurips26.thresh_mcts import algorithms, checks, instances, simulation, summary, theory
from neurips26.thresh_mcts.batch import run_batch, track_and_stop
from neurips26.thresh_mcts.theory import characteristic_time, kl_bernoulli

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    made = instances.make_instances(
        fixed=["I1"],
        random_specs=[{"id": "R1", "depth": 2, "branching": 2, "gap": 0.1}],
        kinds=["bernoulli"],
        seed=0,
    )
    return instances.instances_frame(made)


def test_tapes_are_seeded_per_instance_row_and_run_whatever_the_rule():
    assert simulation.tape_seed(3, 2, 7) == 3 * 10**6 + 2 * 10**4 + 7
    mu = np.array([0.2, 0.7, 0.5])
    tapes = simulation.run_tapes(mu, "bernoulli", 50, seed=1, instance_index=4, runs=range(2, 5))
    assert tapes.shape == (3, 3, 50) and tapes.dtype == np.uint8
    for i, r in enumerate(range(2, 5)):
        expected = instances.reward_tape(mu, "bernoulli", 50, seed=simulation.tape_seed(1, 4, r))
        np.testing.assert_array_equal(tapes[i], expected)
    gauss = simulation.run_tapes(mu, "gaussian", 10, seed=1, instance_index=0, runs=range(1))
    assert gauss.dtype == np.float64


def test_chunks_fit_the_tape_budget():
    assert simulation.runs_per_chunk(10, 1000, 50, "bernoulli", budget=10 * 1000 * 7) == 7
    assert simulation.runs_per_chunk(10, 1000, 50, "gaussian", budget=10 * 1000 * 7) == 1  # 8 bytes a reward
    assert simulation.runs_per_chunk(10, 1000, 5, "bernoulli") == 5


def test_simulated_runs_are_the_scalar_runs_on_the_same_tapes(table, monkeypatch):
    monkeypatch.setattr(simulation, "TAPE_BYTES", 2 * 3 * 9 * 400)  # chunks of 3 runs on I1 (two deltas' copies)
    runs = simulation.simulate_rule(table, "ratio", [0.1, 0.05], runs=7, t_max=400, seed=2)
    assert list(runs.columns) == [
        "rule",
        "instance",
        "delta",
        "run",
        "tau",
        "censored",
        "correct",
        "null_tau",
        "null_correct",
    ]
    assert len(runs) == 2 * 7 * len(table)
    for index, record in enumerate(table.to_dict("records")):
        tree, mu, theta, kind = instances.instance_problem(record)
        for delta in (0.1, 0.05):
            rows = runs[(runs["instance"] == record["id"]) & (runs["delta"] == delta)]
            assert list(rows["run"]) == list(range(7))
            for r in range(7):
                tape = instances.reward_tape(mu, kind, 400, seed=simulation.tape_seed(2, index, r))
                scalar = algorithms.run(tree, theta, kind, tape, delta, "ratio", 400)
                row = rows.iloc[r]
                assert row["tau"] == scalar.tau and row["censored"] == scalar.censored
                assert row["correct"] == (scalar.answer == (record["value"] >= theta))
                # the null stops on the same run, no later (its threshold lacks ln(1/delta) > 0)
                assert 0 <= row["null_tau"] <= row["tau"] or row["censored"]


def test_the_null_is_the_same_run_stopped_at_the_threshold_without_ln_one_over_delta(table, monkeypatch):
    """M1's null reads the GLR of the very runs being scored: given the full threshold as its null threshold, it
    stops where the run stops, with the run's answer, in the numpy rounds and in the scalar continuation alike."""
    record = table.to_dict("records")[0]
    tree, mu, theta, kind = instances.instance_problem(record)
    tapes = simulation.run_tapes(mu, kind, 4000, seed=2, instance_index=0, runs=range(6))
    plain = run_batch(tree, theta, kind, tapes, 0.1, "d_tracking", 4000, tail=0)
    assert not plain.censored.any()
    assert (plain.null_tau >= tree.n_leaves).all() and (plain.null_tau <= plain.tau).all()
    assert (plain.null_tau < plain.tau).any()  # without ln(1/delta) it stops earlier
    for tail in (0, 6):  # every round in numpy; every run in the scalar continuation from the start
        again = run_batch(tree, theta, kind, tapes, 0.1, "d_tracking", 4000, tail=tail)
        assert (again.null_tau == plain.null_tau).all() and (again.null_answer == plain.null_answer).all()
    monkeypatch.setattr(track_and_stop, "_NullBeta", lambda k, conservative: algorithms._Beta(0.1, k, conservative))
    for tail in (0, 6):
        same = run_batch(tree, theta, kind, tapes, 0.1, "d_tracking", 4000, tail=tail)
        assert (same.null_tau == same.tau).all() and (same.null_answer == same.answer).all()


def test_null_threshold_is_beta_without_its_confidence_term():
    t = np.array([1, 10, 1000])
    assert np.allclose(theory.null_threshold(t), theory.beta_threshold(t, 0.01) + np.log(0.01))
    assert np.allclose(theory.null_threshold(t, 9, True), theory.beta_threshold(t, 0.1, 9, True) + np.log(0.1))


def test_per_round_cost_has_one_row_per_rule_repeat_and_depth():
    cost = simulation.per_round_cost([1, 2], branching=3, rounds=20, repeats=2, rules=["d_tracking", "ratio"], seed=0)
    assert len(cost) == 2 * 2 * 2
    assert (cost["rounds"] == 20).all()
    assert sorted(cost["n_leaves"].unique()) == [3, 9]
    assert (cost["ops_per_round"] > 0).all() and (cost["microseconds_per_round"] > 0).all()


def test_theory_table_gives_the_lower_bound_per_delta(table):
    theory = instances.theory_table(table, [0.1, 0.01])
    assert len(theory) == 2 * len(table)
    record = table.iloc[0]
    cert = characteristic_time(*instances.instance_problem(record))
    row = theory[(theory["instance"] == record["id"]) & (theory["delta"] == 0.01)].iloc[0]
    assert row["t_star"] == cert.t_star
    assert row["lower_bound"] == cert.t_star * kl_bernoulli(0.01, 0.99)
    assert np.isclose(sum(json.loads(row["weights"])), 1.0)


def test_lp_check_covers_small_instances_and_random_trees_and_agrees(table):
    trees = checks.lp_check_trees(table, max_leaves=4, seed=0, draws=12)
    sources = [t[0] for t in trees]
    assert sources.count("instance") == 1  # R1 (4 leaves); I1 has 9
    assert all(t[2].n_leaves <= 4 for t in trees) and "random" in sources
    assert {t[5] for t in trees if t[0] == "random"} <= {"bernoulli", "gaussian"}
    lp = checks.lp_check(trees)
    assert len(lp) == len(trees) and lp["relative_error"].max() < 1e-6


def test_equivalence_instances_are_seeded_and_the_incremental_rule_is_identical():
    first, again = checks.equivalence_instances(3, seed=5), checks.equivalence_instances(3, seed=5)
    assert [i["mu"] for i in first] == [i["mu"] for i in again]
    assert [i["kind"] for i in first] == ["bernoulli", "gaussian", "bernoulli"]
    frame = checks.equivalence(2, seeds=2, t_max=300, delta=0.1, seed=5)
    assert len(frame) == 4 and frame["identical"].all() and (frame["rounds"] > 0).all()


def _summary_rows() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "rule": ["ratio", "d_tracking", "ratio", "d_tracking"],
            "instance": ["I1", "I1", "I2", "I2"],
            "delta": [0.1] * 4,
            "mean_tau": [10.0, 20.0, 30.0, 40.0],
            "errors": [0, 1, 2, 0],
            "git_commit": "abc",
            "seed": 0,
        }
    )


def test_report_tables_pivot_per_rule_and_drop_provenance(table):
    out = summary.report_tables(
        table.assign(git_commit="abc"),
        _summary_rows(),
        pd.DataFrame({"rule": ["ratio"], "ops_slope": [0.2], "config_hash": "x"}),
        pd.DataFrame({"rule": ["ratio"], "n_leaves": [9], "seed": 0}),
        pd.DataFrame({"identical": [True, True, False], "rounds": [5, 6, 7]}),
        pd.DataFrame({"relative_error": [1e-15, 3e-14]}),
    )
    assert list(out["instances"].columns) == summary.INSTANCE_COLUMNS
    assert list(out["tau"].columns) == ["instance", "delta", "d_tracking", "ratio"]
    assert out["tau"].set_index("instance").loc["I2", "d_tracking"] == 40.0
    assert out["errors"].set_index("instance").loc["I1", "d_tracking"] == 1
    for name in ("summary", "slopes", "cost"):
        assert not {"git_commit", "config_hash", "seed"} & set(out[name].columns)
    assert out["checks"] == {"identical": 2, "runs": 3, "pulls": 18, "lp_trees": 2, "lp_max_error": 3e-14}


def test_report_template_renders_every_table(table):
    tables = summary.report_tables(
        table,
        _summary_rows(),
        pd.DataFrame({"rule": ["ratio"], "ops_slope": [0.2]}),
        pd.DataFrame({"rule": ["ratio"], "n_leaves": [9]}),
        pd.DataFrame({"identical": [True], "rounds": [5]}),
        pd.DataFrame({"relative_error": [1.163e-15]}),
    )
    params = SimpleNamespace(conservative_beta=False, runs=50, t_max=1000, rules=["d_tracking", "ratio"])
    text = render(
        ROOT / "workflow/report/thresh_mcts/report.md.j2",
        scale="quick",
        params=params,
        claims="CLAIMS",
        n_claims=1,
        closing="CLOSING\n",
        **tables,
    )
    assert text.startswith("# Paper 12: thresholding Monte Carlo tree search (scale `quick`)")
    assert "beta(t, delta) = ln((1 + ln t) / delta),\nthen answers" in text
    assert "Rules: d_tracking, ratio." in text
    assert "1 of 1 runs pick identical\nleaves (5 pulls compared)" in text
    assert "max relative error\n1.16e-15." in text
    assert text.endswith("CLOSING\n")
