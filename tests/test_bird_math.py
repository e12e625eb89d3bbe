"""Paper 04 (BIRD) mathematics: local posterior, information, theory, Wiener, DDIM, schedule."""

import numpy as np
import pytest
from scipy.special import logsumexp, softmax

from neurips26.bird import information, linear, memorization, posterior, sampling, schedule


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def brute_force_local(x_t, train, a, b, k, soft=0.0):
    """Per-pixel loop: the k x k x C window around (i, j), zero padding, softmax over n."""
    n_batch, _, height, width = x_t.shape
    r = k // 2
    x0 = np.zeros(x_t.shape)
    entropy = np.zeros((n_batch, height, width))
    for bi in range(n_batch):
        for i in range(height):
            for j in range(width):
                rows = slice(max(i - r, 0), min(i + r + 1, height))
                cols = slice(max(j - r, 0), min(j + r + 1, width))
                d = ((x_t[bi, :, rows, cols][None] - a * train[:, :, rows, cols]) ** 2).sum(axis=(1, 2, 3))
                logits = -d / (2 * (b * b + soft * soft))
                w = softmax(logits)
                x0[bi, :, i, j] = w @ train[:, :, i, j]
                entropy[bi, i, j] = -(w * (logits - logsumexp(logits))).sum()
    return x0, entropy


def brute_force_full(x_t, train, a, b):
    d = ((x_t[:, None] - a * train[None]) ** 2).sum(axis=(2, 3, 4))  # (B, N)
    logits = -d / (2 * b * b)
    w = softmax(logits, axis=1)
    x0 = np.einsum("bn,nchw->bchw", w, train)
    entropy = -(w * (logits - logsumexp(logits, axis=1, keepdims=True))).sum(axis=1)
    return x0, entropy


@pytest.fixture
def tiny(rng):
    """3 noisy images and 7 training images of 2 x 5 x 5, t = 0.5."""
    t = 0.5
    a, b = float(schedule.a(t)), float(schedule.b(t))
    train = rng.normal(size=(7, 2, 5, 5))
    x_t = a * train[[0, 3, 5]] + b * rng.normal(size=(3, 2, 5, 5))
    return x_t, train, a, b


# --------------------------------------------------------------------------- the BIRD posterior


def test_full_window_is_the_ideal_empirical_denoiser(tiny):
    x_t, train, a, b = tiny
    out = posterior.bird_posterior(x_t, train, a, b, window=None)
    x0, entropy = brute_force_full(x_t, train, a, b)
    np.testing.assert_allclose(out.x0_hat, x0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out.entropy, np.broadcast_to(entropy[:, None, None], (3, 5, 5)), atol=1e-12)
    np.testing.assert_allclose(out.eps_hat, (x_t - a * x0) / b, atol=1e-12)
    ideal = posterior.ideal_denoiser(x_t, train, a, b)
    np.testing.assert_array_equal(ideal.x0_hat, out.x0_hat)


@pytest.mark.parametrize("k", [1, 3, 5])
def test_local_window_matches_a_per_pixel_loop_including_borders(tiny, k):
    x_t, train, a, b = tiny
    out = posterior.bird_posterior(x_t, train, a, b, window=k)
    x0, entropy = brute_force_local(x_t, train, a, b, k)
    np.testing.assert_allclose(out.x0_hat, x0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out.entropy, entropy, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out.eps_hat, (x_t - a * x0) / b, atol=1e-11)


def test_soft_channel_uses_b2_plus_s2(tiny):
    x_t, train, a, b = tiny
    out = posterior.bird_posterior(x_t, train, a, b, window=3, soft=0.4)
    x0, entropy = brute_force_local(x_t, train, a, b, 3, soft=0.4)
    np.testing.assert_allclose(out.x0_hat, x0, atol=1e-12)
    np.testing.assert_allclose(out.entropy, entropy, atol=1e-12)


