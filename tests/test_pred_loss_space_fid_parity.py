"""Paper 01's FID against pytorch-fid's definitions (mseitzer/pytorch-fid, ``src/pytorch_fid/fid_score.py``).

pytorch-fid (and torch-fidelity, which reads the same files) stores reference statistics as an ``.npz`` with
``mu`` (2048,) and ``sigma`` (2048, 2048), both float64: ``save_fid_stats`` writes
``np.savez_compressed(path, mu=m, sigma=s)`` with ``m = np.mean(act, axis=0)`` and ``s = np.cov(act,
rowvar=False)`` of the pool3 activations, and ``compute_statistics_of_path`` reads ``f["mu"][:],
f["sigma"][:]``. Its ``calculate_frechet_distance`` is ``|mu1 - mu2|^2 + tr(S1 + S2 - 2 sqrtm(S1 S2))`` with
scipy's ``sqrtm``, ``eps = 1e-6`` added to both diagonals when the root is not finite, and the real part kept.

What is compared, offline:

* our reference-statistics job (``scripts/pred_loss_space/fid_reference.py``, run here as Snakemake would
  run it) writes a file that pytorch-fid's reader accepts, with its keys, shapes and dtype and its formulas
  for ``mu`` and ``sigma``; ours adds one key, ``n`` (the image count), which pytorch-fid ignores;
* a file in pytorch-fid's format (compressed, ``mu`` and ``sigma`` only) reads back unchanged through our
  loader. Our ``evaluation.inception_fid_from_files`` also needs ``n``, so it cannot take a published
  pytorch-fid statistics file as it stands (the workflow always makes its own reference, so no job is
  affected);
* the Frechet distance of a set with itself is 0, with a full-rank and with a singular covariance (fewer
  samples than dimensions, as in a small FID sample), and our distance equals a direct computation with
  ``scipy.linalg.sqrtm`` and one with symmetric eigendecompositions (no sqrtm) on small cases.

Offline limits: the real Inception weights (``pt_inception-2015-12-05-6726825d.pth``) are not in the
repository and nothing here downloads them, so the network runs with seeded random weights of the same
architecture (He-scaled convolutions, non-trivial batch-norm statistics); this checks the format and the
formulas, not the published feature values. The Inception network costs about a second per image on a busy CPU
(every image is resized to 299x299), so it sees 2 images; the distances are checked on small synthetic features,
since scipy's ``sqrtm`` of a 2048 x 2048 product takes about 80 s on this machine.
"""

from __future__ import annotations

import runpy
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from scipy import linalg

from neurips26.common.io import load_npz, save_npz
from neurips26.pred_loss_space import fd, inception
from test_pred_loss_space_inception import randomize

ROOT = Path(__file__).resolve().parents[1]


def random_inception(seed: int = 0) -> inception.FIDInceptionV3:
    """The FID architecture with seeded random weights that keep the signal alive through its 94 convolutions."""
    return randomize(inception.FIDInceptionV3(), seed)


def test_reference_stats_file_is_in_pytorch_fids_format(tmp_path, monkeypatch):
    weights = tmp_path / inception.WEIGHTS_NAME
    torch.save(random_inception().state_dict(), weights)
    x_train = np.random.default_rng(0).uniform(-1, 1, size=(2, 1, 8, 8)).astype(np.float32)  # grayscale, in [-1, 1]
    save_npz(tmp_path / "data.npz", x_train=x_train)
    seen = []
    features = inception.inception_features
    monkeypatch.setattr(inception, "inception_features", lambda *a, **k: seen.append(features(*a, **k)) or seen[-1])
    out = tmp_path / "fid_reference.npz"
    smk = SimpleNamespace(
        input=SimpleNamespace(data=str(tmp_path / "data.npz"), weights=str(weights)),
        output=[str(out)],
        params=SimpleNamespace(batch=2),
        log=[str(tmp_path / "fid_reference.log")],
        rule="pred_loss_space_fid_reference",
        wildcards={},
        threads=1,
    )
    runpy.run_path(str(ROOT / "scripts/pred_loss_space/fid_reference.py"), init_globals={"snakemake": smk})

    (act,) = seen
    assert act.shape == (2, 2048) and np.isfinite(act).all() and act.std() > 0
    with np.load(out) as f:  # as pytorch-fid's compute_statistics_of_path reads it
        assert set(f.files) == {"mu", "sigma", "n"}
        mu, sigma = f["mu"][:], f["sigma"][:]
        assert int(f["n"]) == 2
    assert mu.shape == (2048,) and sigma.shape == (2048, 2048)
    assert mu.dtype == np.float64 and sigma.dtype == np.float64
    np.testing.assert_array_equal(mu, np.mean(act, axis=0))  # pytorch-fid's calculate_activation_statistics
    np.testing.assert_array_equal(sigma, np.cov(act, rowvar=False))


