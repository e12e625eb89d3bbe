"""Paper 15's CIFAR-10H reader on small files written here: raw trials to vote counts (one archive served from
127.0.0.1 through the project's download function with its sha256), and the CIFAR-10 test batch reader."""

from __future__ import annotations

import hashlib
import io
import pickle
import tarfile
import zipfile
from functools import partial
from http.server import SimpleHTTPRequestHandler

import numpy as np
import pandas as pd
import pytest

from neurips26.common.download import DownloadError, fetch
from neurips26.common.local_http import LocalServer
from neurips26.softlabel_audit.cifar10h import (
    check_against_probs,
    check_true_labels,
    read_cifar10_test,
    read_cifar10h,
    votes_from_raw,
)

# (annotator, attention check, chosen, true, image index); image 0: 2 votes for 3, 1 for 5; image 1: 1 vote for 9;
# image 2: 2 votes for 0; the attention checks (one with a real-looking chosen label) must not count
TRIALS = [
    (0, 0, 3, 3, 0),
    (0, 1, 7, 7, -99999),
    (0, 0, 9, 1, 1),
    (1, 0, 3, 3, 0),
    (1, 0, 0, 0, 2),
    (2, 0, 5, 3, 0),
    (2, 1, 2, 2, -99999),
    (2, 0, 0, 0, 2),
]


def _frame(index_column: str = "cifar10_test_test_idx", trials=TRIALS) -> pd.DataFrame:
    frame = pd.DataFrame(trials, columns=["annotator_id", "is_attn_check", "chosen_label", "true_label", index_column])
    frame.insert(1, "trial_index", range(len(frame)))
    frame["reaction_time"] = 800.0
    return frame


def _zip_bytes(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("cifar10h-raw.csv", frame.to_csv(index=False))
    return buffer.getvalue()


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def test_the_raw_archive_served_locally_is_fetched_with_its_hash_and_counted(tmp_path):
    served, dest = tmp_path / "served", tmp_path / "resources"
    served.mkdir()
    payload = _zip_bytes(_frame())
    (served / "cifar10h-raw.zip").write_bytes(payload)
    with LocalServer(partial(_Quiet, directory=str(served))) as server:
        url = f"{server.url}/cifar10h-raw.zip"
        path = fetch(url, "sha256:" + hashlib.sha256(payload).hexdigest(), dest)
        with pytest.raises(DownloadError, match="hash mismatch"):
            fetch(url, "sha256:" + "0" * 64, tmp_path / "elsewhere")
    votes = read_cifar10h(path, n_items=3)
    assert votes.counts.shape == (3, 10) and votes.counts.sum() == 6
    assert votes.counts[0, 3] == 2 and votes.counts[0, 5] == 1 and votes.counts[1, 9] == 1 and votes.counts[2, 0] == 2
    assert votes.true_labels.tolist() == [3, 1, 0]
    assert sorted(zip(votes.item.tolist(), votes.annotator.tolist())) == [
        (0, 0),
        (0, 1),
        (0, 2),
        (1, 0),
        (2, 1),
        (2, 2),
    ]
    np.testing.assert_allclose(votes.probs[0, [3, 5]], [2 / 3, 1 / 3])


def test_the_documented_index_column_and_a_plain_csv_read_the_same(tmp_path):
    _frame("cifar10_test_set_idx").to_csv(tmp_path / "raw.csv", index=False)
    np.testing.assert_array_equal(
        read_cifar10h(tmp_path / "raw.csv", n_items=3).counts, votes_from_raw(_frame(), 3).counts
    )


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        (
            _frame().drop(columns=["chosen_label", "is_attn_check"]),
            r"missing columns \['is_attn_check', 'chosen_label'\]",
        ),
        (_frame().drop(columns=["cifar10_test_test_idx"]), "missing columns .*cifar10_test_test_idx"),
        (_frame(trials=[*TRIALS, (3, 0, 10, 3, 0)]), "chosen_label 10 outside 0..9 in row 8"),
        (_frame(trials=[*TRIALS, (3, 0, 1, 3, 3)]), "image index 3 outside 0..2 in row 8"),
        (_frame(trials=[*TRIALS, (3, 0, 1, 4, 0)]), "image 0 has two true labels"),
        (_frame(trials=TRIALS[:3]), "zero annotators for image 2"),
    ],
)
def test_bad_raw_tables_are_refused_naming_the_problem(frame, message):
    with pytest.raises(ValueError, match=message):
        votes_from_raw(frame, n_items=3)


def test_the_released_probabilities_and_cifar_labels_cross_check():
    votes = votes_from_raw(_frame(), n_items=3)
    check_against_probs(votes, votes.counts / votes.counts.sum(axis=1, keepdims=True))
    probs = votes.probs.copy()
    probs[1] = np.roll(probs[1], 1)
    with pytest.raises(ValueError, match="first at image 1"):
        check_against_probs(votes, probs)
    check_true_labels(votes, np.array([3, 1, 0]))
    with pytest.raises(ValueError, match="image 2: CIFAR-10H says class 0, CIFAR-10 says 4"):
        check_true_labels(votes, np.array([3, 1, 4]))


def test_the_cifar10_test_batch_is_read_from_the_archive_channels_last(tmp_path):
    images = np.random.default_rng(0).integers(0, 256, (2, 32, 32, 3), dtype=np.uint8)
    data = images.transpose(0, 3, 1, 2).reshape(2, 3072)  # the batch's red, green, blue planes
    payload = pickle.dumps({b"data": data, b"labels": [4, 9], b"batch_label": b"testing batch 1 of 1"})
    archive = tmp_path / "cifar-10-python.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        info = tarfile.TarInfo("cifar-10-batches-py/test_batch")
        info.size = len(payload)
        tar.addfile(info, io.BytesIO(payload))
    read, labels = read_cifar10_test(archive)
    np.testing.assert_array_equal(read, images)
    assert read.dtype == np.uint8 and labels.tolist() == [4, 9]
    assert read[0, 0, 0, 0] == data[0, 0] and read[0, 0, 0, 2] == data[0, 2048]
    (tmp_path / "test_batch").write_bytes(pickle.dumps({b"data": data[:, :100], b"labels": [4, 9]}))
    with pytest.raises(ValueError, match=r"must be \(N, 3072\)"):
        read_cifar10_test(tmp_path / "test_batch")
