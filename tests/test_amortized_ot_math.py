"""The mathematics of RA-OT / OA-OT: sliced 1-D duals, log-domain Sinkhorn, costs and the linear model."""

import warnings

import numpy as np
import ot
import pytest
import torch
from scipy.spatial.distance import cdist

from neurips26.amortized_ot import costs, method, metrics, sinkhorn, sliced
from neurips26.amortized_ot.data import grid_points
from neurips26.amortized_ot.measures import MeasureError

pytestmark = pytest.mark.filterwarnings("ignore:The balance properties of Sobol:UserWarning")


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def random_pairs(rng, P=3, n=5, m=6, d=2):
    x = rng.normal(size=(P, n, d))
    y = rng.normal(size=(P, m, d)) + 0.5
    a = rng.dirichlet(np.ones(n), size=P)
    b = rng.dirichlet(np.ones(m), size=P)
    return x, a, y, b


def tensors(*arrays):
    return tuple(torch.as_tensor(v, dtype=torch.float64) for v in arrays)


@pytest.fixture
def small_problem(rng):
    x, a, y, b = random_pairs(rng, P=2, n=5, m=6, d=2)
    eps = 0.5
    cost = costs.cost_matrix(x, y, "sqeuclidean")
    sol = sinkhorn.solve_ground_truth(a, b, cost, eps, tol=1e-12, max_iter=20000)
    return x, a, y, b, cost, eps, sol


# --------------------------------------------------------------------------- sliced potentials


def projected_problem(x, a, y, b, theta, p, k):
    s, t = x[p] @ theta[k], y[p] @ theta[k]
    return (s[:, None] - t[None, :]) ** 2, a[p], b[p]


def test_sliced_potentials_are_dual_feasible_for_every_pair_and_direction(rng):
    x, a, y, b = random_pairs(rng)
    theta = sliced.directions(4, 2, seed=1)
    phi, psi = sliced.sliced_potentials(x, a, y, b, theta)
    assert phi.shape == (3, 5, 4) and psi.shape == (3, 6, 4)
    for p in range(3):
        for k in range(4):
            C, _, _ = projected_problem(x, a, y, b, theta, p, k)
            assert np.all(phi[p, :, k][:, None] + psi[p, :, k][None, :] <= C + 1e-9)


def test_sliced_potentials_attain_the_exact_1d_optimal_transport_cost(rng):
    x, a, y, b = random_pairs(rng)
    theta = sliced.directions(4, 2, seed=1)
    phi, psi = sliced.sliced_potentials(x, a, y, b, theta)
    for p in range(3):
        for k in range(4):
            C, ap, bp = projected_problem(x, a, y, b, theta, p, k)
            dual = phi[p, :, k] @ ap + psi[p, :, k] @ bp
            assert dual == pytest.approx(ot.emd2(ap, bp, C), abs=1e-9)


def test_sliced_potentials_of_colour_pairs_are_kantorovich_potentials():
    """Issue 41, the colour task's defect: its measures are pixel colours with uniform weights (every cumulative
    weight ties) and duplicate colours (tied projections). There POT's weight gradients, the sliced potentials
    before, broke phi_i + psi_j <= |s_i - t_j|^2 (by up to 1.6 on quick's pairs, potentials of range 0.16) and gave
    duplicate colours different potentials; RA-OT's plans on colour were worse than f = 0. Read from scikit-image's
    bundled images (no network)."""
    from neurips26.amortized_ot.data import task_pairs

    p = task_pairs("colour", {"crop": 32}, 0, "test", 6, 64, [])
    x, a, y, b = (p[k] for k in "xayb")
    theta = sliced.directions(8, 3, seed=0)
    phi, psi = sliced.sliced_potentials(x, a, y, b, theta)
    duplicates = 0
    for q in range(len(x)):
        for k in range(len(theta)):
            C, ap, bp = projected_problem(x, a, y, b, theta, q, k)
            assert np.all(phi[q, :, k][:, None] + psi[q, :, k][None, :] <= C + 1e-12)
            assert phi[q, :, k] @ ap + psi[q, :, k] @ bp == pytest.approx(ot.emd2(ap, bp, C), abs=1e-10)
        _, inverse = np.unique(x[q], axis=0, return_inverse=True)
        for group in np.unique(inverse):
            same = np.flatnonzero(inverse.reshape(-1) == group)
            if len(same) > 1:
                duplicates += 1
                np.testing.assert_allclose(phi[q, same], phi[q, same[:1]].repeat(len(same), 0), atol=1e-12)
    assert duplicates > 0  # the data has duplicate colours (else the test tests nothing)


