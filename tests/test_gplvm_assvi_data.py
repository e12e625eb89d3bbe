"""Paper 17's quick data: the lifted manifold, its missing mask, and the bad inputs refused."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.gplvm_assvi.data import check_observations, check_sizes, make_manifold


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
    check_observations(data.y, data.mask)
