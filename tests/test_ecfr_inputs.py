"""Paper 11's config, runs and jobs, and the bad inputs refused: a bad config before any job, bad data (RGB and depth
of different sizes, a mask that does not match its image, a class without normal training images) by the data job's
checks, with invalid (NaN) depth masked and counted."""

from __future__ import annotations

import copy
import re

import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import ROOT, expect_config_error, planned_jobs
from neurips26.ecfr import experiment
from neurips26.ecfr.data import check_classes, check_sample, check_split, make_split
from neurips26.ecfr.training import prepare

CONFIG = yaml.safe_load((ROOT / "config/ecfr.yaml").read_text())


def test_every_scale_of_the_config_passes_its_checks():
    for scale in ("smoke", "quick", "paper"):
        experiment.check_config(CONFIG[scale])


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda c: c.update(seeds=[0, 0]), "seeds repeat"),
        (lambda c: c.update(per_class_methods=["ecfr", "ecfr"]), "per_class_methods repeat"),
        (lambda c: c.update(methods=["ecfr", "cfm"]), "per_class_methods \\['same_modal'\\] are not among the methods"),
        (lambda c: c["model"].update(decoder=[256, 128, 64, 32]), "must mirror teacher.widths"),
        (lambda c: c["model"].update(heads=[3, 2, 1, 1]), "width 128 is not a multiple of its 3 heads"),
        (lambda c: c["model"].update(agents=[5, 4, 4, 4]), "agents must be squares"),
        (lambda c: c["datasets"]["synthetic"].update(size=48), "size 48 is not a multiple of 32"),
        (lambda c: c["datasets"]["synthetic"].update(classes=["ring", "torus"]), "unknown classes \\['torus'\\]"),
        (lambda c: c["datasets"]["synthetic"].update(train_per_class=0), "every class needs normal training images"),
        (lambda c: c["comparisons"].update(primary="mvtec3d"), "comparisons.primary 'mvtec3d' is not a dataset"),
        (lambda c: c.update(methods=["ecfr", "same_modal"]), "comparisons.mapping 'cfm' is not among the methods"),
        (lambda c: c["comparisons"].update(single_modality={"bump_depth": "depth"}), "must name the primary synthetic"),
        (lambda c: c["datasets"]["synthetic"].update(defects=["crack", "hole"]), "must name the primary synthetic"),
        (lambda c: c.update(per_class_seeds=[0, 9]), "per_class_seeds \\[9\\] are not among the seeds"),
        (lambda c: c.update(per_class_seeds=[1, 1]), "per_class_seeds repeat"),
        (lambda c: c["comparisons"].update(same_modal="cfm"), "same_modal_null refits 'same_modal'"),
    ],
)
def test_a_bad_config_is_refused_naming_the_problem(edit, match):
    cfg = copy.deepcopy(CONFIG["quick"])
    edit(cfg)
    with pytest.raises(ValueError, match=match):
        experiment.check_config(cfg)


def test_the_runs_are_every_method_and_the_null_unified_on_every_seed_and_per_class_on_the_per_class_seeds():
    quick = CONFIG["quick"]
    runs = experiment.runs(quick)
    unified = len(quick["methods"]) + 1  # the methods and C1's null (the same-modal refit)
    assert len(runs) == unified * len(quick["seeds"]) + len(quick["per_class_methods"]) * len(quick["per_class_seeds"])
    assert ("synthetic", "ecfr", "per_class", 2) in runs and ("synthetic", "cfm", "per_class", 0) not in runs
    assert ("synthetic", "same_modal_b", "unified", 5) in runs and ("synthetic", "ecfr", "per_class", 5) not in runs
    assert not any(m == "same_modal_b" and setting == "per_class" for _, m, setting, _ in runs)
    smoke = CONFIG["smoke"]  # no null and no per_class_seeds: every seed, as before
    assert len(experiment.runs(smoke)) == 5 * len(smoke["seeds"])


