"""Paper 15's rehearsal: the derived block keeps the paper's shapes and runs both datasets; the CIFAR-10H fixtures are
read by the real readers, agree with the CIFAR-10 fixture archive and the released-probabilities check, and are the
same bytes on every build; every cut rule's work grows from the rehearsal to paper scale."""

import numpy as np
import pytest

from conftest import ROOT, assert_keeps_shapes, written_fixture
from neurips26.common.config import derived_rehearsal, load_yaml
from neurips26.common.rehearsal import work_ratio
from neurips26.softlabel_audit import rehearsal
from neurips26.softlabel_audit.cifar10h import check_against_probs, check_true_labels, read_cifar10_test, read_cifar10h
from neurips26.softlabel_audit.itemset import REAL, items_from_votes
from neurips26.softlabel_audit.labels import mode_shift_share
from neurips26.softlabel_audit.training import TrainSettings, members_grid, predict_proba, train_members

CONFIG = load_yaml(ROOT / "config/softlabel_audit.yaml")
SCHEMA = load_yaml(ROOT / "workflow/schemas/softlabel_audit.schema.yaml")
SHAPES = ("model", "conditions", "seeds", "labels", "evaluate", "comparisons", "panel")


@pytest.fixture(scope="module")
def payloads():
    return rehearsal.fixtures(1)


def test_the_rehearsal_block_keeps_the_shapes_and_both_datasets():
    block = derived_rehearsal("softlabel_audit", CONFIG, SCHEMA, 1)
    assert_keeps_shapes(block, CONFIG["paper"], SHAPES)
    assert sorted(block["datasets"]) == sorted(CONFIG["paper"]["datasets"])
    assert (
        block["train"]["batch"] == 16
        and derived_rehearsal("softlabel_audit", CONFIG, SCHEMA, 2)["train"]["batch"] == 32
    )
    assert (
        block["datasets"]["cifar10h"]["items"]
        == rehearsal.CIFAR_BASE
        < CONFIG["paper"]["datasets"]["cifar10h"]["items"]
    )


def test_the_cifar10h_fixtures_pass_the_readers_and_checks_of_the_data_job(tmp_path, payloads):
    images, labels = read_cifar10_test(written_fixture(tmp_path, payloads, "cifar10/cifar-10-python.tar.gz"))
    n = rehearsal.CIFAR_BASE
    assert images.shape == (n, 32, 32, 3) and images.dtype == np.uint8
    votes = read_cifar10h(written_fixture(tmp_path, payloads, "cifar10h/cifar10h-raw.zip"), n_items=n)
    check_against_probs(votes, np.load(written_fixture(tmp_path, payloads, "cifar10h/cifar10h-probs.npy")))
    check_true_labels(votes, labels)
    assert (votes.counts.sum(axis=1) == rehearsal.FIXTURE_ANNOTATORS).all()  # attention checks dropped
    assert 0.0 < mode_shift_share(votes.counts, labels) < 0.5  # some human modes depart from the label
    items = items_from_votes(images, labels, votes.counts, [0.7, 0.15, 0.15], 0)
    assert (items.kind == REAL).all() and not items.simulated and len(items.indices("test")) > 0


def test_the_classifier_trains_on_the_fixture_images_at_their_real_shape(tmp_path, payloads):
    images, labels = read_cifar10_test(written_fixture(tmp_path, payloads, "cifar10/cifar-10-python.tar.gz"))
    x = images[:16].astype(np.float32) / 255.0
    members = members_grid(["hard_orig"], [0])
    q = np.eye(10, dtype=np.float32)[labels[:16]][None]
    result = train_members(x, labels[:16], q, members, "convnet_tiny", TrainSettings(epochs=1, batch=8))
    assert predict_proba(result, x).shape == (1, 16, 10)


def test_the_fixtures_are_the_same_bytes_on_every_build(payloads):
    again = rehearsal.fixtures(1)
    assert again.keys() == payloads.keys() and all(again[k] == payloads[k] for k in payloads)


@pytest.mark.parametrize("dataset", ["mnist_ambiguous", "cifar10h"])
def test_every_cut_rule_has_work_that_grows_from_the_rehearsal_to_paper_scale(dataset):
    block = derived_rehearsal("softlabel_audit", CONFIG, SCHEMA, 1)
    for rule in ("softlabel_audit_data", "softlabel_audit_train", "softlabel_audit_evaluate"):
        ratio = work_ratio(rehearsal.PLAN, rule, CONFIG["paper"], block, {"dataset": dataset})
        assert np.isfinite(ratio) and ratio > 1, (rule, dataset, ratio)
