"""Paper 05 black boxes: the catalog and its disjoint split, spec validation, GO minima at the known
minimisers, the instance transforms, and the BBOB problems from coco-experiment."""

from __future__ import annotations

import pickle
import sys

import numpy as np
import pandas as pd
import pytest

from neurips26.bbo_pile.blackboxes import instance_transform, make_blackbox, random_reference
from neurips26.bbo_pile.catalog import (
    CATALOG_COLUMNS,
    BlackBoxSpec,
    bbob_spec,
    catalog,
    check_split,
    go_spec,
    specs_from_catalog,
)
from neurips26.bbo_pile.go_functions import GO_FUNCTIONS, go_optimum

FIXED_DIM = [name for name, g in GO_FUNCTIONS.items() if g.dim is not None]
ANY_DIM = [name for name, g in GO_FUNCTIONS.items() if g.dim is None]
GO_CASES = [(name, GO_FUNCTIONS[name].dim) for name in FIXED_DIM] + [(name, d) for name in ANY_DIM for d in (2, 5, 10)]


# ---------------------------------------------------------------------------------------------------------------------
# Catalog and split


def test_default_catalog_sizes_and_disjoint_split():
    frame = catalog()
    assert list(frame.columns) == list(CATALOG_COLUMNS)
    bbob, go = frame[frame.family == "bbob"], frame[frame.family == "go"]
    assert len(bbob) == 24 * 3 * 3  # 216 BBOB problems: 24 functions x dims 2, 3, 5 x instances 1-3
    assert len(go) == 3 * (len(FIXED_DIM) + 3 * len(ANY_DIM))
    evaluation = frame[frame.split == "eval"]
    assert len(evaluation) == 6 * 3 * 3
    assert set(evaluation.family) == {"bbob"}
    assert set(evaluation.function) == {f"f{f}" for f in range(19, 25)}
    assert set(frame[frame.split == "train"].bb_id).isdisjoint(evaluation.bb_id)
    assert frame.bb_id.is_unique
    row = frame.set_index("bb_id").loc["bbob_f03_d5_i2"]
    assert (row.family, row.function, row.dim, row.instance) == ("bbob", "f03", 5, 2)
    assert row.lo == [-5.0] * 5 and row.hi == [5.0] * 5
    assert "go_rastrigin_d5_i1" in set(frame.bb_id) and "go_hartmann6_d6_i0" in set(frame.bb_id)


def test_small_catalog_places_fixed_dimension_functions_once_per_instance():
    frame = catalog(
        bbob_functions=(1, "f19"),
        bbob_dims=(2,),
        bbob_instances=(1, 2),
        go_functions=("branin", "sphere"),
        go_dims=(2, 5),
        go_instances=(0, 1),
        eval_functions=(19,),
    )
    assert sorted(frame.bb_id) == sorted(
        ["bbob_f01_d2_i1", "bbob_f01_d2_i2", "bbob_f19_d2_i1", "bbob_f19_d2_i2", "go_branin_d2_i0",
         "go_branin_d2_i1", "go_sphere_d2_i0", "go_sphere_d2_i1", "go_sphere_d5_i0", "go_sphere_d5_i1"]
    )  # fmt: skip
    assert set(frame.loc[frame.split == "eval", "bb_id"]) == {"bbob_f19_d2_i1", "bbob_f19_d2_i2"}
    specs = specs_from_catalog(frame, split="eval")
    assert [s.function for s in specs] == ["f19", "f19"]
    assert all(isinstance(s, BlackBoxSpec) for s in specs_from_catalog(frame))


def test_catalog_without_held_out_functions_is_rejected():
    with pytest.raises(ValueError, match="eval split is empty"):
        catalog(bbob_functions=(1, 2), eval_functions=(19,))
    with pytest.raises(ValueError, match="eval_functions: BBOB functions are f01..f24"):
        catalog(eval_functions=("rastrigin",))
    with pytest.raises(ValueError, match="unknown GO function 'branin3'"):
        catalog(go_functions=("branin3",))


def _frame(ids, splits):
    return pd.DataFrame({"bb_id": ids, "split": splits})


def test_check_split_errors():
    check_split(_frame(["a", "b"], ["train", "eval"]))
    with pytest.raises(ValueError, match="both train and eval.*'a'"):
        check_split(_frame(["a", "a", "b"], ["train", "eval", "eval"]))
    with pytest.raises(ValueError, match="repeated.*'a'"):
        check_split(_frame(["a", "a", "b"], ["train", "train", "eval"]))
    with pytest.raises(ValueError, match="train split is empty"):
        check_split(_frame(["a"], ["eval"]))
    with pytest.raises(ValueError, match="eval split is empty"):
        check_split(_frame(["a"], ["train"]))
    with pytest.raises(ValueError, match="unknown value.*'test'"):
        check_split(_frame(["a", "b"], ["train", "test"]))
    with pytest.raises(ValueError, match="lacks column"):
        check_split(pd.DataFrame({"bb_id": ["a"]}))


