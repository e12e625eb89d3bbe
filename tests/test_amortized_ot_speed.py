"""Paper 18's prediction speed: the closed-form sliced duals give POT's autograd duals bit for bit (ties
included), batched prediction equals one pair at a time, and cold Sinkhorn is timed to the prediction's
marginal error with the work it needs."""

import numpy as np
import pytest
import torch

from neurips26.amortized_ot import costs, method, metrics, sinkhorn, sliced, speed

pytestmark = pytest.mark.filterwarnings("ignore:The balance properties of Sobol:UserWarning")


def pairs_with_ties(rng, P=4, n=12, m=12, d=3):
    """Colour-like pairs: duplicate atoms (tied projections) and uniform weights (tied cumulative weights)."""
    x = rng.integers(0, 4, size=(P, n, d)) / 4.0
    y = rng.integers(0, 4, size=(P, m, d)) / 4.0
    return x, np.full((P, n), 1.0 / n), y, np.full((P, m), 1.0 / m)


def generic_pairs(rng, P=3, n=7, m=5, d=2):
    x, y = rng.normal(size=(P, n, d)), rng.normal(size=(P, m, d)) + 0.5
    return x, rng.dirichlet(np.ones(n), size=P), y, rng.dirichlet(np.ones(m), size=P)


@pytest.mark.parametrize(
    "make",
    [
        pairs_with_ties,
        lambda rng: pairs_with_ties(rng, n=8, m=16),
        lambda rng: pairs_with_ties(rng, n=10, m=10, d=2),
        generic_pairs,
        lambda rng: generic_pairs(rng, n=1, m=4),
    ],
    ids=["ties", "ties_n_neq_m", "ties_2d", "generic", "one_atom"],
)
def test_closed_form_sliced_duals_equal_pots_autograd_duals_bit_for_bit(make):
    rng = np.random.default_rng(0)
    x, a, y, b = make(rng)
    theta = sliced.directions(8, x.shape[2], seed=3)
    phi, psi = sliced.sliced_potentials(x, a, y, b, theta)
    ref_phi, ref_psi = sliced.sliced_potentials_backprop(x, a, y, b, theta)
    np.testing.assert_array_equal(phi, ref_phi)
    np.testing.assert_array_equal(psi, ref_psi)


def test_sliced_duals_with_zero_weights_equal_pots():
    rng = np.random.default_rng(1)
    x, a, y, b = generic_pairs(rng, n=6, m=6)
    a[:, 2] = 0.0  # equal consecutive cumulative weights
    a /= a.sum(-1, keepdims=True)
    theta = sliced.directions(4, 2, seed=0)
    for ours, ref in zip(
        sliced.sliced_potentials(x, a, y, b, theta), sliced.sliced_potentials_backprop(x, a, y, b, theta)
    ):
        np.testing.assert_array_equal(ours, ref)


def colour_model(P=6, n=16, L=8, K=4):
    """A fitted RA-OT model on small colour-like pairs (duplicate colours, uniform weights)."""
    x, a, y, b = pairs_with_ties(np.random.default_rng(2), P, n, n)
    cost = costs.cost_matrix(x, y, "sqeuclidean")
    truth = sinkhorn.solve_ground_truth(a, b, cost, 0.1, 1e-9, 5000)
    model, _ = method.fit_model("ra", x, a, y, b, truth.f, None, L, K, 1e-6, seed=0)
    return model, (x, a, y, b)


def test_batched_prediction_equals_one_pair_at_a_time():
    model, (x, a, y, b) = colour_model()
    batched = method.predict_f(model, x, a, y, b)
    alone = np.concatenate(
        [method.predict_f(model, x[p : p + 1], a[p : p + 1], y[p : p + 1], b[p : p + 1]) for p in range(len(x))]
    )
    np.testing.assert_allclose(batched, alone, rtol=1e-12, atol=1e-12)


def test_prediction_equals_the_route_before_the_speed_work():
    model, (x, a, y, b) = colour_model()
    np.testing.assert_allclose(
        method.predict_f(model, x, a, y, b), speed.predict_f_before(model, x, a, y, b), rtol=1e-12, atol=1e-12
    )


