"""Zeroth-order estimators of spectral_zo against autograd: exact identities on a linear layer with squared
loss, Monte Carlo unbiasedness (or the stated bias) on a linear layer and a two-layer tanh network, kappa = 0
equal to weight perturbation, batched probes equal to a loop, and bad inputs rejected."""

import pytest
import torch

from neurips26.spectral_zo.estimators import (
    ESTIMATORS,
    activation_subspace,
    bias_corrected,
    layer_moment,
    layer_spectrum,
    mlp_forward,
    perturbation_gradient,
    second_moment,
    spectral_power,
    squared_error,
    szo,
    szo_expectation,
    true_gradient,
    wp_global,
    wp_layerwise,
)

DT = torch.float64


def _linear_problem(batch_size=16, n_in=5, n_out=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    scales = torch.tensor([3.0, 1.5, 1.0, 0.5, 0.2], dtype=DT)[:n_in]
    x = torch.randn(batch_size, n_in, generator=g, dtype=DT) * scales
    y = torch.randn(batch_size, n_out, generator=g, dtype=DT)
    w = torch.randn(n_out, n_in, generator=g, dtype=DT)
    return [w], (x, y)


def _two_layer_problem(seed=1):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(12, 4, generator=g, dtype=DT)
    y = torch.randn(12, 2, generator=g, dtype=DT)
    params = [torch.randn(6, 4, generator=g, dtype=DT) * 0.7, torch.randn(2, 6, generator=g, dtype=DT) * 0.7]
    return params, (x, y)


def _cos(a, b):
    return float((a * b).sum() / (a.norm() * b.norm()))


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


def test_two_sided_spsa_equals_directional_derivative_on_quadratic_loss():
    params, batch = _linear_problem()
    grad = true_gradient(params, squared_error, batch, "identity")[0]
    v = torch.randint(0, 2, (1, 3, 5), generator=_gen(), dtype=torch.int64).to(DT) * 2 - 1
    # a large step: central differences of a quadratic are exact at any eps
    est = perturbation_gradient(params, squared_error, batch, [v], eps=0.7, activation="identity")[0]
    torch.testing.assert_close(est, (grad * v[0]).sum() * v[0])


@pytest.mark.parametrize(
    "name, options",
    [
        ("wp_global", {}),
        ("wp_layerwise", {}),
        ("spsa", {}),
        ("node_perturbation", {}),
        ("agzo", {"rank": 5}),
        ("szo", {"kappa": 0.0}),
        ("szo", {"kappa": 0.5, "bias_correction": True}),
    ],
)
def test_estimator_aligns_with_autograd_on_linear_layer(name, options):
    params, batch = _linear_problem()
    grad = true_gradient(params, squared_error, batch, "identity")[0]
    est = ESTIMATORS[name](params, squared_error, batch, 3000, 1e-2, _gen(), activation="identity", **options)[0]
    assert _cos(est, grad) > 0.97
    # unbiased: the norm is right too, not just the direction
    assert abs(est.norm() / grad.norm() - 1) < 0.1


@pytest.mark.parametrize("name", ["wp_global", "wp_layerwise", "spsa", "node_perturbation", "agzo", "szo"])
def test_estimator_aligns_with_autograd_per_layer_on_two_layer_network(name):
    params, batch = _two_layer_problem()
    grads = true_gradient(params, squared_error, batch, "tanh")
    options = {"rank": 4} if name == "agzo" else {"kappa": 0.5, "bias_correction": True} if name == "szo" else {}
    est = ESTIMATORS[name](params, squared_error, batch, 4000, 1e-3, _gen(), activation="tanh", **options)
    for g, e in zip(grads, est):
        assert _cos(e, g) > 0.93


def test_raw_szo_has_its_stated_bias_g_times_c_to_the_kappa():
    params, batch = _linear_problem()
    grad = true_gradient(params, squared_error, batch, "identity")[0]
    est = szo(params, squared_error, batch, 20000, 1e-2, _gen(), kappa=2.0, activation="identity")[0]
    expected = grad @ spectral_power(second_moment(batch[0]), 2.0)
    assert (est - expected).norm() / expected.norm() < 0.05


def _monte_carlo(kappa, bias_correction, repeats=30, n_probes=200):
    params, batch = _linear_problem()
    gen = _gen(11)
    draws = torch.stack(
        [
            szo(
                params,
                squared_error,
                batch,
                n_probes,
                1e-2,
                gen,
                kappa=kappa,
                bias_correction=bias_correction,
                activation="identity",
            )[0]
            for _ in range(repeats)
        ]
    )
    return draws.mean(0), draws.std(0) / repeats**0.5


@pytest.mark.parametrize("kappa", [1.0, 2.0])
def test_bias_corrected_szo_mean_is_gradient_within_standard_errors(kappa):
    params, batch = _linear_problem()
    grad = true_gradient(params, squared_error, batch, "identity")[0]
    power = spectral_power(second_moment(batch[0]), kappa)
    ridge = 1e-3 * torch.trace(power) / 5
    # the ridge leaves a small stated bias: E = G C^k (C^k + lambda I)^-1
    expected = torch.linalg.solve(power + ridge * torch.eye(5, dtype=DT), (grad @ power).T).T
    mean, se = _monte_carlo(kappa, bias_correction=True)
    assert ((mean - expected).abs() / se).max() < 4.5
    raw_mean, raw_se = _monte_carlo(kappa, bias_correction=False)
    # without the correction the mean is many standard errors off the gradient
    assert ((raw_mean - grad).abs() / raw_se).max() > 10


def _ill_conditioned(seed=0, batch_size=8, n_in=20, hidden=12, n_out=3):
    """The pipeline's regime in miniature: non-negative inputs in [0, 1] (unstandardised pixels) with a constant-1
    feature, a ReLU hidden layer, fewer examples than inputs: C is rank-deficient and its top eigenvalue is dominated
    by the mean activation direction."""
    g = torch.Generator().manual_seed(seed)
    x = torch.cat([torch.rand(batch_size, n_in - 1, generator=g, dtype=DT), torch.ones(batch_size, 1, dtype=DT)], 1)
    y = torch.randn(batch_size, n_out, generator=g, dtype=DT)
    params = [torch.randn(hidden, n_in, generator=g, dtype=DT) * (2 / n_in) ** 0.5,
              torch.randn(n_out, hidden, generator=g, dtype=DT) * (2 / hidden) ** 0.5]  # fmt: skip
    return params, (x, y)


def _angle(a, b):
    return float(torch.rad2deg(torch.arccos((a * b).sum() / (a.norm() * b.norm())).clamp(-1, 1)))


def test_bias_correction_exact_expectation_in_the_ill_conditioned_regime():
    params, batch = _ill_conditioned()
    eig = torch.linalg.eigvalsh(second_moment(batch[0]))
    assert eig[-1] / eig.mean() > 5 and int((eig > 1e-10 * eig[-1]).sum()) <= 8  # dominated and rank-deficient
    grads = true_gradient(params, squared_error, batch)
    for kappa in (1.0, 2.0):
        raw = szo_expectation(params, squared_error, batch, kappa=kappa)
        corrected = szo_expectation(params, squared_error, batch, kappa=kappa, bias_correction=True)
        for g, r, c in zip(grads, raw, corrected):
            assert _angle(r, g) > 5.0  # the raw expectation G C^kappa is tilted towards the mean direction
            assert _angle(c, g) < 0.5 * _angle(r, g) and _angle(c, g) < 5.0  # the correction undoes most of it


def test_szo_raw_mean_matches_its_exact_expectation_and_the_correction_is_linear():
    params, batch = _ill_conditioned()
    expected = szo_expectation(params, squared_error, batch, kappa=1.0)
    draws = [szo(params, squared_error, batch, 400, 1e-4, _gen(d), kappa=1.0) for d in range(20)]
    for layer, e in enumerate(expected):
        stack = torch.stack([d[layer] for d in draws])
        z = (stack.mean(0) - e).abs() / (stack.std(0) / len(draws) ** 0.5 + 1e-12)
        assert z.max() < 5.0
    # the same seeds corrected: exactly the correction of the raw draw, so E[corrected] = correction(E[raw])
    raw = szo(params, squared_error, batch, 16, 1e-4, _gen(3), kappa=1.0)
    corrected = szo(params, squared_error, batch, 16, 1e-4, _gen(3), kappa=1.0, bias_correction=True)
    inputs = mlp_forward(params, batch[0])[1]
    for r, c, a in zip(raw, corrected, inputs):
        assert torch.allclose(bias_corrected(r, second_moment(a), 1.0), c)


def test_null_moments_mean_direction_and_centred():
    a = torch.rand(10, 4, generator=_gen(0), dtype=DT)
    mu = a.mean(0)
    assert torch.allclose(layer_moment(a, "mean"), torch.outer(mu, mu))
    assert torch.allclose(layer_moment(a, "centred") + torch.outer(mu, mu), second_moment(a))
    assert torch.allclose(layer_moment(a, "batch"), second_moment(a))
    with pytest.raises(ValueError, match="moment"):
        layer_moment(a, "other")


def test_agzo_mean_is_gradient_projected_on_activation_subspace():
    params, batch = _linear_problem()
    grad = true_gradient(params, squared_error, batch, "identity")[0]
    est = ESTIMATORS["agzo"](params, squared_error, batch, 20000, 1e-2, _gen(), rank=2, activation="identity")[0]
    basis = activation_subspace(batch[0], 2)
    expected = grad @ basis @ basis.T
    assert (est - expected).norm() / expected.norm() < 0.05
    assert (est @ (torch.eye(5, dtype=DT) - basis @ basis.T)).norm() < 1e-8 * est.norm()


@pytest.mark.parametrize("schedule_fn, schedule", [(wp_global, "joint"), (wp_layerwise, "layerwise")])
def test_szo_kappa_zero_is_weight_perturbation(schedule_fn, schedule):
    params, batch = _two_layer_problem()
    wp = schedule_fn(params, squared_error, batch, 7, 1e-3, _gen(3), activation="tanh")
    sz = szo(params, squared_error, batch, 7, 1e-3, _gen(3), kappa=0.0, schedule=schedule, activation="tanh")
    for a, b in zip(wp, sz):
        torch.testing.assert_close(a, b)


def test_orthogonal_probes_spanning_the_layer_recover_the_gradient_exactly():
    params, batch = _linear_problem()
    grad = true_gradient(params, squared_error, batch, "identity")[0]
    est = wp_global(params, squared_error, batch, 15, 0.5, _gen(), orthogonal=True, activation="identity")[0]
    torch.testing.assert_close(est, grad)


def test_batched_probes_equal_a_loop_over_probes():
    params, batch = _two_layer_problem()
    gen = _gen(5)
    directions = [torch.randn(6, *w.shape, generator=gen, dtype=DT) for w in params]
    batched = perturbation_gradient(params, squared_error, batch, directions, 1e-2, activation="tanh")
    looped = [
        perturbation_gradient(params, squared_error, batch, [v[k : k + 1] for v in directions], 1e-2, activation="tanh")
        for k in range(6)
    ]
    for index, b in enumerate(batched):
        torch.testing.assert_close(b, torch.stack([lp[index] for lp in looped]).mean(0))
    # the batched forward pass itself equals one pass per probe
    stacked = [w + v for w, v in zip(params, directions)]
    out = mlp_forward(stacked, batch[0], "tanh")[0]
    for k in range(6):
        torch.testing.assert_close(out[k], mlp_forward([s[k] for s in stacked], batch[0], "tanh")[0])


def test_dead_layer_gives_zero_not_nan():
    params, batch = _two_layer_problem()
    dead = [-params[0].abs(), params[1]]
    x = batch[0].abs()
    est = szo(dead, squared_error, (x, batch[1]), 8, 1e-3, _gen(), kappa=1.0, bias_correction=True)
    assert all(torch.isfinite(e).all() for e in est)
    assert est[1].abs().max() == 0


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda p, b: wp_global(p, squared_error, b, 0, 1e-2, _gen()), "n_probes"),
        (lambda p, b: ESTIMATORS["spsa"](p, squared_error, b, 4, 0.0, _gen()), "eps"),
        (lambda p, b: ESTIMATORS["node_perturbation"](p, squared_error, b, 4, -1.0, _gen()), "eps"),
        (lambda p, b: szo(p, squared_error, b, 4, 1e-2, _gen(), kappa=2.5), "kappa"),
        (lambda p, b: szo(p, squared_error, b, 4, 1e-2, _gen(), kappa=-0.1), "kappa"),
        (lambda p, b: ESTIMATORS["agzo"](p, squared_error, b, 4, 1e-2, _gen(), rank=6), "rank"),
        (lambda p, b: wp_global(p, squared_error, b, 16, 1e-2, _gen(), orthogonal=True), "n_probes <= 15"),
        (lambda p, b: wp_global([p[0].reshape(3, 5, 1, 1)], squared_error, b, 4, 1e-2, _gen()), "linear layers"),
        (lambda p, b: wp_global([p[0] * float("inf")], squared_error, b, 4, 1e-2, _gen()), "non-finite loss"),
    ],
)
def test_bad_inputs_are_rejected_by_name(call, match):
    params, batch = _linear_problem()
    with pytest.raises(ValueError, match=match):
        call(params, batch)


