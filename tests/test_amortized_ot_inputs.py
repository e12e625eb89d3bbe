"""Bad inputs are rejected early, with messages that say what is wrong."""

import gzip

import numpy as np
import pytest
import torch

from neurips26.amortized_ot import artifacts, baselines, costs, data, method, sinkhorn, sliced
from neurips26.amortized_ot.measures import MeasureError, PairBatch, check_on_sphere, check_pairs


@pytest.fixture
def pairs():
    rng = np.random.default_rng(0)
    P, n, m, d = 2, 4, 5, 2
    return dict(
        x=rng.normal(size=(P, n, d)),
        a=rng.dirichlet(np.ones(n), size=P),
        y=rng.normal(size=(P, m, d)),
        b=rng.dirichlet(np.ones(m), size=P),
    )


def test_valid_pairs_are_accepted(pairs):
    batch = PairBatch(**pairs)
    assert batch.n_pairs == 2 and batch.dim == 2
    assert batch.subset(slice(0, 1)).n_pairs == 1
    assert set(batch.as_dict()) == {"x", "a", "y", "b"}


def test_negative_weights_are_rejected(pairs):
    a = pairs["a"].copy()
    a[0, 0], a[0, 1] = -0.1, a[0, 1] + a[0, 0] + 0.1  # still sums to 1
    with pytest.raises(MeasureError, match="source weights a: weights must be non-negative"):
        PairBatch(**{**pairs, "a": a})


def test_weights_not_summing_to_one_are_rejected(pairs):
    b = pairs["b"] * 1.01
    with pytest.raises(MeasureError, match="target weights b: weights must sum to 1"):
        PairBatch(**{**pairs, "b": b})


def test_nan_weights_are_rejected(pairs):
    a = pairs["a"].copy()
    a[1, 2] = np.nan
    with pytest.raises(MeasureError, match="weights contain NaN or inf"):
        check_pairs(pairs["x"], a, pairs["y"], pairs["b"])


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_coordinates_are_rejected(pairs, bad):
    x = pairs["x"].copy()
    x[0, 1, 0] = bad
    with pytest.raises(MeasureError, match="source support x: support coordinates contain NaN or inf"):
        PairBatch(**{**pairs, "x": x})
    y = pairs["y"].copy()
    y[1, 0, 1] = bad
    with pytest.raises(MeasureError, match="target support y: support coordinates contain NaN or inf"):
        PairBatch(**{**pairs, "y": y})


def test_source_target_dimension_mismatch_is_rejected(pairs):
    y3 = np.random.default_rng(1).normal(size=(2, 5, 3))
    with pytest.raises(MeasureError, match=r"dimension mismatch: source atoms live in R\^2, target atoms in R\^3"):
        PairBatch(**{**pairs, "y": y3})


def test_support_without_a_pair_axis_is_rejected(pairs):
    with pytest.raises(MeasureError, match=r"support must have shape \(pairs, atoms, dim\)"):
        PairBatch(**{**pairs, "x": pairs["x"][0]})


def test_weight_shape_mismatch_is_rejected(pairs):
    with pytest.raises(MeasureError, match=r"source weights shape \(2, 3\) does not match support \(2, 4\)"):
        PairBatch(**{**pairs, "a": np.full((2, 3), 1 / 3)})
    with pytest.raises(MeasureError, match=r"target weights shape \(2, 4\) does not match support \(2, 5\)"):
        PairBatch(**{**pairs, "b": np.full((2, 4), 0.25)})


def features(pairs) -> method.PairFeatures:
    """The pairs with one direction and the constant basis: what OA-OT's fit reads."""
    theta, centres = np.array([[1.0, 0.0]]), np.zeros((1, 2))
    return method.PairFeatures(pairs["x"], pairs["a"], pairs["y"], pairs["b"], theta, centres, 1.0)


@pytest.mark.parametrize("eps", [0.0, -1.0])
def test_non_positive_eps_is_rejected_everywhere(pairs, eps):
    cost = costs.cost_matrix(pairs["x"], pairs["y"], "sqeuclidean")
    a, b = pairs["a"], pairs["b"]
    a_t, b_t = torch.as_tensor(a), torch.as_tensor(b)
    with pytest.raises(MeasureError, match=f"eps must be > 0, got {eps}"):
        sinkhorn.solve_ground_truth(a, b, cost, eps, 1e-6, 100)
    with pytest.raises(MeasureError, match=f"eps must be > 0, got {eps}"):
        method.fit_dual(features(pairs), "sqeuclidean", eps, ridge=0.0, max_iter=2)
    with pytest.raises(MeasureError, match=f"eps must be > 0, got {eps}"):
        sinkhorn.iterations_to_tolerance(torch.zeros_like(a_t), a_t, b_t, cost, eps, 1e-3, 10)


def test_fewer_than_one_projection_is_rejected():
    with pytest.raises(MeasureError, match="number of projections must be >= 1, got 0"):
        sliced.directions(0, 2, seed=0)


def test_fewer_than_one_basis_function_is_rejected(pairs):
    with pytest.raises(MeasureError, match="number of basis functions K must be >= 1, got 0"):
        method.rbf_centres(pairs["x"], 0, seed=0)


def test_more_basis_functions_than_distinct_atoms_is_rejected():
    points = np.zeros((2, 4, 2))
    points[:, 1] = 1.0
    with pytest.raises(MeasureError, match="K = 3 basis functions need at least 3 distinct atoms, got 2"):
        method.rbf_centres(points, 3, seed=0)


