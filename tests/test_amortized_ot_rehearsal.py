"""Paper 18's rehearsal (issue 38): the rehearsal block derived from the paper block keeps every shape and what the
grid needs (the main L among the swept L), and each fixture is read by the paper's readers: MNIST's gzipped IDX
files (shared with paper 04) and the GPW v4 GeoTIFF written at the rehearsal's `sphere.gpw_path`."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import ROOT, assert_keeps_shapes
from neurips26.amortized_ot import data, experiment, rehearsal
from neurips26.common.config import derived_rehearsal, load_yaml
from neurips26.common.image_archives import read_idx_images

CONFIG = load_yaml(ROOT / "config/amortized_ot.yaml")
SCHEMA = load_yaml(ROOT / "workflow/schemas/amortized_ot.schema.yaml")
SHAPES = (
    "n_basis",
    "ridge",
    "main_projections",
    "ground_truth",
    "metaot.hidden",
    "digits.train_res",
    "digits.test_res",
    "colour.crop",
    "colour.colours",
    "sphere.points",
    "sphere.kappa",
    "cfm.batch_size",
    "cfm.width",
    "cfm.plans",
    "seeded_models",
)


@pytest.mark.parametrize("factor", [1, 2])
def test_the_rehearsal_block_keeps_the_shapes_and_a_complete_grid(factor):
    block = derived_rehearsal("amortized_ot", CONFIG, SCHEMA, factor)
    assert_keeps_shapes(block, CONFIG["paper"], SHAPES)
    assert (
        block["main_projections"] in block["projections"]
        and max(CONFIG["paper"]["projections"]) in block["projections"]
    )
    assert experiment.fit_seeds(block) == [2]  # one extra fit: every seeded rule still runs
    assert all(experiment.seeded_models(block, task) for task in ("digits", "colour", "sphere"))
    assert block["metaot"]["batch_size"] == 4 * factor <= block["digits"]["train_pairs"]
    assert block["sphere"]["gpw_path"] == rehearsal.GPW_FIXTURE


def test_the_mnist_fixture_is_read_by_the_idx_reader_and_deterministic(tmp_path):
    payloads = rehearsal.fixtures(1)
    assert sorted(payloads) == sorted(f"mnist/{name}" for name in rehearsal.MNIST_FILES)
    assert payloads == rehearsal.fixtures(1)  # the driver checks the bytes papers 04 and 18 serve are equal
    files = []
    for path, payload in payloads.items():
        files.append(tmp_path / path.rsplit("/", 1)[1])
        files[-1].write_bytes(payload)
    train = data.digit_images("mnist", "train", 0, [str(f) for f in files])
    test = data.digit_images("mnist", "test", 0, [str(f) for f in files])
    assert train.shape == (rehearsal.MNIST_BASE["train"], 28, 28)
    assert test.shape == (rehearsal.MNIST_BASE["t10k"], 28, 28)
    assert train.max() == 255 and train[:, :2].max() == 0  # MNIST's uint8 range, the digit off the border
    batch, _ = data.digit_pairs(train, 3, 28, seed=0)
    assert batch.x.shape == (3, 784, 2)
    labels = np.frombuffer(__import__("gzip").decompress(payloads["mnist/train-labels-idx1-ubyte.gz"])[8:], np.uint8)
    assert len(labels) == len(train) and labels.max() <= 9
    assert len(read_idx_images(tmp_path / "t10k-images-idx3-ubyte.gz")) == rehearsal.MNIST_BASE["t10k"]


def test_the_gpw_fixture_is_a_global_raster_with_no_data_that_the_reader_weights(tmp_path):
    import tifffile

    (path,) = rehearsal.local_files()
    file = tmp_path / "gpw.tif"
    file.write_bytes(rehearsal.local_files()[path])
    with tifffile.TiffFile(file) as tif:
        page = tif.pages[0]
        assert page.dtype == np.float32 and page.shape == rehearsal.GPW_SHAPE
        assert page.tags["ModelTiepointTag"].value[3:5] == (-180.0, 90.0)
        assert page.tags["GDAL_NODATA"].value == rehearsal.GPW_NODATA
    grid = data.read_population_grid(file)
    assert grid.shape == (720, 1440) and grid.min() == 0.0 and grid.max() > 0  # no-data read as empty
    points = data.fibonacci_sphere(2000)
    weights = data.population_weights(grid, points)
    assert weights.shape == (2000,) and weights.sum() == pytest.approx(1.0)
    batch = data.sphere_pairs(2, 2000, (5.0, 50.0), seed=0, supply=weights)
    assert batch.a.shape == (2, 2000)


# one job per rule whose work the plan extrapolates: the largest L, the seeded refits, every task
WORK_JOBS = {
    "amortized_ot_pairs": [{"task": t} for t in ("digits", "colour", "sphere", "cfm")],
    "amortized_ot_ground_truth": [{"task": t} for t in ("digits", "colour", "sphere", "cfm")],
    "amortized_ot_fit": [
        {"task": t, "fitted": f, "L": "512" if t == "digits" else "128"}
        for t in ("digits", "colour", "sphere", "cfm")
        for f in ("ra", "oa")
    ],
    "amortized_ot_fit_seeded": [{"task": "digits", "fitted": "oa", "L": "128", "fit_seed": "2"}],
    "amortized_ot_fit_metaot": [{"task": "digits"}, {"task": "sphere"}],
    "amortized_ot_fit_metaot_seeded": [{"task": "sphere", "fit_seed": "2"}],
    "amortized_ot_predict": [{"task": t} for t in ("digits", "colour", "sphere")],
    "amortized_ot_evaluate": [{"task": t} for t in ("digits", "colour", "sphere")],
    "amortized_ot_speed_profile": [{}],
    "amortized_ot_cfm_train": [{"plan": p} for p in ("exact", "ra", "oa", "indep")],
    "amortized_ot_cfm_train_seeded": [{"plan": "oa", "fit_seed": "2"}],
    "amortized_ot_cfm_evaluate": [{}],
}


def test_every_rule_with_a_cut_budget_has_work_that_grows_from_the_rehearsal_to_paper_scale():
    from neurips26.common.rehearsal import work_ratio

    assert set(rehearsal.PLAN.work) == set(WORK_JOBS)
    block = derived_rehearsal("amortized_ot", CONFIG, SCHEMA, 1)
    for rule, jobs in WORK_JOBS.items():
        for wildcards in jobs:
            ratio = work_ratio(rehearsal.PLAN, rule, CONFIG["paper"], block, wildcards)
            assert np.isfinite(ratio) and ratio > 1, (rule, wildcards, ratio)
    # additive: a task's pairs are its training pairs plus its test pairs once per test group
    digits = CONFIG["paper"]["digits"]
    assert rehearsal.PLAN.work["amortized_ot_ground_truth"](CONFIG["paper"], {"task": "digits"}) == (
        digits["train_pairs"] + digits["test_pairs"] * len(digits["test_res"])
    )
