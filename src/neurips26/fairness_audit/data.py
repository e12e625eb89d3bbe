"""The audit data set: features X, binary
protected attribute A and binary label Y, with the features grouped into Shapley players.

- `features` holds float64 numeric columns only: categorical features arrive one-hot encoded, and `groups` maps
  each player (an original feature name) to its columns, in order. The players are the group names, in the order
  of `groups`; the feature columns are kept in that same order, so `block(players)` is the whole matrix.
- The constructor checks the structure (binary A and Y, A not constant, no NaN, numeric finite features, groups that
  cover the columns exactly once, A and Y not among the features). `make_audit_data` adds the checks that depend on
  a setting: NaN imputation (`impute="mean"` or `"median"`, else NaN is an error) and the minimum sample count of
  every A group and every (A, Y) cell (`min_group`, default 30). Splits are built with the constructor only, so a
  small validation split is not refused for having fewer than `min_group` samples in a cell.
- Storage: `to_frame` gives one Parquet-able DataFrame (columns A, Y, then the features) and a JSON-able dict (name,
  groups, names of the original attribute and label, imputed count); `from_frame` inverts it.
- `train_val_test_split` is stratified on the four (A, Y) cells: each cell is shuffled and cut by the fractions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = [
    "IMPUTERS",
    "MIN_GROUP",
    "RESERVED_COLUMNS",
    "AuditData",
    "binary_int8",
    "check_group_sizes",
    "impute_features",
    "make_audit_data",
    "split_indices",
    "train_val_test_split",
    "validate_audit_data",
]

MIN_GROUP = 30  # a class with fewer than 30 samples is refused
RESERVED_COLUMNS = ("A", "Y")
IMPUTERS = ("mean", "median")


def binary_int8(values, what: str) -> np.ndarray:
    """A one-dimensional 0/1 vector as int8; ValueError naming ``what`` and the values seen otherwise."""
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional, got shape {array.shape}")
    if array.dtype == bool:
        return array.astype(np.int8)
    try:
        numeric = array.astype(np.float64)
    except (TypeError, ValueError):
        seen = sorted({str(v) for v in array.tolist()})[:10]
        raise ValueError(f"{what} must be binary 0/1; values seen: {seen}") from None
    bad = ~np.isin(numeric, (0.0, 1.0))
    if bad.any():
        seen = sorted({v for v in numeric[bad].tolist() if v == v})
        seen = seen + (["nan"] if np.isnan(numeric[bad]).any() else [])
        raise ValueError(f"{what} must be binary 0/1; values seen outside {{0, 1}}: {seen[:10]}")
    return numeric.astype(np.int8)


def _normalise_groups(groups: Mapping[str, Sequence[str]] | None, columns: list[str]) -> dict[str, tuple[str, ...]]:
    if groups is None:
        return {column: (column,) for column in columns}
    out: dict[str, tuple[str, ...]] = {}
    owner: dict[str, str] = {}
    for name, cols in groups.items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"group names must be non-empty strings, got {name!r}")
        if isinstance(cols, str):
            cols = (cols,)
        cols = tuple(cols)
        if not cols:
            raise ValueError(f"group {name!r} has no columns")
        missing = [c for c in cols if c not in columns]
        if missing:
            raise ValueError(f"group {name!r} references missing feature column(s) {missing}")
        for col in cols:
            if col in owner:
                raise ValueError(f"groups overlap: column {col!r} is in both {owner[col]!r} and {name!r}")
            owner[col] = name
        out[name] = cols
    loose = [c for c in columns if c not in owner]
    if loose:
        raise ValueError(f"feature column(s) {loose} belong to no group")
    return out


@dataclass(frozen=True, eq=False)
class AuditData:
    """Features (float64, one-hot encoded), their player groups, protected attribute `a` and label `y` (int8 0/1).

    `a_name` and `y_name` are the original names of the attribute and the label (e.g. "sex", "income"); neither
    they nor the reserved "A"/"Y" may name a feature column or a group. `n_imputed` counts the feature cells that
    were NaN and imputed by `make_audit_data`. The arrays are read-only; equality is identity (eq=False), compare
    `to_frame()` outputs for value equality.
    """

    features: pd.DataFrame
    groups: dict[str, tuple[str, ...]]
    a: np.ndarray
    y: np.ndarray
    name: str = "data"
    a_name: str = "A"
    y_name: str = "Y"
    n_imputed: int = 0
    _offsets: dict[str, slice] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        if not isinstance(self.features, pd.DataFrame):
            raise ValueError(f"features must be a pandas DataFrame, got {type(self.features).__name__}")
        columns = list(self.features.columns)
        if not columns:
            raise ValueError(f"{self.name}: features are empty (no columns)")
        if len(self.features) == 0:
            raise ValueError(f"{self.name}: features are empty (no rows)")
        bad_names = [c for c in columns if not isinstance(c, str) or not c]
        if bad_names:
            raise ValueError(f"{self.name}: feature column names must be non-empty strings, got {bad_names}")
        duplicated = sorted({c for c in columns if columns.count(c) > 1})
        if duplicated:
            raise ValueError(f"{self.name}: duplicated feature column(s) {duplicated}")
        forbidden = {*RESERVED_COLUMNS, self.a_name, self.y_name}
        leaked = sorted(forbidden & set(columns))
        if leaked:
            raise ValueError(f"{self.name}: the protected attribute or label is among the features: {leaked}")
        groups = _normalise_groups(self.groups, columns)
        leaked = sorted(forbidden & set(groups))
        if leaked:
            raise ValueError(f"{self.name}: the protected attribute or label is a feature group: {leaked}")
        non_numeric = [
            c
            for c in columns
            if not pd.api.types.is_numeric_dtype(self.features[c]) or pd.api.types.is_complex_dtype(self.features[c])
        ]
        if non_numeric:
            raise ValueError(f"{self.name}: non-numeric feature column(s) {non_numeric}; one-hot encode them first")
        order = [c for cols in groups.values() for c in cols]
        values = self.features[order].to_numpy(dtype=np.float64, copy=True)
        nan_cols = [c for c, bad in zip(order, np.isnan(values).any(axis=0)) if bad]
        if nan_cols:
            raise ValueError(
                f"{self.name}: NaN in feature column(s) {nan_cols}; "
                "set impute='mean' or 'median' (make_audit_data) to impute them"
            )
        inf_cols = [c for c, bad in zip(order, np.isinf(values).any(axis=0)) if bad]
        if inf_cols:
            raise ValueError(f"{self.name}: infinite values in feature column(s) {inf_cols}")
        a = binary_int8(self.a, f"{self.name}: protected attribute A")
        y = binary_int8(self.y, f"{self.name}: label Y")
        n = len(values)
        if len(a) != n or len(y) != n:
            raise ValueError(f"{self.name}: lengths differ: features {n}, A {len(a)}, Y {len(y)}")
        if a.min() == a.max():
            raise ValueError(f"{self.name}: protected attribute A is constant ({int(a[0])} in all {n} rows)")
        values.setflags(write=False)
        a.setflags(write=False)
        y.setflags(write=False)
        features = pd.DataFrame(values, columns=order)
        offsets, start = {}, 0
        for name, cols in groups.items():
            offsets[name] = slice(start, start + len(cols))
            start += len(cols)
        object.__setattr__(self, "features", features)
        object.__setattr__(self, "groups", groups)
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "n_imputed", int(self.n_imputed))
        object.__setattr__(self, "_offsets", offsets)

    @property
    def players(self) -> tuple[str, ...]:
        """The Shapley players: the group names, in order."""
        return tuple(self.groups)

    @property
    def n(self) -> int:
        return len(self.a)

    def block(self, names: Iterable[str] | str) -> np.ndarray:
        """The (n, k) float64 matrix of the named groups' columns, groups in the order given; (n, 0) for none.

        A single string is one group name."""
        names = [names] if isinstance(names, str) else list(names)
        unknown = [name for name in names if name not in self._offsets]
        if unknown:
            raise ValueError(f"{self.name}: unknown player(s) {unknown}; players are {list(self.players)}")
        if len(set(names)) != len(names):
            raise ValueError(f"{self.name}: player(s) named twice in {names}")
        values = self.features.to_numpy()
        if not names:
            return np.empty((self.n, 0), dtype=np.float64)
        return np.concatenate([values[:, self._offsets[name]] for name in names], axis=1)

    def subset(self, rows: np.ndarray, name: str | None = None) -> AuditData:
        """The data restricted to `rows` (integer positions), as a new AuditData (structure checks only)."""
        rows = np.asarray(rows, dtype=np.int64)
        return AuditData(
            self.features.iloc[rows].reset_index(drop=True),
            self.groups,
            self.a[rows],
            self.y[rows],
            name=self.name if name is None else name,
            a_name=self.a_name,
            y_name=self.y_name,
            n_imputed=self.n_imputed,
        )

    def without(self, players: Iterable[str]) -> AuditData:
        """The data with the named players' columns removed (at least one player must remain)."""
        drop = [players] if isinstance(players, str) else list(players)
        unknown = [p for p in drop if p not in self.groups]
        if unknown:
            raise ValueError(f"{self.name}: unknown player(s) {unknown}; players are {list(self.players)}")
        groups = {p: cols for p, cols in self.groups.items() if p not in drop}
        columns = [c for cols in groups.values() for c in cols]
        return AuditData(
            self.features[columns],
            groups,
            self.a,
            self.y,
            name=self.name,
            a_name=self.a_name,
            y_name=self.y_name,
            n_imputed=self.n_imputed,
        )

    def to_frame(self) -> tuple[pd.DataFrame, dict]:
        """(frame, meta): the frame has int8 columns A and Y then the float64 features; meta is JSON-able."""
        frame = pd.concat([pd.DataFrame({"A": self.a, "Y": self.y}), self.features], axis=1)
        meta = {
            "name": self.name,
            "groups": {name: list(cols) for name, cols in self.groups.items()},
            "a_name": self.a_name,
            "y_name": self.y_name,
            "n_imputed": self.n_imputed,
        }
        return frame, meta

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, meta: Mapping) -> AuditData:
        """Inverse of `to_frame` (structure checks only)."""
        missing = [c for c in RESERVED_COLUMNS if c not in frame.columns]
        if missing:
            raise ValueError(f"frame lacks column(s) {missing}; has {list(frame.columns)[:10]}")
        unknown = sorted(set(meta) - {"name", "groups", "a_name", "y_name", "n_imputed"})
        if unknown or "groups" not in meta:
            raise ValueError(
                f"meta must have 'groups' and only name/groups/a_name/y_name/n_imputed; unknown keys {unknown}"
            )
        features = frame.drop(columns=list(RESERVED_COLUMNS)).reset_index(drop=True)
        return cls(
            features,
            {k: tuple(v) for k, v in meta["groups"].items()},
            frame["A"].to_numpy(),
            frame["Y"].to_numpy(),
            name=meta.get("name", "data"),
            a_name=meta.get("a_name", "A"),
            y_name=meta.get("y_name", "Y"),
            n_imputed=meta.get("n_imputed", 0),
        )