@pytest.mark.parametrize("window", [3, None])
@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 100])
def test_chunked_equals_unchunked(tiny, window, chunk):
    x_t, train, a, b = tiny
    whole = posterior.bird_posterior(x_t, train, a, b, window, chunk=len(train))
    part = posterior.bird_posterior(x_t, train, a, b, window, chunk=chunk)
    for field in ("x0_hat", "eps_hat", "entropy"):
        np.testing.assert_allclose(getattr(part, field), getattr(whole, field), rtol=0, atol=1e-12)


def test_streaming_survives_logits_far_apart_between_chunks(rng):
    """A late chunk with a much better match must rescale the earlier sums without overflow/NaN."""
    train = rng.normal(size=(6, 1, 4, 4)) * 5
    x_t = train[[5]] * 0.999  # the last training image, tiny noise: logits ~ -1e6 for the others
    out = posterior.bird_posterior(x_t, train, 0.999, 1e-3, window=None, chunk=1)
    np.testing.assert_allclose(out.x0_hat, train[[5]], atol=1e-10)
    assert np.all(out.entropy >= 0) and np.all(np.isfinite(out.entropy))


def test_several_windows_in_one_pass_equal_separate_calls(tiny):
    x_t, train, a, b = tiny
    windows = [5, 1, None, 3, 3]
    many = posterior.bird_posteriors(x_t, train, a, b, windows, chunk=2)
    for w, out in zip(windows, many):
        one = posterior.bird_posterior(x_t, train, a, b, w)
        np.testing.assert_allclose(out.x0_hat, one.x0_hat, atol=1e-12)
        np.testing.assert_allclose(out.entropy, one.entropy, atol=1e-12)


def test_entropy_lies_in_zero_log_n(rng):
    train = rng.normal(size=(9, 1, 6, 6))
    for t in (0.05, 0.5, 0.95):
        a, b = float(schedule.a(t)), float(schedule.b(t))
        x_t = a * train[:4] + b * rng.normal(size=(4, 1, 6, 6))
        for window in (1, 3, None):
            h = posterior.bird_posterior(x_t, train, a, b, window).entropy
            assert h.shape == (4, 6, 6)
            assert h.min() >= 0 and h.max() <= np.log(9)


def test_large_snr_full_window_memorizes_the_nearest_training_image(rng):
    train = rng.normal(size=(8, 1, 6, 6))
    t = 0.01  # SNR ~ 4e4
    a, b = float(schedule.a(t)), float(schedule.b(t))
    x_t = a * train[[2, 6]] + b * rng.normal(size=(2, 1, 6, 6))
    nearest = np.argmin(((x_t[:, None] - a * train[None]) ** 2).sum(axis=(2, 3, 4)), axis=1)
    np.testing.assert_array_equal(nearest, [2, 6])
    out = posterior.bird_posterior(x_t, train, a, b, window=None)
    np.testing.assert_allclose(out.x0_hat, train[nearest], atol=1e-10)
    assert out.entropy.max() < 1e-10


def test_tiny_snr_posterior_is_uniform(rng):
    train = rng.normal(size=(8, 1, 6, 6))
    x_t = rng.normal(size=(2, 1, 6, 6))
    out = posterior.bird_posterior(x_t, train, 1e-7, 1.0, window=3)
    np.testing.assert_allclose(out.entropy, np.log(8), atol=1e-9)
    np.testing.assert_allclose(out.x0_hat, np.broadcast_to(train.mean(axis=0), x_t.shape), atol=1e-6)


def test_float32_inputs_give_float64_results(tiny):
    x_t, train, a, b = tiny
    out32 = posterior.bird_posterior(x_t.astype(np.float32), train.astype(np.float32), a, b, 3)
    assert out32.x0_hat.dtype == np.float64
    out64 = posterior.bird_posterior(
        x_t.astype(np.float32).astype(np.float64),
        train.astype(np.float32).astype(np.float64),
        a,
        b,
        3,
    )
    np.testing.assert_allclose(out32.x0_hat, out64.x0_hat, atol=1e-12)


def test_window_sums_match_explicit_zero_padded_sums(rng):
    values = rng.normal(size=(2, 5, 7))
    for k in (1, 3, 5):
        r = k // 2
        padded = np.pad(values, ((0, 0), (r, r), (r, r)))
        expected = np.zeros_like(values)
        for dy in range(k):
            for dx in range(k):
                expected += padded[:, dy : dy + 5, dx : dx + 7]
        np.testing.assert_allclose(posterior.window_sums(values, k), expected, atol=1e-12)


