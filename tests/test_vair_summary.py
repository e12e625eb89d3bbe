"""Paper 08's report tables on hand-made results (tests/vair_report_fixtures.py): the held-out view of the small
model, means over seeds, the probe layer choice, the paper's numbers beside ours, and the names and numbers the
report side repeats from the library."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from neurips26.vair import summary
from neurips26.vair.claims import measure_claims
from vair_report_fixtures import (
    GRADING_FUNCTIONS,
    evidence,
    patching_table,
    probes_table,
    results_evidence,
    small_results,
)


@pytest.fixture(scope="module")
def built():
    """The default scenario's evidence built by the pipeline's own functions from results rows."""
    return results_evidence()


def _cell(accuracy, backend, category, flaw, seed=summary.NO_SEED):
    rows = accuracy[(accuracy["backend"] == backend) & (accuracy["task"] == "grade") & (accuracy["seed"] == seed)]
    rows = rows[(rows["category"] == category) & (rows["flaw"] == flaw)]
    assert len(rows) == 1, rows
    return rows.iloc[0]


def test_each_flaw_type_is_graded_by_the_process_member_that_never_saw_it(built):
    """Process members grade their held-out flaw type at 0.6 and the others at 0.95 (up to the seeds' jitter of
    +1, -1, 0 items of 20): the process view reads 0.6 on every flaw type, the seen view 0.95."""
    acc = built.accuracy
    for flaw in ("missing_premise", "missing_step", "shuffled", "circular"):
        assert _cell(acc, "small_process", "VAIR", flaw)["accuracy"] == pytest.approx(0.6)
        assert _cell(acc, "small_process_seen", "VAIR", flaw)["accuracy"] == pytest.approx(0.95, abs=0.02)
        assert _cell(acc, "small_process", "VAIR", flaw, seed=0)["n"] == 20  # one member's items, not four
    # the controls of the process view pool the seed's four members
    assert _cell(acc, "small_process", "VAVR", "none", seed=1)["n"] == 4 * 20


def test_the_gap_of_a_flaw_reads_the_solves_of_the_member_that_grades_it():
    """The member holding out `shuffled` solves no problem, the others every one: the gap on shuffled items is
    0 - 0.6, on the other flaw types 1 - 0.6, and pooled over the four members' cells the solving accuracy is 3/4."""
    small = small_results()
    bad = (small["heldout_flaw"] == "shuffled") & (small["task"] == "solve")
    small.loc[bad, "correct"] = False
    tables = summary.grading_tables({}, small, {}, GRADING_FUNCTIONS)
    gap = tables["gap"]
    rows = gap[(gap["backend"] == "small_process") & (gap["seed"] == 0)].set_index("flaw")
    assert rows.loc["shuffled", "solve_accuracy"] == 0.0 and rows.loc["circular", "solve_accuracy"] == 1.0
    assert rows.loc["all", "solve_accuracy"] == pytest.approx(0.75)
    assert rows.loc["shuffled", "gap"] == pytest.approx(0.0 - 0.65)  # seed 0: heldout 0.6 + 1 item of 20


def test_a_flaw_type_without_a_member_holding_it_out_is_refused():
    small = small_results()
    small = small[~((small["regime"] == "process") & (small["heldout_flaw"] == "circular") & (small["seed"] == 1))]
    with pytest.raises(ValueError, match=r"seed 1: no process member holds out the flaw types \['circular'\]"):
        summary.small_views(small)


def test_means_over_seeds_carry_the_t_interval():
    table = pd.DataFrame({"backend": ["a"] * 4, "seed": [0, 1, 2, summary.NO_SEED], "value": [0.1, 0.2, 0.3, 9.0]})
    row = summary.seed_means(table, "value", ["backend"]).iloc[0]
    half = stats.t.ppf(0.975, 2) * 0.1 / np.sqrt(3)
    assert row["value"] == pytest.approx(0.2) and row["runs"] == 3  # the unseeded row is left out
    assert (row["low"], row["high"]) == pytest.approx((0.2 - half, 0.2 + half))


def test_the_probe_layer_is_chosen_by_cross_validation_on_training_controls_not_the_held_out_ones():
    layers = ((0.9, 0.95, 0.4, 0.9), (1.0, 0.97, 0.3, 1.0), (1.0, 0.99, 0.2, 1.0), (1.0, 0.99, 0.1, 1.0))
    probes = probes_table(layers=layers, seeds=(0,))
    probes["cv_accuracy"] = probes["layer"].map({0: 0.95, 1: 0.8, 2: 0.95, 3: 0.7})  # disagrees with held-out
    best = summary.best_probe_layers(probes)
    row = best[best["regime"] == "outcome"].iloc[0]
    assert row["layer"] == 0 and row["tied_layers"] == 2  # top cv accuracy at layers 0 and 2: the earlier one
    assert row["accuracy_controls"] == pytest.approx(0.9)  # the held-out accuracy reported at that layer
    assert (row["fooled_flagged_min_tied"], row["fooled_flagged_max_tied"]) == pytest.approx((0.2, 0.4))