def test_sliced_potentials_are_centered_per_pair_and_direction(rng):
    x, a, y, b = random_pairs(rng)
    theta = sliced.directions(4, 2, seed=1)
    phi, psi = sliced.sliced_potentials(x, a, y, b, theta)
    np.testing.assert_allclose(np.einsum("pnl,pn->pl", phi, a), np.einsum("pml,pm->pl", psi, b), atol=1e-12)


def test_directions_are_unit_vectors():
    theta = sliced.directions(16, 3, seed=0)
    assert theta.shape == (16, 3)
    np.testing.assert_allclose(np.linalg.norm(theta, axis=1), 1.0, atol=1e-12)


def test_directions_are_deterministic_per_seed():
    np.testing.assert_array_equal(sliced.directions(8, 3, seed=5), sliced.directions(8, 3, seed=5))
    assert not np.allclose(sliced.directions(8, 3, seed=5), sliced.directions(8, 3, seed=6))


@pytest.mark.parametrize("n_projections", [0, -3])
def test_directions_reject_fewer_than_one_projection(n_projections):
    with pytest.raises(MeasureError, match="projections must be >= 1"):
        sliced.directions(n_projections, 2, seed=0)


def test_sliced_potentials_reject_directions_of_the_wrong_dimension(rng):
    x, a, y, b = random_pairs(rng, d=2)
    with pytest.raises(MeasureError, match="dimension mismatch"):
        sliced.sliced_potentials(x, a, y, b, sliced.directions(4, 3, seed=0))


# --------------------------------------------------------------------------- sinkhorn


def test_ground_truth_plan_agrees_with_pot_log_sinkhorn(small_problem):
    x, a, y, b, cost, eps, sol = small_problem
    assert sol.converged.all()
    a_t, b_t = tensors(a, b)
    pi = sinkhorn.plan(torch.as_tensor(sol.f), torch.as_tensor(sol.g), a_t, b_t, cost, eps).numpy()
    for p in range(len(a)):
        ref, log = ot.sinkhorn(
            a[p], b[p], cost[p].numpy(), eps, method="sinkhorn_log", log=True, numItermax=100000, stopThr=1e-13
        )
        np.testing.assert_allclose(pi[p], ref, atol=1e-6)
        np.testing.assert_allclose(pi[p].sum(1), a[p], atol=1e-8)
        np.testing.assert_allclose(pi[p].sum(0), b[p], atol=1e-12)


def test_ground_truth_potentials_are_centered(small_problem):
    _, a, _, b, _, _, sol = small_problem
    np.testing.assert_allclose((sol.f * a).sum(1), (sol.g * b).sum(1), atol=1e-12)


def test_c_transform_makes_the_target_marginal_exact(rng):
    x, a, y, b = random_pairs(rng)
    a_t, b_t = tensors(a, b)
    cost = costs.cost_matrix(x, y, "sqeuclidean")
    f = torch.as_tensor(rng.normal(size=a.shape))  # any potential, far from optimal
    g = sinkhorn.c_transform(f, a_t, cost, 0.3)
    pi = sinkhorn.plan(f, g, a_t, b_t, cost, 0.3)
    np.testing.assert_allclose(pi.sum(-2).numpy(), b, atol=1e-12)


