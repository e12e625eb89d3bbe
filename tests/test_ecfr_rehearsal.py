"""Paper 11's rehearsal (issue 38): the rehearsal block derived from the paper block passes the paper's own checks and
keeps every shape, and each fixture source is read by the paper's real readers: MVTec 3D-AD's archive into splits the
data job accepts, torchvision's ResNet-34 weights into the teacher, the Eyecandies categories as M3DM's set."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch

from conftest import ROOT, written_fixture
from neurips26.common.config import derived_rehearsal, load_yaml
from neurips26.common.rehearsal import work_ratio
from neurips26.ecfr import experiment, real, rehearsal
from neurips26.ecfr.data import check_classes, check_split
from neurips26.ecfr.model import Backbone, torchvision_resnet_state

CONFIG = load_yaml(ROOT / "config/ecfr.yaml")
SCHEMA = load_yaml(ROOT / "workflow/schemas/ecfr.schema.yaml")
PAPER = CONFIG["paper"]


@pytest.mark.parametrize("factor", [1, 2])
def test_the_rehearsal_block_passes_the_papers_checks_and_keeps_its_shapes(factor):
    block = derived_rehearsal("ecfr", CONFIG, SCHEMA, factor)
    experiment.check_config(block)
    for key in ("datasets", "teacher", "model", "cfm", "evaluate", "complexity", "methods"):
        assert block[key] == PAPER[key], key
    assert block["per_class_methods"] == ["ecfr"]
    assert "same_modal_null" in PAPER["comparisons"] and "same_modal_null" not in block["comparisons"]
    assert block["comparisons"] == {k: v for k, v in PAPER["comparisons"].items() if k != "same_modal_null"}
    assert block["datasets"]["mvtec3d"]["size"] == 256
    assert block["train"] == {**PAPER["train"], "steps": 2, "batch": 1 * factor}
    assert block["seeds"] == [max(PAPER["seeds"])]
    # every method's code path once: three unified methods (not C1's null), the per-class ecfr, one seed
    runs = experiment.runs(block)
    assert sorted((method, setting) for _, method, setting, _ in runs) == [
        ("cfm", "unified"),
        ("ecfr", "per_class"),
        ("ecfr", "unified"),
        ("same_modal", "unified"),
    ]


def test_the_work_functions_scale_the_rehearsal_to_the_paper():
    block = derived_rehearsal("ecfr", CONFIG, SCHEMA)
    plan, wildcards = rehearsal.PLAN, {"dataset": "mvtec3d"}
    assert work_ratio(plan, "ecfr_train", PAPER, block, wildcards) == PAPER["train"]["steps"] * 16 / (2 * 1)
    assert work_ratio(plan, "ecfr_evaluate", PAPER, block, wildcards) == 4.5  # 18 runs against 4
    assert work_ratio(plan, "ecfr_report", PAPER, block, wildcards) == 1


@pytest.fixture(scope="module")
def payloads():
    return rehearsal.fixtures(1)


def test_the_fixtures_are_the_registrys_files_and_the_same_bytes_on_every_build(payloads):
    registry = load_yaml(ROOT / "config/sources.yaml")
    for path in payloads:
        folder, _, name = path.rpartition("/")
        assert name in registry[folder]["files"], path
    assert set(payloads) == {f"ecfr/{n}" for n in registry["ecfr"]["files"]} | {
        f"ecfr/eyecandies/{n}" for n in registry["ecfr/eyecandies"]["files"]
    }
    files = {"a/b.png": rehearsal.png(np.zeros((4, 4), np.uint8)), "a/c.txt": b"c"}
    assert rehearsal.tar_bytes(files, "xz") == rehearsal.tar_bytes(files, "xz")  # no time stamps in the archive
    assert payloads[rehearsal.MVTEC][:6] == b"\xfd7zXZ\x00"  # an xz stream, as the real .tar.xz


def test_the_mvtec3d_fixture_is_read_into_splits_the_data_job_accepts(tmp_path, payloads):
    archive = written_fixture(tmp_path, payloads, rehearsal.MVTEC)
    size = PAPER["datasets"]["mvtec3d"]["size"]
    data = real.read_mvtec3d(archive, size=size)
    train, test = data["train"], data["test"]
    n_train = len(rehearsal.REHEARSAL_CLASSES) * 3  # 2 train and 1 validation normals per class
    assert train["rgb"].shape == (n_train, size, size, 3) and train["rgb"].dtype == np.uint8
    assert train["depth"].shape == (n_train, size, size) and train["depth"].dtype == np.float32
    assert test["mask"].shape == (6, size, size) and test["mask"].dtype == bool
    assert sorted(set(train["cls"])) == list(rehearsal.REHEARSAL_CLASSES)
    assert list(test["defect"]) == ["good", "crack", "hole"] * 2
    for split, arrays in data.items():
        invalid = check_split(arrays, f"mvtec3d {split}", train=split == "train")
        assert 0 < invalid < arrays["depth"].size / 2  # the missing points are NaN, the object's are kept
    check_classes(train, test, "mvtec3d")
    # each class's model sees the doubled micro-batch: at least 2 training images per class
    per_class = min(int((train["cls"] == c).sum()) for c in rehearsal.REHEARSAL_CLASSES)
    assert per_class >= 2 * PLAN_BATCH


PLAN_BATCH = rehearsal.PLAN.budgets["train.batch"]


def test_the_data_growth_counts_the_fixtures_samples(payloads, tmp_path):
    data = real.read_mvtec3d(written_fixture(tmp_path, payloads, rehearsal.MVTEC), size=32)
    assert len(data["train"]["rgb"]) + len(data["test"]["rgb"]) == rehearsal.BASE_SAMPLES
    assert rehearsal.DATA_GROWTH["ecfr_data"] == (rehearsal.BASE_SAMPLES, rehearsal.MVTEC3D_SAMPLES)


def test_the_resnet34_fixture_has_torchvisions_keys_and_shapes_and_loads_into_the_teacher(payloads):
    state = torch.load(io.BytesIO(payloads[rehearsal.RESNET34]), map_location="cpu", weights_only=True)
    assert {k: tuple(v.shape) for k, v in state.items()} == rehearsal.resnet34_shapes()
    assert all(v.dtype == torch.float32 for v in state.values())
    assert sum(v.numel() for k, v in state.items() if "running" not in k) == rehearsal.RESNET34_PARAMETERS
    assert state["layer4.2.conv2.weight"].shape == (512, 512, 3, 3) and state["fc.weight"].shape == (1000, 512)
    # as the teacher job loads it (strict: every key of layers 1-3 mapped; num_batches_tracked filled in by torch)
    teacher = PAPER["teacher"]
    backbone = Backbone(tuple(teacher["widths"]), 0, tuple(teacher["blocks"]))
    backbone.load_state_dict(torchvision_resnet_state(state, tuple(teacher["blocks"])))
    assert torch.equal(backbone.stages[2][5].body[1].weight, state["layer3.5.conv2.weight"])
    with torch.no_grad():
        features = backbone.eval()(torch.randn(1, 3, 64, 64, generator=torch.Generator().manual_seed(0)))
    assert [tuple(f.shape[1:]) for f in features] == [(64, 16, 16), (128, 8, 8), (256, 4, 4)]
    assert all(torch.isfinite(f).all() and 1e-3 < f.std() < 1e3 for f in features)


def test_the_eyecandies_fixtures_are_read_as_m3dms_preprocessed_set(payloads, tmp_path):
    archives = [written_fixture(tmp_path, payloads, p) for p in sorted(payloads) if p.startswith(rehearsal.EYECANDIES)]
    assert [a.stem for a in archives] == sorted(real.EYECANDIES_CLASSES)
    data = real.read_eyecandies(archives[:2], size=32)
    train, test = data["train"], data["test"]
    assert train["rgb"].shape == (8, 32, 32, 3) and test["mask"].shape == (4, 32, 32)
    assert list(test["defect"]) == ["good", "bad"] * 2 and test["mask"][1].any() and not test["mask"][0].any()
    kept = ~np.isnan(train["depth"])
    assert 0 < kept.sum() < kept.size  # the plane is removed as background, the box closer to the camera is kept
    for split, arrays in data.items():
        check_split(arrays, f"eyecandies {split}", train=split == "train")
