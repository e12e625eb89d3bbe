"""The legacy cosine noise schedule of the authors' code (`cosine_noise_schedule`,
mode 'legacy').

x_t = a(t) x_0 + b(t) eta with beta(t) = 1 - cos^2(t / 1.008 * pi / 2) the cumulative noise variance
(`cosine_noise_schedule(t, mode='legacy')`, i.e. *without* the +0.008 offset), a = sqrt(1 - beta),
b = sqrt(beta) and SNR = (1 - beta) / beta = a^2 / b^2 (the authors' convention).

beta(0) = 0 and beta(1) = 1 - sin^2(0.004 pi) ~ 0.99984 < 1, so every t in (0, 1) has 0 < beta < 1.
"""

from __future__ import annotations

import numpy as np

# the schedule's stretch: t / 1.008 keeps beta(1) strictly below 1 (the authors' legacy schedule)
STRETCH = 1.008


def _times(t, name: str = "t") -> np.ndarray:
    """t as a float64 array; rejects non-finite values and values outside [0, 1]."""
    arr = np.asarray(t, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {t!r}")
    if np.any(arr < 0.0) or np.any(arr > 1.0):
        raise ValueError(f"{name} must lie in [0, 1], got values in [{arr.min()}, {arr.max()}]")
    return arr


def beta(t):
    """Cumulative noise variance beta(t) = 1 - cos^2(t / 1.008 * pi / 2) for t in [0, 1].

    Defined on the closed interval so that the DDIM target time t = 0 (beta = 0, the clean image)
    can be expressed; denoisers must be evaluated only at times passing `check_times`.
    """
    arr = _times(t)
    return 1.0 - np.cos(arr / STRETCH * np.pi / 2.0) ** 2


def a(t):
    """Signal scale a(t) = sqrt(1 - beta(t))."""
    return np.sqrt(1.0 - beta(t))


def b(t):
    """Noise scale b(t) = sqrt(beta(t))."""
    return np.sqrt(beta(t))


def snr(t):
    """Signal-to-noise ratio (1 - beta) / beta = a^2 / b^2; t passes check_times."""
    bt = beta(check_times(t))
    return (1.0 - bt) / bt


def t_from_snr(snr_value):
    """Closed-form inverse of `snr`: t = 1.008 * (2 / pi) * arctan(1 / sqrt(SNR)).

    From beta = 1 / (1 + SNR): cos^2(theta) = SNR / (1 + SNR) with theta = t / 1.008 * pi / 2.

    The authors find this t by bisection (`make_figure_3.ipynb`); the closed form is exact. SNR must be
    positive and large enough that t < 1, i.e. SNR > snr(1) ~ 1.58e-4.
    """
    s = np.asarray(snr_value, dtype=np.float64)
    if not np.all(np.isfinite(s)) or np.any(s <= 0.0):
        raise ValueError(f"snr must be finite and > 0, got {snr_value!r}")
    t = STRETCH * (2.0 / np.pi) * np.arctan(1.0 / np.sqrt(s))
    if np.any(t >= 1.0):
        s_min = float((1.0 - beta(1.0)) / beta(1.0))
        raise ValueError(f"snr {float(s.min())} is below snr(t=1) = {s_min:.4g}: no t in (0, 1) reaches it")
    return t


def check_times(t):
    """Validated diffusion times for a denoiser, as a float64 array (0-d for a scalar).

    Times must be finite, strictly inside (0, 1) and have beta(t) > 0.
    """
    arr = np.asarray(t, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"t must be finite, got {t!r}")
    if np.any(arr <= 0.0) or np.any(arr >= 1.0):
        raise ValueError(f"t must lie strictly inside (0, 1), got values in [{arr.min()}, {arr.max()}]")
    bt = 1.0 - np.cos(arr / STRETCH * np.pi / 2.0) ** 2
    if np.any(bt <= 0.0):
        raise ValueError(
            f"beta(t) must be > 0, got beta = {bt.min()} at t = {arr.flat[np.argmin(bt)]} "
            "(t too close to 0 for float64)"
        )
    return arr
