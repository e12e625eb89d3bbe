"""Paper 13's rehearsal: the rehearsal block derived from the paper block passes the paper's own checks and keeps
every network shape, its representatives are the paper's largest, its fixtures are the other papers' builders'
bytes, and they load through the data step's loader into train, validation and test arrays."""

from __future__ import annotations

import pytest

from conftest import ROOT, assert_keeps_shapes
from neurips26.amortized_ot import rehearsal as aot_rehearsal
from neurips26.common.config import derived_rehearsal, load_yaml
from neurips26.common.rehearsal import work_ratio
from neurips26.pred_loss_space import rehearsal as pls_rehearsal
from neurips26.spectral_zo import experiment, rehearsal

CONFIG = load_yaml(ROOT / "config/spectral_zo.yaml")
SCHEMA = load_yaml(ROOT / "workflow/schemas/spectral_zo.schema.yaml")
SHAPES = ("datasets", "methods", "alignment.hidden", "alignment.batch", "bias_variance.hidden", "bias_variance.probes",
          "bias_variance.batch", "dimension.depth", "dimension.probes", "dimension.batch", "spectral.dim",
          "spectral.hidden", "spectral.probes", "spectral.batch", "train.probes", "cost.n_inputs", "cost.batch",
          "checks.probes")  # fmt: skip
IDX = {"train_images": "train-images-idx3-ubyte.gz", "train_labels": "train-labels-idx1-ubyte.gz",
       "test_images": "t10k-images-idx3-ubyte.gz", "test_labels": "t10k-labels-idx1-ubyte.gz"}  # fmt: skip


def test_the_rehearsal_block_passes_the_papers_checks_and_keeps_its_shapes():
    block = derived_rehearsal("spectral_zo", CONFIG, SCHEMA, 1)
    experiment.check_config(block)
    assert_keeps_shapes(block, CONFIG["paper"], SHAPES)
    assert block["train"]["budget"] < CONFIG["paper"]["train"]["budget"] and len(block["train"]["seeds"]) == 1


def test_the_representatives_are_the_papers_largest():
    paper = CONFIG["paper"]
    block = derived_rehearsal("spectral_zo", CONFIG, SCHEMA, 1)
    assert block["alignment"]["probes"] == [max(paper["alignment"]["probes"])]
    assert max(block["dimension"]["widths"]) == max(paper["dimension"]["widths"])
    assert block["cost"]["widths"] == [max(paper["cost"]["widths"])]
    assert max(block["cost"]["probes"]) == max(paper["cost"]["probes"])
    widest = max(paper["train"]["datasets"], key=lambda name: rehearsal.INPUTS[paper["datasets"][name]["source"]])
    assert block["train"]["datasets"] == [widest] == ["cifar10"]
    assert list(block["train"]["groups"]) == [rehearsal.TRAIN_GROUP]
    assert block["train"]["groups"][rehearsal.TRAIN_GROUP] == paper["train"]["groups"][rehearsal.TRAIN_GROUP]
    for section in ("alignment", "bias_variance", "dimension"):
        assert set(block[section]["methods"]) <= set(paper[section]["methods"])


@pytest.mark.parametrize("factor", [1, 2])
def test_training_takes_one_step_per_run_and_its_doubled_batch_is_the_papers(factor):
    block = derived_rehearsal("spectral_zo", CONFIG, SCHEMA, factor)
    assert block["train"]["budget"] == rehearsal._one_step(block)
    assert block["train"]["batch"] * (2 // factor) == CONFIG["paper"]["train"]["batch"]


def test_the_fixtures_are_the_other_papers_builders_bytes():
    payloads = rehearsal.fixtures(1)
    assert {k: v for k, v in payloads.items() if k.startswith("mnist/")} == aot_rehearsal.fixtures(1)
    assert payloads["cifar10/cifar-10-python.tar.gz"] == pls_rehearsal.cifar10_archive(1)


@pytest.mark.parametrize("name", ["mnist", "fashion_mnist", "cifar10"])
def test_the_fixtures_load_through_the_data_step(tmp_path, name):
    for path, payload in rehearsal.fixtures(1).items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_bytes(payload)
    spec = CONFIG["paper"]["datasets"][name]
    files = ({"archive": str(tmp_path / "cifar10/cifar-10-python.tar.gz")} if name == "cifar10"
             else {key: str(tmp_path / spec["source"] / value) for key, value in IDX.items()})  # fmt: skip
    arrays = experiment.load_dataset(spec, files)
    width = 3 * 32 * 32 if name == "cifar10" else 784
    assert arrays["x_train"].shape[1] == width and arrays["x_test"].shape[1] == width
    assert 0.0 <= arrays["x_train"].min() and arrays["x_train"].max() <= 1.0 and len(arrays["x_val"]) > 0


@pytest.mark.parametrize("rule", ["spectral_zo_geometry", "spectral_zo_train"])
def test_every_cut_rule_does_more_work_at_paper_scale(rule):
    block = derived_rehearsal("spectral_zo", CONFIG, SCHEMA)
    assert work_ratio(rehearsal.PLAN, rule, CONFIG["paper"], block, {"dataset": "cifar10", "group": "spsa"}) > 1
