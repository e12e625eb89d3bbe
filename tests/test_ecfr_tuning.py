"""Paper 11's tuning pilot (issue 40): the quick settings are chosen on a draw no claim scores. The grid and the
configs it builds, the pick (mean over methods, first on a tie), the pilot on the job's device, and the config checks
that keep the tuning draw and seed apart from the scored ones."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest
import torch
import yaml

from conftest import ROOT
from fake_gpu import fake_gpu
from neurips26.ecfr import experiment
from neurips26.ecfr.data import draw_seed
from neurips26.ecfr.tuning import Candidate, candidate_config, candidate_teacher, candidates, pick, tune

CONFIG = yaml.safe_load((ROOT / "config/ecfr.yaml").read_text())
SMOKE, QUICK = CONFIG["smoke"], CONFIG["quick"]


def test_the_grid_runs_over_teachers_widths_and_steps_in_the_configs_order():
    grid = candidates({"teachers": ["pretext", "random"], "widths": [[8, 16, 32], [16, 32, 64]], "steps": [75, 150]})
    assert len(grid) == 8 and grid[0] == Candidate("pretext", (8, 16, 32), 75)
    assert grid[-1] == Candidate("random", (16, 32, 64), 150)
    with pytest.raises(ValueError, match=r"tuning.teachers \['imagenet'\] are unknown"):
        candidates({"teachers": ["imagenet"], "widths": [[8, 16, 32]], "steps": [10]})


@pytest.mark.parametrize("widths", [(8, 16, 32), (16, 32, 64)])
def test_a_candidates_config_passes_the_papers_checks_with_the_decoder_mirroring_its_teacher(widths):
    run = candidate_config(QUICK, Candidate("pretext", widths, 75))
    assert run["model"]["decoder"] == [2 * widths[2], widths[2], widths[1], widths[0]]
    assert run["train"]["steps"] == 75 and run["teacher"]["widths"] == list(widths)
    experiment.check_config({**QUICK, **run})


def _table(values: dict[str, list[float]]) -> pd.DataFrame:
    rows = []
    for name, scores in values.items():
        for method, score in zip(["ecfr", "same_modal", "cfm"], scores):
            rows.append({"candidate": name, "teacher": "pretext", "widths": "8/16/32", "steps": 10, "method": method,
                         "i_auroc": score})  # fmt: skip
    return pd.DataFrame(rows)


def test_the_pick_is_the_best_mean_over_methods_not_the_best_ecfr():
    table = _table({"a": [0.90, 0.50, 0.50], "b": [0.70, 0.70, 0.70]})  # a has the best ecfr, b the best mean
    assert pick(table).name == "b" and pick(table)["criterion"] == pytest.approx(0.70)
    assert pick(_table({"a": [0.6, 0.6, 0.6], "b": [0.6, 0.6, 0.6]})).name == "a"  # a tie goes to the first
    with pytest.raises(ValueError, match="non-finite"):
        pick(_table({"a": [0.6, np.nan, 0.6]}))


def test_the_random_teacher_is_the_seeded_initialisation_and_the_pretext_teacher_is_trained():
    teacher = {**SMOKE["teacher"], "steps": 2}
    a, b = candidate_teacher("random", teacher), candidate_teacher("random", teacher)
    assert all(torch.equal(a[k], b[k]) for k in a)
    trained = candidate_teacher("pretext", teacher)
    assert any(not torch.equal(a[k], trained[k]) for k in a if a[k].is_floating_point())


@pytest.mark.gpu_rule("ecfr_tune")
def test_the_pilot_trains_and_scores_every_candidate_and_method_on_the_jobs_device():
    gen = torch.Generator().manual_seed(0)
    cls = np.array(["ring", "ring", "dome", "dome"])
    train = {"rgb": torch.randn(4, 3, 64, 64, generator=gen), "depth": torch.randn(4, 3, 64, 64, generator=gen),
             "cls": cls}  # fmt: skip
    mask = np.zeros((4, 64, 64), bool)
    mask[1, 20:30, 20:30] = mask[3, 10:20, 10:20] = True
    test = {**train, "mask": mask, "defect": np.array(["good", "crack", "good", "crack"])}
    cfg = {key: SMOKE[key] for key in ("teacher", "model", "cfm", "train")}
    cfg["teacher"] = {**cfg["teacher"], "steps": 2}
    tuning = {"seed": 5, "teachers": ["random", "pretext"], "widths": [[8, 16, 32]], "steps": [2]}
    with fake_gpu():
        table = tune(cfg, tuning, ["ecfr", "same_modal", "cfm"], train, test, sigma=1.0, limit=0.3)
    assert len(table) == 2 * 3 and set(table["teacher"]) == {"random", "pretext"}
    assert table[["i_auroc", "p_auroc", "aupro"]].apply(lambda c: c.between(0, 1)).all().all()


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda c: c["tuning"].update(data_seed=c["datasets"]["synthetic"]["data_seed"] + c["seeds"][-1]),
         "tuning.data_seed .* is the data seed of a scored draw"),
        (lambda c: c["tuning"].update(seed=c["seeds"][0]), "tuning.seed .* is a scored seed"),
        (lambda c: c["tuning"].update(widths=[[8, 16, 48]]), "tuning.widths"),
    ],
)  # fmt: skip
def test_a_tuning_draw_or_seed_that_is_scored_is_refused(edit, match):
    cfg = copy.deepcopy(QUICK)
    experiment.check_config(cfg)
    edit(cfg)
    with pytest.raises(ValueError, match=match):
        experiment.check_config(cfg)


def test_a_scored_draw_is_offset_by_the_data_seed_and_the_tuning_draw_is_drawn_at_its_own():
    assert draw_seed("s2", 0) == 2 and draw_seed("s2", 10) == 12 and draw_seed("t1000", 10) == 1000
    assert draw_seed("t1000", None) == 1000  # the tuning draw's params carry no data_seed
    with pytest.raises(ValueError, match="needs the dataset's data_seed"):
        draw_seed("s2", None)
    with pytest.raises(ValueError, match="drawn per seed \\(s<seed>\\) or for tuning \\(t<data seed>\\), got 'fixed'"):
        draw_seed("fixed", 0)


def test_quick_and_smoke_tune_on_their_own_draw_and_paper_takes_the_references_settings():
    for block in (SMOKE, QUICK):
        scored = {block["datasets"]["synthetic"]["data_seed"] + s for s in block["seeds"]}
        assert block["tuning"]["data_seed"] not in scored and block["tuning"]["seed"] not in block["seeds"]
    assert "tuning" not in CONFIG["paper"]