# --------------------------------------------------------------------------- information


def test_mutual_information_is_log_n_minus_mean_entropy(rng):
    n = 16
    h = rng.uniform(0, np.log(n), size=(5, 6, 6))
    mi, se = information.mutual_information_estimate(h, n)
    per_image = np.log(n) - h.mean(axis=(1, 2))
    assert mi == pytest.approx(np.log(n) - h.mean())
    assert se == pytest.approx(per_image.std(ddof=1) / np.sqrt(5))
    mi_in, _ = information.mutual_information_estimate(h, n, exclude_border=1)
    assert mi_in == pytest.approx(np.log(n) - h[:, 1:5, 1:5].mean())
    # uniform posterior: no information; one-hot posterior: all log N
    assert information.mutual_information_estimate(np.full((2, 3, 3), np.log(n)), n)[0] == pytest.approx(0)
    assert information.mutual_information_estimate(np.zeros((2, 3, 3)), n)[0] == pytest.approx(np.log(n))
    assert np.isnan(information.mutual_information_estimate(h[:1], n)[1])


def test_gaussian_patch_mi_is_half_log_det(rng):
    m = rng.normal(size=(6, 6))
    cov = m @ m.T + 0.1 * np.eye(6)
    lam = information.patch_eigenvalues(cov)
    assert np.all(np.diff(lam) <= 0)
    snrs = np.array([1e-3, 0.5, 7.0])
    direct = [0.5 * np.linalg.slogdet(np.eye(6) + s * cov)[1] for s in snrs]
    np.testing.assert_allclose(information.gaussian_patch_mi(lam, snrs), direct, rtol=1e-12)
    assert information.gaussian_patch_mi(lam, 0.0) == 0.0
    assert isinstance(information.gaussian_patch_mi(lam, 2.0), float)


def test_critical_snr_solves_i_g_equals_log_n(rng):
    lam = information.patch_eigenvalues(information.toeplitz_patch_covariance(3))
    for n in (16, 256, 4096):
        s = information.critical_snr(lam, n)
        assert 1e-6 < s < 1e6
        assert information.gaussian_patch_mi(lam, s) == pytest.approx(np.log(n), rel=1e-9)
    assert np.isnan(information.critical_snr([1e-9], 10**6))  # needs SNR far beyond 1e6
    assert np.isnan(information.critical_snr(np.full(50, 1e6), 2))  # memorizes below SNR 1e-6


def test_k_star_is_the_smallest_window_reaching_log_n():
    eig = {k: information.patch_eigenvalues(information.toeplitz_patch_covariance(k)) for k in (1, 3, 5)}
    snr = information.critical_snr(eig[3], 64) * 1.01  # just above k=3's critical SNR
    assert information.k_star([1, 3, 5], [eig[1], eig[3], eig[5]], snr, 64) == 3
    assert np.isnan(information.k_star([1, 3, 5], [eig[1], eig[3], eig[5]], 1e-5, 64))


def test_k_at_entropy_threshold_interpolates_the_first_crossing():
    ks = [1, 3, 5, 7]
    assert information.k_at_entropy_threshold(ks, [4.0, 2.0, 1.0, 0.5], 1.5) == pytest.approx(4.0)
    assert information.k_at_entropy_threshold(ks, [4.0, 2.0, 1.0, 0.5], 1.0) == pytest.approx(5.0)
    assert information.k_at_entropy_threshold(ks, [1.0, 0.5, 0.2, 0.1], 3.0) == 1.0
    assert np.isnan(information.k_at_entropy_threshold(ks, [4.0, 3.0, 2.5, 2.0], 0.1))
    # non-monotone curve: the first crossing counts
    assert information.k_at_entropy_threshold(ks, [2.0, 0.0, 2.0, 0.0], 1.0) == pytest.approx(2.0)


