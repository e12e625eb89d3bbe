"""The claims contract: three verdicts, minimum evidence, intervals over seeds, definitions as validated data."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from neurips26.common import report
from neurips26.common.claims import (
    COLUMNS,
    Definition,
    Measured,
    beyond_null,
    bootstrap_interval,
    clopper_pearson,
    decide,
    load_definitions,
    measured_from_spread,
    t_interval,
    verdict,
)
from neurips26.common.config import ConfigError
from neurips26.common.scoreboard import (
    board_csv,
    board_markdown,
    paper_row,
    split_reconstructions,
    totals_row,
    totals_sentence,
)


def definition(comparison=">=", threshold=1.0, kind="hard", claim_id="C1", min_runs=1) -> Definition:
    return Definition(
        claim_id,
        "statement",
        kind,
        "metric",
        comparison,
        threshold,
        ("metrics.parquet",),
        source="the paper says so",
        min_runs=min_runs,
    )


@pytest.mark.parametrize(
    "comparison, below, equal, above",
    [
        ("<", "holds", "fails", "fails"),
        ("<=", "holds", "holds", "fails"),
        (">", "fails", "fails", "holds"),
        (">=", "fails", "holds", "holds"),
    ],
)
def test_a_point_value_is_decided_by_its_comparison(comparison, below, equal, above):
    for value, expected in ((0.5, below), (1.0, equal), (2.0, above)):
        assert verdict(definition(comparison), Measured("C1", value, runs=1))[0] == expected


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), None])
def test_missing_or_non_finite_evidence_is_inconclusive_never_holds(value):
    outcome, reason = verdict(definition(">=", -1e9), Measured("C1", value, runs=5))
    assert outcome == "inconclusive" and "no evidence" in reason


def test_fewer_runs_than_the_minimum_is_inconclusive_with_the_count():
    outcome, reason = verdict(definition(min_runs=3), Measured("C1", 5.0, runs=2))
    assert outcome == "inconclusive" and "2 run(s), needs at least 3" in reason
    assert verdict(definition(min_runs=3), Measured("C1", 5.0, runs=3))[0] == "holds"


def test_an_interval_decides_only_when_it_lies_on_one_side_of_the_threshold():
    d = definition(">", 0.0)
    assert verdict(d, Measured("C1", 0.5, 3, low=0.1, high=0.9))[0] == "holds"
    assert verdict(d, Measured("C1", -0.5, 3, low=-0.9, high=-0.1))[0] == "fails"
    outcome, reason = verdict(d, Measured("C1", 0.5, 3, low=-0.1, high=1.1))
    assert outcome == "inconclusive" and "contains the threshold" in reason
    assert verdict(d, Measured("C1", 0.5, 3, low=float("nan"), high=1.0))[0] == "inconclusive"


@pytest.mark.parametrize("comparison", ["<", "<="])
def test_an_interval_decides_a_smaller_than_claim_from_its_upper_end(comparison):
    d = definition(comparison, 1.0)
    assert verdict(d, Measured("C1", 0.5, 3, low=0.2, high=0.8))[0] == "holds"
    assert verdict(d, Measured("C1", 1.5, 3, low=1.2, high=1.8))[0] == "fails"
    assert verdict(d, Measured("C1", 0.9, 3, low=0.5, high=1.3))[0] == "inconclusive"


def test_a_measurement_refuses_an_inconsistent_interval_or_noise():
    with pytest.raises(ValueError, match="low > high"):
        Measured("C1", 0.5, 3, low=1.0, high=0.0)
    outcome, reason = verdict(definition(">", -1.0), Measured("C1", 2.0, 3, low=0.0, high=1.0))
    assert outcome == "inconclusive" and "outside its interval" in reason
    with pytest.raises(ValueError, match="not both"):
        Measured("C1", 0.5, 3, low=0.0, high=1.0, noise=0.1)
    with pytest.raises(ValueError, match="noise must be >= 0"):
        Measured("C1", 0.5, 3, noise=-0.1)
    with pytest.raises(ValueError, match="both ends"):
        Measured("C1", 0.5, 3, low=0.0)


def test_a_margin_within_the_seed_noise_is_inconclusive():
    d = definition("<=", 0.0)
    outcome, reason = verdict(d, Measured("C1", 0.0002, 1, noise=0.01))
    assert outcome == "inconclusive" and "within the seed noise" in reason
    assert verdict(d, Measured("C1", 0.05, 1, noise=0.01))[0] == "fails"
    assert verdict(d, Measured("C1", -0.05, 1, noise=0.01))[0] == "holds"


def test_definitions_reject_bad_kinds_comparisons_and_claims_without_a_source():
    with pytest.raises(ValueError, match="kind"):
        definition(kind="strong")
    with pytest.raises(ValueError, match="comparison"):
        definition(comparison="==")
    with pytest.raises(ValueError, match="paper's sentence"):
        Definition("C1", "statement", "hard", "metric", ">", 0.0, ("x.parquet",))
    Definition("K1", "an identity of our code", "check", "metric", "<", 1e-9, ("x.parquet",))  # checks need none


def test_decide_writes_every_definition_once_in_order_with_its_verdict():
    defs = [
        definition(claim_id="C1"),
        definition(claim_id="C2", kind="soft", min_runs=3),
        definition(claim_id="K1", kind="check", comparison="<", threshold=1e-9),
    ]
    table = decide(defs, [Measured("K1", 0.0, 1), Measured("C2", 2.0, 1, note="one seed"), Measured("C1", 0.5, 4)])
    assert list(table.columns) == COLUMNS
    assert table["claim_id"].tolist() == ["C1", "C2", "K1"]
    assert table["verdict"].tolist() == ["fails", "inconclusive", "holds"]
    assert table["holds"].tolist() == [False, False, True]
    assert "needs at least 3" in table.loc[1, "note"] and "one seed" in table.loc[1, "note"]
    assert table["paper_value"].dtype == np.float64


def test_decide_refuses_unmeasured_extra_or_duplicate_claims():
    defs = [definition(claim_id="C1"), definition(claim_id="C2")]
    with pytest.raises(ValueError, match=r"defined but not measured: \['C2'\]"):
        decide(defs, [Measured("C1", 1.0, 1)])
    with pytest.raises(ValueError, match=r"measured but not defined: \['C3'\]"):
        decide(defs, [Measured("C1", 1.0, 1), Measured("C2", 1.0, 1), Measured("C3", 1.0, 1)])
    with pytest.raises(ValueError, match="measured twice"):
        decide(defs, [Measured("C1", 1.0, 1), Measured("C1", 1.0, 1)])


def test_t_interval_matches_scipy_and_is_undefined_for_one_seed():
    from scipy import stats

    values = [0.1, 0.3, 0.2, float("nan")]
    spread = t_interval(values)
    low, high = stats.t.interval(0.95, 2, loc=0.2, scale=stats.sem([0.1, 0.3, 0.2]))
    assert spread.runs == 3 and spread.mean == pytest.approx(0.2)
    assert (spread.low, spread.high) == pytest.approx((low, high))
    single = t_interval([0.4])
    assert single.runs == 1 and math.isnan(single.low)
    assert t_interval([]).runs == 0


def test_bootstrap_interval_is_reproducible_and_brackets_the_mean():
    values = np.random.default_rng(1).normal(1.0, 0.5, size=20)
    a, b = bootstrap_interval(values), bootstrap_interval(values)
    assert (a.low, a.high) == (b.low, b.high)
    assert a.low < a.mean < a.high


def test_a_claim_over_seeds_holds_fails_or_is_inconclusive_by_its_interval():
    d = definition(">", 0.0, min_runs=3)
    decide_one = lambda values: verdict(d, measured_from_spread("C1", t_interval(values)))[0]  # noqa: E731
    assert decide_one([0.5, 0.6, 0.55]) == "holds"
    assert decide_one([-0.5, -0.6, -0.55]) == "fails"
    assert decide_one([0.5, -0.4, 0.1]) == "inconclusive"
    assert decide_one([0.5]) == "inconclusive"  # one seed is below the minimum


def test_load_definitions_validates_the_file_and_names_the_bad_key(tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text(
        "paper: demo\nexperiments: [demo_train]\nclaims:\n"
        "  - {id: C1, statement: 'x beats y on z', kind: hard, metric: 'loss gap', comparison: '<',"
        " threshold: 0, min_runs: 3, source: 'We show x beats y.', evidence: [metrics.parquet]}\n"
    )
    (only,) = load_definitions(good)
    assert only.min_runs == 3 and only.evidence == ("metrics.parquet",)
    bad = tmp_path / "bad.yaml"
    bad.write_text(good.read_text().replace("kind: hard", "kind: strong"))
    with pytest.raises(ConfigError, match=r"claims\.0\.kind"):
        load_definitions(bad)
    unsourced = tmp_path / "unsourced.yaml"
    unsourced.write_text(good.read_text().replace(" source: 'We show x beats y.',", ""))
    with pytest.raises(ConfigError, match="paper's sentence"):
        load_definitions(unsourced)


def test_a_claim_whose_null_also_passes_is_not_a_holds():
    d = definition(">=", 0.8)
    assert verdict(d, Measured("C1", 0.99, 1, null=0.5)) == ("holds", "")
    outcome, reason = verdict(d, Measured("C1", 0.99, 1, null=0.95))
    assert outcome == "inconclusive" and "null without the mechanism passes too (0.95 >= 0.8)" in reason
    assert verdict(d, Measured("C1", 0.99, 1, null=float("nan")))[0] == "inconclusive"
    assert verdict(d, Measured("C1", 0.5, 1, null=0.95))[0] == "fails"  # the claim's own failure decides
    table = decide([d], [Measured("C1", 0.99, 1, null=0.95)])
    assert table.loc[0, "null_value"] == 0.95 and table.loc[0, "verdict"] == "inconclusive"


def test_a_null_decides_after_an_interval_over_seeds():
    """The null is read only when the claim's own interval holds: an interval on the failing side or across the
    threshold decides first, whatever the null."""
    d = definition(">=", 0.8)
    assert verdict(d, Measured("C1", 0.9, 5, low=0.85, high=0.95, null=0.5)) == ("holds", "")
    outcome, reason = verdict(d, Measured("C1", 0.9, 5, low=0.85, high=0.95, null=0.82))
    assert outcome == "inconclusive" and "null without the mechanism passes too" in reason
    assert verdict(d, Measured("C1", 0.7, 5, low=0.65, high=0.75, null=0.95))[0] == "fails"
    outcome, reason = verdict(d, Measured("C1", 0.85, 5, low=0.75, high=0.95, null=0.5))
    assert outcome == "inconclusive" and "contains the threshold" in reason


def test_claims_markdown_shows_the_null_column_only_where_a_null_was_measured():
    defs = [definition(claim_id="C1"), definition(claim_id="C2")]
    with_null = report.claims_markdown(decide(defs, [Measured("C1", 2.0, 1, null=0.25), Measured("C2", 2.0, 1)]))
    header = next(line for line in with_null.splitlines() if line.startswith("| claim_id"))
    assert "| null |" in header and "| 0.25 |" in with_null
    without = report.claims_markdown(decide(defs, [Measured("C1", 2.0, 1), Measured("C2", 2.0, 1)]))
    assert "| null |" not in without


def test_the_scoreboards_legend_names_a_null_that_passes_too_as_a_reason_for_inconclusive():
    from conftest import ROOT

    legend = (ROOT / "scripts/common/scoreboard.py").read_text()
    assert "its null passes too" in legend


def test_the_reconstruction_mark_travels_from_the_claims_file_to_the_table(tmp_path):
    text = (
        "paper: demo\nexperiments: [demo_train]\nclaims:\n"
        "  - {id: C1, statement: 'x beats y on z', kind: hard, metric: 'loss gap', comparison: '<',"
        " threshold: 0, source: 'We show x beats y.', evidence: [metrics.parquet]}\n"
    )
    found, rebuilt = tmp_path / "found.yaml", tmp_path / "rebuilt.yaml"
    found.write_text(text)
    rebuilt.write_text(text.replace("experiments:", "reconstruction: true\nexperiments:"))
    assert not load_definitions(found)[0].reconstruction and load_definitions(rebuilt)[0].reconstruction
    table = decide(load_definitions(rebuilt), [Measured("C1", -1.0, 1)])
    assert table["reconstruction"].tolist() == [True]
    assert not decide(load_definitions(found), [Measured("C1", -1.0, 1)])["reconstruction"].any()
    assert report.claims_markdown(table).startswith(report.RECONSTRUCTION_LINE)
    assert report.RECONSTRUCTION_LINE not in report.claims_markdown(
        decide(load_definitions(found), [Measured("C1", -1.0, 1)])
    )
    mixed = [load_definitions(found)[0], definition(claim_id="C2")]
    mixed[1] = Definition(**{**mixed[1].__dict__, "reconstruction": True})
    with pytest.raises(ValueError, match="mix reconstruction"):
        decide(mixed, [Measured("C1", 0.0, 1), Measured("C2", 0.0, 1)])
    not_boolean = tmp_path / "not_boolean.yaml"
    not_boolean.write_text(text.replace("experiments:", "reconstruction: maybe\nexperiments:"))
    with pytest.raises(ConfigError, match="reconstruction"):
        load_definitions(not_boolean)


def _table(verdicts: dict[str, str]) -> pd.DataFrame:
    kinds = {"H": "hard", "S": "soft", "I": "info", "K": "check"}
    return pd.DataFrame(
        [{"claim_id": cid, "kind": kinds[cid[0]], "verdict": v, "runs": 3} for cid, v in verdicts.items()]
    )


def test_the_scoreboard_counts_reconstructions_apart_from_found_papers():
    bench = pd.DataFrame({"job": ["train/a"], "seconds": [10.0], "max_rss_mb": [1.0]})
    found = paper_row("found", _table({"H1": "holds", "H2": "fails", "K1": "holds"}), bench)
    rebuilt_claims = _table({"H1": "holds", "H2": "holds", "S1": "holds", "K1": "holds"}).assign(reconstruction=True)
    rebuilt = paper_row("rebuilt", rebuilt_claims, bench)
    assert not found["reconstruction"] and rebuilt["reconstruction"]
    rows = pd.DataFrame([found, rebuilt])
    sentence = totals_sentence(rows)
    head, apart = sentence.split("Counted apart")
    assert "**1 papers. Hard claims: 1 hold, 1 fail" in head and "not found" in apart
    assert "Hard claims: 2 hold, 0 fail" in apart and "Soft claims: 1 hold" in apart
    reproduced, reconstructed = split_reconstructions(rows)
    assert reproduced["paper"].tolist() == ["found", "all found papers"]
    assert reconstructed["paper"].tolist() == ["rebuilt", "all reconstructions"]
    assert reproduced.iloc[-1]["hard claims"] == "1/1/0" and reconstructed.iloc[-1]["hard claims"] == "2/0/0"
    board = board_markdown(rows)
    assert board.index("[found](found/report.md)") < board.index("## Reconstructions (counted apart)")
    assert board.index("## Reconstructions (counted apart)") < board.index("[rebuilt](rebuilt/report.md)")
    csv = board_csv(rows)
    assert csv.set_index("paper")["reconstruction"].to_dict() == {
        "found": False,
        "all found papers": False,
        "rebuilt": True,
        "all reconstructions": True,
    }
    only_found = pd.DataFrame([found])
    assert "Counted apart" not in totals_sentence(only_found) and "Reconstructions" not in board_markdown(only_found)


def test_scoreboard_counts_claims_by_kind_and_checks_apart():
    claims = _table(
        {
            "H1": "holds",
            "H2": "fails",
            "H3": "inconclusive",
            "S1": "holds",
            "I1": "inconclusive",
            "K1": "holds",
            "K2": "fails",
        }
    )
    bench = pd.DataFrame({"job": ["train/a", "claims"], "seconds": [10.0, 1.0], "max_rss_mb": [1.0, 1.0]})
    row = paper_row("demo", claims, bench)
    assert row["hard claims"] == "1/1/1" and row["soft claims"] == "1/0/0" and row["info claims"] == "0/0/1"
    assert row["checks passed"] == "1/2" and row["runs per claim"] == "3" and row["job time (s)"] == 11.0
    table = pd.DataFrame([row, paper_row("other", _table({"H1": "holds", "K1": "holds"}), bench)])
    total = totals_row(table)
    assert total["hard claims"] == "2/1/1" and total["checks passed"] == "2/3"
    assert "Hard claims: 2 hold, 1 fail, 1 inconclusive" in totals_sentence(table)
    # the share of hard and soft claims decided (info and checks not counted), per paper and in all
    assert row["decided"] == "3/4 (75%)" and total["decided"] == "4/5 (80%)"
    assert "Decided (hold or fail): 4/5 (80%)" in totals_sentence(table)
    assert paper_row("none", _table({"I1": "holds", "K1": "holds"}), bench)["decided"] == "n/a"
    assert "| decided |" in board_markdown(table)


def test_claims_markdown_shows_verdicts_and_the_summary_line():
    defs = [
        definition(claim_id="C1"),
        definition(claim_id="C2", comparison="<="),
        definition(claim_id="K1", kind="check"),
    ]
    table = decide(defs, [Measured("C1", 2.0, 1), Measured("C2", 2.0, 1), Measured("K1", float("nan"), 0)])
    text = report.claims_markdown(table)
    assert "hard claims 1/1/0" in text and "passed: 0/1" in text
    assert "| C1 |" in text and "holds" in text and "**fails**" in text and "*inconclusive*" in text


def test_clopper_pearson_matches_known_values_and_refuses_impossible_counts():
    low, high = clopper_pearson(0, 100)
    assert low == 0.0 and high == pytest.approx(0.0362, abs=1e-4)  # the "rule of three" region
    low, high = clopper_pearson(5, 10)
    assert low == pytest.approx(0.1871, abs=1e-4) and high == pytest.approx(0.8129, abs=1e-4)
    assert clopper_pearson(10, 10) == (pytest.approx(0.6915, abs=1e-4), 1.0)
    assert all(math.isnan(v) for v in clopper_pearson(0, 0))
    with pytest.raises(ValueError, match="0 <= events <= n"):
        clopper_pearson(11, 10)


def test_beyond_null_is_the_margin_over_the_harder_of_null_and_threshold():
    # seed 0: the null passes (0.4 > 0), so the value is the paired difference; seed 1: the null fails, the bar is 0;
    # seed 2 has no null, seed 3 no value: both dropped; a NaN on either side drops the seed
    assert beyond_null({0: 1.0, 1: 1.0, 2: 1.0}, {0: 0.4, 1: -0.5, 3: 0.0}) == pytest.approx({0: 0.6, 1: 1.0})
    assert beyond_null({0: 0.1}, {0: np.nan}) == {}
    assert beyond_null({0: 1.0}, {0: 0.2}, threshold=0.5) == pytest.approx({0: 0.5})