def test_quick_decides_the_unified_comparisons_on_six_seeds_with_twice_the_test_images():
    """Issue 41: three seeds (t multiplier 4.30) and 10 normal + 4 defective images per type and class left C1 and C4
    undecided; the unified runs now have six seeds, the test sets twice the images, and the per-class models (C5
    only, five unified models' cost each) keep three seeds, so that the job time stays about the same."""
    quick = CONFIG["quick"]
    assert quick["seeds"] == [0, 1, 2, 3, 4, 5] and quick["per_class_seeds"] == [0, 1, 2]
    synthetic = quick["datasets"]["synthetic"]
    assert (synthetic["test_good_per_class"], synthetic["test_per_defect"]) == (20, 8)
    assert quick["comparisons"]["same_modal_null"] == "same_modal_b"


def test_the_null_refit_is_the_same_modal_network_from_another_initialisation():
    from neurips26.ecfr.names import NULL_SEED_OFFSET, cross_modal, train_seed

    assert not cross_modal("same_modal_b") and not cross_modal("same_modal") and cross_modal("ecfr")
    assert train_seed("same_modal_b", 3) == 3 + NULL_SEED_OFFSET and train_seed("same_modal", 3) == 3
    teacher, model = CONFIG["smoke"]["teacher"], CONFIG["smoke"]["model"]
    a = experiment.build_model("same_modal", teacher, model, CONFIG["smoke"]["cfm"], 64, 0)
    b = experiment.build_model("same_modal_b", teacher, model, CONFIG["smoke"]["cfm"], 64, 0)
    assert a.cfg.cross is False and b.cfg.cross is False
    # fitted from another seed: same shapes, other weights
    train = {**CONFIG["smoke"]["train"], "steps": 2, "batch": 2}
    cfg = {**{k: CONFIG["smoke"][k] for k in ("teacher", "model", "cfm")}, "train": train}
    split = make_split(["ring"], 2, 0, [], 64, 0.0, seed=0)
    rgb, depth = prepare(split["rgb"] / 255, split["depth"])
    fitted = {m: experiment.fit_run(m, "unified", 0, rgb, depth, split["cls"], cfg, None)[0]["all"]
              for m in ("same_modal", "same_modal_b")}  # fmt: skip
    assert fitted["same_modal"].keys() == fitted["same_modal_b"].keys()
    assert any(not np.allclose(v, fitted["same_modal_b"][k]) for k, v in fitted["same_modal"].items()
               if v.is_floating_point())  # fmt: skip


def test_a_per_class_model_takes_the_unified_steps_or_its_share_of_them_as_its_budget_says():
    assert experiment.class_steps(150, 12, 60, "steps") == 150  # equal steps per model
    assert experiment.class_steps(150, 12, 60, "epochs") == 30 and experiment.class_steps(150, 10, 60, "epochs") == 25
    assert experiment.class_steps(10, 1, 60, "epochs") == 1
    with pytest.raises(ValueError, match="unknown per-class budget 'compute'"):
        experiment.class_steps(10, 1, 60, "compute")


def test_quick_per_class_models_train_as_many_steps_as_the_unified_model_and_paper_as_many_epochs():
    """Issue 40: at quick scale a per-class model sharing the unified model's steps trained 30 steps against 150, so
    the unified - per-class gap (C5) measured under-training; the paper's protocol is 500 epochs for every model."""
    assert CONFIG["quick"]["train"]["per_class"] == CONFIG["smoke"]["train"]["per_class"] == "steps"
    assert CONFIG["paper"]["train"]["per_class"] == "epochs"
    train = {**CONFIG["smoke"]["train"], "steps": 3, "batch": 2}
    cfg = {**{k: CONFIG["smoke"][k] for k in ("teacher", "model", "cfm")}, "train": train}
    split = make_split(["ring", "dome"], 2, 0, [], 64, 0.0, seed=0)
    rgb, depth = prepare(split["rgb"] / 255, split["depth"])
    _, rows = experiment.fit_run("ecfr", "per_class", 0, rgb, depth, split["cls"], cfg, None)
    steps = pd.DataFrame(rows).groupby("group")["step"].max()
    assert steps.to_dict() == {"dome": 3, "ring": 3}


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [("size", 40, "dataset synthetic: size 40 is not a multiple of 32"),
     ("train_per_class", 0, "every class needs normal training images")],
)  # fmt: skip
def test_a_bad_config_stops_snakemake_before_any_job(workflow_copy, key, value, message):
    path = workflow_copy / "config/ecfr.yaml"
    cfg = yaml.safe_load(path.read_text())
    cfg["smoke"]["datasets"]["synthetic"][key] = value
    path.write_text(yaml.safe_dump(cfg))
    target = "results/smoke/ecfr/report.md"
    expect_config_error(workflow_copy, target, must_contain=("config/ecfr.yaml", "smoke", message))