def test_patch_covariance_matches_an_explicit_patch_list(rng):
    images = rng.normal(size=(3, 2, 5, 6))
    k = 3
    rows = [images[n, :, i : i + k, j : j + k].reshape(-1) for n in range(3) for i in range(3) for j in range(4)]
    expected = np.cov(np.array(rows), rowvar=False)
    information.CHUNK_ENTRIES, saved = 100, information.CHUNK_ENTRIES  # force several chunks
    try:
        np.testing.assert_allclose(information.patch_covariance(images, k), expected, atol=1e-12)
    finally:
        information.CHUNK_ENTRIES = saved


def test_toeplitz_covariance_is_symmetric_positive_definite():
    from neurips26.bird import data

    cov = information.toeplitz_covariance(6)
    np.testing.assert_array_equal(cov, cov.T)
    assert np.linalg.eigvalsh(cov).min() > 0
    np.linalg.cholesky(cov)
    # it is the specified kernel with its negative eigenvalues raised to 1e-6
    spec = data.toeplitz_covariance(6)
    w, v = np.linalg.eigh(spec)
    assert w.min() < 0
    np.testing.assert_allclose(cov, (v * np.maximum(w, 1e-6)) @ v.T, atol=1e-12)


def test_toeplitz_patch_covariance_is_the_fields_sub_block():
    cov = information.toeplitz_covariance(8)
    idx = np.array([i * 8 + j for i in range(3) for j in range(3)])
    np.testing.assert_allclose(information.toeplitz_patch_covariance(3, field_size=8), cov[np.ix_(idx, idx)])
    np.testing.assert_allclose(information.toeplitz_patch_covariance(3), information.toeplitz_covariance(3))
    centre = idx + 2 * 8 + 2
    np.testing.assert_allclose(
        information.toeplitz_patch_covariance(3, field_size=8, position="centre"),
        cov[np.ix_(centre, centre)],
    )
    blocks = [cov[np.ix_(idx + y * 8 + x, idx + y * 8 + x)] for y in range(6) for x in range(6)]
    np.testing.assert_allclose(
        information.toeplitz_patch_covariance(3, field_size=8, position="average"),
        np.mean(blocks, axis=0),
        atol=1e-12,
    )


def test_patch_covariance_of_field_samples_approaches_the_exact_one():
    from neurips26.bird import data

    fields = data.toeplitz_field(3000, size=6, seed=1)
    emp = information.patch_covariance(fields, 3)
    exact = information.toeplitz_patch_covariance(3, field_size=6, position="average")
    np.testing.assert_allclose(emp, exact, atol=0.06)


# --------------------------------------------------------------------------- Wiener denoiser


def test_wiener_denoiser_is_the_gaussian_posterior_mean(rng):
    mu = np.array([0.3, -1.0])
    cov = np.array([[1.0, 0.6], [0.6, 0.5]])
    a, b = 0.8, 0.6
    x_t = rng.normal(size=(4, 2))
    out = linear.wiener_denoiser(x_t, mu, cov, a, b)
    # information form: precision Sigma^-1 + (a^2 / b^2) I, mean P^-1 (Sigma^-1 mu + a x / b^2)
    prec = np.linalg.inv(cov) + a * a / (b * b) * np.eye(2)
    expected = np.linalg.solve(prec, (np.linalg.inv(cov) @ mu)[:, None] + a * x_t.T / (b * b)).T
    np.testing.assert_allclose(out.x0_hat, expected, atol=1e-12)
    np.testing.assert_allclose(out.eps_hat, (x_t - a * expected) / b, atol=1e-12)


def test_wiener_denoiser_diagonal_closed_form_and_image_shapes(rng):
    var = rng.uniform(0.5, 2.0, size=(1, 3, 3))
    mu = rng.normal(size=(1, 3, 3))
    x_t = rng.normal(size=(2, 1, 3, 3))
    a, b = 0.6, 0.8
    out = linear.wiener_denoiser(x_t, mu, np.diag(var.reshape(-1)), a, b)
    np.testing.assert_allclose(out.x0_hat, mu + a * var / (a * a * var + b * b) * (x_t - a * mu), atol=1e-12)
    assert out.x0_hat.shape == x_t.shape


