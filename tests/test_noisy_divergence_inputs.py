"""Paper 09's config: jobs and their members, and the bad inputs refused before any job."""

from __future__ import annotations

import copy

import pytest
import yaml

from conftest import ROOT, expect_config_error, planned_jobs
from neurips26.noisy_divergence import experiment

CONFIG = yaml.safe_load((ROOT / "config/noisy_divergence.yaml").read_text())


@pytest.mark.parametrize("scale", ["smoke", "quick", "paper"])
def test_every_scale_of_the_committed_config_is_accepted(scale):
    experiment.check_config(CONFIG[scale])


def test_jobs_cover_settings_x_seeds_once_in_groups_of_members_per_job():
    for scale in ("smoke", "quick", "paper"):
        cfg = CONFIG[scale]
        members = []
        for name in experiment.job_names(cfg):
            job, runs = experiment.job_members(cfg, name)
            assert 1 <= len(runs) <= cfg["members_per_job"]
            members += [(job["shape"], job["qk_norm"], job["lr_multiplier"], r["setting"], r["seed"]) for r in runs]
        expected = [
            (j["shape"], j["qk_norm"], j["lr_multiplier"], s, seed)
            for j in cfg["jobs"]
            for s in j["settings"]
            for seed in j.get("seeds", cfg["seeds"])
        ]
        assert sorted(members) == sorted(expected) and len(set(members)) == len(members)
    assert experiment.job_names(CONFIG["quick"])[:2] == ["L4d48_noqk_lr1_g0", "L4d48_noqk_lr1_g1"]
    assert len(experiment.job_names(CONFIG["paper"])) == sum(len(j["settings"]) for j in CONFIG["paper"]["jobs"]) * 4


def test_an_entry_with_its_own_seeds_joins_the_jobs_of_its_triple_and_a_repeated_run_is_refused():
    """Issue 40's review: D10 needs more seeds of two settings only; an entry with its own seeds adds them to the
    groups of its (shape, QK-norm, multiplier) instead of a second, clashing job name."""
    cfg = {**CONFIG["smoke"], "members_per_job": 4}
    cfg["jobs"] = [
        {"shape": "L2d16", "qk_norm": False, "lr_multiplier": 1, "settings": ["clean"]},
        {"shape": "L2d16", "qk_norm": False, "lr_multiplier": 1, "settings": ["insert-k5-a0.5-d0.5"], "seeds": [5, 6]},
    ]
    experiment.check_config(cfg)
    assert experiment.job_names(cfg) == ["L2d16_noqk_lr1_g0"]
    assert experiment.job_members(cfg, "L2d16_noqk_lr1_g0")[1][-1] == {"setting": "insert-k5-a0.5-d0.5", "seed": 6}
    assert experiment.seeds_of(cfg, "insert-k5-a0.5-d0.5") == [5, 6] and experiment.seeds_of(cfg, "clean") == [0, 1]
    cfg["jobs"][1]["seeds"] = [1, 5]
    cfg["jobs"][1]["settings"] = ["clean"]
    with pytest.raises(ValueError, match="repeats the run .* setting clean, seed 1"):
        experiment.check_config(cfg)


def test_a_jobs_params_carry_its_shape_and_multiplied_learning_rate():
    quick = CONFIG["quick"]
    params = experiment.job_params(quick, "L4d48_qk_lr4_g0")
    assert params["model"]["qk_norm"] and params["model"]["vocab_size"] == 512 and params["model"]["n_layers"] == 4
    assert params["train"]["lr"] == pytest.approx(quick["train"]["lr"] * 4) and "init_std" not in params["train"]
    with pytest.raises(KeyError, match="no training job 'L9d1_qk_lr1_g0'"):
        experiment.job_params(quick, "L9d1_qk_lr1_g0")


def test_noise_settings_are_the_jobs_noisy_settings_in_order():
    names = [s.name for s in experiment.settings_of(CONFIG["quick"])]
    assert names[0] == "insert-k5-a0.25-d0.5" and "clean" not in names and len(names) == len(set(names)) == 6


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda c: c["jobs"][0]["settings"].append("insert-k600-a0.5-d0.5"), "restricted noise vocabulary k600"),
        (lambda c: c["jobs"][0]["settings"].append("insert-k5-a1.0-d0.5"), "alpha must lie in [0, 1)"),
        (lambda c: c["jobs"][0]["settings"].append("insert-k5-a0.5-d1.5"), "doc_fraction must lie in [0, 1]"),
        (lambda c: c["train"].update(seq_len=128), "train.seq_len 128 exceeds shapes.L4d48.context 64"),
        (lambda c: c["jobs"][0].update(shape="L9"), "jobs[0].shape 'L9' is not among shapes"),
        (lambda c: c["jobs"].append(copy.deepcopy(c["jobs"][0])), "repeats the run of shape L4d48"),
        (lambda c: c["comparisons"].update(wide_shape="L2"), "comparisons.wide_shape 'L2' is not among shapes"),
        (lambda c: c["comparisons"].update(scale_shapes=["L4d24", "L9"]), "comparisons.scale_shapes names 'L9'"),
        (lambda c: c["comparisons"].update(scale_shapes=["L4d48", "L4d24"]), "from the smallest model to the largest"),
        (lambda c: c["corpus"].update(eot_id=600), "corpus.eot_id 600 lies outside the vocabulary"),
        (lambda c: c["train"].update(warmup=500), "train.warmup 500 must be below train.steps 200"),
        (lambda c: c["train"].update(micro_batch=3), "train.micro_batch 3 must divide train.batch_size 8"),
        (lambda c: c["train"].update(micro_batch=16), "train.micro_batch 16 must divide train.batch_size 8"),
        (lambda c: c["train"].update(precision="fp16"), "train.precision must be one of"),
        (lambda c: c["train"].update(attention="flash"), "train.attention must be one of"),
    ],
)
def test_bad_configs_are_refused_naming_the_problem(edit, message):
    cfg = copy.deepcopy(CONFIG["quick"])
    edit(cfg)
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        experiment.check_config(cfg)


def test_a_bad_config_stops_snakemake_before_any_job(workflow_copy):
    path = workflow_copy / "config/noisy_divergence.yaml"
    cfg = yaml.safe_load(path.read_text())
    cfg["smoke"]["jobs"][0]["settings"].append("insert-k5-a1.5-d0.5")
    path.write_text(yaml.safe_dump(cfg))
    expect_config_error(
        workflow_copy,
        "results/smoke/noisy_divergence/report.md",
        must_contain=("config/noisy_divergence.yaml", "smoke", "alpha must lie in [0, 1)"),
    )


def test_the_smoke_dag_injects_each_setting_once_and_trains_each_job(workflow_copy):
    jobs = planned_jobs(workflow_copy, "results/smoke/noisy_divergence/report.md", config=("scale=smoke",))
    smoke = CONFIG["smoke"]
    assert jobs["noisy_divergence_inject"] == len(experiment.settings_of(smoke))
    assert jobs["noisy_divergence_train"] == len(experiment.job_names(smoke))


def test_the_smoke_and_quick_scales_keep_the_path_of_their_recorded_numbers():
    """One micro-batch, float32 and explicit attention: the code path their results were produced by."""
    for scale in ("smoke", "quick"):
        train = CONFIG[scale]["train"]
        assert (train["micro_batch"], train["precision"], train["attention"]) == (
            train["batch_size"],
            "fp32",
            "explicit",
        )
