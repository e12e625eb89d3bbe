"""Paper 17's mean-field GPLVM: fitting raises the bound and imputes missing entries better than column means."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from conftest import crash_after_step
from neurips26.gplvm_assvi.data import make_manifold
from neurips26.gplvm_assvi.models import MeanFieldGPLVM, fit


@pytest.mark.parametrize("amortized", [False, True])
def test_fitting_raises_the_bound_and_imputes_better_than_column_means(amortized):
    data = make_manifold("s_curve", 120, seed=0, missing=0.2)
    y, mask = torch.as_tensor(data.y), torch.as_tensor(data.mask)
    model = MeanFieldGPLVM(y, mask, latent_dim=2, inducing=16, amortized=amortized, hidden=(16,), seed=0)
    trace = fit(model, y, mask, steps=150, lr=0.02)
    assert trace[-1] > trace[0] and np.isfinite(trace).all()
    pred = model.predict_mean(y, mask).numpy()
    missing = ~data.mask
    truth = data.clean[missing]
    column_means = np.nanmean(data.y, 0)[np.nonzero(missing)[1]]
    model_rmse = np.sqrt(((pred[missing] - truth) ** 2).mean())
    baseline = np.sqrt(((column_means - truth) ** 2).mean())
    assert model_rmse < 0.8 * baseline, (model_rmse, baseline)


def test_bad_sizes_are_refused():
    data = make_manifold("swiss_roll", 20, seed=0)
    y, mask = torch.as_tensor(data.y), torch.as_tensor(data.mask)
    with pytest.raises(ValueError, match="inducing points for 20 data points"):
        MeanFieldGPLVM(y, mask, latent_dim=2, inducing=30)
    with pytest.raises(ValueError, match="latent dimension must be >= 1"):
        MeanFieldGPLVM(y, mask, latent_dim=0, inducing=5)


def test_the_structured_model_raises_its_bound_and_imputes_better_than_column_means():
    from neurips26.gplvm_assvi.models import InducingGPLVM

    data = make_manifold("s_curve", 120, seed=0, missing=0.2)
    y, mask = torch.as_tensor(data.y), torch.as_tensor(data.mask)
    model = InducingGPLVM(y, mask, latent_dim=2, inducing=16, samples=2, hidden=(16,), inner_steps=1, inner_lr=0.05)
    trace = fit(model, y, mask, steps=150, lr=0.02)
    assert np.mean(trace[-10:]) > np.mean(trace[:10]) and np.isfinite(trace).all()
    pred = model.predict_mean(y, mask).numpy()
    missing = ~data.mask
    truth = data.clean[missing]
    baseline = np.sqrt(((np.nanmean(data.y, 0)[np.nonzero(missing)[1]] - truth) ** 2).mean())
    assert np.sqrt(((pred[missing] - truth) ** 2).mean()) < 0.8 * baseline


@pytest.mark.parametrize("structured", [False, True])
def test_the_predictive_mixture_is_seeded_and_covers_missing_entries(structured):
    from neurips26.gplvm_assvi.metrics import coverage, nlpd, rmse
    from neurips26.gplvm_assvi.models import InducingGPLVM as StructuredGPLVM
    from neurips26.gplvm_assvi.models import predictive_samples

    data = make_manifold("s_curve", 120, seed=0, missing=0.2)
    y, mask = torch.as_tensor(data.y), torch.as_tensor(data.mask)
    cls = StructuredGPLVM if structured else MeanFieldGPLVM
    inner = {"samples": 2, "inner_steps": 1, "inner_lr": 0.05} if structured else {}  # one inner step: test time
    model = cls(y, mask, latent_dim=2, inducing=16, hidden=(16,), seed=0, **inner)
    fit(model, y, mask, steps=150, lr=0.02)
    means, variances = predictive_samples(model, y, mask, 16, torch.Generator().manual_seed(0))
    again = predictive_samples(model, y, mask, 16, torch.Generator().manual_seed(0))
    assert torch.equal(means, again[0]) and (variances > 0).all() and means.shape == (16, 120, 12)
    score = ~data.mask
    m, v = means.numpy(), variances.numpy()
    truth = np.where(score, data.clean, np.nan)
    assert rmse(m, truth, score) < 0.8 * np.sqrt(
        ((np.nanmean(data.y, 0)[np.nonzero(score)[1]] - data.clean[score]) ** 2).mean()
    )
    assert np.isfinite(nlpd(m, v, truth, score)) and coverage(m, v, truth, score) > 0.7


@pytest.mark.parametrize("structured", [False, True])
def test_an_interrupted_fit_resumes_to_the_same_parameters(tmp_path, monkeypatch, structured):
    from neurips26.common import loop
    from neurips26.gplvm_assvi.models import InducingGPLVM as StructuredGPLVM

    data = make_manifold("s_curve", 60, seed=0, missing=0.2)
    y, mask = torch.as_tensor(data.y), torch.as_tensor(data.mask)
    cls = StructuredGPLVM if structured else MeanFieldGPLVM

    def run(settings=None):
        model = cls(y, mask, latent_dim=2, inducing=8, hidden=(16,), seed=0)
        return model, fit(model, y, mask, steps=12, lr=0.02, loop_settings=settings, batch=20, seed=0)

    whole, whole_trace = run()
    settings = loop.LoopSettings(checkpoint=tmp_path / "ckpt", fingerprint="x", every_steps=5)
    crash_after_step(monkeypatch, 8)  # the job dies after this step; its last checkpoint is earlier
    with pytest.raises(KeyboardInterrupt):
        run(settings)
    monkeypatch.undo()
    resumed, resumed_trace = run(settings)
    for a, b in zip(whole.state_dict().values(), resumed.state_dict().values()):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert resumed_trace == whole_trace


def test_minibatches_estimate_the_full_bound_without_bias():
    data = make_manifold("s_curve", 60, seed=0, missing=0.2)
    y, mask = torch.as_tensor(data.y), torch.as_tensor(data.mask)
    model = MeanFieldGPLVM(y, mask, latent_dim=2, inducing=8, seed=0)
    with torch.no_grad():
        full = float(model.objective(y, mask))
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        estimates = [float(model.objective(y, mask, torch.randperm(60, generator=g)[:15], 4.0)) for _ in range(400)]
    assert abs(np.mean(estimates) - full) < 4 * np.std(estimates) / np.sqrt(len(estimates))
    with pytest.raises(ValueError, match="batch must be in \\[1, 60\\]"):
        fit(model, y, mask, steps=1, lr=0.01, batch=61)


@pytest.mark.parametrize("depends_on_u", [True, False])
def test_the_inner_steps_climb_each_points_bound_given_the_draw_of_u(depends_on_u):
    """ssvi_amort conditions its latents on each draw of U by Adam steps on the points' bound given that draw (the
    reference's inner loop); ssvi_indep climbs the bound with q(U) integrated instead, so its latents ignore U."""
    from neurips26.gplvm_assvi.elbo import draw_u, inducing_inverse, local_bound_given_u
    from neurips26.gplvm_assvi.models import InducingGPLVM

    data = make_manifold("s_curve", 60, seed=0, missing=0.5)
    y, mask = torch.as_tensor(data.y), torch.as_tensor(data.mask)
    kw = dict(latent_dim=2, inducing=8, hidden=(16,), inner_lr=0.05, seed=0, depends_on_u=depends_on_u)
    refined, raw = InducingGPLVM(y, mask, inner_steps=5, **kw), InducingGPLVM(y, mask, inner_steps=0, **kw)
    with torch.no_grad():
        refined.l_raw.add_(2.0)  # a broad q(U), so that draws of U differ
        raw.l_raw.add_(2.0)
        u, other = (draw_u(refined.m, refined.chol_s(), torch.Generator().manual_seed(i)) for i in (1, 2))
        hyper = dict(variance=refined.log_variance.exp(), alpha=refined.log_alpha.exp(), beta=refined.log_beta.exp())
        _, k_inv = inducing_inverse(refined.z, hyper["variance"], hyper["alpha"])
        before = local_bound_given_u(y, mask, *raw.latent_given_u(y, mask, u), refined.z, u, k_inv, **hyper)
        after = local_bound_given_u(y, mask, *refined.latent_given_u(y, mask, u), refined.z, u, k_inv, **hyper)
        moved = (refined.latent_given_u(y, mask, u)[0] - refined.latent_given_u(y, mask, other)[0]).abs().max()
    if depends_on_u:
        assert after.sum() > before.sum() and moved > 1e-3
    else:
        assert moved == 0


def test_quick_scale_has_the_broad_q_u_regime_with_both_ablations():
    from conftest import ROOT
    from neurips26.common.config import load_yaml
    from neurips26.gplvm_assvi import experiment

    quick = load_yaml(ROOT / "config/gplvm_assvi.yaml")["quick"]
    broad = quick["comparisons"]["broad"]
    block = quick["datasets"][broad]
    assert block["missing"] >= 0.6 and block["n"] < min(d["n"] for k, d in quick["datasets"].items() if k != broad)
    assert {"ssvi_amort", "ssvi_indep", "ssvi_summary"} <= set(experiment.methods_of(quick, broad))