def test_the_smoke_dag_trains_every_run_once_and_evaluates_once_per_dataset(workflow_copy):
    jobs = planned_jobs(workflow_copy, "results/smoke/ecfr/report.md", config=("scale=smoke",))
    smoke = CONFIG["smoke"]
    assert jobs["ecfr_train"] == len(experiment.runs(smoke)) == 5 * len(smoke["seeds"])
    assert jobs["ecfr_evaluate"] == jobs["ecfr_data"] == len(smoke["datasets"])
    assert jobs["ecfr_teacher"] == jobs["ecfr_complexity"] == 1
    assert "ecfr_tune" not in jobs and "ecfr_tuning_data" not in jobs  # the pilot is no part of the report


def test_the_tuning_pilot_draws_its_own_data_and_trains_nothing_that_is_scored(workflow_copy):
    jobs = planned_jobs(workflow_copy, "results/smoke/ecfr/tuning/tuning.md", config=("scale=smoke",))
    assert jobs == {"ecfr_tuning_data": 1, "ecfr_tune": 1}
    # a tuning draw of a real dataset (one fixed draw, the scored one) is refused before any job, naming it
    target = "results/paper/ecfr/tuning/data/mvtec3d/t1000/train.npz"
    expect_config_error(workflow_copy, target, "--config", "scale=paper", must_contain=("synthetic set only",))


def test_the_tuning_pilots_params_carry_what_its_scripts_read():
    """The pilot fits unified models and scores I-AUROC with sigma and the AUPRO limit: a change of `per_class` or
    of the report's example count does not rerun it; its draw does not carry the scored draws' data seed."""
    rules = (ROOT / "rules/ecfr.smk").read_text()
    tune = rules.split("rule ecfr_tune:")[1].split("\nrule ")[0]
    params = re.findall(r"^ {8}(\w+)=", tune.split("params:")[1], re.M)
    script = (ROOT / "scripts/ecfr/tune.py").read_text()
    assert sorted(params) == sorted(set(re.findall(r"\bp\.(\w+)", script)))
    assert "ec_tuning_train" in tune and 'paper_params("ecfr", "evaluate")' not in tune
    functions = (ROOT / "rules/functions/ecfr.smk").read_text()
    assert '"per_class"' in functions.split("def ec_tuning_train")[1].split("\ndef ")[0]
    data = rules.split("rule ecfr_tuning_data:")[1].split("\nrule ")[0]
    assert "dataset=ec_tuning_dataset_params" in data


def _split(**kwargs):
    return make_split(["ring", "dome"], 2, 1, ["hole", "contamination"], 64, 0.0, seed=0)


def test_rgb_and_depth_of_different_sizes_are_refused():
    split = _split()
    with pytest.raises(ValueError, match=r"RGB \(64, 64\) and depth \(64, 48\) differ in size \(test image 0\)"):
        check_sample(split["rgb"][0], split["depth"][0][:, :48], None, "test image 0")
    split["depth"] = split["depth"][:, :, :48]
    with pytest.raises(ValueError, match="differ in size"):
        check_split(split, "test", train=False)


def test_a_mask_that_does_not_match_its_image_is_refused():
    split = _split()
    with pytest.raises(ValueError, match=r"mask \(32, 32\) does not match the image \(64, 64\)"):
        check_sample(split["rgb"][0], split["depth"][0], split["mask"][0][:32, :32])
    with pytest.raises(ValueError, match="mask is not binary"):
        check_sample(split["rgb"][2], split["depth"][2], split["mask"][2].astype(float) * 0.5)  # a hole's mask
    split["mask"] = split["mask"][:-1]
    with pytest.raises(ValueError, match="8 RGB images against 7 entries of mask"):
        check_split(split, "test", train=False)