def test_a_pytorch_fid_stats_file_reads_back_unchanged(tmp_path):
    rng = np.random.default_rng(1)
    act = np.zeros((40, 2048))  # non-negative, as pool3 averages of ReLU outputs; mostly zero, to compress fast
    act[:, :64] = np.maximum(rng.normal(size=(40, 64)), 0.0)
    mu, sigma = np.mean(act, axis=0), np.cov(act, rowvar=False)
    np.savez_compressed(tmp_path / "stats.npz", mu=mu, sigma=sigma)  # pytorch-fid's save_fid_stats
    stats = load_npz(tmp_path / "stats.npz")
    for key, value in (("mu", mu), ("sigma", sigma)):
        assert stats[key].dtype == np.float64 and stats[key].shape == value.shape
        np.testing.assert_array_equal(stats[key], value)
    ours_mu, ours_sigma = fd.gaussian_stats(act)
    np.testing.assert_array_equal(ours_mu, stats["mu"])
    np.testing.assert_allclose(ours_sigma, stats["sigma"], rtol=0, atol=1e-15)


def pool3_like(n: int, dim: int, seed: int, shift: float = 0.0) -> np.ndarray:
    """Non-negative correlated features: ReLU of a random linear map of Gaussians."""
    rng = np.random.default_rng(seed)
    mixing = np.random.default_rng(100).normal(size=(dim, dim)) / np.sqrt(dim)
    return np.maximum(rng.normal(size=(n, dim)) @ mixing + 0.5 + shift, 0.0)


def test_fid_of_a_set_with_itself_is_zero():
    full = pool3_like(300, 32, seed=2)  # N >= 2 D: full-rank covariance
    assert abs(fd.frechet_distance(full, full)) < 1e-9 * np.trace(np.cov(full, rowvar=False))
    few = pool3_like(20, 32, seed=3)  # N < D: singular covariance (rank 19), pytorch-fid's eps fallback may apply
    mu, sigma = fd.gaussian_stats(few)
    # the eps fallback would give -2 D eps = -6.4e-5 at most
    assert abs(fd.frechet_from_stats(mu, sigma, mu, sigma)) < 1e-4


def direct_sqrtm(a: np.ndarray, b: np.ndarray) -> float:
    """pytorch-fid's formula with scipy's sqrtm, written out."""
    mu1, mu2, s1, s2 = a.mean(0), b.mean(0), np.cov(a, rowvar=False), np.cov(b, rowvar=False)
    root = linalg.sqrtm(s1 @ s2)
    return float((mu1 - mu2) @ (mu1 - mu2) + np.trace(s1) + np.trace(s2) - 2 * np.trace(root.real))


def direct_eigh(a: np.ndarray, b: np.ndarray) -> float:
    """The same distance without sqrtm: tr (S1 S2)^{1/2} = sum of sqrt(eig(S1^{1/2} S2 S1^{1/2}))."""
    mu1, mu2, s1, s2 = a.mean(0), b.mean(0), np.cov(a, rowvar=False), np.cov(b, rowvar=False)
    w, v = np.linalg.eigh(s1)
    half = (v * np.sqrt(np.clip(w, 0, None))) @ v.T
    inner = np.linalg.eigvalsh(half @ s2 @ half)
    return float((mu1 - mu2) @ (mu1 - mu2) + np.trace(s1) + np.trace(s2) - 2 * np.sqrt(np.clip(inner, 0, None)).sum())


@pytest.mark.parametrize("dim", [4, 16])
def test_frechet_distance_matches_direct_computations(dim):
    a, b = pool3_like(200, dim, seed=4), pool3_like(250, dim, seed=5, shift=0.3)
    ours = fd.frechet_distance(a, b)
    assert ours > 0.01
    assert ours == pytest.approx(direct_sqrtm(a, b), rel=1e-9, abs=1e-12)
    assert ours == pytest.approx(direct_eigh(a, b), rel=1e-8, abs=1e-12)
