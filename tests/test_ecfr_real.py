"""Paper 11's readers of the real datasets (neurips26.ecfr.real) on tiny fake archives with the real layouts."""

from __future__ import annotations

import tarfile

import numpy as np
import pytest

from neurips26.ecfr import real
from neurips26.ecfr.rehearsal import EC_HIGH, EC_LOW, eyecandies_files, mvtec_files, png, tiff, write_tar

HW = (16, 16)


# --------------------------------------------------------------------------- MVTec 3D-AD


@pytest.fixture(scope="module")
def mvtec(tmp_path_factory):
    files, arrays = mvtec_files()
    return write_tar(tmp_path_factory.mktemp("mvtec") / "mvtec_3d_anomaly_detection.tar.xz", files), arrays


def test_mvtec3d_reads_the_splits_with_the_pipelines_shapes_and_types(mvtec):
    archive, _ = mvtec
    data = real.read_mvtec3d(archive, size=8)
    assert set(data) == {"train", "test"}
    for split, n in (("train", 6), ("test", 4)):
        d = data[split]
        assert d["rgb"].shape == (n, 8, 8, 3) and d["rgb"].dtype == np.uint8
        assert d["depth"].shape == (n, 8, 8) and d["depth"].dtype == np.float32
        assert d["mask"].shape == (n, 8, 8) and d["mask"].dtype == bool
        assert d["cls"].shape == d["defect"].shape == (n,)
    # train + validation merged: 2 + 1 normals per class, classes sorted, good before the defects
    assert list(data["train"]["cls"]) == ["bagel"] * 3 + ["cookie"] * 3
    assert set(data["train"]["defect"]) == {"good"}
    assert list(data["test"]["defect"]) == ["good", "crack", "good", "crack"]


def test_mvtec3d_at_full_size_keeps_the_pixels_and_missing_points_become_nan(mvtec):
    archive, arrays = mvtec
    messages = []
    data = real.read_mvtec3d(archive, size=16, log=messages.append)
    order = [
        ("bagel", "train", "good", "000"),
        ("bagel", "train", "good", "001"),
        ("bagel", "validation", "good", "000"),
    ]
    for i, key in enumerate(order):
        np.testing.assert_array_equal(data["train"]["rgb"][i], arrays[key]["rgb"])
        z = arrays[key]["xyz"][..., 2]
        np.testing.assert_array_equal(np.isnan(data["train"]["depth"][i]), z == 0)
        np.testing.assert_allclose(data["train"]["depth"][i][z != 0], z[z != 0])
    assert int(np.isnan(data["train"]["depth"]).sum()) == 6 * 32
    assert "320 points missing" in messages[-1]  # 10 images x 2 rows x 16 pixels
    crack = arrays[("bagel", "test", "crack", "000")]["gt"] > 0
    np.testing.assert_array_equal(data["test"]["mask"][1], crack)
    assert not data["test"]["mask"][0].any()


def test_mvtec3d_resizes_depth_without_blending_in_missing_points_and_thresholds_masks(mvtec):
    archive, _ = mvtec
    data = real.read_mvtec3d(archive, size=8)
    depth = data["train"]["depth"]
    assert np.isnan(depth[:, 0]).all() and not np.isnan(depth[:, 1:]).any()  # nearest resize of the validity
    np.testing.assert_allclose(depth[:, 1:], 5.0, rtol=1e-6)  # the zeros of row 1 do not pull row 1 down
    expected = np.zeros((8, 8), bool)
    expected[2:4, 2:4] = True  # the 4 x 4 block survives the halving, the lone pixel does not
    np.testing.assert_array_equal(data["test"]["mask"][1], expected)
    assert not data["train"]["mask"].any()


def test_mvtec3d_filters_classes_and_reads_an_extracted_folder(mvtec, tmp_path):
    archive, _ = mvtec
    data = real.read_mvtec3d(archive, size=8, classes=["cookie"])
    assert set(data["train"]["cls"]) == set(data["test"]["cls"]) == {"cookie"}
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path, filter="data")
    folder = real.read_mvtec3d(tmp_path / "mvtec_3d_anomaly_detection", size=8, classes=["cookie"])
    for split in ("train", "test"):
        for key in ("rgb", "mask", "cls", "defect"):
            np.testing.assert_array_equal(folder[split][key], data[split][key])
        np.testing.assert_array_equal(folder[split]["depth"], data[split]["depth"])


