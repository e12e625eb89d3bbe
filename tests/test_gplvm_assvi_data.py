"""Paper 17's data: the lifted manifold, its hidden entries and dense surface, the oil-flow archive (fetched by the
download rule from a mirror on 127.0.0.1, locked on first fetch, then read by the data job), and the bad inputs
refused."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
import yaml

from conftest import mirror, snakemake
from neurips26.gplvm_assvi.data import (
    build_dataset,
    check_observations,
    check_sizes,
    make_manifold,
    manifold_surface,
    read_oil_archive,
)
from neurips26.gplvm_assvi.metrics import manifold_distance
from neurips26.gplvm_assvi.rehearsal import oil_archive


@pytest.mark.parametrize("kind", ["s_curve", "swiss_roll"])
def test_the_manifold_is_seeded_masked_and_close_to_its_clean_lift(kind):
    a, b = make_manifold(kind, 300, seed=0), make_manifold(kind, 300, seed=0)
    assert np.array_equal(a.mask, b.mask) and np.allclose(np.nan_to_num(a.y), np.nan_to_num(b.y))
    assert a.y.shape == a.clean.shape == (300, 12) and a.mask.any(1).all()
    assert np.isnan(a.y[~a.mask]).all() and not np.isnan(a.y[a.mask]).any()
    assert 0.05 < (~a.mask).mean() < 0.15  # about the declared 10% missing
    residual = (a.y - a.clean)[a.mask]
    assert 0.04 < residual.std() < 0.06  # the declared noise
    assert np.linalg.matrix_rank(a.points - a.points.mean(0)) == 3 and len(a.coordinate) == 300
    assert not np.allclose(make_manifold(kind, 300, seed=1).clean, a.clean)


@pytest.mark.parametrize("kind", ["s_curve", "swiss_roll"])
def test_the_dense_surface_is_the_same_manifold_and_other_points_lie_off_it(kind):
    data = build_dataset(kind, 200, seed=3, dim=12, noise=0.05, missing=0.3)
    surface = manifold_surface(kind, 3, 12, n=20_000)
    on = manifold_distance(data["clean"], surface)
    other = manifold_distance(build_dataset(kind, 200, seed=4, dim=12, noise=0.05, missing=0.3)["clean"], surface)
    assert on < 0.1 < other  # the clean points of the same seed lie on the surface, another seed's lift does not
    noisy = manifold_distance(data["y_full"], surface)
    assert on < noisy  # noise moves points off the manifold


def test_the_dataset_hides_a_share_of_entries_and_keeps_their_truth():
    data = build_dataset("s_curve", 400, seed=0, dim=12, noise=0.05, missing=0.3)
    hidden = ~data["mask"]
    assert 0.27 < hidden.mean() < 0.33 and data["mask"].any(1).all()
    assert np.isnan(data["y"][hidden]).all() and np.array_equal(data["y"][~hidden], data["y_full"][~hidden])
    assert np.isfinite(data["y_full"]).all() and 0.04 < (data["y_full"] - data["clean"]).std() < 0.06
    three = build_dataset("swiss_roll", 50, seed=42, dim=3, noise=0.1, missing=0.3, lift="none")
    assert three["y"].shape == (50, 3)


def test_bad_inputs_are_refused_naming_the_problem():
    with pytest.raises(ValueError, match="latent dimension must be >= 1, got 0"):
        check_sizes(0, 10, 100)
    with pytest.raises(ValueError, match="120 inducing points for 100 data points"):
        check_sizes(2, 120, 100)
    data = make_manifold("s_curve", 50, seed=0)
    y = data.y.copy()
    row, col = np.argwhere(data.mask)[3]
    y[row, col] = np.nan
    with pytest.raises(ValueError, match=f"first at row {row}, column {col}"):
        check_observations(y, data.mask)
    with pytest.raises(ValueError, match="unknown manifold 'torus'"):
        make_manifold("torus", 10, 0)
    with pytest.raises(ValueError, match="lift 'none' keeps the 3-D points"):
        make_manifold("s_curve", 10, 0, dim=12, lift="none")
    with pytest.raises(ValueError, match="missing must be in"):
        build_dataset("s_curve", 10, 0, 12, 0.05, 0.0)
    check_observations(data.y, data.mask)


def test_the_paper_scale_data_job_fetches_the_oil_archive_locks_it_and_reads_it(workflow_copy, tmp_path):
    """The download rule fetches the registered archive from a mirror on 127.0.0.1 (locked on first fetch, in the
    workflow copy's lock file), then paper 17's data job reads and standardises it."""
    payload = oil_archive(rows=40)
    target = "results/paper/gplvm_assvi/data/oil.npz"
    with mirror(workflow_copy, "oil_flow", {"3PhData.tar.gz": payload}, tmp_path / "served"):
        snakemake(workflow_copy, "-c1", target)
    lock = yaml.safe_load((workflow_copy / "config/sources.lock.yaml").read_text())["files"]["oil_flow/3PhData.tar.gz"]
    assert lock["sha256"] == hashlib.sha256(payload).hexdigest() and lock["origin"] == "server"
    data = np.load(workflow_copy / target)
    assert (
        data["y"].shape == (40, 12) and np.allclose(data["y_full"].mean(0), 0) and np.allclose(data["y_full"].std(0), 1)
    )
    assert set(np.unique(data["coordinate"])) <= {0.0, 1.0, 2.0} and 0.2 < (~data["mask"]).mean() < 0.4
    check_observations(data["y"], data["mask"])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"drop": "DataTrnLbls.txt"}, "lacks \\['DataTrnLbls.txt'\\]"), ({"columns": 11}, "expected \\(n, 12\\)"),
     ({"labels": 2}, "expected \\(n, 12\\), \\(n, 3\\)")],
)  # fmt: skip
def test_a_malformed_oil_archive_is_refused_naming_the_problem(tmp_path, kwargs, match):
    path = tmp_path / "3PhData.tar.gz"
    path.write_bytes(oil_archive(rows=40, **kwargs))
    with pytest.raises(ValueError, match=match):
        read_oil_archive(path, missing=0.3, seed=0)