@pytest.mark.parametrize("rows", [3, 12])  # a thin SVD of the factor (rows < n_in) and an eigh of C (rows >= n_in)
@pytest.mark.parametrize("normalise", ["mean", "top"])
def test_one_spectrum_gives_the_dense_powers_and_the_ridge_solve(rows, normalise):
    a = torch.rand(rows, 7, generator=_gen(rows), dtype=DT)
    spectrum = layer_spectrum(a, "batch")
    c = second_moment(a)
    eig, vec = torch.linalg.eigh(c)
    eig = eig.clamp(min=0) / (eig.clamp(min=0).mean() if normalise == "mean" else eig.max())
    g = torch.randn(4, 7, generator=_gen(1), dtype=DT)
    for power in (0.0, 0.5, 1.0, 2.0):
        dense = (vec * eig.clamp(min=1e-300).pow(power).where(eig > 1e-12, 0.0**power)) @ vec.T
        torch.testing.assert_close(spectrum.dense(power, normalise), dense, atol=1e-9, rtol=1e-7)
        torch.testing.assert_close(spectrum.apply(g, power, normalise), g @ dense, atol=1e-9, rtol=1e-7)
        lam = 1e-3 * torch.trace(dense) / 7
        solved = torch.linalg.solve(dense + lam * torch.eye(7, dtype=DT), g.T).T
        torch.testing.assert_close(spectrum.correct(g, power, normalise), solved, atol=1e-9, rtol=1e-6)
    assert spectrum.vectors.shape[1] == min(rows, 7)