@pytest.mark.parametrize(
    ("classes", "message"),
    [(["pretzel"], "unknown MVTec 3D-AD class"), (["tire"], r"\['tire'\] not found"), ([], "no MVTec 3D-AD class")],
)
def test_mvtec3d_refuses_an_unknown_or_absent_class(mvtec, classes, message):
    with pytest.raises(ValueError, match=message):
        real.read_mvtec3d(mvtec[0], size=8, classes=classes)


@pytest.mark.parametrize(
    ("drop", "message"),
    [
        ("bagel/test/crack/rgb/000.png", "bagel/test/crack/000 .* has no rgb"),
        ("cookie/train/good/xyz/001.tiff", "cookie/train/good/001 .* has no xyz"),
        ("bagel/test/crack/gt/000.png", "bagel/test/crack/000 .* has no gt"),
    ],
)
def test_mvtec3d_refuses_a_sample_without_its_rgb_xyz_or_mask(tmp_path, drop, message):
    files, _ = mvtec_files(drop=(f"mvtec_3d_anomaly_detection/{drop}",))
    with pytest.raises(ValueError, match=message):
        real.read_mvtec3d(write_tar(tmp_path / "m.tar", files), size=8)


def test_mvtec3d_a_missing_mask_of_a_normal_image_is_not_needed(tmp_path):
    files, _ = mvtec_files(drop=("mvtec_3d_anomaly_detection/bagel/test/good/gt/000.png",))
    assert len(real.read_mvtec3d(write_tar(tmp_path / "m.tar", files), size=8)["test"]["rgb"]) == 4


def test_mvtec3d_refuses_rgb_and_xyz_of_different_sizes(tmp_path):
    files, _ = mvtec_files(classes=("bagel",), xyz_hw=(16, 12))
    with pytest.raises(ValueError, match=r"bagel/train/good/000: RGB is \(16, 16\) but xyz is \(16, 12\)"):
        real.read_mvtec3d(write_tar(tmp_path / "m.tar", files), size=8)


def test_mvtec3d_refuses_a_class_without_training_normals(tmp_path):
    files, _ = mvtec_files(classes=("bagel",))
    files.update(mvtec_files(classes=("foam",), layout=[("test", "good", 1)])[0])
    with pytest.raises(ValueError, match="'foam' has no training normals"):
        real.read_mvtec3d(write_tar(tmp_path / "m.tar", files), size=8)
    assert set(real.read_mvtec3d(tmp_path / "m.tar", size=8, classes=["bagel"])["train"]["cls"]) == {"bagel"}


def test_mvtec3d_refuses_a_broken_archive_and_a_bad_point_cloud(tmp_path):
    broken = tmp_path / "broken.tar.xz"
    broken.write_bytes(b"not an archive at all")
    with pytest.raises(ValueError, match="not a readable tar archive"):
        real.read_mvtec3d(broken, size=8)
    files, _ = mvtec_files(classes=("bagel",))
    files["mvtec_3d_anomaly_detection/bagel/train/good/xyz/000.tiff"] = tiff(np.ones(HW, np.float32))
    with pytest.raises(ValueError, match=r"not an organised point cloud \(H x W x 3\)"):
        real.read_mvtec3d(write_tar(tmp_path / "m.tar", files), size=8)
    with pytest.raises(ValueError, match="size must be a positive integer"):
        real.read_mvtec3d(tmp_path / "m.tar", size=0)


# --------------------------------------------------------------------------- Eyecandies


@pytest.fixture(scope="module")
def eyecandies(tmp_path_factory):
    folder = tmp_path_factory.mktemp("eyecandies")
    candy, arrays = eyecandies_files()
    write_tar(folder / "CandyCane.tar", candy)
    write_tar(folder / "download (1).tar.gz", eyecandies_files(top="ChocolateCookie/")[0])  # named by its folder
    return folder, arrays


