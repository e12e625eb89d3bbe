"""Paper 16's config, its jobs, and the bad inputs refused before any job: negative budgets or computes, allocation
fractions outside [0, 1] or not summing to 1, exponents outside the model's valid range."""

from __future__ import annotations

import copy

import pytest
import yaml

from conftest import ROOT, expect_config_error, planned_jobs
from neurips26.multistage_training import experiment
from neurips26.multistage_training.model import Allocation

CONFIG = yaml.safe_load((ROOT / "config/multistage_training.yaml").read_text())


def test_every_scale_of_the_config_passes_its_checks():
    for scale in ("smoke", "quick", "paper"):
        experiment.check_config(CONFIG[scale])


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda c: c["complementarity"].update(budgets=[-1.0, 10.0]), "complementarity.budgets must be finite"),
        (lambda c: c["ceiling"].update(budget=-5.0), "ceiling.budget must be > 0"),
        (lambda c: c["allocation"].update(budget=0.0), "allocation.budget must be > 0"),
        (lambda c: c["complementarity"].update(budgets=[0.0, 10.0]), "complementarity.budgets must be > 0"),
        (lambda c: c["allocation"].update(base_computes=[-1.0]), "allocation.base_computes must be finite and >= 0"),
        (lambda c: c["simulation"]["configs"]["sft_rl"].update(sft_share=1.5), "sft_share must lie in \\[0, 1\\]"),
        (lambda c: c["simulation"]["configs"]["sft_rl"].update(budget=-1), "sft_rl.budget must be finite and >= 0"),
        (lambda c: c["model"].update(alpha=1.0), "alpha"),
        (lambda c: c["model"].update(alpha_task=0.8), "alpha_task must be > 1 for the ceiling's power law"),
        (lambda c: c["model"].update(demo_quality=1.2), "demo_quality"),
        (lambda c: c["model"].update(reward_noise=0.5), "reward_noise"),
        (lambda c: c["ceiling"].update(window=[3000, 10000]), "ceiling.window \\[3000, 10000\\] holds 2"),
        (lambda c: c["allocation"].update(reward_noises=[0.6]), "allocation.reward_noises must lie in \\[0, 0.5\\)"),
        (lambda c: c["simulation"].update(seeds=[0, 0]), "simulation.seeds repeat"),
        (lambda c: c["ceiling"].update(budgets=[1.0e5]), "ceiling.budgets must hold two budgets > 0"),
        (lambda c: c["ceiling"].update(budgets=[1.0e5, 1.0e5]), "ceiling.budgets repeat"),
        (lambda c: c["allocation"].update(rollouts=[0, 4]), "allocation.rollouts must be distinct and >= 1"),
    ],
)
def test_a_bad_config_is_refused_naming_the_problem(edit, match):
    cfg = copy.deepcopy(CONFIG["quick"])
    edit(cfg)
    with pytest.raises(ValueError, match=match):
        experiment.check_config(cfg)


@pytest.mark.parametrize(
    ("fractions", "match"),
    [((0.5, 0.6, -0.1), "rl"), ((0.2, 0.2, 0.2), "must sum to 1"), ((1.5, 0.0, -0.5), "pretrain")],
)
def test_allocation_fractions_outside_the_simplex_are_refused(fractions, match):
    with pytest.raises(ValueError, match=match):
        Allocation(*fractions)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [("alpha", 0.9, "alpha"), ("demo_quality", -0.1, "demo_quality")],
)  # fmt: skip
def test_a_bad_config_stops_snakemake_before_any_job(workflow_copy, key, value, message):
    path = workflow_copy / "config/multistage_training.yaml"
    cfg = yaml.safe_load(path.read_text())
    cfg["smoke"]["model"][key] = value
    path.write_text(yaml.safe_dump(cfg))
    target = "results/smoke/multistage_training/report.md"
    expect_config_error(workflow_copy, target, must_contain=("config/multistage_training.yaml", message))


def test_a_threshold_edited_in_the_config_alone_stops_snakemake_before_any_job(workflow_copy):
    path = workflow_copy / "config/multistage_training.yaml"
    cfg = yaml.safe_load(path.read_text())
    cfg["smoke"]["comparisons"]["complementarity_gain"] = 0.01
    path.write_text(yaml.safe_dump(cfg))
    target = "results/smoke/multistage_training/report.md"
    message = "C1: claims file threshold 0.05, comparisons.complementarity_gain 0.01"
    expect_config_error(workflow_copy, target, must_contain=("config/multistage_training.yaml", message))


def test_the_smoke_dag_runs_each_phenomenon_and_simulation_once(workflow_copy):
    jobs = planned_jobs(workflow_copy, "results/smoke/multistage_training/report.md", config=("scale=smoke",))
    smoke = CONFIG["smoke"]
    assert jobs["multistage_training_phenomenon"] == len(experiment.PHENOMENA)
    sim = smoke["simulation"]
    assert jobs["multistage_training_simulate"] == len(sim["configs"]) * len(sim["seeds"])