def test_a_member_without_a_fitted_probe_is_named_not_scored():
    probes = probes_table(seeds=(0, 1))
    refused = probes["member"] == 1
    probes.loc[refused, ["cv_accuracy", "accuracy_controls", "auroc_controls", "fooled_flagged", "iair_flagged"]] = (
        np.nan
    )
    probes["note"] = np.where(refused, "not fitted: a probe needs both classes of controls", "")
    table = summary.probe_best_table(probes)
    assert 1 not in set(table.loc[table["note"] == "", "member"])
    assert table.loc[table["member"] == 1, "note"].iloc[0].startswith("not fitted")


def test_the_papers_numbers_stand_beside_their_counterparts(built):
    from neurips26.vair.grading import paper_numbers

    table = summary.paper_beside_ours(built.accuracy, paper_numbers())
    frontier_vair = table[(table["who"] == "frontier models") & (table["category"] == "VAIR")].iloc[0]
    assert frontier_vair["ours_backend"] == "small_outcome" and frontier_vair["paper"] == "0.479 to 0.786"
    assert frontier_vair["ours"] == pytest.approx(12 / 80)
    people = table[table["who"] == "humans"]
    assert len(people) == 4 and people["ours"].isna().all() and people["note"].str.contains("not reproducible").all()
    prm = table[table["who"].str.startswith("PRM") & (table["category"] == "VAIR")].iloc[0]
    assert prm["ours_backend"] == "small_process" and prm["ours"] == pytest.approx(0.6)


def test_the_invalid_verdict_rate_is_reported_per_member_seed():
    small = small_results()
    flag = (small["regime"] == "outcome") & (small["seed"] == 2) & (small["task"] == "grade")
    small.loc[small.index[flag][:12], "invalid_verdict"] = True
    rows = summary.grading_tables({}, small, {}, GRADING_FUNCTIONS)["unparseable"]
    rates = rows[rows["task"] == "grade"].set_index(["backend", "seed"])["invalid_verdict_rate"]
    assert rates["small_outcome", 2] == pytest.approx(12 / 120) and rates["small_outcome", 0] == 0.0
    assert rates["small_process", 2] == 0.0


def test_claims_on_the_built_tables_equal_those_on_the_hand_made_ones(built):
    """The claims tests decide on hand-made report tables; the pipeline's tables of the same scenario give the same
    values."""
    ids = ["C1", "C2", "C5", "C6", "C7", "K2", "K3", "K5"]
    ours = {m.claim_id: m.value for m in measure_claims(built, ids)}
    hand = {m.claim_id: m.value for m in measure_claims(evidence(), ids)}
    assert ours == pytest.approx(hand)


def test_the_names_and_numbers_repeated_from_the_library_agree():
    from neurips26.vair import grading, patching, probes

    assert summary.ALL_FLAWS == grading.ALL_FLAWS and summary.SOLVE_CATEGORY == grading.SOLVE_CATEGORY
    assert summary.ALL_LAYERS == patching.ALL_LAYERS
    assert summary.PAPER_FLIP_RATES == patching.PAPER_FLIP_RATES and summary.PAPER_PROBE == probes.PAPER_PROBE


def test_no_fitted_probe_gives_empty_tables_not_errors():
    """Smoke scale: every member's correctly graded items hold one class, so no probe is fitted."""
    probes = probes_table(seeds=(0,))
    probes.loc[:, ["cv_accuracy", "accuracy_controls", "auroc_controls", "fooled_flagged", "iair_flagged"]] = np.nan
    assert summary.best_probe_layers(probes).empty
    table = summary.patching_beside_paper(patching_table(seeds=(0,)), probes, summary.PAPER_FLIP_RATES)
    assert table.loc[table["who"] == "ours: small_outcome", "peak_probe_layer"].eq("n/a").all()