def check_group_sizes(a: np.ndarray, y: np.ndarray, min_group: int = MIN_GROUP, what: str = "data") -> None:
    """Every A group and every (A, Y) cell must hold at least `min_group` samples; the error names the cells."""
    a, y = np.asarray(a), np.asarray(y)
    small = [f"A={v} ({int(np.sum(a == v))})" for v in (0, 1) if np.sum(a == v) < min_group]
    if small:
        raise ValueError(f"{what}: protected group(s) {', '.join(small)} have fewer than min_group={min_group} samples")
    small = [
        f"(A={va}, Y={vy}) ({int(np.sum((a == va) & (y == vy)))})"
        for va in (0, 1)
        for vy in (0, 1)
        if np.sum((a == va) & (y == vy)) < min_group
    ]
    if small:
        raise ValueError(f"{what}: (A, Y) cell(s) {', '.join(small)} have fewer than min_group={min_group} samples")


def validate_audit_data(data: AuditData, min_group: int = MIN_GROUP) -> AuditData:
    """The checks beyond the constructor's: at least `min_group` samples per A group and per (A, Y) cell."""
    if min_group < 0:
        raise ValueError(f"min_group must be >= 0, got {min_group}")
    check_group_sizes(data.a, data.y, min_group, data.name)
    return data


