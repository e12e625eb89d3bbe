"""Paper 01: bad inputs are rejected before any training, with messages that name the problem."""

import copy
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, snakemake
from neurips26.pred_loss_space import experiment

CONFIG = yaml.safe_load((ROOT / "config/pred_loss_space.yaml").read_text())


@pytest.mark.parametrize("scale", ["smoke", "quick", "paper"])
def test_the_shipped_config_passes_every_check(scale):
    experiment.check_config(CONFIG[scale])
    cfg = CONFIG[scale]
    jobs = experiment.job_ids(cfg)
    groups = [experiment.seed_groups(cfg, r) for r in cfg["regimes"]]
    assert len(jobs) == len(cfg["preds"]) * len(cfg["losses"]) * sum(len(g) for g in groups)
    assert len(set(jobs)) == len(jobs)
    for regime, split in zip(cfg["regimes"], groups):  # every seed in exactly one job
        assert [s for group in split for s in group] == experiment.regime_seeds(cfg, regime)
        assert all(1 <= len(group) <= cfg["seeds_per_job"] for group in split)


def test_a_regime_may_set_its_own_seeds():
    cfg = copy.deepcopy(CONFIG["smoke"])
    cfg["regimes"] = [{**cfg["regimes"][0], "seeds": [3, 4]}]
    runs = experiment.job_ids({**cfg, "seeds_per_job": 1})
    assert {r.rsplit("/", 1)[1] for r in runs} == {"s3", "s4"}
    assert len(runs) == len(cfg["preds"]) * len(cfg["losses"]) * 2


def test_a_regimes_seeds_are_split_into_jobs_of_seeds_per_job():
    cfg = {**copy.deepcopy(CONFIG["smoke"]), "seeds": [0, 1, 2, 5, 7], "seeds_per_job": 2}
    assert experiment.seed_groups(cfg, cfg["regimes"][0]) == [[0, 1], [2, 5], [7]]
    assert {r.rsplit("/", 1)[1] for r in experiment.job_ids(cfg)} == {"s0-1", "s2-5", "s7"}
    assert experiment.parse_group("2-5") == [2, 5] and experiment.group_name([7]) == "7"
    with pytest.raises(ValueError, match="repeats a seed"):
        experiment.parse_group("1-1")
    with pytest.raises(ValueError, match="seeds joined by"):
        experiment.parse_group("1-x")


def changed(change) -> dict:
    cfg = copy.deepcopy(CONFIG["quick"])
    change(cfg)
    return cfg


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda c: c["regimes"][0].update(bottleneck=True), "jit_tiny"),
        (lambda c: c["regimes"][1].update(bottleneck=False), "jit_tiny_bn"),
        (lambda c: c["regimes"][2].update(bottleneck=False), "mlp_toy"),
        (lambda c: c["sample"].update(n=40), "at least 64 samples"),
        (lambda c: c["regimes"].append({"dataset": "cifar", "arch": "jit_tiny", "bottleneck": False}), "cifar"),
        (
            lambda c: c["regimes"].append({"dataset": "toy_D512", "arch": "jit_tiny", "bottleneck": False}),
            "mlp_toy is for toy",
        ),
        (lambda c: c["evaluate"].update(n_test=5000), "n_test"),
        (lambda c: c["preds"].append("noise"), "noise"),
        (lambda c: c["evaluate"].update(inception_fid=True), "2048-dim features of digits16: it needs at least 4096"),
    ],
)
def test_an_inconsistent_config_is_rejected_naming_the_problem(change, message):
    with pytest.raises(ValueError, match=message):
        experiment.check_config(changed(change))


def edit(repo: Path, change) -> None:
    path = repo / "config/pred_loss_space.yaml"
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data))


@pytest.mark.parametrize(
    "change, pieces",
    [
        (lambda d: d["quick"]["regimes"][0].update(bottleneck=True), ("quick", "jit_tiny", "bottleneck")),
        (lambda d: d["smoke"]["noise"].update(t_eps=0.7), ("smoke.noise.t_eps", "0.5")),
        (lambda d: d["smoke"]["sample"].update(steps=0), ("smoke.sample.steps", "minimum")),
        (lambda d: d["quick"].update(losses=["x", "noise"]), ("quick.losses.1", "x, eps, v")),
    ],
)
def test_a_bad_config_stops_snakemake_before_any_job(workflow_copy, change, pieces):
    edit(workflow_copy, change)
    out = snakemake(workflow_copy, "-n", "results/smoke/pred_loss_space/report.md", check=False)
    text = out.stdout + out.stderr
    assert out.returncode != 0 and "Select jobs to execute" not in text
    for piece in pieces:
        assert piece in text, text[-2000:]


def test_a_regime_may_set_its_own_number_of_training_steps():
    cfg = CONFIG["quick"]
    steps = {(r["dataset"], r["arch"]): r.get("steps", cfg["train"]["steps"]) for r in cfg["regimes"]}
    for (dataset, arch), expected in steps.items():
        settings = experiment.train_settings(cfg, dataset, arch)
        assert settings["steps"] == expected and settings["lr"] == cfg["train"]["lr"]


def test_an_fd_reference_set_smaller_than_twice_the_features_is_refused_at_parse_time():
    """The rehearsal found it (issue 38): n_train of 64 images for the 64-d FD proxy passed the parse-time checks,
    then the evaluate job refused a singular covariance. Now the block is refused naming the key."""
    import copy

    import pytest
    import yaml

    from conftest import ROOT
    from neurips26.pred_loss_space.experiment import check_config

    paper = yaml.safe_load((ROOT / "config/pred_loss_space.yaml").read_text())["paper"]
    check_config(paper)
    bad = copy.deepcopy(paper)
    bad["datasets"]["cifar10"]["n_train"] = 64
    with pytest.raises(ValueError, match=r"datasets.cifar10.n_train = 64 is too few"):
        check_config(bad)