def test_design_blocks_give_the_design_matrix_product():
    rng = np.random.default_rng(3)
    basis, phi, coef = rng.random((5, 9, 3)), rng.normal(size=(5, 9, 4)), rng.normal(size=15)
    full = method.design_matrix(basis, phi) @ coef
    np.testing.assert_allclose(method.functional_potential(basis, phi, coef), full, rtol=1e-12, atol=1e-12)


def test_c_transform_in_chunks_equals_one_call():
    rng = np.random.default_rng(4)
    x, a, y, b = generic_pairs(rng, P=5, n=6, m=7)
    C = costs.cost_matrix(x, y, "sqeuclidean")
    f = torch.as_tensor(rng.normal(size=(5, 6)))
    np.testing.assert_array_equal(
        speed.in_chunks(sinkhorn.c_transform, f, torch.as_tensor(a), C, 0.3).numpy(),
        sinkhorn.c_transform(f, torch.as_tensor(a), C, 0.3).numpy(),
    )


def test_cold_solve_stops_each_pair_at_its_iterations():
    rng = np.random.default_rng(5)
    x, a, y, b = generic_pairs(rng, P=4, n=6, m=6)
    eps = 0.2
    C = costs.cost_matrix(x, y, "sqeuclidean")
    a_t, b_t = torch.as_tensor(a), torch.as_tensor(b)
    trajectory, _ = sinkhorn.error_trajectory(torch.zeros_like(a_t), a_t, b_t, C, eps, 1e-12, 6)
    iterations = np.array([6, 3, 1, 0])
    f, g = speed.cold_solve(x, a, y, b, "sqeuclidean", eps, iterations)
    error = (sinkhorn.plan(f, g, a_t, b_t, C, eps).sum(-1) - a_t).abs().sum(-1).numpy()
    np.testing.assert_allclose(error, trajectory[np.arange(4), iterations], rtol=1e-10)
    with pytest.raises(ValueError, match="decreasing order"):
        speed.cold_solve(x, a, y, b, "sqeuclidean", eps, iterations[::-1].copy())


def test_side_by_side_matches_cold_sinkhorn_to_the_predictions_marginal_error():
    model, (x, a, y, b) = colour_model()
    eps, tol = 0.1, 1e-3
    run = speed.side_by_side(lambda: method.predict_f(model, x, a, y, b), x, a, y, b, "sqeuclidean", eps, tol, 500, 1)
    assert run.seconds_per_instance > 0 and run.cold_seconds_per_instance > 0
    np.testing.assert_array_equal(run.f_hat, method.predict_f(model, x, a, y, b))
    C = costs.cost_matrix(x, y, "sqeuclidean")
    expected = metrics.potential_metrics(run.f_hat, run.f_hat, run.f_hat, a, b, C, eps)["marginal_error"]
    np.testing.assert_allclose(run.marginal_error, expected)
    target = np.maximum(run.marginal_error, tol)
    assert np.all(run.cold_error < target)
    # one iteration fewer is not enough (the first iteration below the target)
    a_t, b_t = torch.as_tensor(a), torch.as_tensor(b)
    trajectory, _ = sinkhorn.error_trajectory(torch.zeros_like(a_t), a_t, b_t, C, eps, torch.as_tensor(target), 500)
    for p, k in enumerate(run.cold_iterations):
        assert k == 0 or trajectory[p, k - 1] >= target[p]


def test_profile_compares_equal_predictions_and_names_its_routes():
    model, (x, a, y, b) = colour_model()
    tables = speed.profile_prediction(model, x, a, y, b, "sqeuclidean", 0.1, 1e-3, 500, repeats=1)
    summary = tables["summary"]
    assert summary["route"].tolist() == ["before", "after"]
    assert np.all(summary["t_pred_ms"] > 0) and np.all(summary["t_cold_ms"] >= 0)
    np.testing.assert_allclose(summary["ratio"], summary["t_pred_ms"] / summary["t_cold_ms"])
    assert set(tables["stages"]["route"]) == {"before", "after", "cold Sinkhorn"}
    assert set(tables["top"]["route"]) == {"before", "after"} and len(tables["top"]) <= 24