def test_c_transform_rows_makes_the_source_marginal_exact(rng):
    x, a, y, b = random_pairs(rng)
    a_t, b_t = tensors(a, b)
    cost = costs.cost_matrix(x, y, "sqeuclidean")
    g = torch.as_tensor(rng.normal(size=b.shape))
    f = sinkhorn.c_transform_rows(g, b_t, cost, 0.3)
    np.testing.assert_allclose(sinkhorn.plan(f, g, a_t, b_t, cost, 0.3).sum(-1).numpy(), a, atol=1e-12)


def test_center_leaves_the_plan_unchanged_and_equalises_the_dual_terms(rng):
    x, a, y, b = random_pairs(rng)
    a_t, b_t = tensors(a, b)
    cost = costs.cost_matrix(x, y, "sqeuclidean")
    f, g = torch.as_tensor(rng.normal(size=a.shape)), torch.as_tensor(rng.normal(size=b.shape) + 3.0)
    fc, gc = sinkhorn.center(f, g, a_t, b_t)
    np.testing.assert_allclose(
        sinkhorn.plan(fc, gc, a_t, b_t, cost, 0.4).numpy(), sinkhorn.plan(f, g, a_t, b_t, cost, 0.4).numpy(), rtol=1e-12
    )
    np.testing.assert_allclose((fc * a_t).sum(-1).numpy(), (gc * b_t).sum(-1).numpy(), atol=1e-12)


def test_semi_dual_is_maximal_at_the_sinkhorn_potential(small_problem, rng):
    _, a, _, b, cost, eps, sol = small_problem
    a_t, b_t = tensors(a, b)
    f_star = torch.as_tensor(sol.f)
    best = sinkhorn.semi_dual(f_star, a_t, b_t, cost, eps)
    for scale in (1e-3, 1e-1, 1.0):
        perturbed = f_star + scale * torch.as_tensor(rng.normal(size=a.shape))
        assert torch.all(best >= sinkhorn.semi_dual(perturbed, a_t, b_t, cost, eps) - 1e-12)
    # the semi-dual is invariant to a constant shift of f (the shift goes to g)
    np.testing.assert_allclose(sinkhorn.semi_dual(f_star + 2.5, a_t, b_t, cost, eps).numpy(), best.numpy(), atol=1e-12)


def test_iterations_to_tolerance_is_zero_from_the_converged_potential(small_problem):
    _, a, _, b, cost, eps, sol = small_problem
    a_t, b_t = tensors(a, b)
    counts = sinkhorn.iterations_to_tolerance(torch.as_tensor(sol.f), a_t, b_t, cost, eps, 1e-6, 1000)
    np.testing.assert_array_equal(counts, 0)


def test_iterations_to_tolerance_is_positive_from_zero(small_problem):
    _, a, _, b, cost, eps, _ = small_problem
    a_t, b_t = tensors(a, b)
    counts = sinkhorn.iterations_to_tolerance(torch.zeros_like(a_t), a_t, b_t, cost, eps, 1e-6, 1000)
    assert np.all(counts > 0) and np.all(counts < 1000)


def test_iterations_to_tolerance_reports_max_iter_when_not_reached(small_problem):
    _, a, _, b, cost, eps, _ = small_problem
    a_t, b_t = tensors(a, b)
    counts = sinkhorn.iterations_to_tolerance(torch.zeros_like(a_t), a_t, b_t, cost, eps, 1e-14, 2)
    np.testing.assert_array_equal(counts, 2)


def test_iterations_to_tolerance_respects_a_per_pair_tolerance(small_problem):
    _, a, _, b, cost, eps, _ = small_problem
    a_t, b_t = tensors(a, b)
    zeros = torch.zeros_like(a_t)
    tight = sinkhorn.iterations_to_tolerance(zeros, a_t, b_t, cost, eps, 1e-8, 1000)
    same = sinkhorn.iterations_to_tolerance(zeros, a_t, b_t, cost, eps, torch.tensor([1e-8, 1e-8]), 1000)
    np.testing.assert_array_equal(same, tight)
    mixed = sinkhorn.iterations_to_tolerance(zeros, a_t, b_t, cost, eps, torch.tensor([10.0, 1e-8]), 1000)
    assert mixed[0] == 0  # a tolerance above any possible L1 error is met at once
    assert mixed[1] == tight[1] > 0