def impute_features(features: pd.DataFrame, impute: str | None) -> tuple[pd.DataFrame, int]:
    """Fill NaN per column with its mean or median; returns (features, number of cells filled).

    With `impute=None` the frame is returned unchanged (the constructor then refuses any NaN). A column that is all
    NaN cannot be imputed and is an error."""
    if impute is None:
        return features, 0
    if impute not in IMPUTERS:
        raise ValueError(f"impute must be one of {IMPUTERS} or None, got {impute!r}")
    features = features.copy()
    n_missing = 0
    for column in features.columns:
        values = pd.to_numeric(features[column], errors="raise").astype(np.float64)
        missing = values.isna()
        if not missing.any():
            continue
        if missing.all():
            raise ValueError(f"feature column {column!r} is all NaN; it cannot be imputed")
        fill = values.mean() if impute == "mean" else values.median()
        features[column] = values.fillna(fill)
        n_missing += int(missing.sum())
    return features, n_missing


def make_audit_data(
    features: pd.DataFrame,
    a,
    y,
    groups: Mapping[str, Sequence[str]] | None = None,
    *,
    name: str = "data",
    a_name: str = "A",
    y_name: str = "Y",
    min_group: int = MIN_GROUP,
    impute: str | None = None,
) -> AuditData:
    """Build and fully validate an AuditData: impute NaN if `impute` is set, then the constructor's checks, then
    `min_group` per A group and (A, Y) cell. `groups=None` makes every column its own player."""
    filled, n_imputed = impute_features(features, impute)
    data = AuditData(
        filled,
        groups if groups is not None else {c: (c,) for c in features.columns},
        a,
        y,
        name=name,
        a_name=a_name,
        y_name=y_name,
        n_imputed=n_imputed,
    )
    return validate_audit_data(data, min_group)


