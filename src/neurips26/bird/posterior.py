"""The local BIRD denoiser: a per-pixel Bayesian posterior over training images.

The authors' `LocalScoreModule` (henhen724/convolutional_diffusion, `src/utils/idealscore.py`). Pixel p observes
the k x k x C window of x_t around p, with zero padding
at the border: a border window simply has fewer terms, as with the authors' `F.unfold(...,
padding=k//2)` on the per-pixel squared distances. Its posterior over the training index n is

    w_{p,n} = softmax_n(l_{p,n}),
    l_{p,n} = -sum_{q in window(p), c} (x_t(c, q) - a x_n(c, q))^2 / (2 (b^2 + s^2)),

with s the optional soft-channel noise (an extension of the local window). The denoiser is
x0_hat(p) = sum_n w_{p,n} x_n(p) and eps_hat = (x_t - a x0_hat) / b. The window covering the whole
image (window=None) gives the ideal empirical denoiser. This is Kamb & Ganguli's LS machine
(`LocalScoreModule`).

The training set is streamed in chunks with a running log-sum-exp (running max m,
S0 = sum e^{l-m}, T = sum e^{l-m} (l - m), SX = sum e^{l-m} x_n), all float64, so memory is bounded
by the chunk size and not by N. The per-pixel posterior entropy H = log S0 - T / S0 (nats) comes out
of the same pass.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from scipy.ndimage import uniform_filter

# Default chunk: training images per chunk such that the (B, chunk, C, H, W) float64 temporary holds
# about this many entries (2 MB). Small temporaries are reused by the allocator instead of being
# page-faulted afresh, which measured ~2x faster on CPU than 32 MB ones.
CHUNK_ENTRIES = 2**18


@dataclass(frozen=True)
class BirdPosterior:
    """Output of `bird_posterior` (float64 arrays).

    x0_hat: (B, C, H, W) posterior mean of the clean image, pixel by pixel.
    eps_hat: (B, C, H, W) the implied noise prediction (x_t - a x0_hat) / b; the score is
        -eps_hat / b.
    entropy: (B, H, W) posterior entropy over the training index at each pixel, in nats, within
        [0, log N].
    """

    x0_hat: np.ndarray
    eps_hat: np.ndarray
    entropy: np.ndarray


def check_window(window, height: int, width: int):
    """Validate a BIRD window: None (the whole image) or an odd int k with 1 <= k <= min(H, W)."""
    if window is None:
        return None
    if isinstance(window, bool) or not isinstance(window, numbers.Integral):
        raise ValueError(f"window must be an odd int or None (whole image), got {window!r}")
    k = int(window)
    if k < 1 or k % 2 == 0:
        raise ValueError(f"window k={k} must be an odd int >= 1 (a k x k window centred on each pixel)")
    if k > min(height, width):
        raise ValueError(
            f"window k={k} is larger than the image ({height} x {width}); use window=None for the whole image"
        )
    return k


def _check_finite_scalar(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    return float(value)


def _check_images(x, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim != 4:
        raise ValueError(f"{name} must have shape (N, C, H, W), got shape {arr.shape}")
    if arr.shape[0] == 0 or 0 in arr.shape[1:]:
        raise ValueError(f"{name} must be non-empty, got shape {arr.shape}")
    if not np.issubdtype(arr.dtype, np.number) or np.iscomplexobj(arr):
        raise ValueError(f"{name} must be a real numeric array, got dtype {arr.dtype}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains {int((~np.isfinite(arr)).sum())} NaN or infinite values")
    return arr


def window_sums(values: np.ndarray, k: int, factor: float = 1.0) -> np.ndarray:
    """Sums of `values` (..., H, W) over the k x k window centred on each pixel, times `factor`.

    Zero padding outside the image: border windows have fewer terms. Computed as separable running
    sums along rows then columns (scipy.ndimage.uniform_filter, mode 'constant'), the 1-D form of
    the integral image: O(HW) per map whatever k, in float64. It gives the same sums as the 2-D
    cumsum integral image and measured 3-4x faster in numpy. `factor` is folded into the filter's
    1 / k^2 rescaling (one pass fewer).
    """
    size = (1,) * (values.ndim - 2) + (k, k)
    out = uniform_filter(np.asarray(values, dtype=np.float64), size=size, mode="constant")
    out *= k * k * factor
    return out


class _Accumulator:
    """Streaming log-sum-exp state of one window over chunks of training images (float64).

    Per posterior (image b, and pixel p or the whole image): m = running max of the logits,
    s0 = sum e^{l-m}, t1 = sum e^{l-m} (l - m), sx = sum e^{l-m} x_n(p). T is kept centred on the
    running max (rather than sum e^{l-m} l) so that the entropy log S0 - T / S0 does not cancel
    large logits.
    """

    def __init__(self, n_batch: int, n_post: int, channels: int, n_pix: int):
        self.m = np.full((n_batch, n_post), -np.inf)
        self.s0 = np.zeros((n_batch, n_post))
        self.t1 = np.zeros((n_batch, n_post))
        self.sx = np.zeros((n_batch, channels, n_pix))

    def update(self, logits: np.ndarray, xn_flat: np.ndarray) -> None:
        """logits: (B, n, P), P = 1 for the whole image (overwritten); xn_flat: (n, C, HW)."""
        m_new = np.maximum(self.m, logits.max(axis=1))
        shift = np.where(np.isfinite(self.m), self.m - m_new, 0.0)  # 0 on the first chunk (sums 0)
        scale = np.exp(shift)
        self.t1 = scale * (self.t1 + shift * self.s0)  # re-centre T on the new max, then rescale
        self.s0 *= scale
        self.sx *= scale[:, None, :]  # (B, 1, P), or (B, 1, 1) for the whole image
        logits -= m_new[:, None, :]  # centred, in place
        e = np.exp(logits)
        self.s0 += e.sum(axis=1)
        self.t1 += np.einsum("bnp,bnp->bp", e, logits)
        if logits.shape[2] == 1:  # whole image: one weight per (b, n)
            n = xn_flat.shape[0]
            self.sx += (e[:, :, 0] @ xn_flat.reshape(n, -1)).reshape(self.sx.shape)
        else:  # per pixel p: sum_n e[b, n, p] x_n(c, p)
            self.sx += np.einsum("bnp,ncp->bcp", e, xn_flat)
        self.m = m_new

    def result(self, x: np.ndarray, a: float, b: float, n_train: int) -> BirdPosterior:
        n_batch, channels, height, width = x.shape
        entropy = np.log(self.s0) - self.t1 / self.s0
        # rounding can leave H ~ 1e-15 outside [0, log N]; the exact value is inside
        entropy = np.clip(entropy, 0.0, np.log(n_train))
        x0_hat = (self.sx / self.s0[:, None, :]).reshape(n_batch, channels, height, width)
        if entropy.shape[1] == 1:
            entropy = np.repeat(entropy, height * width, axis=1)
        return BirdPosterior(
            x0_hat=x0_hat,
            eps_hat=(x - a * x0_hat) / b,
            entropy=entropy.reshape(n_batch, height, width),
        )


def bird_posteriors(x_t, train, a, b, windows, chunk=None, soft=0.0) -> list[BirdPosterior]:
    """`bird_posterior` for several windows in one streamed pass over the training set.

    The per-pixel squared distances of each chunk are computed once and shared by all windows, which
    is cheaper than one call per window in k sweeps. Returns one BirdPosterior per entry of
    `windows`, in order.
    """
    x = _check_images(x_t, "x_t").astype(np.float64, copy=False)
    tr = _check_images(train, "train")
    if x.shape[1:] != tr.shape[1:]:
        raise ValueError(f"x_t images {x.shape[1:]} and training images {tr.shape[1:]} must have the same (C, H, W)")
    a = _check_finite_scalar(a, "a")
    b = _check_finite_scalar(b, "b")
    if b <= 0:
        raise ValueError(f"b must be > 0 (the noise scale of x_t), got b={b}")
    soft = _check_finite_scalar(soft, "soft")
    if soft < 0:
        raise ValueError(f"soft (the soft-channel noise s) must be >= 0, got {soft}")
    n_batch, channels, height, width = x.shape
    if isinstance(windows, (str, bytes)) or not hasattr(windows, "__iter__"):
        raise ValueError(f"windows must be a sequence of odd ints or None, got {windows!r}")
    ks = [check_window(w, height, width) for w in windows]
    if not ks:
        raise ValueError("windows must name at least one window")
    n_train = tr.shape[0]
    if chunk is None:
        chunk = max(1, CHUNK_ENTRIES // (n_batch * channels * height * width))
    elif isinstance(chunk, bool) or not isinstance(chunk, numbers.Integral) or chunk < 1:
        raise ValueError(f"chunk must be a positive int, got {chunk!r}")
    chunk = int(chunk)

    n_pix = height * width
    local = sorted({k for k in ks if k is not None})
    inv_two_var = 1.0 / (2.0 * (b * b + soft * soft))
    accs = {k: _Accumulator(n_batch, 1 if k is None else n_pix, channels, n_pix) for k in set(ks)}

    for start in range(0, n_train, chunk):
        xn = tr[start : start + chunk].astype(np.float64, copy=False)
        n = xn.shape[0]
        diff = x[:, None] - a * xn[None]  # (B, n, C, H, W)
        dist = np.einsum("bnchw,bnchw->bnhw", diff, diff)  # channel-summed squared distances
        del diff
        xn_flat = xn.reshape(n, channels, n_pix)
        for k in local:
            logits = window_sums(dist, k, factor=-inv_two_var).reshape(n_batch, n, n_pix)
            accs[k].update(logits, xn_flat)
        if None in accs:
            logits = dist.sum(axis=(2, 3))[:, :, None] * -inv_two_var  # (B, n, 1)
            accs[None].update(logits, xn_flat)
        del dist

    results = {k: acc.result(x, a, b, n_train) for k, acc in accs.items()}
    return [results[k] for k in ks]


def bird_posterior(x_t, train, a, b, window, chunk=None, soft=0.0) -> BirdPosterior:
    """The local BIRD posterior denoiser at one noise level.

    x_t: (B, C, H, W) noisy images. train: (N, C, H, W) training images. a, b: the forward scales
    (x_t = a x_0 + b eta), b > 0. window: an odd k (the k x k x C window around each pixel, zero
    padding) or None (the whole image: the ideal empirical denoiser). chunk: training images per
    streamed chunk (default: about CHUNK_ENTRIES entries per temporary). soft: the soft-channel
    noise s >= 0 (the logits use b^2 + s^2).
    """
    return bird_posteriors(x_t, train, a, b, [window], chunk=chunk, soft=soft)[0]


def ideal_denoiser(x_t, train, a, b, chunk=None) -> BirdPosterior:
    """The ideal empirical denoiser (whole-image window); it memorizes the data."""
    return bird_posterior(x_t, train, a, b, window=None, chunk=chunk)
