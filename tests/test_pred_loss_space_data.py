"""Paper 01's paper-scale data: the CIFAR-10 and Imagenette archive readers on small archives of the same
layout, and the paper-scale DAG that downloads them with pinned hashes."""

import io
import pickle
import tarfile

import numpy as np
import pytest
from PIL import Image

from conftest import ROOT, planned_jobs
from neurips26.pred_loss_space import data


def add(archive: tarfile.TarFile, name: str, payload: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(payload)
    archive.addfile(info, io.BytesIO(payload))


def test_cifar10_is_read_from_its_archive_in_place(tmp_path):
    rng = np.random.default_rng(0)
    path = tmp_path / "cifar-10-python.tar.gz"
    batches = {}
    with tarfile.open(path, "w:gz") as archive:
        for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
            batch = {
                b"data": rng.integers(0, 256, size=(4, 3072), dtype=np.uint8),
                b"labels": list(rng.integers(0, 10, 4)),
            }
            batches[name] = batch
            add(archive, f"cifar-10-batches-py/{name}", pickle.dumps(batch))
        add(archive, "cifar-10-batches-py/readme.html", b"<html></html>")
    x_train, y_train, x_test, y_test = data.cifar10_from_archive(str(path))
    assert x_train.shape == (20, 3, 32, 32) and x_test.shape == (4, 3, 32, 32) and x_train.dtype == np.float32
    assert x_train.min() >= -1 and x_train.max() <= 1
    first = batches["data_batch_1"][b"data"][0].reshape(3, 32, 32) / 127.5 - 1
    np.testing.assert_allclose(x_train[0], first, atol=1e-6)
    assert list(y_test) == list(batches["test_batch"][b"labels"])
    assert not list(tmp_path.glob("cifar-10-batches-py"))  # nothing extracted


def test_an_archive_without_the_cifar_batches_is_rejected(tmp_path):
    path = tmp_path / "other.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        add(
            archive,
            "cifar-10-batches-py/data_batch_1",
            pickle.dumps({b"data": np.zeros((1, 3072), np.uint8), b"labels": [0]}),
        )
    with pytest.raises(ValueError, match="not the CIFAR-10 python archive"):
        data.cifar10_from_archive(str(path))


def jpeg(colour: tuple[int, int, int], size: tuple[int, int]) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="JPEG", quality=95)
    return buffer.getvalue()


def test_imagenette_is_cropped_resized_and_labelled_by_class_folder(tmp_path):
    path = tmp_path / "imagenette2-160.tgz"
    with tarfile.open(path, "w:gz") as archive:
        add(archive, "imagenette2-160/train/n01440764/a.JPEG", jpeg((255, 0, 0), (213, 160)))
        add(archive, "imagenette2-160/train/n02102040/b.JPEG", jpeg((0, 0, 255), (160, 240)))
        add(archive, "imagenette2-160/val/n02102040/c.JPEG", jpeg((0, 255, 0), (160, 160)))
        add(archive, "imagenette2-160/noisy_imagenette.csv", b"path,label\n")
    x_train, y_train, x_test, y_test = data.imagenette_from_archive(str(path), size=8)
    assert x_train.shape == (2, 3, 8, 8) and x_test.shape == (1, 3, 8, 8)
    assert sorted(y_train) == [0, 1] and list(y_test) == [1]
    red = x_train[list(y_train).index(0)]
    assert red[0].mean() > 0.9 and red[2].mean() < -0.9  # the red image stays red, in [-1, 1]


def test_the_paper_scale_dag_downloads_cifar10_imagenette_and_inception_weights_with_pinned_hashes():
    from neurips26.common.sources import lookup
    from neurips26.pred_loss_space.experiment import DOWNLOADS, INCEPTION

    jobs = planned_jobs(ROOT, "results/paper/pred_loss_space/report.md")
    assert jobs["download"] == 3 and jobs["pred_loss_space_data"] == 5
    # true FID at paper scale: one Inception reference per image dataset (cifar10, imagenette64, digits16)
    assert jobs["pred_loss_space_fid_reference"] == 3
    archives = [lookup(path) for path in DOWNLOADS.values()]
    assert all(a.url.startswith("https://") and a.known_hash.startswith("md5:") for a in archives)
    weights = lookup(INCEPTION)
    assert weights.url.startswith("https://") and weights.url.endswith("pt_inception-2015-12-05-6726825d.pth")
    assert weights.known_hash.startswith("sha256:6726825d")