def _m3dm_loop(depth16, low, high, pose, focal):
    """M3DM's utils/preprocess_eyecandies.py, pixel by pixel, generalised from 512 x 512 (its pc[256], pc[-256])."""
    h, w = depth16.shape
    d = depth16.astype(np.float32) / 65535.0 * (high - low) + low
    k = np.array([[focal, 0, w / 2, 0], [0, focal, h / 2, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
    inv = np.linalg.inv(k @ pose)
    pc = np.zeros((h * w, 3))
    for j in range(h):
        for i in range(w):
            pc[j * w + i] = (d[j, i] * (inv @ np.array([i, j, 1, 1 / d[j, i]])))[:3]
    top, bottom = pc[w // 2], pc[-(w - w // 2)]
    dz, dy = top[1] - bottom[1], top[2] - bottom[2]
    norm = np.sqrt(dz**2 + dy**2)
    start = np.array([0, bottom[1], bottom[2]])
    rot = np.array([[1, 0, 0], [0, dy / norm, -dz / norm], [0, dz / norm, dy / norm]])
    z = np.zeros(h * w)
    for n in range(h * w):
        p = rot @ (pc[n] - start)
        background = p[1] > -0.02 or p[2] > 1.8 or p[0] > 1 or p[0] < -1
        z[n] = np.nan if background else 0.1 * (rot.T @ p + start)[1]  # the TIFF's z channel: 0.1 * y
    return z.reshape(h, w)


def test_eyecandies_z_matches_m3dms_preprocessing_pixel_by_pixel():
    rng = np.random.default_rng(2)
    depth = 1.0 + 0.3 * np.linspace(0, 1, 16)[:, None] + np.zeros((16, 20))
    depth[4:9, 6:12] -= 0.25
    depth16 = np.round((depth - EC_LOW) / (EC_HIGH - EC_LOW) * 65535).astype(np.uint16)
    angle = 0.6
    pose = np.eye(4)
    pose[1:3, 1:3] = [[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]]
    pose[:3, 3] = rng.normal(0, 0.1, 3)
    z = real.eyecandies_z(depth16, (EC_LOW, EC_HIGH), pose)
    expected = _m3dm_loop(depth16, EC_LOW, EC_HIGH, pose, real.EYECANDIES_FOCAL_LENGTH)
    assert z.shape == (16, 20) and z.dtype == np.float32
    np.testing.assert_array_equal(np.isnan(z), np.isnan(expected))
    assert 0 < np.isnan(z).sum() < z.size
    np.testing.assert_allclose(z[~np.isnan(z)], expected[~np.isnan(expected)], rtol=1e-5)


def test_eyecandies_reads_train_and_public_test_as_m3dms_preprocessed_set(eyecandies):
    folder, arrays = eyecandies
    messages = []
    data = real.read_eyecandies(folder, size=16, log=messages.append)
    train, test = data["train"], data["test"]
    assert train["rgb"].shape == (4, 16, 16, 3) and train["rgb"].dtype == np.uint8
    assert train["depth"].dtype == np.float32 and train["mask"].dtype == bool
    assert list(train["cls"]) == ["CandyCane"] * 2 + ["ChocolateCookie"] * 2  # val is not read
    assert list(test["cls"]) == ["CandyCane"] * 2 + ["ChocolateCookie"] * 2  # test_private is not read
    assert list(test["defect"]) == ["good", "bad", "good", "bad"] and set(train["defect"]) == {"good"}
    np.testing.assert_array_equal(train["rgb"][1], arrays[("train", "001")]["rgb"])  # image_4
    np.testing.assert_array_equal(test["mask"][1], arrays[("test_public", "01")]["mask"])
    assert not test["mask"][0].any() and not train["mask"].any()
    box = np.zeros((16, 16), bool)
    box[5:11, 5:11] = True  # the plane is removed as background, the box closer to the camera is kept
    for depth in (*train["depth"], *test["depth"]):
        np.testing.assert_array_equal(~np.isnan(depth), box)
    expected = _m3dm_loop(arrays[("train", "000")]["depth16"], EC_LOW, EC_HIGH, np.eye(4), 711.11)
    np.testing.assert_allclose(train["depth"][0][box], expected[box], rtol=1e-5)
    assert "4 training and 4 test images of 2 classes" in messages[-1]
    small = real.read_eyecandies(folder / "CandyCane.tar", size=8, classes=["CandyCane"])
    assert small["train"]["rgb"].shape == (2, 8, 8, 3) and small["test"]["mask"].shape == (2, 8, 8)


def test_eyecandies_reads_extracted_categories_as_the_archives(eyecandies, tmp_path):
    folder, _ = eyecandies
    with tarfile.open(folder / "CandyCane.tar") as tar:
        tar.extractall(tmp_path / "root" / "CandyCane", filter="data")
    from_archive = real.read_eyecandies(folder, size=8, classes=["CandyCane"])
    for source in (tmp_path / "root", tmp_path / "root" / "CandyCane"):
        from_folder = real.read_eyecandies(source, size=8)
        for split in ("train", "test"):
            for key in ("rgb", "depth", "mask", "cls", "defect"):
                np.testing.assert_array_equal(from_folder[split][key], from_archive[split][key])


@pytest.mark.parametrize(
    ("drop", "message"),
    [
        ("train/data/001_pose.txt", "CandyCane/train/001 has no pose"),
        ("test_public/data/01_mask.png", "CandyCane/test_public/01 has no mask"),
        ("train/data/000_image_4.png", "CandyCane/train/000 has no image_4"),
    ],
)
def test_eyecandies_refuses_a_sample_without_its_files(tmp_path, drop, message):
    archive = write_tar(tmp_path / "CandyCane.tar", eyecandies_files(drop=(drop,))[0])
    with pytest.raises(ValueError, match=message):
        real.read_eyecandies([archive], size=8)


def test_eyecandies_refuses_unknown_absent_or_unnamed_categories_and_missing_training_normals(eyecandies, tmp_path):
    folder, _ = eyecandies
    with pytest.raises(ValueError, match="unknown Eyecandies class"):
        real.read_eyecandies(folder, size=8, classes=["Cupcake"])
    with pytest.raises(ValueError, match=r"\['Lollipop'\] not found"):
        real.read_eyecandies(folder, size=8, classes=["Lollipop"])
    unnamed = write_tar(tmp_path / "data.tar", eyecandies_files()[0])
    with pytest.raises(ValueError, match="cannot tell the Eyecandies category"):
        real.read_eyecandies(unnamed, size=8)
    files = {k: v for k, v in eyecandies_files()[0].items() if not k.startswith("train/")}
    with pytest.raises(ValueError, match="'Marshmallow' has no training normals"):
        real.read_eyecandies(write_tar(tmp_path / "marsh_mallow.tar", files), size=8)
    bad_depth = eyecandies_files()[0]
    bad_depth["train/data/000_depth.png"] = png(np.zeros((16, 12), np.uint16))
    with pytest.raises(ValueError, match=r"CandyCane/train/000: RGB is \(16, 16\) but depth is \(16, 12\)"):
        real.read_eyecandies(write_tar(tmp_path / "candy cane.tar", bad_depth), size=8)


# --------------------------------------------------------------------------- the paper-scale data job


def test_the_paper_scale_data_job_fetches_mvtec3d_checks_its_hash_and_reads_it(workflow_copy, tmp_path):
    """The download rule fetches the registered archive from a mirror on 127.0.0.1 and checks its md5 (the workflow
    copy's registry pins the fake archive's md5 in place of the real one), then paper 11's data job reads it into the
    pipeline's splits and counts the missing depth points."""
    import hashlib

    import pandas as pd
    import yaml

    from conftest import mirror, snakemake

    files, _ = mvtec_files()
    payload = write_tar(tmp_path / "mvtec_3d_anomaly_detection.tar.xz", files).read_bytes()
    sources = workflow_copy / "config/sources.yaml"
    registry = yaml.safe_load(sources.read_text())
    registry["ecfr"]["files"]["mvtec_3d_anomaly_detection.tar.xz"]["hash"] = f"md5:{hashlib.md5(payload).hexdigest()}"
    sources.write_text(yaml.safe_dump(registry, sort_keys=False))
    config = workflow_copy / "config/ecfr.yaml"
    cfg = yaml.safe_load(config.read_text())
    cfg["paper"]["datasets"]["mvtec3d"]["size"] = 32  # 16-px fake images, upsampled; a multiple of 32
    config.write_text(yaml.safe_dump(cfg, sort_keys=False))
    target = "results/paper/ecfr/data/mvtec3d/fixed/train.npz"
    with mirror(workflow_copy, "ecfr", {"mvtec_3d_anomaly_detection.tar.xz": payload}, tmp_path / "served"):
        snakemake(workflow_copy, "-c1", target)
    train = np.load(workflow_copy / target)
    test = np.load(workflow_copy / "results/paper/ecfr/data/mvtec3d/fixed/test.npz")
    assert train["rgb"].shape == (6, 32, 32, 3) and set(train["defect"]) == {"good"}
    assert list(test["defect"]) == ["good", "crack", "good", "crack"] and test["mask"][1].any()
    summary = pd.read_parquet(workflow_copy / "results/paper/ecfr/data/mvtec3d/fixed/summary.parquet")
    assert summary["invalid_depth"].sum() == np.isnan(train["depth"]).sum() + np.isnan(test["depth"]).sum() > 0
