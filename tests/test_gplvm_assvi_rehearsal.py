"""Paper 17's rehearsal (issue 38): the block derived from the paper block passes the paper's checks at every shape
of the paper block, and the oil-flow fixture archive is read by the data job's reader into the shapes the models
are built for."""

from __future__ import annotations

import io
import tarfile

import numpy as np
import pytest

from conftest import ROOT
from neurips26.common.config import derived_rehearsal, load_yaml
from neurips26.common.rehearsal import work_ratio
from neurips26.gplvm_assvi import experiment, rehearsal
from neurips26.gplvm_assvi.data import OIL_FILES, OIL_SHAPE, check_observations, read_oil_archive

DATA = load_yaml(ROOT / "config/gplvm_assvi.yaml")
SCHEMA = load_yaml(ROOT / "workflow/schemas/gplvm_assvi.schema.yaml")
PAPER = DATA["paper"]


@pytest.mark.parametrize("factor", [1, 2])
def test_the_rehearsal_block_passes_the_papers_checks_at_the_papers_shapes(factor):
    block = derived_rehearsal("gplvm_assvi", DATA, SCHEMA, factor)
    experiment.check_config(block)
    assert block["datasets"] == PAPER["datasets"] and block["model"] == PAPER["model"]  # every shape the paper's
    assert block["methods"] == PAPER["methods"] and block["comparisons"] == PAPER["comparisons"]
    assert block["train"] == {**PAPER["train"], "steps": 2, "batch": 64 * factor}  # 128 (the paper's) at factor 2
    assert block["seeds"] == [max(PAPER["seeds"])] and block["ablation"] == {"datasets": ["oil"]}
    assert len(experiment.runs(block)) == 11  # 3 methods on each of 3 datasets and the 2 ablations on oil


def test_the_work_ratios_count_steps_samples_and_iterations():
    block = derived_rehearsal("gplvm_assvi", DATA, SCHEMA)
    train = work_ratio(rehearsal.PLAN, "gplvm_assvi_train", PAPER, block, {"dataset": "oil"})
    assert train == 10_000 * 128 / (2 * 64)
    # oil at paper scale: 5 methods x 5 seeds x (1,000 points x 128 samples + 3,600 grid points)
    evaluate = work_ratio(rehearsal.PLAN, "gplvm_assvi_evaluate", PAPER, block, {"dataset": "oil"})
    assert evaluate == pytest.approx(25 * (1000 * 128 + 3600) / (5 * (1000 * 8 + 100)))
    assert work_ratio(rehearsal.PLAN, "gplvm_assvi_pca", PAPER, block, {"dataset": "oil"}) == 50


def test_the_oil_fixture_is_the_archives_layout_and_is_read_by_the_data_jobs_reader(tmp_path):
    payloads = rehearsal.fixtures()
    assert list(payloads) == [rehearsal.OIL_ARCHIVE] and rehearsal.fixtures() == payloads  # deterministic
    payload = payloads[rehearsal.OIL_ARCHIVE]
    with tarfile.open(fileobj=io.BytesIO(payload)) as tar:
        names = tar.getnames()
        first = tar.extractfile("DataTrn.txt").readline().decode()
    assert sorted(names) == sorted(f"Data{s}{kind}.txt" for s in ("Trn", "Tst", "Vdn") for kind in ("", "Lbls"))
    assert set(OIL_FILES) <= set(names) and len(first.rstrip("\n")) == 16 * OIL_SHAPE[1]  # MATLAB's -ascii columns
    path = tmp_path / "3PhData.tar.gz"
    path.write_bytes(payload)
    oil = PAPER["datasets"]["oil"]
    data = read_oil_archive(path, oil["missing"], oil["data_seed"])
    assert data["y"].shape == experiment.data_shape(oil) == OIL_SHAPE
    check_observations(data["y"], data["mask"])
    assert set(np.unique(data["coordinate"])) == {0.0, 1.0, 2.0} and 0.25 < (~data["mask"]).mean() < 0.35
    assert (data["std"] > 0).all() and np.allclose(data["y_full"].std(0), 1)
    assert 0 <= data["mean"].min() and (data["mean"] + 3 * data["std"]).max() < 1.3  # readings in [0, 1.2]
