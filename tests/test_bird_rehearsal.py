"""Paper 04's rehearsal (issue 38): the rehearsal block derived from the paper block passes the paper's own checks
and keeps every shape, and its fixtures (MNIST's IDX files from paper 18's builder, CIFAR-10's archive from paper
01's) are read by the paper's loaders into 32 px images."""

from __future__ import annotations

import pytest

from conftest import ROOT, assert_keeps_shapes
from neurips26.amortized_ot import rehearsal as aot_rehearsal
from neurips26.bird import experiment, loaders, rehearsal
from neurips26.common.config import derived_rehearsal, load_yaml
from neurips26.pred_loss_space import rehearsal as pls_rehearsal

CONFIG = load_yaml(ROOT / "config/bird.yaml")
SCHEMA = load_yaml(ROOT / "workflow/schemas/bird.schema.yaml")
SHAPES = ("restriction", "windows", "sample.windows", "networks.archs", "networks.dataset", "thresholds", "cost.window")


@pytest.mark.parametrize("factor", [1, 2])
def test_the_rehearsal_block_passes_the_papers_checks_and_keeps_its_shapes(factor):
    block = derived_rehearsal("bird", CONFIG, SCHEMA, factor)
    experiment.check_config(block)
    assert_keeps_shapes(block, CONFIG["paper"], SHAPES)
    for name, dataset in block["datasets"].items():
        assert experiment.image_size(dataset) == experiment.image_size(CONFIG["paper"]["datasets"][name])
    assert block["networks"]["train"]["batch"] == 8 * factor and len(experiment.network_runs(block)) == 2
    assert len(experiment.information_runs(block)) == len(block["datasets"])  # one N per dataset


def test_the_fixtures_are_the_other_papers_builders_bytes():
    payloads = rehearsal.fixtures(1)
    assert {k: v for k, v in payloads.items() if k.startswith("mnist/")} == aot_rehearsal.fixtures(1)
    assert payloads["cifar10/cifar-10-python.tar.gz"] == pls_rehearsal.cifar10_archive(1)


def test_mnist_and_cifar10_fixtures_load_at_32_px_with_enough_images_for_every_job(tmp_path):
    block = derived_rehearsal("bird", CONFIG, SCHEMA)
    files = {}
    for path, payload in rehearsal.fixtures(1).items():
        files[path] = tmp_path / path
        files[path].parent.mkdir(exist_ok=True)
        files[path].write_bytes(payload)
    mnist = [str(files[f"mnist/{name}"]) for name in aot_rehearsal.MNIST_FILES if "images" in name]
    needed = max(max(block["networks"]["n_train"], *d["n_values"]) for d in block["datasets"].values())
    for name, archives in (("mnist", mnist), ("cifar10", [str(files["cifar10/cifar-10-python.tar.gz"])])):
        images = loaders.load_configured(block["datasets"][name], 0, archives)
        channels = experiment.CHANNELS[name]
        assert images.train.shape[1:] == (channels, 32, 32) and images.heldout.shape[1:] == (channels, 32, 32)
        assert len(images.train) >= needed and images.meta["normalisation"]["range"] == [-1.0, 1.0]


SCALED = ("bird_information", "bird_sample", "bird_train", "bird_calibrate", "bird_cost", "bird_theory")


@pytest.mark.parametrize("dataset", ["toeplitz32", "mnist", "cifar10"])
def test_every_cut_rule_does_more_work_at_paper_scale(dataset):
    from neurips26.common.rehearsal import work_ratio

    block = derived_rehearsal("bird", CONFIG, SCHEMA)
    wildcards = {"dataset": dataset, "n": "256", "arch": "unet_tiny", "seeds": "2"}
    ratios = {rule: work_ratio(rehearsal.PLAN, rule, CONFIG["paper"], block, wildcards) for rule in rehearsal.PLAN.work}
    for rule in SCALED:
        assert 1 < ratios[rule] < 1e8, rule
    assert ratios["bird_train"] == 100 * 16384 / 64  # epochs x n_train at one seed per job
    assert ratios["bird_data"] == (64 if dataset == "toeplitz32" else 1)  # a download is read whole at both scales
    assert ratios["bird_claims"] == ratios["bird_report"] == 1
    assert not rehearsal.PLAN.not_rehearsed  # no rule left out on purpose (the driver reports any the DAG misses)