def test_mean_covariance_matches_numpy(rng):
    images = rng.normal(size=(10, 1, 2, 2))
    mu, cov = linear.mean_covariance(images)
    np.testing.assert_allclose(mu, images.reshape(10, -1).mean(0))
    np.testing.assert_allclose(cov, np.cov(images.reshape(10, -1), rowvar=False))


# --------------------------------------------------------------------------- DDIM and the schedule


def test_ddim_with_the_exact_eps_of_a_point_mass_recovers_the_point(rng):
    x0 = rng.normal(size=(1, 2, 4, 4))

    def eps_fn(x, t):
        return (x - schedule.a(t) * x0) / schedule.b(t)

    x_T = rng.normal(size=(3, 2, 4, 4))
    for n_steps in (1, 5, 20):
        out, traj = sampling.ddim_sample(eps_fn, x_T, n_steps, return_trajectory=True)
        np.testing.assert_allclose(out, np.broadcast_to(x0, x_T.shape), atol=1e-12)
        assert traj.x.shape == (n_steps,) + x_T.shape and traj.eps.shape == traj.x.shape
        np.testing.assert_array_equal(traj.x[0], x_T)
        assert np.all(np.diff(traj.t) < 0) and 0 < traj.t[-1] and traj.t[0] < 1


def test_ddim_with_the_ideal_denoiser_of_one_image_returns_it(rng):
    train = rng.normal(size=(1, 1, 4, 4))

    def eps_fn(x, t):
        return posterior.ideal_denoiser(x, train, float(schedule.a(t)), float(schedule.b(t))).eps_hat

    out = sampling.ddim_sample(eps_fn, rng.normal(size=(2, 1, 4, 4)), 10)
    np.testing.assert_allclose(out, np.broadcast_to(train, (2, 1, 4, 4)), atol=1e-12)


def test_ddim_times_follow_the_authors_grid():
    t_eval, t_next = sampling.ddim_times(4)
    np.testing.assert_allclose(t_eval, [sampling.T_MAX, 0.75, 0.5, 0.25])
    np.testing.assert_allclose(t_next, [0.75, 0.5, 0.25, 0.0])


def test_ddim_step_moves_along_the_forward_marginal_for_a_consistent_eps(rng):
    x0, eps = rng.normal(size=(2, 3))
    t, t_next = 0.7, 0.4
    x_t = schedule.a(t) * x0 + schedule.b(t) * eps
    np.testing.assert_allclose(
        sampling.ddim_step(x_t, eps, t, t_next),
        schedule.a(t_next) * x0 + schedule.b(t_next) * eps,
        atol=1e-12,
    )


def test_schedule_values_and_inverses():
    t = np.linspace(0.01, 0.99, 50)
    np.testing.assert_allclose(schedule.a(t) ** 2 + schedule.b(t) ** 2, 1.0, atol=1e-15)
    np.testing.assert_allclose(schedule.beta(t), 1 - np.cos(t / 1.008 * np.pi / 2) ** 2)
    np.testing.assert_allclose(schedule.t_from_snr(schedule.snr(t)), t, rtol=1e-12)
    s = np.logspace(-2, 2, 12)
    np.testing.assert_allclose(schedule.snr(schedule.t_from_snr(s)), s, rtol=1e-10)
    np.testing.assert_allclose(schedule.beta(schedule.t_from_snr(s)), 1 / (1 + s), rtol=1e-12)
    assert schedule.beta(0.0) == 0.0 and 0.9998 < schedule.beta(1.0) < 1.0
    assert np.all(np.diff(schedule.beta(t)) > 0)


# --------------------------------------------------------------------------- memorization