@pytest.mark.parametrize("eps", [0.0, -0.1, float("nan")])
def test_sinkhorn_rejects_non_positive_eps(small_problem, eps):
    _, a, _, b, cost, _, _ = small_problem
    with pytest.raises(MeasureError, match="eps must be > 0"):
        sinkhorn.solve_ground_truth(a, b, cost, eps, 1e-6, 100)
    with pytest.raises(MeasureError, match="eps must be > 0"):
        a_t, b_t = tensors(a, b)
        sinkhorn.iterations_to_tolerance(torch.zeros_like(a_t), a_t, b_t, cost, eps, 1e-3, 10)


# --------------------------------------------------------------------------- costs


def test_squared_euclidean_matches_scipy(rng):
    x, _, y, _ = random_pairs(rng, d=3)
    cost = costs.cost_matrix(x, y, "sqeuclidean").numpy()
    for p in range(len(x)):
        np.testing.assert_allclose(cost[p], cdist(x[p], y[p], "sqeuclidean"), rtol=1e-10, atol=1e-12)


def test_squared_euclidean_accepts_tensors_and_is_float64(rng):
    x = torch.as_tensor(rng.normal(size=(1, 4, 2)), dtype=torch.float32)
    cost = costs.cost_matrix(x, x, "sqeuclidean")
    assert cost.dtype == torch.float64
    assert torch.all(cost >= 0)


def test_squared_geodesic_of_a_point_with_itself_is_zero_and_of_antipodes_is_pi_squared(rng):
    z = rng.normal(size=(1, 5, 3))
    z /= np.linalg.norm(z, axis=-1, keepdims=True)
    np.testing.assert_allclose(np.diag(costs.cost_matrix(z, z, "sqgeodesic").numpy()[0]), 0.0, atol=1e-12)
    antipodes = np.diag(costs.cost_matrix(z, -z, "sqgeodesic").numpy()[0])
    np.testing.assert_allclose(antipodes, np.pi**2, rtol=1e-7)  # arccos is ill-conditioned near -1
    quarter = costs.cost_matrix(np.array([[[1.0, 0, 0]]]), np.array([[[0, 1.0, 0]]]), "sqgeodesic")
    assert float(quarter) == pytest.approx((np.pi / 2) ** 2)


def test_unknown_cost_name_raises_naming_allowed_values(rng):
    x = rng.normal(size=(1, 3, 2))
    with pytest.raises(ValueError, match=r"unknown cost 'l1'.*allowed values: sqeuclidean, sqgeodesic"):
        costs.cost_matrix(x, x, "l1")


# --------------------------------------------------------------------------- the functional linear model


def test_fit_regression_recovers_exact_coefficients_without_ridge(rng):
    P, n, k = 6, 7, 5
    design = rng.normal(size=(P, n, k))
    coef_true = rng.normal(size=k)
    a = rng.dirichlet(np.ones(n), size=P)
    coef = method.fit_regression(design, design @ coef_true, a, ridge=0.0)
    np.testing.assert_allclose(coef, coef_true, rtol=1e-9, atol=1e-10)


def test_fit_regression_ridge_shrinks_the_coefficients(rng):
    P, n, k = 6, 7, 5
    design = rng.normal(size=(P, n, k))
    target = design @ rng.normal(size=k) + 0.1 * rng.normal(size=(P, n))
    a = rng.dirichlet(np.ones(n), size=P)
    free = method.fit_regression(design, target, a, ridge=0.0)
    shrunk = method.fit_regression(design, target, a, ridge=10.0)
    assert np.linalg.norm(shrunk) < np.linalg.norm(free)