# ---------------------------------------------------------------------------------------------------------------------
# Spec validation


def test_spec_rejects_lo_not_below_hi_naming_the_coordinate():
    with pytest.raises(ValueError, match=r"lo\[1\]=3.0 must be < hi\[1\]=3.0 \(coordinate 1\)"):
        BlackBoxSpec("x", "go", "sphere", 2, 0, (0.0, 3.0), (1.0, 3.0))
    with pytest.raises(ValueError, match=r"lo\[0\]=2.0 must be < hi\[0\]=1.0"):
        BlackBoxSpec("x", "go", "sphere", 2, 0, (2.0, 0.0), (1.0, 1.0))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(lo=(0.0,), hi=(1.0, 1.0)), "dim=2 entries, got 1 and 2"),
        (dict(lo=(0.0, np.nan)), r"lo\[1\] must be finite"),
        (dict(family="hpo"), "family must be one of"),
        (dict(function="nope"), "unknown GO function 'nope'"),
        (dict(function="branin", dim=3, lo=(0,) * 3, hi=(1,) * 3), "'branin' is 2-dimensional"),
        (dict(function="rosenbrock", dim=1, lo=(0,), hi=(1,)), "needs dim >= 2"),
        (dict(dim=0), "dim must be an integer >= 1"),
        (dict(instance=-1), "instance must be an integer >= 0"),
        (dict(family="bbob", function="f25"), "f01..f24"),
        (dict(family="bbob", function="f03", instance=0), "instance must be an integer >= 1"),
        (dict(bb_id=""), "bb_id must be a non-empty string"),
    ],
)
def test_spec_rejects_bad_fields(kwargs, message):
    fields = dict(bb_id="x", family="go", function="sphere", dim=2, instance=0, lo=(0.0, 0.0), hi=(1.0, 1.0))
    fields.update(kwargs)
    with pytest.raises(ValueError, match=message):
        BlackBoxSpec(**fields)


def test_spec_normalises_bbob_function_names_and_round_trips_through_records():
    assert bbob_spec("f3", 5, 2).bb_id == "bbob_f03_d5_i2"
    assert BlackBoxSpec("y", "bbob", "3", 2, 1, (-5, -5), (5, 5)).function == "f03"
    for record in catalog(go_functions=("michalewicz",), go_dims=(5,)).to_dict("records")[:3]:
        assert BlackBoxSpec.from_record(record).bb_id == record["bb_id"]


@pytest.mark.parametrize("spec", [go_spec("sphere", 5, 0), go_spec("hartmann3", 3, 1), bbob_spec(3, 5, 1)])
def test_wrong_number_of_columns_names_both_dims(spec):
    f = make_blackbox(spec)
    with pytest.raises(ValueError, match=f"dim={spec.dim} columns, got {spec.dim - 1}"):
        f(np.zeros((3, spec.dim - 1)))


# ---------------------------------------------------------------------------------------------------------------------
# GO family


@pytest.mark.parametrize("name, dim", GO_CASES)
def test_go_minimum_at_known_minimiser(name, dim):
    f_star, x_star = go_optimum(name, dim)
    if x_star is None:
        assert (name, dim) == ("michalewicz", 10) and f_star == pytest.approx(-9.66015)
        return
    spec = go_spec(name, dim, 0)
    assert np.all(x_star >= spec.lo) and np.all(x_star <= spec.hi)
    assert make_blackbox(spec)(x_star)[0] == pytest.approx(f_star, abs=1e-9)


@pytest.mark.parametrize("name, dim", [c for c in GO_CASES if c[1] <= 5])
def test_go_minimum_is_a_lower_bound_on_the_domain(name, dim):
    spec = go_spec(name, dim, 0)
    rng = np.random.default_rng(0)
    X = spec.lo + rng.random((20_000, dim)) * (np.array(spec.hi) - spec.lo)
    y = make_blackbox(spec)(X)
    assert y.shape == (20_000,) and np.isfinite(y).all()
    assert y.min() >= go_optimum(name, dim)[0] - 1e-9


def test_go_textbook_values():
    branin = make_blackbox(go_spec("branin", 2, 0))
    np.testing.assert_allclose(
        branin(np.array([[-np.pi, 12.275], [np.pi, 2.275], [9.42478, 2.475]])), 0.397887, atol=1e-5
    )
    camel = make_blackbox(go_spec("six_hump_camel", 2, 0))
    np.testing.assert_allclose(camel(np.array([[-0.0898, 0.7126]])), -1.0316, atol=1e-4)
    assert make_blackbox(go_spec("rastrigin", 3, 0))(np.ones(3))[0] == pytest.approx(3.0)
    assert make_blackbox(go_spec("rosenbrock", 2, 0))(np.zeros(2))[0] == pytest.approx(1.0)
    assert go_optimum("styblinski_tang", 4)[0] == pytest.approx(-39.16617 * 4, abs=1e-4)