def split_indices(a: np.ndarray, y: np.ndarray, fractions: Sequence[float], seed: int) -> tuple[np.ndarray, ...]:
    """Row positions of each part, stratified on the (A, Y) cells: each cell is shuffled and cut at
    round(cumulative fraction * cell size). Positions are sorted within a part."""
    fractions = np.asarray(fractions, dtype=np.float64)
    if fractions.ndim != 1 or len(fractions) < 2:
        raise ValueError(f"fractions must list at least two parts, got {fractions.tolist()}")
    if not np.all(np.isfinite(fractions)) or np.any(fractions <= 0) or abs(fractions.sum() - 1.0) > 1e-9:
        raise ValueError(f"fractions must be positive and sum to 1, got {fractions.tolist()}")
    rng = np.random.default_rng(seed)
    parts: list[list[np.ndarray]] = [[] for _ in fractions]
    cuts = np.cumsum(fractions)
    for cell in (0, 1, 2, 3):
        rows = np.flatnonzero(2 * np.asarray(a) + np.asarray(y) == cell)
        rows = rows[rng.permutation(len(rows))]
        bounds = np.concatenate([[0], np.round(cuts * len(rows)).astype(np.int64)])
        bounds[-1] = len(rows)
        for i in range(len(fractions)):
            parts[i].append(rows[bounds[i] : bounds[i + 1]])
    return tuple(np.sort(np.concatenate(part)) for part in parts)


def train_val_test_split(
    data: AuditData, fractions: Sequence[float] = (0.6, 0.2, 0.2), seed: int = 0
) -> tuple[AuditData, AuditData, AuditData]:
    """(train, val, test), stratified on (A, Y); names get the suffixes /train, /val, /test."""
    if len(fractions) != 3:
        raise ValueError(f"fractions must be three numbers (train, val, test), got {list(fractions)}")
    parts = split_indices(data.a, data.y, fractions, seed)
    train, val, test = (data.subset(rows, f"{data.name}/{part}") for rows, part in zip(parts, ("train", "val", "test")))
    return train, val, test