@pytest.fixture(scope="module")
def blob_problem():
    """40 pairs of 2-D Gaussian blobs on one 16-point grid, random centres/widths, eps 0.05."""
    rng = np.random.default_rng(1)
    grid = grid_points(4)
    P, n = 40, len(grid)

    def blob():
        centre, width = rng.uniform(0.1, 0.9, size=2), rng.uniform(0.15, 0.35)
        w = np.exp(-((grid - centre) ** 2).sum(1) / (2 * width**2)) + 1e-3
        return w / w.sum()

    a = np.stack([blob() for _ in range(P)])
    b = np.stack([blob() for _ in range(P)])
    x = np.broadcast_to(grid, (P, n, 2)).copy()
    y = x.copy()
    eps = 0.05
    cost = costs.cost_matrix(x, y, "sqeuclidean")
    sol = sinkhorn.solve_ground_truth(a, b, cost, eps, tol=1e-9, max_iter=20000)
    assert sol.converged.all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        theta = sliced.directions(8, 2, seed=0)
    centres, bandwidth = method.rbf_centres(x[:30], 4, seed=0)
    design = method.functional_design(x, a, y, b, theta, centres, bandwidth)
    return dict(
        x=x,
        a=a,
        y=y,
        b=b,
        cost=cost,
        eps=eps,
        sol=sol,
        theta=theta,
        centres=centres,
        bandwidth=bandwidth,
        design=design,
    )


def mean_semi_dual(design, coef, a, b, cost, eps):
    f = torch.as_tensor(design @ coef)
    return sinkhorn.semi_dual(f, *tensors(a, b), cost, eps).mean().item()


def test_fit_dual_increases_the_semi_dual_over_its_zero_start(blob_problem):
    bp = blob_problem
    tr = slice(0, 30)
    design, a, b, cost, eps = bp["design"][tr], bp["a"][tr], bp["b"][tr], bp["cost"][tr], bp["eps"]
    features = method.PairFeatures(bp["x"][tr], a, bp["y"][tr], b, bp["theta"], bp["centres"], bp["bandwidth"])
    coef, trace = method.fit_dual(features, "sqeuclidean", eps, ridge=0.0, max_iter=30)
    zero = mean_semi_dual(design, np.zeros_like(coef), a, b, cost, eps)
    optimum = mean_semi_dual(design, coef, a, b, cost, eps)
    assert trace[0] == pytest.approx(zero, abs=1e-12)
    assert optimum > zero + 1e-3
    random = np.random.default_rng(3).normal(size=coef.shape)
    assert optimum > mean_semi_dual(design, random, a, b, cost, eps)
    # no coefficient vector beats the per-pair Sinkhorn potentials (the semi-dual's maximisers)
    best = sinkhorn.semi_dual(torch.as_tensor(bp["sol"].f[tr]), *tensors(a, b), cost, eps).mean().item()
    assert optimum <= best + 1e-9


def test_rbf_basis_is_the_constant_one_for_a_single_basis_function(rng):
    points = rng.normal(size=(3, 5, 2))
    centres, bandwidth = method.rbf_centres(points, 1, seed=0)
    assert centres.shape == (1, 2)
    np.testing.assert_array_equal(method.rbf_basis(points, centres, bandwidth), np.ones((3, 5, 1)))


def test_rbf_basis_peaks_at_its_centres(rng):
    points = rng.normal(size=(2, 30, 2))
    centres, bandwidth = method.rbf_centres(points, 3, seed=0)
    assert centres.shape == (3, 2) and bandwidth > 0
    basis = method.rbf_basis(centres, centres, bandwidth)
    np.testing.assert_allclose(np.diag(basis), 1.0)
    assert np.all(basis <= 1.0)


@pytest.mark.parametrize("n_basis", [0, -1])
def test_rbf_centres_reject_fewer_than_one_basis_function(rng, n_basis):
    with pytest.raises(MeasureError, match="K must be >= 1"):
        method.rbf_centres(rng.normal(size=(2, 5, 2)), n_basis, seed=0)


