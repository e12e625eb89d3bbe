"""Localized editing scores of AnaDiffusion (arXiv 2608.23014, Fig. 4a): paired 3D MS-SSIM over donor-recipient
edits, in four columns (target transfer, off-target preservation, transfer gain, locality contrast).

An edit takes a generated recipient (`original`), replaces one part (LH, RH or CB) with a donor's part, and
reassembles, re-encodes, injects and refines into `edited`. The paper names the four columns but does not publish
their formulas; these definitions are OURS. With S(a, b | R) the regional MS-SSIM below, T the target part and
O = brain minus T dilated by `dilation_voxels` (a margin where refinement may legitimately change the seam):

* target transfer          = S(edited, donor | T): the edit carries the donor's part;
* off-target preservation  = S(edited, original | O): the rest of the recipient is kept;
* transfer gain            = S(edited, donor | T) - S(original, donor | T): how much closer to the donor the target
  part came, net of the resemblance any two brains share;
* locality contrast        = transfer gain - [S(edited, donor | O) - S(original, donor | O)]: the gain inside the
  target minus the same move toward the donor off target (a difference in differences). A local edit scores its
  whole gain; replacing the whole recipient by the donor, which moves everything toward the donor, scores near 0.

Regional MS-SSIM S(a, b | R): both volumes are set to background (-1) outside R, the SSIM and contrast-sensitivity
maps of Wang, Simoncelli and Bovik (2003) are computed at every scale exactly as MONAI's `compute_ms_ssim` does
(Gaussian window `kernel_size`, sigma `kernel_sigma`, valid convolution, K1 = 0.01, K2 = 0.03, data range 2 for
[-1, 1], 2x average pooling between scales, negative means clipped to 0), and each map is averaged over the windows
centred in R (weights: R average-pooled like the images) instead of over the whole volume, so that constant background
does not inflate the score. With R the whole volume it equals MONAI's MS-SSIM (tested). The Gaussian is applied
separably (three 1-D convolutions, the same numbers as MONAI's full 3-D kernel at a fraction of the cost).

Scales: a valid window needs every axis to keep at least `kernel_size` voxels at the coarsest scale; the standard
five scales with an 11-voxel window need 176 voxels per axis, so smaller volumes take fewer scales
(`scales_that_fit`), with the first weights of MS_SSIM_WEIGHTS renormalised; too many scales is an error.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
import torch
from torch.nn import functional as F

from neurips26.anadiffusion.metrics import check_scaled_volumes

__all__ = [
    "MS_SSIM_WEIGHTS",
    "EditScores",
    "editing_scores",
    "masked_ms_ssim",
    "ms_ssim_weights",
    "off_target_mask",
    "scales_that_fit",
]

MS_SSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)  # Wang et al. 2003; MONAI's default
KERNEL_SIZE = 11
KERNEL_SIGMA = 1.5
DATA_RANGE = 2.0  # the paper's [-1, 1] scaling
BACKGROUND = -1.0
_K1, _K2 = 0.01, 0.03


def ms_ssim_weights(n_scales: int) -> tuple[float, ...]:
    """The first `n_scales` of the standard MS-SSIM weights, renormalised to sum to 1."""
    if not isinstance(n_scales, int | np.integer) or not 1 <= n_scales <= len(MS_SSIM_WEIGHTS):
        raise ValueError(f"n_scales must be an integer in [1, {len(MS_SSIM_WEIGHTS)}], got {n_scales!r}")
    head = np.asarray(MS_SSIM_WEIGHTS[:n_scales])
    return tuple(float(w) for w in head / head.sum())


def scales_that_fit(spatial_shape, kernel_size: int = KERNEL_SIZE) -> int:
    """How many MS-SSIM scales a volume of `spatial_shape` allows: each coarser scale halves every axis (floor),
    and every axis must keep at least `kernel_size` voxels at the coarsest scale."""
    size, scales = np.asarray(spatial_shape, dtype=int), 0
    while (size >= kernel_size).all():
        scales, size = scales + 1, size // 2
    return scales


def _gaussian(kernel_size: int, sigma: float, dtype, device) -> torch.Tensor:
    """MONAI's 1-D Gaussian window (monai.metrics.regression._gaussian_kernel), normalised to sum 1."""
    dist = torch.arange((1 - kernel_size) / 2, (1 + kernel_size) / 2, 1.0, dtype=dtype, device=device)
    gauss = torch.exp(-((dist / sigma) ** 2) / 2)
    return gauss / gauss.sum()


