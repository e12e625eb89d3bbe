"""The small model's jobs member by member (an untrained tiny ensemble: what is checked is the bookkeeping): every
member's solve and grade rows with its member columns and invalid-verdict flag, the probes' rows (a member whose
controls hold one class is recorded, not fitted) with the IAIR null, and the patching rows per member."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from fake_gpu import fake_gpu
from neurips26.common.ensemble import Ensemble
from neurips26.common.loop import job_device
from neurips26.vair.dataset import build_items
from neurips26.vair.decoding import grade
from neurips26.vair.items import render
from neurips26.vair.mechanism import patch_members, probe_members
from neurips26.vair.model import Decoder, config_for
from neurips26.vair.patching import PATCH_COLUMNS, patch_flip_rates, plus_one_sources
from neurips26.vair.probes import PROBE_COLUMNS
from neurips26.vair.problems import generate_problems
from neurips26.vair.sequences import encode_grade
from neurips26.vair.small_grading import grade_members
from neurips26.vair.small_model import vocabulary_and_context
from neurips26.vair.training import Member


@pytest.fixture(scope="module")
def run():
    # the generator's settings spelled out, so that a change of its defaults leaves these items as they are
    problems = generate_problems(10, seed=5, max_steps=3, bound=20, max_premise=6, distractor_ops=1, lone_rate=0.0)
    items = build_items(problems, np.random.default_rng(1))
    vocab, context = vocabulary_and_context([render(item) for item in items])
    members = [Member("outcome", "none", 0), Member("process", "shuffled", 1)]
    ensemble = Ensemble([Decoder(config_for("tiny", len(vocab), context, seed=m.seed)) for m in members])
    return ensemble, vocab, members, items


def test_every_member_solves_and_grades_every_item_with_its_member_columns(run):
    ensemble, vocab, members, items = run
    table = grade_members(ensemble, vocab, members, items, max_new=8)
    problems = len({item.problem_id for item in items if item.category == "VAVR"})
    assert len(table) == 2 * (problems + len(items))
    for index, member in enumerate(members):
        rows = table[table["member"] == index]
        assert set(rows["backend"]) == {f"small_{member.regime}"}
        assert set(rows["regime"]) == {member.regime} and set(rows["seed"]) == {member.seed}
        assert (rows["task"] == "grade").sum() == len(items) and (rows["task"] == "solve").sum() == problems
    grades = table[table["task"] == "grade"]
    assert grades["parsed_ok"].all() and set(grades["parsed"]) <= {0.0, 1.0, 2.0, 3.0}  # constrained to 0-3
    first = grades["raw"].str.split("\n").str[0]
    assert (grades["invalid_verdict"] == ~first.isin(["<G0>", "<G1>", "<G2>", "<G3>"])).all()
    assert not table.loc[table["task"] == "solve", "invalid_verdict"].any()


def test_a_member_whose_controls_hold_one_class_gets_rows_with_the_refusal_not_a_probe(run):
    ensemble, vocab, members, items = run
    table = probe_members(ensemble, vocab, members, items, ["outcome", "process"], test_share=0.3, C=1.0, seed=0)
    assert set(table.columns) >= {*PROBE_COLUMNS, "iair_flagged", "note", "member", "regime", "seed"}
    layers = ensemble.module(0).config.n_layers + 1
    assert len(table) == 2 * layers and list(table["layer"][:layers]) == list(range(layers))
    refused = table["note"] != ""
    assert table.loc[refused, "note"].str.startswith("not fitted: a probe needs both classes").all()
    assert table.loc[refused, "auroc_controls"].isna().all()
    fitted = table[~refused]
    assert fitted["fooled_flagged"].between(0, 1).all() or fitted["fooled_flagged"].isna().all()


def test_probes_of_a_member_that_tells_valid_from_invalid_are_fitted_with_the_iair_null(run, monkeypatch):
    ensemble, vocab, members, items = run
    from neurips26.vair import mechanism
    from neurips26.vair.decoding import GradeOutput

    valid = torch.tensor([item.reasoning_valid for item in items])
    vair = torch.tensor([item.category == "VAIR" for item in items])
    grades = torch.where(valid | vair, 3, 0)  # grades every control right and is fooled by every VAIR item
    hidden = torch.randn(1, len(items), 3, 4, generator=torch.Generator().manual_seed(0))
    # layer 1 carries the IAIR class in one coordinate, +4 against -4 without noise: any fitted probe separates it,
    # whichever items the split holds out (layers 0 and 2 are noise: a probe read at the wrong layer flags ~half)
    hidden[0, :, 1, 0] = torch.where(~valid & ~vair, 4.0, -4.0)
    fake = GradeOutput(grades[None], grades[None], grades[None] < 0, torch.zeros(1, len(items), 4), hidden)
    monkeypatch.setattr(mechanism, "grade", lambda *args, **kwargs: fake)
    table = probe_members(ensemble, vocab, members[:1], items, ["outcome"], test_share=0.5, C=1.0, seed=0)
    assert (table["note"] == "").all() and (table["n_fooled"] == int(vair.sum())).all()
    assert table.loc[1, "iair_flagged"] == 1.0  # the separating layer flags every held-out IAIR control


def test_patching_rows_per_member_of_the_chosen_regimes(run):
    ensemble, vocab, members, items = run
    table = patch_members(ensemble, vocab, members, items, ["process"], seed=0)
    assert set(table.columns) >= {*PATCH_COLUMNS, "member", "regime", "heldout_flaw", "seed"}
    assert set(table["member"]) == {1} and set(table["condition"]) == {"answer", "control"}
    assert -1 in set(table["layer"])  # every layer at once
    with pytest.raises(ValueError, match="no member of the regimes"):
        patch_members(ensemble, vocab, members[:1], items, ["process"], seed=0)


def test_one_grading_pass_feeds_the_grade_rows_and_the_probes(run):
    """The evaluation job grades once (decoding.grade with hidden states) and both parts read it: the rows equal
    those of grading again, and a doctored pass (every verdict 3) is what the rows show."""
    ensemble, vocab, members, items = run
    graded = grade(ensemble, vocab, [render(item) for item in items], hidden=True)
    shared = grade_members(ensemble, vocab, members, items, max_new=8, graded=graded)
    alone = grade_members(ensemble, vocab, members, items, max_new=8)
    assert shared.equals(alone)
    args = (ensemble, vocab, members, items, ["outcome", "process"], 0.3, 1.0, 0)
    assert probe_members(*args, graded).equals(probe_members(*args))
    doctored = replace(graded, grades=torch.full_like(graded.grades, 3))
    rows = grade_members(ensemble, vocab, members, items, max_new=8, graded=doctored)
    assert (rows.loc[rows["task"] == "grade", "parsed"] == 3.0).all()
    with pytest.raises(ValueError, match="members x"):
        grade_members(ensemble, vocab, members, items[:-1], max_new=8, graded=graded)


@pytest.mark.gpu_rule("vair_evaluate_small")
def test_the_evaluation_runs_on_the_jobs_device(run):
    """Solving (greedy decoding), grading, probes and patching with the ensemble on the job's (fake) device: an input
    left on the CPU fails as it would on a GPU."""
    ensemble, vocab, members, items = run
    with fake_gpu() as device:
        assert job_device() == device
        placed = Ensemble([ensemble.module(index).to(device) for index in range(len(members))])
        graded = grade(placed, vocab, [render(item) for item in items], hidden=True)
        rows = grade_members(placed, vocab, members, items, max_new=4, graded=graded)
        probes = probe_members(placed, vocab, members, items, ["outcome"], 0.3, 1.0, 0, graded)
        model = placed.module(0).eval()
        vair = [render(item) for item in items if item.category == "VAIR"]
        counts = patch_flip_rates(model, vocab, vair[:3], seed=0)[0]
        sources = plus_one_sources(vocab, *_answer_sites(vocab, vair[:3], device))  # the patch sources, on the device
    assert len(rows) == len(members) * (len(items) + len({i.problem_id for i in items if i.category == "VAVR"}))
    assert len(probes) and len(counts) == 2 * (model.config.n_layers + 1) and sources.device == device


def _answer_sites(vocab, texts, device):
    seq = encode_grade(vocab, texts, [0] * len(texts))
    return seq.tokens.to(device), seq.answer.to(device), seq.lengths.to(device)
