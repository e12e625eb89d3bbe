"""The amortized-OT figure functions render on tiny synthetic inputs."""

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from neurips26.amortized_ot import plots
from neurips26.amortized_ot.data import fibonacci_sphere, grid_points


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def _plans(a, b):
    return np.einsum("pj,pl->pjl", a, b)


def test_displacement_interpolation_figure(rng):
    res, P = 4, 2
    x = np.broadcast_to(grid_points(res), (P, res * res, 2)).copy()
    a = rng.dirichlet(np.ones(res * res), size=P)
    b = rng.dirichlet(np.ones(res * res), size=P)
    fig = plots.displacement_interpolation_figure(x, a, x.copy(), b, _plans(a, b), res, n_rows=3)
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 2 * 5


def test_interpolation_endpoints_reproduce_the_marginals(rng):
    res = 4
    x = grid_points(res)
    a, b = rng.dirichlet(np.ones(res * res)), rng.dirichlet(np.ones(res * res))
    pi = np.outer(a, b)
    start = plots.interpolation_image(x, x, pi, 0.0, res)
    # row-major grid with y = 1 - row/res: flipping the origin='lower' image recovers the weights
    np.testing.assert_allclose(start[::-1].ravel(), a)
    np.testing.assert_allclose(plots.interpolation_image(x, x, pi, 1.0, res)[::-1].ravel(), b)


def test_barycentric_map_of_a_diagonal_plan_returns_the_source_colours(rng):
    n = 16
    x = rng.uniform(size=(n, 3))
    a = rng.dirichlet(np.ones(n))
    np.testing.assert_allclose(plots.barycentric_map(np.diag(a), x), x)
    image = x[rng.integers(0, n, size=(4, 5))]
    np.testing.assert_allclose(plots.transfer_image(image, x, plots.barycentric_map(np.diag(a), x)), image)


def test_colour_transfer_figure(rng):
    P, n, h = 2, 16, 6
    crops = rng.uniform(size=(P, 2, h, h, 3))
    x = crops[:, 0].reshape(P, -1, 3)[:, :n]
    y = crops[:, 1].reshape(P, -1, 3)[:, :n]
    a = np.full((P, n), 1.0 / n)
    pi_ref = np.stack([np.diag(w) for w in a])
    fig = plots.colour_transfer_figure(crops, x, y, _plans(a, a), pi_ref)
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 2 * 4


def test_sphere_figure(rng):
    n = 16
    points = fibonacci_sphere(n)
    supply, demand = rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n))
    f = rng.normal(size=n)
    fig = plots.sphere_figure(points, supply, demand, f, f + 0.1 * rng.normal(size=n))
    assert isinstance(fig, Figure)


def _metrics(rng):
    rows = []
    for task, res in (("digits", 8), ("colour", 32), ("sphere", 64)):
        for method, Ls in (("ra", (4, 8)), ("oa", (4, 8)), ("sliced_mean", (4, 8)), ("metaot", (0,))):
            for L in Ls:
                rows += [(task, method, L, res, p, "rmse_f", rng.uniform(0.1, 1.0)) for p in range(4)]
                rows.append((task, method, L, res, -1, "t_pred_ms", rng.uniform(0.1, 10.0)))
        for method, L in (("min_swgg", 8), ("expected_sliced", 8), ("exact_emd", 0), ("sinkhorn_cold", 0)):
            rows.append((task, method, L, res, -1, "t_pred_ms", rng.uniform(1.0, 100.0)))
    return pd.DataFrame(rows, columns=["task", "method", "projections", "res", "pair", "metric", "value"])


def test_error_vs_projections_figure(rng):
    fig = plots.error_vs_projections_figure(_metrics(rng), res=8)
    assert isinstance(fig, Figure)
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert labels == ["RA-OT", "OA-OT", "sliced mean (no regression)", "Meta-OT (MLP)"]


def test_speed_figure(rng):
    fig = plots.speed_figure(_metrics(rng), 8, {"digits": 8, "colour": 32, "sphere": 64})
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 3
    assert fig.axes[0].get_ylabel() == "time per instance (ms)"


def test_cfm_figure(rng):
    samples = {
        plan: {k: rng.normal(size=(32, 2)) for k in ("source", "generated", "target")}
        for plan in ("indep", "ra", "exact")
    }
    fig = plots.cfm_figure(samples, {"exact": 0.1, "ra": 0.12, "indep": 0.5})
    assert isinstance(fig, Figure)
    assert [ax.get_title() for ax in fig.axes] == [
        "exact OT plan, W2=0.100",
        "RA-OT plan, W2=0.120",
        "independent plan, W2=0.500",
    ]


def test_save_figure_writes_a_png(tmp_path, rng):
    fig = plots.sphere_figure(fibonacci_sphere(8), *(rng.uniform(size=8) for _ in range(4)))
    target = tmp_path / "sub" / "figure.png"
    plots.save_figure(fig, target)
    assert target.read_bytes()[:4] == b"\x89PNG"
    assert [p.name for p in target.parent.iterdir()] == ["figure.png"]  # no temporary left behind