def _blur(x: torch.Tensor, window: torch.Tensor) -> torch.Tensor:
    """Valid separable Gaussian filtering of every channel of `x` (B, C, D, H, W)."""
    channels, k = x.shape[1], len(window)
    for axis in range(3):
        shape = [1, 1, 1]
        shape[axis] = k
        x = F.conv3d(x, window.view(1, 1, *shape).expand(channels, 1, *shape), groups=channels)
    return x


def _ssim_and_cs(x: torch.Tensor, y: torch.Tensor, window: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """SSIM and contrast-sensitivity maps (B, D', H', W') of volumes (B, D, H, W), as MONAI's compute_ssim_and_cs."""
    moments = _blur(torch.stack([x, y, x * x, y * y, x * y], dim=1), window)
    mu_x, mu_y, mu_xx, mu_yy, mu_xy = moments.unbind(1)
    c1, c2 = (_K1 * DATA_RANGE) ** 2, (_K2 * DATA_RANGE) ** 2
    sigma_x, sigma_y, sigma_xy = mu_xx - mu_x**2, mu_yy - mu_y**2, mu_xy - mu_x * mu_y
    cs = (2 * sigma_xy + c2) / (sigma_x + sigma_y + c2)
    return (2 * mu_x * mu_y + c1) / (mu_x**2 + mu_y**2 + c1) * cs, cs


def _check_masks(masks, n: int, spatial: tuple[int, ...], name: str) -> np.ndarray:
    masks = np.asarray(masks)
    if masks.dtype != bool:
        raise ValueError(f"{name}: mask must be boolean, got {masks.dtype}")
    if masks.shape == spatial:
        masks = np.broadcast_to(masks, (n, *spatial))
    if masks.shape != (n, *spatial):
        raise ValueError(f"{name}: mask shape {masks.shape} is neither {spatial} nor {(n, *spatial)}")
    empty = ~masks.reshape(n, -1).any(axis=1)
    if empty.any():
        raise ValueError(f"{name}: mask is empty (item {int(np.argmax(empty))})")
    return masks


@torch.no_grad()
def masked_ms_ssim(
    x,
    y,
    masks,
    n_scales: int = len(MS_SSIM_WEIGHTS),
    kernel_size: int = KERNEL_SIZE,
    kernel_sigma: float = KERNEL_SIGMA,
    batch_size: int = 16,
    device: str | torch.device = "cpu",
) -> np.ndarray:
    """Regional MS-SSIM (N,) of paired volumes `x`, `y` (N, D, H, W) in [-1, 1] over `masks` (D, H, W shared, or
    N, D, H, W): the module docstring's S(x, y | R). Computed in float32 as MONAI does (float64 costs three times the
    time on a CPU), on `device`, `batch_size` pairs at a time."""
    x, y = check_scaled_volumes(x, "x"), check_scaled_volumes(y, "y")
    if x.shape != y.shape:
        raise ValueError(f"paired volumes differ in shape: {x.shape} and {y.shape}")
    if not isinstance(kernel_size, int | np.integer) or kernel_size < 1 or kernel_size % 2 == 0:
        raise ValueError(f"kernel_size must be an odd positive integer (a window with a centre), got {kernel_size!r}")
    weights = torch.tensor(ms_ssim_weights(n_scales), dtype=torch.float64, device=device)
    fit = scales_that_fit(x.shape[1:], kernel_size)
    if n_scales > fit:
        raise ValueError(
            f"MS-SSIM with {n_scales} scales and a {kernel_size}-voxel window needs every axis to be at least "
            f"{kernel_size * 2 ** (n_scales - 1)} voxels; volumes {x.shape[1:]} allow at most {fit} scales"
        )
    masks = _check_masks(masks, len(x), x.shape[1:], "region")
    window = _gaussian(kernel_size, kernel_sigma, torch.float32, device)
    margin = (kernel_size - 1) // 2
    out = np.empty(len(x))
    for start in range(0, len(x), batch_size):
        stop = start + batch_size
        weight = torch.as_tensor(np.array(masks[start:stop], dtype=np.float32), device=device)
        a = torch.as_tensor(x[start:stop], dtype=torch.float32, device=device)
        b = torch.as_tensor(y[start:stop], dtype=torch.float32, device=device)
        a, b = torch.where(weight > 0, a, BACKGROUND), torch.where(weight > 0, b, BACKGROUND)
        terms = []
        for scale in range(n_scales):
            ssim, cs = _ssim_and_cs(a, b, window)
            d, h, w = ssim.shape[1:]
            centres = weight[:, margin : margin + d, margin : margin + h, margin : margin + w]
            total = centres.sum(dim=(1, 2, 3), dtype=torch.float64)
            if (total <= 0).any():
                item = start + int(torch.argmax((total <= 0).int()))
                raise ValueError(
                    f"region of item {item} has no window centre at scale {scale + 1} of {n_scales} "
                    f"(kernel {kernel_size}); use fewer scales or a smaller window"
                )
            chosen = ssim if scale == n_scales - 1 else cs
            terms.append(torch.relu((chosen * centres).sum(dim=(1, 2, 3), dtype=torch.float64) / total))
            a, b, weight = (F.avg_pool3d(t[:, None], kernel_size=2)[:, 0] for t in (a, b, weight))
        out[start:stop] = torch.prod(torch.stack(terms) ** weights[:, None], dim=0).cpu().numpy()
    return out


# ------------------------------------------------------------------------------------------------------ the edits


def off_target_mask(brain, target, dilation_voxels: int = 2) -> np.ndarray:
    """Brain voxels farther than `dilation_voxels` (Chebyshev distance: a cubic structuring element) from the target
    part: brain minus the dilated target, (D, H, W) or (N, D, H, W) as the inputs broadcast."""
    if not isinstance(dilation_voxels, int | np.integer) or dilation_voxels < 0:
        raise ValueError(f"dilation_voxels must be a non-negative integer, got {dilation_voxels!r}")
    brain, target = np.asarray(brain, dtype=bool), np.asarray(target, dtype=bool)
    t = torch.as_tensor(np.array(target.reshape(-1, *target.shape[-3:]), dtype=np.float32))[:, None]
    r = int(dilation_voxels)
    dilated = F.max_pool3d(t, kernel_size=2 * r + 1, stride=1, padding=r)[:, 0].numpy().reshape(target.shape) > 0
    return brain & ~dilated


@dataclass(frozen=True)
class EditScores:
    """Per edit (N,): the four columns of the paper's Fig. 4a (our definitions, module docstring), plus the two
    terms they subtract: `baseline_transfer` = S(original, donor | T) and `off_target_drift` =
    S(edited, donor | O) - S(original, donor | O)."""

    target_transfer: np.ndarray
    off_target_preservation: np.ndarray
    transfer_gain: np.ndarray
    locality_contrast: np.ndarray
    baseline_transfer: np.ndarray
    off_target_drift: np.ndarray

    def columns(self) -> dict[str, np.ndarray]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def editing_scores(
    original,
    donor,
    edited,
    target,
    brain,
    dilation_voxels: int = 2,
    n_scales: int = len(MS_SSIM_WEIGHTS),
    kernel_size: int = KERNEL_SIZE,
    kernel_sigma: float = KERNEL_SIGMA,
    batch_size: int = 16,
    device: str | torch.device = "cpu",
) -> EditScores:
    """The editing scores of N edits: `original` (the recipient before the edit), `donor` (the volume whose part was
    transplanted) and `edited` (the refined result), each (N, D, H, W) in [-1, 1]; `target` the edited part's mask
    and `brain` the brain mask, (D, H, W) template masks or (N, D, H, W). Five regional MS-SSIMs per edit, each
    batched over the edits; refuses an edit whose donor is its recipient."""
    original = check_scaled_volumes(original, "original")
    donor, edited = check_scaled_volumes(donor, "donor"), check_scaled_volumes(edited, "edited")
    if not original.shape == donor.shape == edited.shape:
        raise ValueError(f"original {original.shape}, donor {donor.shape} and edited {edited.shape} differ in shape")
    same = (original == donor).reshape(len(original), -1).all(axis=1)
    if same.any():
        raise ValueError(f"edit {int(np.argmax(same))}: the donor equals the recipient; an edit needs another donor")
    n, spatial = len(original), original.shape[1:]
    inside = _check_masks(target, n, spatial, "target")
    off = off_target_mask(brain, target, dilation_voxels)  # once per template mask, not once per edit
    off = _check_masks(off, n, spatial, "off-target (brain minus the dilated target)")
    pairs = [(edited, donor, inside), (original, donor, inside), (edited, original, off), (edited, donor, off)]
    pairs.append((original, donor, off))
    transfer, baseline, preservation, edited_off, original_off = (
        masked_ms_ssim(a, b, region, n_scales, kernel_size, kernel_sigma, batch_size, device) for a, b, region in pairs
    )
    gain, drift = transfer - baseline, edited_off - original_off
    return EditScores(transfer, preservation, gain, gain - drift, baseline, drift)
