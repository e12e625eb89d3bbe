"""Data generators, the experiment grid and the npz group packing."""

import numpy as np
import pytest

from neurips26.amortized_ot import cfm, data, experiment
from neurips26.amortized_ot.measures import PairBatch


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture
def digit_images(rng):
    return rng.uniform(0, 16, size=(10, 8, 8))


def test_grid_points_shape_and_range():
    grid = data.grid_points(4)
    assert grid.shape == (16, 2)
    assert grid.min() == pytest.approx(0.125) and grid.max() == pytest.approx(0.875)
    assert len(np.unique(grid, axis=0)) == 16
    # row-major from the top-left pixel: x grows along a row, y falls down the rows
    np.testing.assert_allclose(grid[0], [0.125, 0.875])
    np.testing.assert_allclose(grid[1], [0.375, 0.875])
    np.testing.assert_allclose(grid[4], [0.125, 0.625])


def test_image_to_weights_rows_are_positive_and_sum_to_one(digit_images):
    weights = data.image_to_weights(digit_images, 8)
    assert weights.shape == (10, 64)
    assert np.all(weights > 0)
    np.testing.assert_allclose(weights.sum(1), 1.0, atol=1e-12)


def test_image_to_weights_floors_blank_pixels(digit_images):
    images = digit_images.copy()
    images[:, 0, 0] = 0.0
    weights = data.image_to_weights(images, 8)
    assert np.all(weights[:, 0] > 0)
    assert np.all(weights[:, 0] < weights.max(1))


def test_image_to_weights_resamples_to_the_requested_grid(digit_images):
    weights = data.image_to_weights(digit_images, 16)
    assert weights.shape == (10, 256)
    assert np.all(weights > 0)
    np.testing.assert_allclose(weights.sum(1), 1.0, atol=1e-12)
    assert data.image_to_weights(digit_images, 4).shape == (10, 16)


def test_digit_pairs_use_distinct_images_per_pair(digit_images):
    batch, ids = data.digit_pairs(digit_images, 12, 8, seed=3)
    assert isinstance(batch, PairBatch)
    assert ids.shape == (12, 2)
    assert np.all(ids[:, 0] != ids[:, 1])
    assert batch.x.shape == batch.y.shape == (12, 64, 2)
    np.testing.assert_array_equal(batch.x, batch.y)
    weights = data.image_to_weights(digit_images, 8)
    np.testing.assert_array_equal(batch.a, weights[ids[:, 0]])
    np.testing.assert_array_equal(batch.b, weights[ids[:, 1]])


def test_digit_pairs_share_image_pairs_across_resolutions_for_one_seed(digit_images):
    coarse, ids_coarse = data.digit_pairs(digit_images, 6, 8, seed=3)
    fine, ids_fine = data.digit_pairs(digit_images, 6, 12, seed=3)
    np.testing.assert_array_equal(ids_coarse, ids_fine)
    assert fine.x.shape == (6, 144, 2)
    _, ids_other = data.digit_pairs(digit_images, 6, 8, seed=4)
    assert not np.array_equal(ids_coarse, ids_other)