def test_nearest_distance_ratio_matches_brute_force(rng):
    train = rng.normal(size=(11, 1, 3, 3))
    samples = np.concatenate([train[[4]] + 1e-3 * rng.normal(size=(1, 1, 3, 3)), rng.normal(size=(5, 1, 3, 3))])
    d = np.sqrt(((samples[:, None] - train[None]) ** 2).sum(axis=(2, 3, 4)))
    d_sorted = np.sort(d, axis=1)
    for chunk in (1, 3, 11, None):
        res = memorization.nearest_distances(samples, train, chunk=chunk)
        np.testing.assert_allclose(res.d1, d_sorted[:, 0], atol=1e-7)
        np.testing.assert_allclose(res.d2, d_sorted[:, 1], atol=1e-7)
        np.testing.assert_array_equal(res.nearest, d.argmin(axis=1))
    ratio = memorization.nearest_distance_ratio(samples, train)
    np.testing.assert_allclose(ratio, d_sorted[:, 0] / d_sorted[:, 1], atol=1e-6)
    assert ratio[0] < 1 / 3
    assert memorization.fraction_memorized(ratio) == pytest.approx(np.mean(ratio < 1 / 3))
    assert memorization.fraction_memorized([0.1, 0.5, 0.2, 0.9], threshold=0.3) == 0.5


def test_duplicated_training_image_counts_as_memorized(rng):
    img = rng.normal(size=(1, 1, 2, 2))
    train = np.concatenate([img, img, rng.normal(size=(3, 1, 2, 2))])
    assert memorization.nearest_distance_ratio(img, train)[0] == 0.0


# --------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize(
    "window, message",
    [
        (2, "odd"),
        (0, "odd"),
        (-3, "odd"),
        (7, "larger than the image"),
        (3.0, "odd int"),
        (True, "odd int"),
    ],
)
def test_bad_windows_are_rejected(tiny, window, message):
    x_t, train, a, b = tiny
    with pytest.raises(ValueError, match=message):
        posterior.bird_posterior(x_t, train, a, b, window)


def test_bad_window_message_names_k_and_the_image(tiny):
    x_t, train, a, b = tiny
    with pytest.raises(ValueError, match=r"k=7 .*5 x 5"):
        posterior.bird_posterior(x_t, train, a, b, 7)
    with pytest.raises(ValueError, match="k=4"):
        posterior.bird_posterior(x_t, train, a, b, 4)


def test_bad_posterior_inputs_are_rejected(tiny):
    x_t, train, a, b = tiny
    bad = x_t.copy()
    bad[0, 0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="x_t contains 1 NaN"):
        posterior.bird_posterior(bad, train, a, b, 3)
    bad_train = train.copy()
    bad_train[1, 1, 1, 1] = np.inf
    with pytest.raises(ValueError, match="train contains 1 NaN or infinite"):
        posterior.bird_posterior(x_t, bad_train, a, b, 3)
    for b_bad in (0.0, -0.1):
        with pytest.raises(ValueError, match="b must be > 0"):
            posterior.bird_posterior(x_t, train, a, b_bad, 3)
    with pytest.raises(ValueError, match="b must be a finite"):
        posterior.bird_posterior(x_t, train, a, np.nan, 3)
    with pytest.raises(ValueError, match="a must be a finite"):
        posterior.bird_posterior(x_t, train, np.inf, b, 3)
    with pytest.raises(ValueError, match="soft"):
        posterior.bird_posterior(x_t, train, a, b, 3, soft=-1.0)
    with pytest.raises(ValueError, match="same"):
        posterior.bird_posterior(x_t, train[:, :1], a, b, 3)
    with pytest.raises(ValueError, match=r"shape \(N, C, H, W\)"):
        posterior.bird_posterior(x_t[0], train, a, b, 3)
    with pytest.raises(ValueError, match="chunk"):
        posterior.bird_posterior(x_t, train, a, b, 3, chunk=0)
    with pytest.raises(ValueError, match="at least one window"):
        posterior.bird_posteriors(x_t, train, a, b, [])


def test_bad_times_are_rejected():
    for t in (0.0, 1.0, -0.1, 1.5, np.nan):
        with pytest.raises(ValueError, match="t must"):
            schedule.check_times(t)
    with pytest.raises(ValueError, match="beta"):
        schedule.check_times(1e-200)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        schedule.beta(1.2)
    with pytest.raises(ValueError, match="strictly inside"):
        schedule.snr(0.0)
    for s in (0.0, -1.0, np.inf):
        with pytest.raises(ValueError, match="snr must be"):
            schedule.t_from_snr(s)
    with pytest.raises(ValueError, match="below snr"):
        schedule.t_from_snr(1e-5)