def test_the_report_tables_read_the_jobs_files(tmp_path):
    """report_tables on files as the jobs write them: the paper's totals from the counts table's `paper` column,
    interval cells, the final loss per member."""
    from types import SimpleNamespace

    from neurips26.vair.grading import paper_numbers

    ev = evidence()
    counts = pd.DataFrame(
        [("synthetic", "VAVR", "none", 10, 5, 15, 861), ("synthetic", "VAIR", "shuffled", 10, 5, 15, 259),
         ("synthetic", "VAIR", "circular", 10, 5, 15, 256), ("synthetic", "IAIR", "arithmetic_slip", 10, 5, 15, 861)],
        columns=["dataset", "category", "flaw", "train", "eval", "total", "paper"],
    )  # fmt: skip
    trace = pd.DataFrame(
        [
            (m, "outcome", "none", m, step, loss, loss, loss, 0.01)
            for m in (0, 1)
            for step, loss in ((1, 2.0), (9, 0.5))
        ],
        columns=["member", "regime", "heldout_flaw", "seed", "step", "loss", "solve_loss", "grade_loss", "lr"],
    )
    frames = {"accuracy": ev.accuracy, "gap": ev.gap, "unparseable": ev.unparseable, "counts": counts,
              "paper": summary.paper_beside_ours(ev.accuracy, paper_numbers()), "probes": ev.probes,
              "patching": ev.patching, "trace": trace,
              "shortcuts": pd.DataFrame({"view": "natural", "flaw": ["shuffled", "circular"], "n_train": 20,
                                         "n_eval": 10, "balanced_accuracy": [1.0, 0.55]})}  # fmt: skip
    paths = {}
    for name, frame in frames.items():
        paths[name] = str(tmp_path / f"{name}.parquet")
        frame.to_parquet(paths[name])
    tables = summary.report_tables(SimpleNamespace(**paths, skipped=[]), None)
    assert tables["paper_counts_total"] == {"IAIR": 861, "VAIR": 515, "VAVR": 861}
    assert tables["training_table"]["loss"].tolist() == [0.5, 0.5] and tables["skipped_table"].empty
    layer = tables["patching_layer_table"]
    cell = layer[(layer["layer"] == summary.ALL_LAYERS) & (layer["condition"] == "answer")]["flip_rate"].iloc[0]
    assert cell.startswith("0.800 [")
    assert "fooled_flagged_low" not in tables["probe_layer_table"].columns
    assert tables["shortcut_separated"] == ["shuffled (natural)"]
    assert tables["gap_table"]["flaw"].iloc[-1] == summary.ALL_FLAWS


def test_the_gap_table_puts_the_papers_statement_beside_each_flaw_and_invents_no_number():
    """One row per flaw type, the pooled row last; the paper column is qualitative per flaw and the pooled range on
    the pooled row; every backend's cell is its gap_wide cell."""
    gap = evidence().gap
    table = summary.gap_beside_paper(gap)
    wide = summary.gap_wide(gap)
    assert table["flaw"].tolist() == summary.flaw_order(gap["flaw"])
    paper = table.set_index("flaw")[summary.PAPER_COLUMN]
    assert paper["circular"] == "smallest (mostly caught)" and paper["missing_premise"] == "no per-flaw value"
    assert "0.161" in paper[summary.ALL_FLAWS] and "0.468" in paper[summary.ALL_FLAWS]
    assert not any(ch.isdigit() for flaw in ("missing_premise", "missing_step", "shuffled", "circular")
                   for ch in paper[flaw])  # fmt: skip
    first = wide.iloc[0]
    column = f"{first['dataset']}: {first['backend']}"
    assert table.set_index("flaw").loc["shuffled", column] == first["shuffled"]


def test_the_shortcut_table_sits_beside_the_small_models_vair_accuracy():
    """Per flaw: the surface baseline per view (no interval) and the small model's per-flaw VAIR accuracy (mean over
    seeds); near-perfect flaws named in the paper's flaw order, NaN (one class) never counted."""
    shortcuts = pd.DataFrame(
        [("small_model", "circular", 0.97), ("natural", "circular", 0.80), ("small_model", "missing_step", 1.0),
         ("natural", "missing_step", np.nan)],
        columns=["view", "flaw", "balanced_accuracy"],
    )  # fmt: skip
    accuracy = evidence().accuracy
    table = summary.shortcut_beside_grading(shortcuts, accuracy).set_index("flaw")
    assert table.index.tolist() == ["missing_step", "circular"]
    assert table.loc["circular", "surface_small_model"] == "0.970"
    assert table.loc["missing_step", "surface_natural"] == "n/a"
    means = accuracy[(accuracy["over"] == "seeds") & (accuracy["category"] == "VAIR") & (accuracy["task"] == "grade")]
    outcome = means[(means["backend"] == summary.SMALL["outcome"]) & (means["flaw"] == "circular")].iloc[0]
    assert table.loc["circular", summary.SMALL["outcome"]].startswith(f"{outcome['accuracy']:.3f} [")
    assert summary.shortcut_separated(shortcuts) == ["missing_step (small_model)", "circular (small_model)"]