def test_design_matrix_has_k_times_l_plus_one_columns(rng):
    basis, phi = rng.normal(size=(2, 5, 3)), rng.normal(size=(2, 5, 4))
    design = method.design_matrix(basis, phi)
    assert design.shape == (2, 5, 3 * (4 + 1))
    np.testing.assert_array_equal(design[..., :3], basis)
    np.testing.assert_allclose(design[..., 3 + 1 * 4 + 2], basis[..., 1] * phi[..., 2])


def fitted_model(bp, n_train=30):
    coef = method.fit_regression(bp["design"][:n_train], bp["sol"].f[:n_train], bp["a"][:n_train], ridge=1e-6)
    return method.FittedModel(bp["theta"], bp["centres"], bp["bandwidth"], coef)


def test_predict_f_rejects_atoms_of_another_dimension(blob_problem, rng):
    model = fitted_model(blob_problem)
    x3 = rng.normal(size=(1, 4, 3))
    a = np.full((1, 4), 0.25)
    with pytest.raises(MeasureError, match="dimension mismatch"):
        method.predict_f(model, x3, a, x3, a)


def test_predict_plan_has_the_exact_target_marginal(blob_problem):
    bp = blob_problem
    te = slice(30, 40)
    pi = method.predict_plan(
        fitted_model(bp), bp["x"][te], bp["a"][te], bp["y"][te], bp["b"][te], bp["cost"][te], bp["eps"]
    )
    assert pi.shape == (10, 16, 16) and np.all(pi >= 0)
    np.testing.assert_allclose(pi.sum(-2), bp["b"][te], atol=1e-12)


def test_fitted_model_round_trips_through_a_dict(blob_problem):
    model = fitted_model(blob_problem)
    back = method.FittedModel.from_dict(model.as_dict())
    for key in ("theta", "centres", "coef"):
        np.testing.assert_array_equal(getattr(back, key), getattr(model, key))
    assert back.bandwidth == model.bandwidth


def test_sliced_mean_potential_in_one_dimension_is_the_exact_1d_potential(rng):
    n, m = 6, 5
    x = np.sort(rng.normal(size=(1, n, 1)), axis=1)
    y = rng.normal(size=(1, m, 1)) + 0.3
    a, b = rng.dirichlet(np.ones(n), size=1), rng.dirichlet(np.ones(m), size=1)
    phi, psi = sliced.sliced_potentials(x, a, y, b, np.array([[1.0]]))
    f = method.sliced_mean_potential(phi, dim=1)
    assert f.shape == (1, n)
    np.testing.assert_allclose(f, phi[..., 0])
    # generic weights make the 1-D plan non-degenerate, so the exact dual is unique up to a constant
    cost = (x[0] - y[0].T) ** 2
    _, log = ot.emd(a[0], b[0], cost, log=True)
    u, v = log["u"], log["v"]
    shift = 0.5 * (v @ b[0] - u @ a[0])
    np.testing.assert_allclose(f[0], u + shift, atol=1e-9)
    np.testing.assert_allclose(psi[0, :, 0], v - shift, atol=1e-9)


def test_sliced_mean_potential_scales_by_the_dimension(rng):
    phi = rng.normal(size=(2, 4, 8))
    np.testing.assert_allclose(method.sliced_mean_potential(phi, dim=3), 3 * phi.mean(-1))


# --------------------------------------------------------------------------- end to end


def test_ra_ot_predicts_held_out_potentials_better_than_zero(blob_problem):
    bp = blob_problem
    te = slice(30, 40)
    f_hat = method.predict_f(fitted_model(bp), bp["x"][te], bp["a"][te], bp["y"][te], bp["b"][te])
    f_star = bp["sol"].f[te]
    rmse = metrics.weighted_rmse(f_hat, f_star, bp["a"][te])
    rmse_zero = metrics.weighted_rmse(np.zeros_like(f_star), f_star, bp["a"][te])
    assert np.median(rmse) < 0.5 * np.median(rmse_zero)
    assert rmse.mean() < rmse_zero.mean()