def test_go_evaluation_is_vectorised_row_by_row_equal():
    for name, dim in GO_CASES:
        f = make_blackbox(go_spec(name, dim, 1))
        X = np.random.default_rng(1).uniform(f.spec.lo, f.spec.hi, size=(7, dim))
        np.testing.assert_allclose(f(X), [f(x)[0] for x in X], rtol=1e-12)


def test_transformed_instances_stay_in_the_domain_and_differ_from_instance_zero():
    rng = np.random.default_rng(2)
    for name, dim in [("branin", 2), ("hartmann6", 6), ("rastrigin", 5), ("ackley", 10), ("forrester", 1)]:
        base = make_blackbox(go_spec(name, dim, 0))
        lo, hi = np.array(base.spec.lo), np.array(base.spec.hi)
        corners = np.where(rng.random((64, dim)) < 0.5, lo, hi)
        X = np.vstack([lo + rng.random((500, dim)) * (hi - lo), corners])
        values = {0: base(X)}
        for instance in (1, 2):
            f = make_blackbox(go_spec(name, dim, instance))
            Z = f.base_inputs(X)
            assert np.all(Z >= lo) and np.all(Z <= hi)
            values[instance] = f(X)
            assert np.isfinite(values[instance]).all()
            np.testing.assert_array_equal(values[instance], make_blackbox(go_spec(name, dim, instance))(X))
        assert not np.allclose(values[1], values[0]) and not np.allclose(values[2], values[0])
        assert not np.allclose(values[1], values[2])
    np.testing.assert_array_equal(make_blackbox(go_spec("sphere", 3, 0)).base_inputs(np.ones((2, 3))), 1.0)


def test_instance_transform_is_orthogonal_with_bounded_shift():
    for dim in (1, 2, 5, 10):
        q, s = instance_transform("levy", dim, 3)
        np.testing.assert_allclose(q @ q.T, np.eye(dim), atol=1e-12)
        assert np.all(np.abs(s) <= 0.4) and np.any(s != 0)
    q0, s0 = instance_transform("levy", 4, 0)
    np.testing.assert_array_equal(q0, np.eye(4))
    np.testing.assert_array_equal(s0, 0.0)


# ---------------------------------------------------------------------------------------------------------------------
# BBOB


def test_bbob_values_finite_deterministic_and_as_in_the_default_suite():
    import cocoex

    rng = np.random.default_rng(3)
    for f, d, i in [(1, 2, 1), (3, 5, 2), (19, 3, 3), (24, 5, 1)]:
        spec = bbob_spec(f, d, i)
        X = rng.uniform(-5, 5, size=(20, d))
        y = make_blackbox(spec)(X)
        assert y.shape == (20,) and np.isfinite(y).all()
        np.testing.assert_array_equal(y, make_blackbox(spec)(X))
        clone = pickle.loads(pickle.dumps(make_blackbox(spec)))
        np.testing.assert_array_equal(y, clone(X))
        suite = cocoex.Suite("bbob", "", f"dimensions: {d} function_indices: {f} instance_indices: {i}")
        problem = suite.get_problem_by_function_dimension_instance(f, d, i)
        assert problem.id == f"bbob_f{f:03d}_i{i:02d}_d{d:02d}"
        np.testing.assert_array_equal(y, [problem(x) for x in X])
    a, b = make_blackbox(bbob_spec(3, 5, 1)), make_blackbox(bbob_spec(3, 5, 2))
    X = rng.uniform(-5, 5, size=(5, 5))
    assert not np.allclose(a(X), b(X))


def test_missing_cocoex_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "cocoex", None)
    with pytest.raises(ImportError, match="coco-experiment"):
        make_blackbox(bbob_spec(1, 2, 1))(np.zeros(2))


def test_random_reference_is_seeded_per_box_and_bounds_the_minimum():
    specs = [go_spec("sphere", 2, 0), go_spec("branin", 2, 1)]
    table = random_reference(specs, 500, seed=3)
    again = random_reference(specs, 500, seed=3)
    pd.testing.assert_frame_equal(table, again)
    assert list(table["bb_id"]) == [s.bb_id for s in specs] and (table["samples"] == 500).all()
    assert (table["non_finite"] == 0).all() and (table["random_min"] <= table["random_median"]).all()
    assert table.loc[0, "random_min"] >= 0.0  # the sphere's minimum is 0
    alone = random_reference(specs[1:], 500, seed=3)  # box k draws from [seed, k]: its position matters
    assert alone.loc[0, "random_min"] != table.loc[1, "random_min"]
