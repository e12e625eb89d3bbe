"""Paper 11's paper-scale block (issue 38): the networks its jobs build from it are built (the checks of
``ECFRConfig``, ``ECFR`` and CFM at 256 pixels), and a value a job would refuse is refused when the workflow is
parsed, naming the key."""

from __future__ import annotations

import copy

import pytest
import yaml

from conftest import ROOT
from neurips26.ecfr import experiment, real
from neurips26.ecfr.model import n_parameters

PAPER = yaml.safe_load((ROOT / "config/ecfr.yaml").read_text())["paper"]


def test_the_paper_block_builds_every_network_its_jobs_build():
    experiment.check_config(PAPER)
    for dataset in PAPER["datasets"].values():
        for method in PAPER["methods"]:
            net = experiment.build_model(method, PAPER["teacher"], PAPER["model"], PAPER["cfm"], dataset["size"], 0)
            if method != "cfm":
                assert net.cfg.image_size == 256 and round(n_parameters(net) / 1e6, 1) == 41.6


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda c: c["datasets"]["mvtec3d"].update(classes=["bagel", "donut"]), r"unknown mvtec3d classes \['donut'\]"),
        (lambda c: c["model"].update(heads=[8, 4, 2, 3]), "model.decoder width 64 is not a multiple of its 3 heads"),
        (lambda c: c["model"].update(agents=[49, 49, 16, 10]), "model.agents must be squares"),
        (lambda c: c["datasets"]["mvtec3d"].update(size=200), "dataset mvtec3d: size 200 is not a multiple of 32"),
    ],
)
def test_a_paper_block_a_job_would_refuse_is_refused_at_parse_time_naming_the_key(edit, match):
    cfg = copy.deepcopy(PAPER)
    edit(cfg)
    with pytest.raises(ValueError, match=match):
        experiment.check_config(cfg)


def test_the_paper_steps_are_500_epochs_of_the_training_normals_the_reader_merges():
    """The reference trains 500 epochs of batch 16 (ADer drops the last partial batch) on MVTec 3D-AD's train and
    validation normals, which the data job merges too: 2,950 images, 184 steps an epoch (83,000 steps counted 2,656)."""
    normals = real.MVTEC3D_SPLIT_SIZES["train"] + real.MVTEC3D_SPLIT_SIZES["validation"]
    assert PAPER["train"]["steps"] == 500 * (normals // PAPER["train"]["batch"]) == 92000
