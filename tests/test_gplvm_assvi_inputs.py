"""Paper 17's config, runs and jobs, and the bad inputs refused before any job (data inputs are refused in
test_gplvm_assvi_data.py, the bound's in test_gplvm_assvi_elbo.py)."""

from __future__ import annotations

import copy

import pytest
import yaml

from conftest import ROOT, expect_config_error, planned_jobs
from neurips26.gplvm_assvi import experiment

CONFIG = yaml.safe_load((ROOT / "config/gplvm_assvi.yaml").read_text())


def test_every_scale_of_the_config_passes_its_checks():
    for scale in ("smoke", "quick", "paper"):
        experiment.check_config(CONFIG[scale])


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda c: c["datasets"]["s_curve"].update(latent_dim=0), "dataset s_curve: the latent dimension must be >= 1"),
        (lambda c: c["datasets"]["s_curve"].update(inducing=500), "dataset s_curve: 500 inducing points for 400"),
        (lambda c: c.update(seeds=[0, 0]), "seeds repeat"),
        (lambda c: c["train"].update(batch=401), "train.batch 401 exceeds dataset s_curve"),
        (lambda c: c["comparisons"].update(primary="oil"), "comparisons.primary 'oil' is not a dataset"),
        (lambda c: c.update(methods=["bgplvm_mf", "aeb_mf"]), "comparisons.proposed 'ssvi_amort' is not among"),
        (lambda c: c["datasets"]["s_curve"].update(lift="none"), "lift 'none' keeps the 3-D points"),
        (lambda c: c["ablation"].update(datasets=["oil"]), "ablation.datasets \\['oil'\\] are not datasets"),
        (lambda c: c["methods"].append("ssvi_indep"), "ssvi_indep is an ablation"),
        (lambda c: c.update(dataset_seeds={"oil": [0]}), "dataset_seeds names 'oil', not a dataset"),
        (lambda c: c.update(dataset_seeds={"s_curve": [0, 0]}), "dataset_seeds.s_curve repeat"),
    ],
)
def test_a_bad_config_is_refused_naming_the_problem(edit, match):
    cfg = copy.deepcopy(CONFIG["quick"])
    edit(cfg)
    with pytest.raises(ValueError, match=match):
        experiment.check_config(cfg)


def test_the_runs_are_every_dataset_method_and_seed_and_the_ablation_where_asked():
    quick = CONFIG["quick"]
    runs = experiment.runs(quick)
    seeds = {d: len(experiment.seeds_of(quick, d)) for d in quick["datasets"]}  # dataset_seeds override seeds
    ablation = sum(2 * seeds[d] for d in quick["ablation"]["datasets"])  # ssvi_summary and ssvi_indep
    assert len(runs) == sum(3 * n for n in seeds.values()) + ablation
    assert ("s_curve", "ssvi_amort", 2) in runs and ("s_curve", "ssvi_indep", 0) in runs
    broad = quick["comparisons"]["broad"]
    assert seeds[broad] == 10 and seeds["s_curve"] == 5  # C9's dataset: 10; the others 5 since issue 41
    assert ("s_curve_broad", "ssvi_indep", 9) in runs and ("s_curve", "ssvi_amort", 4) in runs
    assert ("s_curve", "ssvi_amort", 5) not in runs
    assert ("swiss_roll", "ssvi_indep", 0) not in runs
    assert experiment.methods_of(quick, "s_curve")[-2:] == ["ssvi_summary", "ssvi_indep"]


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [("latent_dim", 0, "dataset s_curve: the latent dimension must be >= 1, got 0"),
     ("inducing", 100, "dataset s_curve: 100 inducing points for 60 data points"),
     ("latent_dim", 13, "dataset s_curve: latent_dim 13 exceeds the data's 12 columns")],
)  # fmt: skip
def test_a_bad_config_stops_snakemake_before_any_job(workflow_copy, key, value, message):
    path = workflow_copy / "config/gplvm_assvi.yaml"
    cfg = yaml.safe_load(path.read_text())
    cfg["smoke"]["datasets"]["s_curve"][key] = value
    path.write_text(yaml.safe_dump(cfg))
    expect_config_error(
        workflow_copy, "results/smoke/gplvm_assvi/report.md", must_contain=("config/gplvm_assvi.yaml", "smoke", message)
    )


def test_the_smoke_dag_trains_every_method_and_seed_and_evaluates_once_per_dataset(workflow_copy):
    jobs = planned_jobs(workflow_copy, "results/smoke/gplvm_assvi/report.md", config=("scale=smoke",))
    smoke = CONFIG["smoke"]
    assert jobs["gplvm_assvi_train"] == len(experiment.runs(smoke)) == len(smoke["datasets"]) * 5 * len(smoke["seeds"])
    assert jobs["gplvm_assvi_evaluate"] == jobs["gplvm_assvi_pca"] == jobs["gplvm_assvi_data"] == len(smoke["datasets"])
