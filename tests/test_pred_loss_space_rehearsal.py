"""Paper 01's rehearsal (issue 38): the rehearsal block derived from the paper block passes the paper's own checks
and keeps every shape, and each fixture is read by the paper's readers: the CIFAR-10 python archive (shared with
paper 04), Imagenette's JPEG archive, and the FID Inception-v3 weights at their real shapes (loaded strictly: the
rehearsal itself runs no true FID, see rehearsal.py)."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import ROOT, assert_keeps_shapes, written_fixture
from neurips26.common.config import derived_rehearsal, load_yaml
from neurips26.pred_loss_space import data, experiment, inception, rehearsal

CONFIG = load_yaml(ROOT / "config/pred_loss_space.yaml")
SCHEMA = load_yaml(ROOT / "workflow/schemas/pred_loss_space.schema.yaml")
SHAPES = ("archs", "noise", "features.dim", "train.lr", "train.ema")


@pytest.mark.parametrize("factor", [1, 2])
def test_the_rehearsal_block_passes_the_papers_checks_and_keeps_its_shapes(factor):
    block = derived_rehearsal("pred_loss_space", CONFIG, SCHEMA, factor)
    experiment.check_config(block)
    assert_keeps_shapes(block, CONFIG["paper"], SHAPES)
    for name, dataset in block["datasets"].items():  # kinds and image sizes kept, only item counts cut
        paper = CONFIG["paper"]["datasets"][name]
        assert experiment.data_shape(dataset) == experiment.data_shape(paper) and dataset["kind"] == paper["kind"]
    kept = {(r["dataset"], r["arch"]) for r in block["regimes"]}
    assert kept == set(rehearsal.REGIMES)
    assert {r["arch"] for r in block["regimes"]} == {"unet_tiny", "jit_tiny_bn", "mlp_toy"}
    assert block["train"]["batch"] == 8 * factor and block["features"]["batch"] == 8 * factor
    assert len(experiment.job_ids(block)) == 3


@pytest.fixture(scope="module")
def payloads():
    return rehearsal.fixtures(1)


def test_the_cifar10_fixture_is_read_by_the_archive_reader(tmp_path, payloads):
    assert rehearsal.cifar10_archive(1) == payloads[experiment.DOWNLOADS["cifar10"]]  # the same bytes every build
    archive = str(written_fixture(tmp_path, payloads, experiment.DOWNLOADS["cifar10"]))
    x_train, y_train, x_test, y_test = data.cifar10_from_archive(archive)
    assert x_train.shape == (5 * rehearsal.CIFAR_BASE, 3, 32, 32) and x_test.shape == (rehearsal.CIFAR_BASE, 3, 32, 32)
    assert x_train.dtype == np.float32 and x_train.min() >= -1 and x_train.max() <= 1 and y_train.max() <= 9
    block = derived_rehearsal("pred_loss_space", CONFIG, SCHEMA)
    arrays = data.make_dataset(block["datasets"]["cifar10"], [archive])
    assert arrays["x_train"].shape[0] == block["datasets"]["cifar10"]["n_train"] and len(y_test) == len(x_test)


def test_the_imagenette_fixture_is_cropped_resized_and_labelled(tmp_path, payloads):
    path = str(written_fixture(tmp_path, payloads, experiment.DOWNLOADS["imagenette"]))
    block = derived_rehearsal("pred_loss_space", CONFIG, SCHEMA)
    arrays = data.make_dataset(block["datasets"]["imagenette64"], [path])
    per_class = rehearsal.IMAGENETTE_BASE
    assert arrays["x_train"].shape == (block["datasets"]["imagenette64"]["n_train"], 3, 64, 64)
    assert arrays["x_test"].shape == (10 * per_class["val"], 3, 64, 64)
    assert sorted(set(arrays["y_test"])) == list(range(10))
    data.check_images(arrays["x_train"], "imagenette fixture")


def test_the_inception_weights_load_strictly_and_give_finite_pool3_features(tmp_path, payloads):
    path = str(written_fixture(tmp_path, payloads, experiment.INCEPTION))
    assert len(payloads[experiment.INCEPTION]) > 95_000_000  # the real file's shapes: 95,628,359 bytes
    net = inception.load_inception(path)
    images = np.random.default_rng(0).uniform(-1, 1, size=(2, 3, 32, 32)).astype(np.float32)
    features = inception.inception_features(net, images)
    assert features.shape == (2, inception.FEATURE_DIM) and np.isfinite(features).all()


@pytest.mark.parametrize("dataset", ["cifar10", "imagenette64", "toy_D512"])
def test_every_cut_rule_does_more_work_at_paper_scale(dataset):
    from neurips26.common.rehearsal import work_ratio

    block = derived_rehearsal("pred_loss_space", CONFIG, SCHEMA)
    wildcards = {"dataset": dataset, "arch": "unet_tiny", "pred": "x", "loss": "x", "seeds": "2"}
    ratios = {rule: work_ratio(rehearsal.PLAN, rule, CONFIG["paper"], block, wildcards) for rule in rehearsal.PLAN.work}
    for rule in ("features", "train", "sample", "evaluate"):
        assert 1 < ratios[f"pred_loss_space_{rule}"] < 1e8, rule
    assert ratios["pred_loss_space_train"] == 100000 * 128 / (2 * 8)
    assert ratios["pred_loss_space_data"] == ((65536 + 4096) / (256 + 64) if dataset == "toy_D512" else 1)
    assert ratios["pred_loss_space_report"] == 1


def test_the_rules_the_rehearsal_leaves_out_are_the_true_fid_ones():
    block = derived_rehearsal("pred_loss_space", CONFIG, SCHEMA)
    assert set(rehearsal.PLAN.not_rehearsed) == {"pred_loss_space_fid_reference"}
    assert not any(experiment.uses_inception(block, name) for name in block["datasets"])
    assert experiment.uses_inception(CONFIG["paper"], "cifar10")