def test_ra_ot_warm_start_needs_fewer_sinkhorn_iterations_than_cold_start(blob_problem):
    bp = blob_problem
    te = slice(30, 40)
    f_hat = method.predict_f(fitted_model(bp), bp["x"][te], bp["a"][te], bp["y"][te], bp["b"][te])
    a_t, b_t = tensors(bp["a"][te], bp["b"][te])
    warm = sinkhorn.iterations_to_tolerance(torch.as_tensor(f_hat), a_t, b_t, bp["cost"][te], bp["eps"], 1e-3, 2000)
    cold = sinkhorn.iterations_to_tolerance(torch.zeros_like(a_t), a_t, b_t, bp["cost"][te], bp["eps"], 1e-3, 2000)
    assert np.median(warm) < np.median(cold)
    assert np.all(cold < 2000)


def test_predicted_potential_metrics_are_finite_and_the_truth_scores_zero(blob_problem):
    bp = blob_problem
    te = slice(30, 40)
    a, b, cost, eps, sol = bp["a"][te], bp["b"][te], bp["cost"][te], bp["eps"], bp["sol"]
    exact = metrics.potential_metrics(sol.f[te], sol.f[te], sol.g[te], a, b, cost, eps)
    np.testing.assert_allclose(exact["rmse_f"], 0.0, atol=1e-10)
    np.testing.assert_allclose(exact["rmse_g"], 0.0, atol=1e-8)
    np.testing.assert_allclose(exact["cost_rel_error"], 0.0, atol=1e-7)
    f_hat = method.predict_f(fitted_model(bp), bp["x"][te], a, bp["y"][te], b)
    pred = metrics.potential_metrics(f_hat, sol.f[te], sol.g[te], a, b, cost, eps)
    for values in pred.values():
        assert values.shape == (10,) and np.all(np.isfinite(values))


def test_cold_start_trajectory_gives_the_same_counts_as_a_direct_run(small_problem):
    from neurips26.amortized_ot.evaluation import cold_start

    _, a, _, b, cost, eps, _ = small_problem
    a_t, b_t = tensors(a, b)
    cold = cold_start(a, b, cost, eps, 1e-8, 1000)
    for tol in (1e-3, 1e-5, 1e-8):
        direct = sinkhorn.iterations_to_tolerance(torch.zeros_like(a_t), a_t, b_t, cost, eps, tol, 1000)
        np.testing.assert_array_equal(cold.iterations(tol), direct)
    assert cold.seconds_per_pair_iteration > 0


def test_the_ground_truth_in_blocks_bounds_the_cost_matrix_and_gives_the_same_potentials(monkeypatch):
    """Paper scale (issue 38): all pairs' cost matrices at once are 17 GB (colour) to 64 GB (sphere) of float64
    against an 8 GB request; the ground truth builds one block of pairs' costs at a time."""
    rng = np.random.default_rng(2)
    P, n = 7, 16
    x, y = rng.uniform(size=(P, n, 2)), rng.uniform(size=(P, n, 2))
    a, b = rng.dirichlet(np.ones(n), size=P), rng.dirichlet(np.ones(n), size=P)
    whole = sinkhorn.solve_ground_truth(a, b, costs.cost_matrix(x, y, "sqeuclidean"), 0.1, 1e-9, 5000)
    built = []
    real = costs.cost_matrix
    monkeypatch.setattr(costs, "cost_matrix", lambda *args: built.append(real(*args).numel()) or real(*args))
    blocks = sinkhorn.solve_ground_truth_blocks(x, y, a, b, "sqeuclidean", 0.1, 1e-9, 5000, budget=3 * n * n)
    assert max(built) <= 3 * n * n and sum(built) == P * n * n  # three blocks: 3, 3 and 1 pairs
    for key in ("f", "g", "marginal_error"):  # POT stops each block on its own worst pair: equal to the tolerance
        np.testing.assert_allclose(getattr(blocks, key), getattr(whole, key), atol=1e-8)
    np.testing.assert_array_equal(blocks.converged, whole.converged)
