"""Information theory of BIRD: the empirical entropy deficit and the Gaussian patch theory.

After the authors' `src/utils/channel_theory.py` and `notebooks/make_figure_3.ipynb`
(henhen724/convolutional_diffusion).

- Experiment: with a uniform prior over the N training images, the mutual information between a
  pixel's restricted observation and the training index is I = log N - E[H(w_p)], with H the
  posterior entropy in nats (the authors' "entropy deficit" ln|D| - S).
- Theory: for Gaussian data whose k x k x C patch covariance has eigenvalues lambda_i, the
  information a noisy patch carries about the clean one is I_G = 1/2 sum_i log(1 + SNR lambda_i)
  (paper Fig. 3(b)). BIRD memorizes where I_G >= log N; the critical SNR solves I_G(SNR) = log N by
  brentq over log10 SNR in [-6, 6], as in the authors' Fig. 3(c).
- k_mem: the window where the mean posterior entropy falls to a threshold (0.1 nats, or a fraction
  of log N), interpolated linearly in k (`channel_theory.find_k_at_entropy_threshold`).
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from scipy.optimize import brentq

from neurips26.bird.data import toeplitz_factor
from neurips26.common.validation import check_int, check_number

# patch covariance: images per chunk such that a chunk's patch matrix holds about this many entries
CHUNK_ENTRIES = 2**22
# relative size of a negative eigenvalue still taken as rounding (and clipped to 0)
EIG_RTOL = 1e-8
# brentq bracket of the critical SNR, in log10 SNR (authors' Fig. 3(c))
LOG10_SNR_RANGE = (-6.0, 6.0)
TOEPLITZ_POSITIONS = ("top_left", "centre", "average")


# --------------------------------------------------------------------------- empirical information


def mutual_information_estimate(entropy, n_train: int, exclude_border: int = 0):
    """MI estimate log N - mean posterior entropy, and its standard error across images.

    entropy: (B, H, W) posterior entropies in nats (BirdPosterior.entropy). n_train: N.
    exclude_border: pixels dropped on each side before averaging; k // 2 drops the zero-padded
    windows of a k window (the authors' k_mem convention, `k_cal_vs_k_mem_sweep.py`), 0 keeps every pixel.
    Each image's MI is log N minus its mean entropy over the kept pixels. Returns the tuple
    (mean over images, std over images / sqrt(B)); the standard error is nan for B = 1.
    """
    h = np.asarray(entropy, dtype=np.float64)
    if h.ndim != 3 or 0 in h.shape:
        raise ValueError(f"entropy must have shape (B, H, W), got {h.shape}")
    if not np.isfinite(h).all():
        raise ValueError(f"entropy contains {int((~np.isfinite(h)).sum())} NaN or infinite values")
    n = int(check_int("n_train", n_train, 1))
    e = int(check_int("exclude_border", exclude_border, 0))
    height, width = h.shape[1:]
    if 2 * e >= height or 2 * e >= width:
        raise ValueError(f"exclude_border={e} leaves no pixel of a {height} x {width} image (need 2 * border < size)")
    log_n = np.log(n)
    tol = 1e-9 * max(1.0, log_n)
    if h.min() < -tol or h.max() > log_n + tol:
        raise ValueError(
            f"entropies must lie in [0, log N = {log_n:.4g}] nats, got "
            f"[{h.min():.4g}, {h.max():.4g}]: is n_train the N of the posterior?"
        )
    kept = h[:, e : height - e, e : width - e]
    per_image = log_n - kept.mean(axis=(1, 2))
    if len(per_image) > 1:
        se = float(per_image.std(ddof=1) / np.sqrt(len(per_image)))
    else:
        se = float("nan")
    return float(per_image.mean()), se


def k_at_entropy_threshold(ks, entropies, threshold: float) -> float:
    """The window k where the mean posterior entropy first falls to `threshold` (as `find_k_at_entropy_threshold`).

    After the authors' `channel_theory.find_k_at_entropy_threshold`. ks: strictly increasing
    windows; entropies: the mean entropy at each. Takes the first k whose entropy is <= threshold
    and interpolates linearly between it and the previous k (ks[0] if the entropy is already there
    at ks[0]); nan if the entropy never reaches the threshold.
    """
    k = np.asarray(ks, dtype=np.float64).reshape(-1)
    s = np.asarray(entropies, dtype=np.float64).reshape(-1)
    if k.size == 0 or k.shape != s.shape:
        raise ValueError(f"ks and entropies must be non-empty and of equal length, got {k.size}, {s.size}")
    if not (np.isfinite(k).all() and np.isfinite(s).all()):
        raise ValueError("ks and entropies must be finite")
    if np.any(np.diff(k) <= 0):
        raise ValueError(f"ks must be strictly increasing, got {k.tolist()}")
    check_number("threshold (nats)", threshold)
    below = np.flatnonzero(s <= threshold)
    if below.size == 0:
        return float("nan")
    i = int(below[0])
    if i == 0:
        return float(k[0])
    # s[i-1] > threshold >= s[i]: the denominator is nonzero
    frac = (s[i - 1] - threshold) / (s[i - 1] - s[i])
    return float(k[i - 1] + frac * (k[i] - k[i - 1]))


# --------------------------------------------------------------------------- Gaussian patch theory


def _eigenvalues(eigenvalues) -> np.ndarray:
    lam = np.asarray(eigenvalues, dtype=np.float64).reshape(-1)
    if lam.size == 0 or not np.isfinite(lam).all():
        raise ValueError("eigenvalues must be a non-empty array of finite numbers")
    floor = -EIG_RTOL * max(1.0, float(np.abs(lam).max()))
    if lam.min() < floor:
        raise ValueError(
            f"eigenvalues must be >= 0 (a covariance), got {lam.min():.4g}: the matrix is not positive semi-definite"
        )
    return np.maximum(lam, 0.0)


def gaussian_patch_mi(eigenvalues, snr):
    """I_G = 1/2 sum_i log(1 + snr lambda_i) in nats (paper Fig. 3(b)), vectorised over snr.

    Returns a float for a scalar snr, else an array shaped like snr.
    """
    lam = _eigenvalues(eigenvalues)
    s = np.asarray(snr, dtype=np.float64)
    if not np.isfinite(s).all() or np.any(s < 0):
        raise ValueError(f"snr must be finite and >= 0, got {snr!r}")
    mi = 0.5 * np.log1p(s[..., None] * lam).sum(axis=-1)
    return float(mi) if mi.ndim == 0 else mi


def critical_snr(eigenvalues, n_train: int) -> float:
    """The SNR where the Gaussian patch information reaches log N (paper Fig. 3(c)).

    Solves I_G(SNR) = log N by brentq over log10 SNR in [-6, 6]. Returns nan, without a warning,
    when I_G - log N does not change sign in that range: the patch memorizes already at SNR 1e-6,
    or not even at 1e6.
    """
    lam = _eigenvalues(eigenvalues)
    log_n = np.log(int(check_int("n_train", n_train, 1)))
    lo, hi = LOG10_SNR_RANGE

    def excess(log10_snr: float) -> float:
        return gaussian_patch_mi(lam, 10.0**log10_snr) - log_n

    f_lo, f_hi = excess(lo), excess(hi)
    if f_lo > 0 or f_hi < 0:
        return float("nan")
    if f_lo == 0:
        return float(10.0**lo)
    if f_hi == 0:
        return float(10.0**hi)
    return float(10.0 ** brentq(excess, lo, hi, xtol=1e-12, rtol=1e-12))


def k_star(ks, eigenvalues_by_k, snr: float, n_train: int) -> float:
    """The theory's critical window k*(t, N) = min{k : I_G(k, t) >= log N} (the Gaussian-channel prediction).

    eigenvalues_by_k: the patch eigenvalues of each k, in the order of ks (strictly increasing).
    Returns nan if no k in ks reaches log N.
    """
    k = np.asarray(ks, dtype=np.float64).reshape(-1)
    if k.size == 0 or len(eigenvalues_by_k) != k.size:
        raise ValueError(f"need one eigenvalue array per k, got {len(eigenvalues_by_k)} for {k.size} ks")
    if np.any(np.diff(k) <= 0):
        raise ValueError(f"ks must be strictly increasing, got {k.tolist()}")
    log_n = np.log(int(check_int("n_train", n_train, 1)))
    reached = [gaussian_patch_mi(lam, snr) >= log_n for lam in eigenvalues_by_k]
    return float(k[reached.index(True)]) if any(reached) else float("nan")


def patch_covariance(images, k: int) -> np.ndarray:
    """Empirical covariance (D, D), D = C k^2, of the k x k x C patches of images (N, C, H, W).

    Uses every patch position lying fully inside the image (no padding); patches are centred on the
    mean patch and the sum is normalised by (number of patches - 1). Patch values are ordered
    (channel, row, column). Two passes over chunks of images.
    """
    x = np.asarray(images)
    if x.ndim != 4 or 0 in x.shape:
        raise ValueError(f"images must have shape (N, C, H, W), got {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError(f"images contain {int((~np.isfinite(x)).sum())} NaN or infinite values")
    n_img, channels, height, width = x.shape
    k = int(check_int("k", k, 1))
    if k > min(height, width):
        raise ValueError(f"patch size k={k} is larger than the images ({height} x {width})")
    dim = channels * k * k
    positions = (height - k + 1) * (width - k + 1)
    if n_img * positions < 2:
        raise ValueError(f"need at least 2 patches for a covariance, got {n_img * positions}")
    windows = sliding_window_view(x, (k, k), axis=(2, 3))  # (N, C, H-k+1, W-k+1, k, k), no copy
    chunk = max(1, CHUNK_ENTRIES // (positions * dim))

    def patches(start: int) -> np.ndarray:
        block = windows[start : start + chunk].transpose(0, 2, 3, 1, 4, 5)
        return block.reshape(-1, dim).astype(np.float64)

    total = np.zeros(dim)
    for start in range(0, n_img, chunk):
        total += patches(start).sum(axis=0)
    mean = total / (n_img * positions)
    cov = np.zeros((dim, dim))
    for start in range(0, n_img, chunk):
        centred = patches(start) - mean
        cov += centred.T @ centred
    cov /= n_img * positions - 1
    return 0.5 * (cov + cov.T)


def patch_eigenvalues(covariance) -> np.ndarray:
    """Eigenvalues of a symmetric covariance matrix, in decreasing order.

    Negative rounding (above -1e-8 times the largest magnitude) is clipped to 0; a genuinely
    negative eigenvalue is a ValueError.
    """
    c = np.asarray(covariance, dtype=np.float64)
    if c.ndim != 2 or c.shape[0] != c.shape[1] or c.shape[0] == 0:
        raise ValueError(f"covariance must be a non-empty square matrix, got shape {c.shape}")
    if not np.isfinite(c).all():
        raise ValueError("covariance must be finite")
    scale = max(1.0, float(np.abs(c).max()))
    if not np.allclose(c, c.T, rtol=0.0, atol=1e-10 * scale):
        raise ValueError("covariance must be symmetric")
    lam = np.linalg.eigvalsh(0.5 * (c + c.T))[::-1]
    return _eigenvalues(lam)


# --------------------------------------------------------------------------- the Toeplitz field


def toeplitz_covariance(size: int, alpha: float = 1.7, sigma2: float = 1.0) -> np.ndarray:
    """Covariance (size^2, size^2) of the Toeplitz field as sampled, pixels row-major.

    Paper Fig. 2(b) (`notebooks/make_figure_2.ipynb`). The authors specify C(r) = sigma2 / r^(2 - alpha), with r
    the pixel distance
    clamped to >= 1, sigma2 on the diagonal, symmetrised + 1e-4 I (`data.toeplitz_covariance`).
    That matrix is not positive semi-definite: at alpha = 1.7 about half of its eigenvalues are
    negative (the smallest ~ -0.18), because the clamp r >= 1 gives neighbours correlation 1. Their
    sampler clamps the eigenvalues to >= 1e-6, so the field has covariance L L^T with
    L = `data.toeplitz_factor`. This function returns that matrix (symmetric positive definite), so
    the theory uses the covariance the data really has.
    """
    factor = toeplitz_factor(int(check_int("size", size, 1)), alpha, sigma2)
    cov = factor @ factor.T
    return 0.5 * (cov + cov.T)


def toeplitz_patch_covariance(
    k: int,
    alpha: float = 1.7,
    sigma2: float = 1.0,
    field_size: int | None = None,
    position: str = "top_left",
) -> np.ndarray:
    """Exact covariance (k^2, k^2) of a k x k patch of the Toeplitz field, pixels row-major.

    field_size: the side of the sampled field (default k: the patch is the whole field). The clamped
    field covariance is not exactly stationary, so the patch's place matters (a few % in I_G).
    position: "top_left" is the authors' choice (`make_figure_3.ipynb`: the top-left L x L patch of the
    32 x 32 field), "centre" the central patch, "average" the mean over all patch positions (the
    limit of `patch_covariance` on samples of the field, up to centring).
    """
    k = int(check_int("k", k, 1))
    size = k if field_size is None else int(check_int("field_size", field_size, 1))
    if k > size:
        raise ValueError(f"patch size k={k} is larger than the field ({size} x {size})")
    if position not in TOEPLITZ_POSITIONS:
        raise ValueError(f"position must be one of {TOEPLITZ_POSITIONS}, got {position!r}")
    cov = toeplitz_covariance(size, alpha, sigma2)
    offsets = (np.arange(k)[:, None] * size + np.arange(k)[None, :]).reshape(-1)  # patch at (0, 0)
    if position == "top_left":
        corners = np.array([0])
    elif position == "centre":
        corners = np.array([(size - k) // 2 * (size + 1)])
    else:
        ys, xs = np.meshgrid(np.arange(size - k + 1), np.arange(size - k + 1), indexing="ij")
        corners = (ys * size + xs).reshape(-1)
    out = np.zeros((k * k, k * k))
    step = max(1, CHUNK_ENTRIES // (k**4))
    for start in range(0, len(corners), step):
        idx = corners[start : start + step, None] + offsets[None, :]  # (chunk, k^2)
        out += cov[idx[:, :, None], idx[:, None, :]].sum(axis=0)
    out /= len(corners)
    return 0.5 * (out + out.T)