def test_a_test_split_needs_normal_and_defective_images_and_a_train_split_only_normals():
    split = _split()
    with pytest.raises(ValueError, match="the training split holds 4 defective images"):
        check_split(split, "train", train=True)
    normal = {k: v[split["defect"] == "good"] for k, v in split.items()}
    with pytest.raises(ValueError, match="needs normal and defective images, got 0 of 4 defective"):
        check_split(normal, "test", train=False)


def test_a_class_without_normal_training_images_is_refused_before_training():
    train = make_split(["ring"], 2, 0, [], 64, 0.0, seed=0)
    test = make_split(["ring", "dome"], 1, 1, ["hole"], 64, 0.0, seed=1)
    with pytest.raises(ValueError, match="synthetic: classes \\['dome'\\] have no normal training images"):
        check_classes(train, test, "synthetic")
    check_classes(test, train, "synthetic")  # every training class may be tested or not


def test_scoring_refuses_a_class_without_its_model_and_a_model_that_does_not_match_its_network():
    cfg = {k: CONFIG["smoke"][k] for k in ("teacher", "model", "cfm", "train")}
    split = make_split(["ring"], 2, 0, [], 64, 0.0, seed=0)
    rgb, depth = prepare(split["rgb"] / 255, split["depth"])
    states, _ = experiment.fit_run("ecfr", "per_class", 0, rgb, depth, split["cls"], cfg, None)
    with pytest.raises(ValueError, match="no per-class model for test classes \\['dome'\\]"):
        experiment.score_run("ecfr", states, rgb, depth, np.array(["ring", "dome"]), cfg, None, 1.0)
    renamed = {"ring": {k.replace("decoder.", "dec."): v for k, v in states["ring"].items()}}
    with pytest.raises(ValueError, match="the ecfr model of 'ring' does not match its network"):
        experiment.score_run("ecfr", renamed, rgb, depth, split["cls"], cfg, None, 1.0)


def test_masks_must_agree_with_the_labels():
    split = _split()
    empty = dict(split, mask=split["mask"].copy())
    empty["mask"][2] = False  # a hole without its mask
    with pytest.raises(ValueError, match="1 defective image with an empty mask\\(s\\), first image 2"):
        check_split(empty, "test", train=False)
    marked = dict(split, mask=split["mask"].copy())
    marked["mask"][0, 5, 5] = True  # a normal image with a marked pixel
    with pytest.raises(ValueError, match="1 normal image with a marked mask\\(s\\), first image 0"):
        check_split(marked, "test", train=False)


def test_invalid_depth_is_counted_and_masked_to_zero_before_normalisation():
    split = make_split(["ring"], 3, 0, [], 64, 0.05, seed=0)
    invalid = check_split(split, "train", train=True)
    assert invalid == int(np.isnan(split["depth"]).sum()) and 0.03 < invalid / split["depth"].size < 0.07
    _, depth = prepare(split["rgb"] / 255, split["depth"])
    assert np.isfinite(depth.numpy()).all()
    raw = depth[:, 0].numpy() * 0.229 + 0.485
    z = np.nan_to_num(split["depth"], nan=0.0)
    zero = (0 - z.min((1, 2))) / (z.max((1, 2)) - z.min((1, 2)))  # where 0 lands after each image's min-max
    for i in range(3):
        assert np.allclose(raw[i][np.isnan(split["depth"][i])], zero[i], atol=1e-5)


def test_the_configs_header_names_only_step_counts_the_config_uses():
    """The header said quick trains 200 steps long after quick moved to 150 (issue 40): every "<n> steps" it states
    must be a step count of some block (training, teacher pretraining, a tuning candidate)."""
    header = (ROOT / "config/ecfr.yaml").read_text().split("\nsmoke:")[0]
    stated = {int(n.replace(",", "")) for n in re.findall(r"(\d[\d,]*) steps", header)}
    used = set()
    for block in CONFIG.values():
        used |= {block["train"]["steps"], block["teacher"].get("steps", 0), *block.get("tuning", {}).get("steps", [])}
    assert stated and stated <= used, sorted(stated - used)
