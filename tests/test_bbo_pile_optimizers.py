"""Paper 05 trajectory generators: budget and bounds, determinism per seed, that the model optimizers beat
random search, that non-finite values are recorded without crashing, REA's one-coordinate mutations, and the
long table."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest

from neurips26.bbo_pile.blackboxes import make_blackbox
from neurips26.bbo_pile.catalog import bbob_spec, go_spec
from neurips26.bbo_pile.optimizers import (
    OPTIMIZERS,
    TRAJECTORY_COLUMNS,
    Trajectory,
    generate_trajectories,
    run_optimizer,
    trajectories_table,
)

LO, HI = np.array([-3.0, 0.0, 10.0]), np.array([1.0, 0.5, 20.0])  # a skewed box
BUDGET = {"RS": 30, "REA": 30, "CMA": 30, "LS": 30, "TPE": 12}  # TPE is slow


def shifted_sphere(X):
    unit = (X - LO) / (HI - LO)
    return np.sum((unit - 0.3) ** 2, axis=1)


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_budget_bounds_and_determinism(name):
    budget = BUDGET[name]
    a = run_optimizer(name, shifted_sphere, LO, HI, budget, seed=4)
    assert a.x.shape == (budget, 3) and a.y.shape == (budget,) and a.valid.shape == (budget,)
    assert a.x.dtype == np.float64 and a.y.dtype == np.float64 and a.valid.dtype == bool
    assert np.all(a.x >= LO) and np.all(a.x <= HI)
    assert a.valid.all() and a.invalid_share == 0.0 and not a.flagged
    np.testing.assert_array_equal(a.y, shifted_sphere(a.x))
    b = run_optimizer(name, shifted_sphere, LO, HI, budget, seed=4)
    np.testing.assert_array_equal(a.x, b.x)
    np.testing.assert_array_equal(a.y, b.y)
    c = run_optimizer(name, shifted_sphere, LO, HI, budget, seed=5)
    assert not np.array_equal(a.x, c.x)


@pytest.mark.parametrize("name", ["RS", "REA", "CMA", "LS"])
def test_budgets_smaller_than_a_generation_or_population(name):
    for budget in (1, 2, 3):
        traj = run_optimizer(name, shifted_sphere, LO, HI, budget, seed=0)
        assert traj.n_trials == budget


def test_cma_leaves_the_global_numpy_state_alone():
    np.random.seed(11)
    state = np.random.get_state()
    a = run_optimizer("CMA", shifted_sphere, LO, HI, 20, seed=2)
    assert np.array_equal(np.random.get_state()[1], state[1])
    np.random.seed(99)
    np.testing.assert_array_equal(a.x, run_optimizer("CMA", shifted_sphere, LO, HI, 20, seed=2).x)


@pytest.mark.parametrize("function", ["sphere", "rastrigin"])
def test_model_based_optimizers_beat_random_search(function):
    f = make_blackbox(go_spec(function, 5, 0))
    seeds = range(5)
    final = {
        name: np.mean([run_optimizer(name, f, f.spec.lo, f.spec.hi, 100, s).best_so_far()[-1] for s in seeds])
        for name in ("RS", "REA", "CMA", "LS")
    }
    for name in ("REA", "CMA", "LS"):
        assert final[name] < 0.8 * final["RS"], final


def test_rea_children_change_exactly_one_coordinate_of_a_population_member():
    budget = 60
    traj = run_optimizer("REA", shifted_sphere, LO, HI, budget, seed=1)
    population = 20  # min(20, budget // 2)
    for t in range(population, budget):
        recent = traj.x[t - population : t]  # the population when trial t was proposed
        changed = (recent != traj.x[t]).sum(axis=1)
        assert (changed == 1).any(), t
    small = run_optimizer("REA", shifted_sphere, LO, HI, 24, seed=1)  # population 12 at budget 24
    assert ((small.x[12:13] != small.x[:12]).sum(axis=1) == 1).any()


def nan_in_a_half_space(X):
    y = np.sum(X**2, axis=1)
    y[X[:, 0] > 0.5] = np.nan
    y[X[:, 1] > 0.9] = np.inf
    return y


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_non_finite_values_are_recorded_not_fatal(name):
    lo, hi = np.zeros(3), np.ones(3)
    budget = BUDGET[name]
    traj = run_optimizer(name, nan_in_a_half_space, lo, hi, budget, seed=0)
    assert traj.n_trials == budget
    expected = nan_in_a_half_space(traj.x)
    np.testing.assert_array_equal(np.isnan(traj.y), np.isnan(expected))
    np.testing.assert_array_equal(traj.valid, np.isfinite(expected))
    assert (~traj.valid).any() and traj.valid.any()
    assert traj.invalid_share == pytest.approx(1 - traj.valid.mean())
    everywhere = run_optimizer(name, lambda X: np.full(len(X), np.nan), lo, hi, budget, seed=0)
    assert everywhere.n_trials == budget and everywhere.invalid_share == 1.0 and everywhere.flagged
    assert np.isnan(everywhere.best_so_far()).all()


def test_minus_infinity_is_invalid_and_not_an_optimum():
    def f(X):
        y = np.sum((X - 0.8) ** 2, axis=1)
        y[X[:, 0] < 0.2] = -np.inf
        return y

    for name in ("REA", "LS", "CMA"):
        traj = run_optimizer(name, f, np.zeros(2), np.ones(2), 60, seed=3)
        assert np.array_equal(traj.valid, np.isfinite(traj.y))
        assert traj.best_so_far()[-1] >= 0.0


def test_tpe_restores_optuna_logging():
    import optuna  # noqa: F401  (importing optuna sets its logger's level: the level to restore is the one after)

    logger = logging.getLogger("optuna")
    before = logger.level
    run_optimizer("TPE", shifted_sphere, LO, HI, 3, seed=0)
    assert logger.level == before


@pytest.mark.parametrize(
    "args, message",
    [
        (dict(name="SMAC"), "unknown optimizer 'SMAC'; known: RS, REA, CMA, LS, TPE"),
        (dict(lo=[0.0, 1.0], hi=[1.0, 1.0]), r"lo\[1\]=1.0 must be < hi\[1\]=1.0"),
        (dict(lo=[0.0], hi=[1.0, 1.0]), "equal, non-zero length"),
        (dict(hi=[1.0, np.inf]), r"hi\[1\] must be finite"),
        (dict(budget=0), "budget must be an integer >= 1"),
        (dict(seed=True), "seed must be an integer >= 0"),
        (dict(seed=-1), "seed must be an integer >= 0"),
        (dict(popsize=4), r"RS has no option\(s\) \['popsize'\]"),
        (dict(f=lambda X: np.zeros(len(X) + 1)), "f returned 4 values for 3 points"),
    ],
)
def test_bad_arguments_are_rejected(args, message):
    call = dict(name="RS", f=lambda X: X.sum(axis=1), lo=[0.0, 0.0], hi=[1.0, 1.0], budget=3, seed=0)
    call.update(args)
    with pytest.raises(ValueError, match=message):
        run_optimizer(**call)


def test_options_override_the_paper_settings():
    a = run_optimizer("REA", shifted_sphere, LO, HI, 10, seed=0, population_size=3, sample_size=2)
    b = run_optimizer("REA", shifted_sphere, LO, HI, 10, seed=0)
    assert not np.array_equal(a.x, b.x)


def test_trajectory_validation_and_invalid_share():
    x = np.zeros((10, 2))
    y = np.arange(10.0)
    assert not Trajectory(x, np.where(np.arange(10) < 2, np.nan, y)).flagged  # 20%: kept
    flagged = Trajectory(x, np.where(np.arange(10) < 3, np.nan, y))
    assert flagged.invalid_share == pytest.approx(0.3) and flagged.flagged
    np.testing.assert_array_equal(flagged.best_so_far()[:4], [np.nan, np.nan, np.nan, 3.0])
    with pytest.raises(ValueError, match=r"valid\[0\]=True disagrees with y\[0\]=nan"):
        Trajectory(x[:1], [np.nan], [True])
    with pytest.raises(ValueError, match=r"y must be \(T,\)"):
        Trajectory(x, y[:5])
    with pytest.raises(ValueError):
        flagged.y[0] = 1.0  # read-only


def test_trajectories_table_long_schema(tmp_path):
    f = make_blackbox(bbob_spec(3, 2, 1))
    rows = [
        {"bb_id": f.spec.bb_id, "family": "bbob", "optimizer": name, "seed": s,
         "trajectory": run_optimizer(name, f, f.spec.lo, f.spec.hi, 6, s)}
        for name in ("RS", "LS") for s in (0, 1)
    ]  # fmt: skip
    table = trajectories_table(rows)
    assert list(table.columns) == list(TRAJECTORY_COLUMNS) and len(table) == 4 * 6
    assert table.trial.tolist() == list(range(6)) * 4
    assert set(table.dim) == {2} and all(len(x) == 2 for x in table.x)
    np.testing.assert_array_equal(np.stack(table.x[:6]), rows[0]["trajectory"].x)
    path = tmp_path / "traj.parquet"
    table.to_parquet(path)
    back = pd.read_parquet(path)
    np.testing.assert_array_equal(back.y, table.y)
    assert back.valid.dtype == bool and len(back.x[0]) == 2
    empty = trajectories_table([])
    assert list(empty.columns) == list(TRAJECTORY_COLUMNS) and len(empty) == 0
    with pytest.raises(ValueError, match=r"row 0 lacks \['trajectory'\]"):
        trajectories_table([{"bb_id": "a", "family": "go", "optimizer": "RS", "seed": 0}])


def test_generate_runs_every_box_and_seed_as_run_optimizer_would():
    specs = [go_spec("sphere", 2, 0), go_spec("branin", 2, 1)]
    table, throughput = generate_trajectories(specs, "LS", [0, 1], 6, seed=2)
    assert len(table) == 2 * 2 * 6 and throughput["trajectories"] == 4 and throughput["evaluations"] == 24
    assert throughput["invalid"] == 0 and throughput["evaluations_per_s"] > 0
    one = table[(table["bb_id"] == specs[1].bb_id) & (table["seed"] == 1)]
    alone = run_optimizer("LS", make_blackbox(specs[1]), specs[1].lo, specs[1].hi, 6, 2 * 1000 + 1)
    np.testing.assert_array_equal(one["y"].to_numpy(), alone.y)
    assert set(table["family"]) == {"go"} and set(table["optimizer"]) == {"LS"}