def test_bad_information_inputs_are_rejected(rng):
    h = rng.uniform(0, 1, size=(2, 4, 4))
    with pytest.raises(ValueError, match="shape"):
        information.mutual_information_estimate(h[0], 8)
    with pytest.raises(ValueError, match="leaves no pixel"):
        information.mutual_information_estimate(h, 8, exclude_border=2)
    with pytest.raises(ValueError, match="log N"):
        information.mutual_information_estimate(h + 5, 8)
    with pytest.raises(ValueError, match="n_train"):
        information.mutual_information_estimate(h, 0)
    with pytest.raises(ValueError, match="NaN"):
        information.mutual_information_estimate(np.full((1, 2, 2), np.nan), 8)
    with pytest.raises(ValueError, match="positive semi-definite"):
        information.gaussian_patch_mi([1.0, -0.5], 1.0)
    with pytest.raises(ValueError, match="snr"):
        information.gaussian_patch_mi([1.0], -1.0)
    with pytest.raises(ValueError, match="symmetric"):
        information.patch_eigenvalues(np.array([[1.0, 0.5], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="larger than the images"):
        information.patch_covariance(rng.normal(size=(2, 1, 3, 3)), 5)
    with pytest.raises(ValueError, match="alpha"):
        information.toeplitz_covariance(4, alpha=0.0)
    with pytest.raises(ValueError, match="alpha"):
        information.toeplitz_patch_covariance(3, alpha=-1.0)
    with pytest.raises(ValueError, match="position"):
        information.toeplitz_patch_covariance(3, position="middle")
    with pytest.raises(ValueError, match="larger than the field"):
        information.toeplitz_patch_covariance(5, field_size=4)
    with pytest.raises(ValueError, match="strictly increasing"):
        information.k_at_entropy_threshold([3, 1], [1.0, 0.5], 0.1)
    with pytest.raises(ValueError, match="equal length"):
        information.k_at_entropy_threshold([1, 3], [1.0], 0.1)


def test_bad_sampling_memorization_and_linear_inputs_are_rejected(rng):
    x = rng.normal(size=(1, 1, 2, 2))
    with pytest.raises(ValueError, match="n_steps"):
        sampling.ddim_sample(lambda x, t: x, x, 0)
    with pytest.raises(ValueError, match="n_steps"):
        sampling.ddim_sample(lambda x, t: x, x, 2.5)
    with pytest.raises(ValueError, match="returned shape"):
        sampling.ddim_sample(lambda x, t: x[0], x, 3)
    with pytest.raises(ValueError, match="NaN or infinite values at t="):
        sampling.ddim_sample(lambda x, t: x * np.nan, x, 3)
    with pytest.raises(ValueError, match="x_T contains"):
        sampling.ddim_sample(lambda x, t: x, x * np.nan, 3)
    with pytest.raises(ValueError, match="at least 2 training images"):
        memorization.nearest_distances(x, x)
    with pytest.raises(ValueError, match="values per image"):
        memorization.nearest_distances(x, rng.normal(size=(3, 5)))
    with pytest.raises(ValueError, match="threshold"):
        memorization.fraction_memorized([0.2], threshold=0.0)
    with pytest.raises(ValueError, match="ratio"):
        memorization.fraction_memorized([])
    with pytest.raises(ValueError, match="b must be > 0"):
        linear.wiener_denoiser(x, np.zeros(4), np.eye(4), 0.5, 0.0)
    with pytest.raises(ValueError, match="cov must have shape"):
        linear.wiener_denoiser(x, np.zeros(4), np.eye(3), 0.5, 0.5)
    with pytest.raises(ValueError, match="mean has"):
        linear.wiener_denoiser(x, np.zeros(3), np.eye(4), 0.5, 0.5)
    with pytest.raises(ValueError, match="positive semi-definite"):
        linear.wiener_denoiser(x, np.zeros(4), -4 * np.eye(4), 0.5, 0.5)