def test_sphere_pairs_are_unit_norm_with_normalised_weights():
    batch = data.sphere_pairs(3, 40, (5.0, 50.0), seed=0)
    assert batch.x.shape == (3, 40, 3)
    np.testing.assert_allclose(np.linalg.norm(batch.x, axis=-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(batch.y, axis=-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(batch.a.sum(1), 1.0, atol=1e-12)
    np.testing.assert_allclose(batch.b.sum(1), 1.0, atol=1e-12)
    assert np.all(batch.a > 0) and np.all(batch.b > 0)
    assert not np.allclose(batch.a, batch.b)


def test_fibonacci_sphere_points_are_distinct_unit_vectors():
    points = data.fibonacci_sphere(50)
    np.testing.assert_allclose(np.linalg.norm(points, axis=1), 1.0, atol=1e-12)
    assert len(np.unique(points.round(8), axis=0)) == 50
    np.testing.assert_allclose(points.mean(0), 0.0, atol=0.05)


@pytest.fixture
def small_colour_images(rng):
    return {name: rng.uniform(size=(20 + 3 * i, 24, 3)) for i, name in enumerate(("a", "b", "c"))}


def test_colour_pairs_colours_in_unit_cube_and_crops_of_requested_shape(small_colour_images):
    batch, crops, ids = data.colour_pairs(small_colour_images, 5, crop=8, n_colours=16, seed=1)
    assert batch.x.shape == batch.y.shape == (5, 16, 3)
    assert crops.shape == (5, 2, 8, 8, 3)
    assert ids.shape == (5, 2) and np.all(ids[:, 0] != ids[:, 1])
    for colours in (batch.x, batch.y, crops):
        assert colours.min() >= 0.0 and colours.max() <= 1.0
    np.testing.assert_allclose(batch.a, 1 / 16)
    np.testing.assert_allclose(batch.b, 1 / 16)
    # every sampled colour is a pixel of its crop
    for p in range(5):
        pixels = crops[p, 0].reshape(-1, 3)
        assert all(np.any(np.all(pixels == c, axis=1)) for c in batch.x[p])


def test_colour_pairs_are_reproducible(small_colour_images):
    first = data.colour_pairs(small_colour_images, 3, crop=8, n_colours=8, seed=1)
    second = data.colour_pairs(small_colour_images, 3, crop=8, n_colours=8, seed=1)
    np.testing.assert_array_equal(first[0].x, second[0].x)
    np.testing.assert_array_equal(first[2], second[2])


def test_load_colour_images_returns_eight_rgb_images_in_unit_range():
    images = data.load_colour_images()
    assert sorted(images) == sorted(data.COLOUR_IMAGES) and len(images) == 8
    for name, img in images.items():
        assert img.ndim == 3 and img.shape[2] == 3, name
        assert img.dtype == np.float64, name
        assert img.min() >= 0.0 and img.max() <= 1.0, name
        assert img.max() > 0.5, name  # scaled from 0..255, not left at 1/255


def test_toy_minibatch_pairs_shapes():
    batch = data.toy_minibatch_pairs(3, 10, seed=0)
    assert batch.x.shape == batch.y.shape == (3, 10, 2)
    np.testing.assert_allclose(batch.a, 0.1)
    np.testing.assert_allclose(batch.b, 0.1)
    same = data.toy_minibatch_pairs(3, 10, seed=0)
    np.testing.assert_array_equal(batch.x, same.x)
    np.testing.assert_array_equal(batch.y, same.y)


def test_eight_gaussians_sit_on_a_circle_of_the_given_radius(rng):
    points = data.eight_gaussians(400, rng, radius=2.0, std=0.01)
    np.testing.assert_allclose(np.linalg.norm(points, axis=1), 2.0, atol=0.05)


def test_pair_seed_differs_across_task_and_split():
    seeds = {(task, split): data.pair_seed(0, task, split) for task in data.TASKS for split in ("train", "test")}
    assert len(set(seeds.values())) == len(seeds)
    assert data.pair_seed(1, "digits", "train") != data.pair_seed(0, "digits", "train")
    assert data.pair_seed(0, "digits", "train") == data.pair_seed(0, "digits", "train")


def test_split_images_is_a_disjoint_fixed_split(rng):
    images = np.arange(20)[:, None, None] * np.ones((20, 2, 2))
    train = data.split_images(images, "train", 0)
    test = data.split_images(images, "test", 0)
    assert len(train) == 14 and len(test) == 6
    assert not set(train[:, 0, 0]) & set(test[:, 0, 0])
    np.testing.assert_array_equal(train, data.split_images(images, "train", 0))


# --------------------------------------------------------------------------- experiment grid


@pytest.fixture
def cfg():
    return {
        "projections": [4, 8, 16],
        "main_projections": 8,
        "digits": {"train_res": 8, "test_res": [8, 12, 16]},
        "colour": {"colours": 32},
        "sphere": {"points": 64},
        "cfm": {"batch_size": 32},
    }


def test_task_res_reads_the_atom_count_of_each_task(cfg):
    assert [experiment.task_res(cfg, t) for t in ("digits", "colour", "sphere", "cfm")] == [8, 32, 64, 32]


def test_test_groups_add_other_digit_resolutions_only(cfg):
    assert experiment.test_groups(cfg, "digits") == {"test": 8, "test_r12": 12, "test_r16": 16}
    assert experiment.test_groups(cfg, "colour") == {"test": 32}
    assert experiment.test_groups(cfg, "sphere") == {"test": 64}


def test_fitted_models_sweep_projections_on_digits_and_metaot_only_on_fixed_supports(cfg):
    assert experiment.fitted_models(cfg, "digits") == ["ra_L4", "oa_L4", "ra_L8", "oa_L8", "ra_L16", "oa_L16", "metaot"]
    assert experiment.fitted_models(cfg, "sphere") == ["ra_L8", "oa_L8", "metaot"]
    assert experiment.fitted_models(cfg, "colour") == ["ra_L8", "oa_L8"]


def test_predictions_run_ra_oa_and_the_sliced_mean_at_the_main_l_on_other_resolutions(cfg):
    """The sliced mean on the other grids is claim C3's comparison and null (issue 41)."""
    runs = experiment.predictions(cfg, "digits")
    assert len(runs) == len(set(runs))
    on_test = {name for name, group in runs if group == "test"}
    assert on_test == {
        "ra_L4",
        "oa_L4",
        "ra_L8",
        "oa_L8",
        "ra_L16",
        "oa_L16",
        "metaot",
        "sliced_mean_L4",
        "sliced_mean_L8",
        "sliced_mean_L16",
    }
    others = sorted((name, group) for name, group in runs if group != "test")
    assert others == [
        ("oa_L8", "test_r12"),
        ("oa_L8", "test_r16"),
        ("ra_L8", "test_r12"),
        ("ra_L8", "test_r16"),
        ("sliced_mean_L8", "test_r12"),
        ("sliced_mean_L8", "test_r16"),
    ]


def test_predictions_of_colour_and_sphere(cfg):
    assert sorted(experiment.predictions(cfg, "colour")) == sorted(
        [("ra_L8", "test"), ("oa_L8", "test"), ("sliced_mean_L8", "test")]
    )
    assert ("metaot", "test") in experiment.predictions(cfg, "sphere")
    assert all(group == "test" for _, group in experiment.predictions(cfg, "sphere"))


def test_extra_fit_seeds_refit_the_seeded_models_and_predict_on_every_group(cfg):
    cfg = {
        **cfg,
        "seed": 0,
        "fit_seeds": [0, 3],
        "seeded_models": {"digits": ["ra", "oa", "metaot"], "colour": ["ra", "metaot"], "sphere": []},
    }
    assert experiment.fit_seeds(cfg) == [3]
    models = experiment.fitted_models(cfg, "digits")
    assert models == [
        "ra_L4",
        "oa_L4",
        "ra_L8",
        "oa_L8",
        "ra_L16",
        "oa_L16",
        "metaot",
        "ra_L4_s3",
        "oa_L4_s3",
        "ra_L8_s3",
        "oa_L8_s3",
        "ra_L16_s3",
        "oa_L16_s3",
        "metaot_s3",
    ]  # the L sweep at every fit seed on digits (claim C4 on every seed, issue 41)
    assert experiment.fitted_models(cfg, "colour") == ["ra_L8", "oa_L8", "ra_L8_s3"]  # no Meta-OT on moving supports
    assert experiment.fitted_models(cfg, "sphere") == ["ra_L8", "oa_L8", "metaot"]
    runs = experiment.predictions(cfg, "digits")
    assert len(runs) == len(set(runs))
    assert {("ra_L8_s3", g) for g in ("test", "test_r12", "test_r16")} <= set(runs)
    assert ("metaot_s3", "test") in runs and ("metaot_s3", "test_r12") not in runs
    assert ("ra_L4_s3", "test") in runs and ("ra_L4_s3", "test_r12") not in runs  # other grids: the main L only
    # the sliced mean with seed 3's directions, on every group (the hard claims' null per fit seed, issue 41's review)
    assert {("sliced_mean_L8_s3", g) for g in ("test", "test_r12", "test_r16")} <= set(runs)
    assert ("sliced_mean_L4_s3", "test") not in runs  # the main L only
    assert ("sliced_mean_L8_s3", "test") in experiment.predictions(cfg, "colour")
    assert not any(name.startswith("sliced_mean") and "_s" in name for name, _ in experiment.predictions(cfg, "sphere"))


def test_without_extra_seeds_nothing_is_refitted(cfg):
    cfg = {**cfg, "seed": 0, "fit_seeds": [0], "seeded_models": {"digits": ["ra", "oa", "metaot"]}}
    assert experiment.fitted_models(cfg, "digits") == ["ra_L4", "oa_L4", "ra_L8", "oa_L8", "ra_L16", "oa_L16", "metaot"]


@pytest.mark.parametrize(
    "name, parsed",
    [
        ("ra_L32", ("ra", 32, 0)),
        ("oa_L128_s2", ("oa", 128, 2)),
        ("metaot", ("metaot", 0, 0)),
        ("metaot_s1", ("metaot", 0, 1)),
        ("sliced_mean_L8", ("sliced_mean", 8, 0)),
        ("sliced_mean_L8_s2", ("sliced_mean", 8, 2)),
    ],
)
def test_parse_name_reads_method_projections_and_fit_seed(name, parsed):
    assert experiment.parse_name(name, base_seed=0) == parsed


def test_pack_unpack_round_trip():
    groups = {
        "train": {"x": np.arange(3), "a": np.ones(2)},
        "test_r12": {"x": np.zeros((2, 2))},
        "ra_L8.test": {"f_hat": np.full(4, 2.0)},
    }
    flat = experiment.pack(groups)
    assert set(flat) == {"train__x", "train__a", "test_r12__x", "ra_L8.test__f_hat"}
    assert experiment.group_names(flat) == ["ra_L8.test", "test_r12", "train"]
    for name, arrays in groups.items():
        back = experiment.unpack(flat, name)
        assert set(back) == set(arrays)
        for key in arrays:
            np.testing.assert_array_equal(back[key], arrays[key])


def test_unpack_of_a_missing_group_names_the_groups():
    flat = experiment.pack({"train": {"x": np.zeros(1)}, "test": {"x": np.ones(1)}})
    with pytest.raises(KeyError, match=r"no group 'test_r16' in file \(groups: \['test', 'train'\]\)"):
        experiment.unpack(flat, "test_r16")


def test_unpack_does_not_confuse_groups_sharing_a_prefix():
    flat = experiment.pack({"test": {"x": np.zeros(1)}, "test_r12": {"x": np.ones(1)}})
    np.testing.assert_array_equal(experiment.unpack(flat, "test")["x"], [0.0])
    np.testing.assert_array_equal(experiment.unpack(flat, "test_r12")["x"], [1.0])


# --------------------------------------------------------------------------- CFM helpers


def test_sample_from_a_diagonal_plan_pairs_each_index_with_itself(rng):
    pi = np.diag(rng.dirichlet(np.ones(6)))
    i, j = cfm.sample_from_plan(pi, 200, rng)
    assert len(i) == len(j) == 200
    np.testing.assert_array_equal(i, j)


def test_sample_from_plan_respects_a_permutation(rng):
    perm = rng.permutation(5)
    pi = np.zeros((5, 5))
    pi[np.arange(5), perm] = 0.2
    i, j = cfm.sample_from_plan(pi, 100, rng)
    np.testing.assert_array_equal(j, perm[i])


def test_wasserstein2_of_a_sample_with_itself_is_zero(rng):
    x = rng.normal(size=(20, 2))
    assert cfm.wasserstein2(x, x) == pytest.approx(0.0, abs=1e-12)
    assert cfm.wasserstein2(x, x + np.array([3.0, 4.0])) == pytest.approx(5.0)


def test_exact_and_independent_plans_have_uniform_marginals(rng):
    x0, x1 = rng.normal(size=(6, 2)), rng.normal(size=(6, 2))
    for plan in (cfm.exact_plan(x0, x1), cfm.independent_plan(x0, x1)):
        np.testing.assert_allclose(plan.sum(0), 1 / 6)
        np.testing.assert_allclose(plan.sum(1), 1 / 6)


def test_sample_from_a_rectangular_plan_returns_row_and_column_indices(rng):
    pi = np.zeros((2, 3))
    pi[1, 2] = 1.0
    i, j = cfm.sample_from_plan(pi, 10, rng)
    np.testing.assert_array_equal(i, 1)
    np.testing.assert_array_equal(j, 2)


def test_mnist_idx_files_are_read_for_the_paper_scale_digits(tmp_path):
    """The paper-scale path: IDX image files (as downloaded) -> images of the split's file."""
    import gzip

    images = np.arange(2 * 28 * 28, dtype=np.uint8).reshape(2, 28, 28)
    header = np.array([2051, 2, 28, 28], dtype=">i4").tobytes()
    for name, imgs in (("train-images-idx3-ubyte.gz", images), ("t10k-images-idx3-ubyte.gz", images[::-1])):
        with gzip.open(tmp_path / name, "wb") as handle:
            handle.write(header + imgs.tobytes())
    files = [str(tmp_path / "train-images-idx3-ubyte.gz"), str(tmp_path / "t10k-images-idx3-ubyte.gz")]
    np.testing.assert_array_equal(data.digit_images("mnist", "train", 0, files), images)
    np.testing.assert_array_equal(data.digit_images("mnist", "test", 0, files), images[::-1])
    batch, _ = data.digit_pairs(data.digit_images("mnist", "train", 0, files), 3, 28, seed=0)
    assert batch.x.shape == (3, 784, 2)


def test_population_weights_follow_the_gpw_raster(tmp_path):
    import tifffile

    grid = np.zeros((18, 36), dtype=np.float32)
    grid[:9] = 100.0  # everyone lives in the northern hemisphere
    grid[0, 0] = -3.4e38  # GPW's no-data value
    tifffile.imwrite(tmp_path / "gpw.tif", grid)
    raster = data.read_population_grid(tmp_path / "gpw.tif")
    assert raster.min() == 0.0
    points = data.fibonacci_sphere(200)
    weights = data.population_weights(raster, points)
    assert weights.sum() == pytest.approx(1.0)
    north, south = weights[points[:, 2] > 0.05], weights[points[:, 2] < -0.05]
    assert north.min() > 10 * south.max()
    batch = data.sphere_pairs(3, 200, (5.0, 50.0), seed=0, supply=weights)
    np.testing.assert_allclose(batch.a, np.broadcast_to(weights, (3, 200)))


def test_a_raster_that_is_not_global_is_refused(tmp_path):
    import tifffile

    tifffile.imwrite(tmp_path / "bad.tif", np.ones((10, 10), dtype=np.float32))
    with pytest.raises(ValueError, match="equirectangular"):
        data.read_population_grid(tmp_path / "bad.tif")


def test_the_sliced_mean_of_a_fit_seed_uses_that_seeds_directions():
    """'sliced_mean_L8_s1' draws its directions from seed 1, those of ra_L8_s1 (issue 41's review: every fit seed's
    null used the base seed's directions)."""
    from neurips26.amortized_ot import method
    from neurips26.amortized_ot.prediction import predictor
    from neurips26.amortized_ot.sliced import directions, sliced_potentials

    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(2, 5, 2)), rng.normal(size=(2, 6, 2))
    a, b = np.full((2, 5), 1 / 5), np.full((2, 6), 1 / 6)

    def expected(seed):
        return method.sliced_mean_potential(sliced_potentials(x, a, y, b, directions(8, 2, seed))[0], 2)

    seeded = predictor("sliced_mean_L8_s1", None, x, a, y, b, seed=0)()
    base = predictor("sliced_mean_L8", None, x, a, y, b, seed=0)()
    assert np.allclose(seeded, expected(1)) and np.allclose(base, expected(0))
    assert not np.allclose(seeded, base)
