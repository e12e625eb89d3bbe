"""Paper 17's evaluation: the uncertainty map grows away from the data, the metrics of a run, probabilistic PCA with
missing entries against its closed form, and the structured posterior's dependence on U."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neurips26.gplvm_assvi import evaluation, metrics
from neurips26.gplvm_assvi.data import build_dataset, manifold_surface
from neurips26.gplvm_assvi.models import MeanFieldGPLVM, fit, predictive_samples
from neurips26.gplvm_assvi.pca import fit_ppca, ppca_predictive


@pytest.fixture(scope="module")
def fitted():
    data = build_dataset("s_curve", 120, seed=0, dim=12, noise=0.05, missing=0.3)
    y, mask = torch.as_tensor(data["y"]), torch.as_tensor(data["mask"])
    model = MeanFieldGPLVM(y, mask, latent_dim=2, inducing=12, hidden=(16,), seed=0)
    fit(model, y, mask, steps=200, lr=0.02)
    return data, y, mask, model


def test_the_uncertainty_map_grows_away_from_the_training_latents(fitted):
    data, y, mask, model = fitted
    rho, grid = evaluation.grid_table(model, model.mu.detach(), 20)
    assert rho > 0.3 and len(grid["sd"]) == 400 and (grid["sd"] >= 0).all()
    far = grid["distance"] > np.quantile(grid["distance"], 0.9)
    near = grid["distance"] < np.quantile(grid["distance"], 0.1)
    assert grid["sd"][far].mean() > 2 * grid["sd"][near].mean()
    assert grid["axis_x"] != grid["axis_y"] and {grid["axis_x"], grid["axis_y"]} == {0, 1}


def test_a_fitted_model_scores_its_hidden_entries_better_than_column_means(fitted):
    data, y, mask, model = fitted
    means, variances = (t.numpy() for t in predictive_samples(model, y, mask, 16, torch.Generator().manual_seed(0)))
    surface = manifold_surface("s_curve", 0, 12, n=5000)
    row = metrics.score(means, variances, data, means.mean(0), surface)
    hidden = ~data["mask"]
    column_means = np.nanmean(data["y"], 0)[np.nonzero(hidden)[1]]
    assert row["rmse"] < 0.8 * np.sqrt(((column_means - data["y_full"][hidden]) ** 2).mean())
    assert 0.8 < row["coverage"] <= 1 and np.isfinite(row["nlpd"]) and row["hidden_entries"] == hidden.sum()
    filled = np.where(data["mask"], data["y"], np.nanmean(data["y"], 0))
    assert row["manifold_distance"] < metrics.manifold_distance(filled, surface)


def test_ppca_without_missing_entries_is_the_closed_form_and_predicts_the_conditional_gaussian():
    rng = np.random.default_rng(0)
    w = rng.normal(size=(6, 2))
    y = rng.normal(size=(500, 2)) @ w.T + 0.1 * rng.normal(size=(500, 6)) + 3.0
    mask = np.ones_like(y, dtype=bool)
    mean, cov, loadings, noise = fit_ppca(y, mask, 2)
    eig = np.sort(np.linalg.eigvalsh(np.cov(y.T)))[::-1]  # scikit-learn divides by n - 1
    assert np.isclose(noise, eig[2:].mean(), rtol=1e-6)  # Tipping & Bishop: sigma^2 = mean of discarded eigenvalues
    assert np.allclose(loadings @ loadings.T + noise * np.eye(6), cov)
    hide = mask.copy()
    hide[:250, 4:] = False  # the first 250 points lack their last two entries
    means, variances, recon = ppca_predictive(np.where(hide, y, np.nan), hide, 2, iterations=20)
    o, m, rows = slice(0, 4), slice(4, 6), slice(0, 250)
    mean2, cov2, _, _ = fit_ppca(np.where(hide, y, np.nan), hide, 2, iterations=20)
    gain = cov2[m, o] @ np.linalg.inv(cov2[o, o])
    assert np.allclose(means[0][rows, m], mean2[m] + (y[rows, o] - mean2[o]) @ gain.T)
    assert np.allclose(variances[0][rows, m], np.diag(cov2[m, m] - gain @ cov2[o, m]))
    assert np.allclose(recon[rows, m], means[0][rows, m]) and (variances[0][hide] == 0).all()
    assert np.allclose(means[0][hide], y[hide])
    assert np.sqrt(((means[0][rows, m] - y[rows, m]) ** 2).mean()) < 0.2  # the subspace predicts the hidden columns
    with pytest.raises(ValueError, match="1 <= latent_dim < 6"):
        fit_ppca(y, mask, 6)
    hide[:, 5] = False
    with pytest.raises(ValueError, match="columns \\[5\\] have no observed entry"):
        fit_ppca(np.where(hide, y, np.nan), hide, 2)


def test_the_latent_dependence_on_u_is_measured_for_the_structured_family_only(fitted):
    from neurips26.gplvm_assvi.models import SummaryGPLVM

    data, y, mask, model = fitted
    assert np.isnan(evaluation.latent_dependence(model, y, mask, 4, torch.Generator().manual_seed(0)))
    structured = SummaryGPLVM(y, mask, latent_dim=2, inducing=12, hidden=(16,), seed=0)
    with torch.no_grad():
        structured.l_raw.copy_(torch.diag_embed(torch.zeros(12, 12, dtype=y.dtype)))  # q(U) with S = I: U varies
    dependence = evaluation.latent_dependence(structured, y, mask, 8, torch.Generator().manual_seed(0))
    assert dependence > 0
    with torch.no_grad():
        for p in structured.psi_net.parameters():
            p.zero_()  # a summary that ignores U: the latents no longer move with it
    assert evaluation.latent_dependence(structured, y, mask, 8, torch.Generator().manual_seed(0)) < 1e-12
