"""Paper 06 audit data: the AuditData structure, its bad-input errors, imputation, the Parquet/JSON round
trip and the (A, Y)-stratified split."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from neurips26.fairness_audit.data import (
    AuditData,
    check_group_sizes,
    make_audit_data,
    split_indices,
    train_val_test_split,
)


def _toy(n: int = 400, seed: int = 0) -> tuple[pd.DataFrame, dict, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    y = rng.integers(0, 2, n)
    colour = rng.integers(0, 3, n)
    features = pd.DataFrame(
        {
            "x": rng.normal(size=n) + a,
            "colour=red": (colour == 0).astype(float),
            "colour=blue": (colour == 1).astype(float),
            "colour=green": (colour == 2).astype(float),
            "z": rng.normal(size=n),
        }
    )
    groups = {"z": ("z",), "colour": ("colour=red", "colour=blue", "colour=green"), "x": ("x",)}
    return features, groups, a, y


def test_groups_order_players_and_blocks():
    features, groups, a, y = _toy()
    data = make_audit_data(features, a, y, groups, name="toy")
    assert data.players == ("z", "colour", "x")
    assert list(data.features.columns) == ["z", "colour=red", "colour=blue", "colour=green", "x"]
    assert data.features.dtypes.eq(np.float64).all()
    assert data.a.dtype == np.int8 and data.y.dtype == np.int8
    np.testing.assert_array_equal(data.block(["x", "z"]), features[["x", "z"]].to_numpy())
    np.testing.assert_array_equal(data.block("colour"), features[list(groups["colour"])].to_numpy())
    assert data.block([]).shape == (400, 0)
    np.testing.assert_array_equal(data.block(data.players), data.features.to_numpy())
    with pytest.raises(ValueError, match=r"unknown player\(s\) \['w'\]"):
        data.block(["w"])
    with pytest.raises(ValueError, match="twice"):
        data.block(["x", "x"])


def test_default_groups_are_one_column_each_and_arrays_are_read_only():
    features, _, a, y = _toy()
    data = make_audit_data(features, a, y)
    assert data.players == tuple(features.columns)
    with pytest.raises(ValueError):
        data.a[0] = 1 - data.a[0]
    without = data.without(["z", "x"])
    assert without.players == ("colour=red", "colour=blue", "colour=green")


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda f, g, a, y: (f, g, a * 2, y), r"protected attribute A must be binary.*\[2\.0\]"),
        (lambda f, g, a, y: (f, g, a, np.where(y == 1, "yes", "no")), r"label Y must be binary.*'no', 'yes'"),
        (lambda f, g, a, y: (f, g, np.zeros_like(a), y), r"A is constant \(0 in all 400 rows\)"),
        (lambda f, g, a, y: (f.assign(A=a), {**g, "A": ("A",)}, a, y), r"attribute or label is among the features"),
        (lambda f, g, a, y: (f.iloc[:, :0], {}, a, y), r"features are empty"),
        (lambda f, g, a, y: (f, {**g, "w": ("w",)}, a, y), r"group 'w' references missing feature column\(s\)"),
        (lambda f, g, a, y: (f, {**g, "x2": ("x",)}, a, y), r"groups overlap: column 'x' is in both 'x' and 'x2'"),
        (lambda f, g, a, y: (f, {"x": ("x",)}, a, y), r"belong to no group"),
        (lambda f, g, a, y: (f.assign(s="a"), {**g, "s": ("s",)}, a, y), r"non-numeric feature column\(s\) \['s'\]"),
        (lambda f, g, a, y: (f, g, a[:-1], y), r"lengths differ"),
    ],
)
def test_constructor_rejects_bad_inputs_naming_the_problem(change, match):
    with pytest.raises(ValueError, match=match):
        AuditData(*change(*_toy()))


def test_label_name_among_features_is_rejected():
    features, groups, a, y = _toy()
    with pytest.raises(ValueError, match=r"among the features: \['x'\]"):
        AuditData(features, groups, a, y, y_name="x")


def test_min_group_names_the_small_group_and_the_small_cell():
    features, groups, a, y = _toy()
    a_small = a.copy()
    a_small[np.flatnonzero(a == 1)[10:]] = 0  # ten rows left in A=1
    with pytest.raises(ValueError, match=r"protected group\(s\) A=1 \(10\)"):
        make_audit_data(features, a_small, y, groups)
    y_small = y.copy()
    cell = np.flatnonzero((a == 0) & (y == 1))
    y_small[cell[5:]] = 0  # five rows left in (A=0, Y=1)
    with pytest.raises(ValueError, match=r"cell\(s\) \(A=0, Y=1\) \(5\) have fewer than min_group=30"):
        make_audit_data(features, a, y_small, groups)
    make_audit_data(features, a, y_small, groups, min_group=5)  # five is enough for min_group=5
    check_group_sizes(a, y, 30)


def test_nan_is_an_error_unless_imputed_and_the_count_is_recorded():
    features, groups, a, y = _toy()
    features.loc[[3, 7, 11], "x"] = np.nan
    features.loc[5, "z"] = np.nan
    with pytest.raises(ValueError, match=r"NaN in feature column\(s\) \['z', 'x'\].*impute"):
        make_audit_data(features, a, y, groups)
    mean = make_audit_data(features, a, y, groups, impute="mean")
    median = make_audit_data(features, a, y, groups, impute="median")
    assert mean.n_imputed == 4 and median.n_imputed == 4
    assert mean.features["x"].iloc[3] == pytest.approx(features["x"].mean())
    assert median.features["z"].iloc[5] == pytest.approx(features["z"].median())
    assert not np.isnan(mean.features.to_numpy()).any()
    with pytest.raises(ValueError, match=r"impute must be one of \('mean', 'median'\) or None, got 'zero'"):
        make_audit_data(features, a, y, groups, impute="zero")


def test_frame_round_trip_through_parquet_and_json(tmp_path):
    features, groups, a, y = _toy()
    features.loc[2, "x"] = np.nan
    data = make_audit_data(features, a, y, groups, name="toy", a_name="sex", y_name="income", impute="median")
    frame, meta = data.to_frame()
    assert list(frame.columns[:2]) == ["A", "Y"]
    frame.to_parquet(tmp_path / "toy.parquet")
    (tmp_path / "toy.json").write_text(json.dumps(meta))
    stored = json.loads((tmp_path / "toy.json").read_text())
    back = AuditData.from_frame(pd.read_parquet(tmp_path / "toy.parquet"), stored)
    assert back.groups == data.groups and back.name == "toy" and back.n_imputed == 1
    assert (back.a_name, back.y_name) == ("sex", "income")
    pd.testing.assert_frame_equal(back.features, data.features)
    np.testing.assert_array_equal(back.a, data.a)
    np.testing.assert_array_equal(back.y, data.y)
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['Y'\]"):
        AuditData.from_frame(frame.drop(columns="Y"), meta)


def test_split_is_stratified_disjoint_complete_and_seeded():
    features, groups, a, y = _toy(n=1000)
    data = make_audit_data(features, a, y, groups)
    parts = split_indices(data.a, data.y, (0.6, 0.2, 0.2), seed=3)
    joined = np.concatenate(parts)
    assert len(joined) == 1000 and len(np.unique(joined)) == 1000
    for rows, fraction in zip(parts, (0.6, 0.2, 0.2)):
        for cell in range(4):
            in_cell = np.sum(2 * data.a + data.y == cell)
            assert abs(np.sum(2 * data.a[rows] + data.y[rows] == cell) - fraction * in_cell) <= 1
    again = split_indices(data.a, data.y, (0.6, 0.2, 0.2), seed=3)
    other = split_indices(data.a, data.y, (0.6, 0.2, 0.2), seed=4)
    assert all(np.array_equal(p, q) for p, q in zip(parts, again))
    assert not np.array_equal(parts[0], other[0])
    train, val, test = train_val_test_split(data, (0.6, 0.2, 0.2), seed=3)
    assert (train.name, test.name) == ("data/train", "data/test")
    np.testing.assert_array_equal(test.block(["x"])[:, 0], data.features["x"].to_numpy()[parts[2]])
    with pytest.raises(ValueError, match=r"positive and sum to 1"):
        train_val_test_split(data, (0.6, 0.3, 0.2), seed=0)