def test_negative_ridge_is_rejected_by_the_regression():
    design = np.ones((2, 3, 1))
    a = np.full((2, 3), 1 / 3)
    with pytest.raises(MeasureError, match="ridge must be >= 0, got -0.1"):
        method.fit_regression(design, np.zeros((2, 3)), a, ridge=-0.1)


def test_negative_ridge_is_rejected_by_the_dual_fit(pairs):
    """OA-OT must refuse a negative ridge as RA-OT does: it rewards large coefficients instead."""
    with pytest.raises(MeasureError, match="ridge must be >= 0"):
        method.fit_dual(features(pairs), "sqeuclidean", 0.5, ridge=-0.1, max_iter=2)


def fixed_support(P=3, n=4, m=5):
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=(n, 2)), rng.normal(size=(m, 2))
    return np.broadcast_to(x, (P, n, 2)).copy(), np.broadcast_to(y, (P, m, 2)).copy()


def test_metaot_accepts_measures_on_its_training_support():
    x, y = fixed_support()
    baselines.check_fixed_support(x, y, x[:2], y[:2])


def test_metaot_rejects_variable_size_measures():
    x, y = fixed_support()
    x_other, y_other = fixed_support(n=6)
    with pytest.raises(
        MeasureError, match=r"fixed support it was trained on \(4 x 5 atoms\); got 6 x 5 atoms \(variable-size"
    ):
        baselines.check_fixed_support(x, y, x_other, y_other)


def test_metaot_rejects_moving_supports():
    x, y = fixed_support()
    moved = x.copy()
    moved[1] += 0.1
    with pytest.raises(MeasureError, match="supports here move between pairs"):
        baselines.check_fixed_support(x, y, moved, y)
    with pytest.raises(MeasureError, match="supports here move between pairs"):
        baselines.check_fixed_support(moved, y, x, y)


def test_metaot_load_refuses_another_support(tmp_path):
    x, y = fixed_support()
    net = baselines.MetaOTPotential(4, 5, (8,)).double()
    path = tmp_path / "metaot.pt"
    torch.save(artifacts.metaot_state(net, [8], x[0], y[0], 0.0), path)
    loaded = artifacts.load_metaot(path, x, y)
    a, b = np.full((3, 4), 0.25), np.full((3, 5), 0.2)
    assert loaded.predict(a, b).shape == (3, 4)
    with pytest.raises(MeasureError, match="variable-size measures"):
        artifacts.load_metaot(path, fixed_support(n=7)[0], y)


def test_points_off_the_unit_sphere_are_rejected():
    z = np.array([[[1.0, 0.0, 0.0], [0.0, 1.1, 0.0]]])
    with pytest.raises(MeasureError, match="points must be unit-norm on the sphere"):
        check_on_sphere(z, "sphere support")
    check_on_sphere(z[:, :1], "sphere support")


def test_idx_file_with_wrong_magic_number_is_rejected(tmp_path):
    path = tmp_path / "images.gz"
    header = np.array([2049, 1, 2, 2], dtype=">i4").tobytes()  # 2049 is the label-file magic
    with gzip.open(path, "wb") as handle:
        handle.write(header + bytes(4))
    with pytest.raises(ValueError, match="not an IDX image file \\(magic 2049, expected 2051\\)"):
        data.read_idx_images(path)


def test_idx_file_with_the_right_magic_number_is_read(tmp_path):
    path = tmp_path / "train-images-idx3-ubyte.gz"
    pixels = np.arange(2 * 3 * 4, dtype=np.uint8)
    with gzip.open(path, "wb") as handle:
        handle.write(np.array([2051, 2, 3, 4], dtype=">i4").tobytes() + pixels.tobytes())
    images = data.read_idx_images(path)
    assert images.shape == (2, 3, 4) and images.dtype == np.float64
    np.testing.assert_array_equal(images.ravel(), pixels)
    np.testing.assert_array_equal(data.digit_images("mnist", "train", 0, [str(path)]), images)


def test_unknown_digit_source_is_rejected():
    with pytest.raises(ValueError, match=r"unknown digit source 'emnist' \(allowed values: sklearn, mnist\)"):
        data.digit_images("emnist", "train", 0, [])


def test_missing_mnist_file_is_reported(tmp_path):
    with pytest.raises(FileNotFoundError, match="t10k-images-idx3-ubyte.gz is not among the inputs"):
        data.digit_images("mnist", "test", 0, [str(tmp_path / "other.gz")])


def test_unknown_cost_is_rejected():
    x = np.zeros((1, 2, 2))
    with pytest.raises(ValueError, match=r"unknown cost 'euclidean' \(allowed values: sqeuclidean, sqgeodesic\)"):
        costs.cost_matrix(x, x, "euclidean")


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda c: c.update(main_projections=7), "main_projections 7 is not one of projections"),
        (lambda c: c["digits"].update(train_res=9), "digits.train_res 9 is not one of digits.test_res"),
        (lambda c: c["seeded_models"].update(colour=["metaot"]), "seeded_models.colour: Meta-OT needs a fixed"),
    ],
)
def test_the_paper_block_a_job_cannot_build_is_refused_at_parse_time_naming_the_key(change, match):
    """The checks the rules run on every scale's block when the workflow is parsed (issue 38): the paper block
    passes them, and a paper block whose jobs could not be built is refused naming the key."""
    import copy

    import yaml

    from conftest import ROOT
    from neurips26.amortized_ot.experiment import check_config

    paper = yaml.safe_load((ROOT / "config/amortized_ot.yaml").read_text())["paper"]
    check_config(paper)
    bad = copy.deepcopy(paper)
    change(bad)
    with pytest.raises(ValueError, match=match):
        check_config(bad)
