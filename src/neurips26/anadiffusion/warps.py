"""Smooth random diffeomorphisms of 3D volumes: stationary velocity fields integrated by scaling and squaring.

A stationary velocity field v generates the diffeomorphism phi = exp(v); scaling and squaring computes it as
``(id + v / 2^K)`` composed with itself K times (Arsigny et al. 2006; Ashburner 2007, DARTEL). Its inverse is
exp(-v). Random fields are Gaussian-smoothed white noise scaled to a root-mean-square magnitude (as the synthetic
deformations of SynthSeg's generator, Billot et al. 2023).

Conventions: fields are torch tensors (N, 3, X, Y, Z) in voxel units, component i along array axis i (x, y, z of a
RAS grid). A displacement u defines phi(p) = p + u(p); warping pulls back: ``warped(p) = image(phi(p))``, with linear
interpolation for images and nearest-neighbour for labels, and replicates the border outside the grid. Everything is
batched over subjects.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

__all__ = [
    "compose",
    "gaussian_kernel",
    "integrate_velocity",
    "inverse_displacement",
    "jacobian_determinant",
    "random_field",
    "smooth",
    "warp_images",
    "warp_labels",
]

_TRUNCATE = 3.0  # Gaussian kernels end at 3 sigma


def gaussian_kernel(sigma: float, dtype=torch.float32) -> torch.Tensor:
    """A 1D Gaussian of standard deviation `sigma` voxels, cut at 3 sigma, summing to 1."""
    if not (math.isfinite(sigma) and sigma > 0):
        raise ValueError(f"sigma must be a positive number of voxels, got {sigma!r}")
    radius = max(1, math.ceil(_TRUNCATE * sigma))
    x = torch.arange(-radius, radius + 1, dtype=torch.float64)
    kernel = torch.exp(-0.5 * (x / sigma) ** 2)
    return (kernel / kernel.sum()).to(dtype)


def _smoothing_matrix(size: int, kernel: torch.Tensor) -> torch.Tensor:
    """The convolution with `kernel` along one axis of `size` voxels, the border replicated, as a matrix."""
    radius = (len(kernel) - 1) // 2
    rows = torch.arange(size)[:, None].expand(-1, len(kernel))
    columns = (rows + torch.arange(len(kernel))[None, :] - radius).clamp(0, size - 1)
    matrix = torch.zeros(size, size, dtype=kernel.dtype)
    return matrix.index_put_((rows, columns), kernel.expand(size, -1), accumulate=True)


def smooth(x: torch.Tensor, sigma: float) -> torch.Tensor:
    """Gaussian smoothing (sigma in voxels, cut at 3 sigma) of x (B, C, X, Y, Z) with the border replicated, as
    scipy.ndimage.gaussian_filter(mode="nearest"). The kernel sums to 1, so a partition of unity stays one."""
    kernel = gaussian_kernel(sigma, x.dtype)
    x = torch.einsum("ix,bcxyz->bciyz", _smoothing_matrix(x.shape[2], kernel), x)
    x = torch.einsum("jy,bcxyz->bcxjz", _smoothing_matrix(x.shape[3], kernel), x)
    return torch.einsum("kz,bcxyz->bcxyk", _smoothing_matrix(x.shape[4], kernel), x)


def random_field(
    n: int, shape: tuple[int, int, int], sigma: float, rms: torch.Tensor | float, generator: torch.Generator
) -> torch.Tensor:
    """n random vector fields (n, 3, *shape): white noise smoothed by a Gaussian of `sigma` voxels (in Fourier space,
    so the field is stationary and periodic over the grid), scaled so that E|v|^2 = rms^2 at every voxel (`rms` one
    value or one per field, in the caller's unit)."""
    if not (math.isfinite(sigma) and sigma > 0):
        raise ValueError(f"sigma must be a positive number of voxels, got {sigma!r}")
    noise = torch.randn((n, 3, *shape), generator=generator)
    freq = [torch.fft.fftfreq(s) for s in shape[:2]] + [torch.fft.rfftfreq(shape[2])]
    fx, fy, fz = torch.meshgrid(*freq, indexing="ij")
    transfer = torch.exp(-2.0 * math.pi**2 * sigma**2 * (fx**2 + fy**2 + fz**2))
    weight = torch.full(fz.shape, 2.0)  # rfft keeps half the spectrum: count the mirrored half too
    weight[..., 0] = 1.0
    if shape[2] % 2 == 0:
        weight[..., -1] = 1.0
    transfer = transfer / ((weight * transfer**2).sum() / math.prod(shape)).sqrt()  # unit variance per component
    field = torch.fft.irfftn(torch.fft.rfftn(noise, dim=(2, 3, 4)) * transfer, s=shape, dim=(2, 3, 4))
    rms = torch.as_tensor(rms, dtype=torch.float32).reshape(-1, 1, 1, 1, 1)
    return field * rms / math.sqrt(3.0)


def _identity_grid(shape: tuple[int, int, int], dtype) -> torch.Tensor:
    """The identity in grid_sample's coordinates: (1, X, Y, Z, 3), last axis (z, y, x) normalised to [-1, 1]."""
    axes = [torch.linspace(-1.0, 1.0, s, dtype=dtype) for s in shape]
    return torch.stack(torch.meshgrid(*axes, indexing="ij")[::-1], dim=-1)[None]


def _sample(volumes: torch.Tensor, displacement: torch.Tensor, mode: str) -> torch.Tensor:
    """volumes (N or 1, C, X, Y, Z) read at p + u(p) for the displacement u (N, 3, X, Y, Z) in voxels."""
    shape = tuple(displacement.shape[2:])
    scale = torch.tensor([2.0 / max(s - 1, 1) for s in shape[::-1]], dtype=displacement.dtype)
    grid = _identity_grid(shape, displacement.dtype) + displacement.flip(1).permute(0, 2, 3, 4, 1) * scale
    if volumes.shape[0] != displacement.shape[0]:
        volumes = volumes.expand(displacement.shape[0], *volumes.shape[1:])
    return F.grid_sample(volumes, grid, mode=mode, padding_mode="border", align_corners=True)


def _check_field(field: torch.Tensor, name: str) -> None:
    if not isinstance(field, torch.Tensor) or field.ndim != 5 or field.shape[1] != 3:
        shape = tuple(field.shape) if hasattr(field, "shape") else type(field).__name__
        raise ValueError(f"{name} must be a tensor of shape (N, 3, X, Y, Z), got {shape}")
    if not torch.isfinite(field).all():
        raise ValueError(f"{name} holds non-finite values")


def integrate_velocity(velocity: torch.Tensor, steps: int = 6) -> torch.Tensor:
    """The displacement of exp(v) for stationary velocities v (N, 3, X, Y, Z) in voxels, by scaling and squaring:
    u <- v / 2^steps, then `steps` times u <- u + u o (id + u)."""
    _check_field(velocity, "velocity")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps must be an integer >= 0, got {steps!r}")
    displacement = velocity / 2**steps
    for _ in range(steps):
        displacement = displacement + _sample(displacement, displacement, "bilinear")
    return displacement


def inverse_displacement(velocity: torch.Tensor, steps: int = 6) -> torch.Tensor:
    """The displacement of exp(v)^-1 = exp(-v)."""
    return integrate_velocity(-velocity, steps)


def compose(first: torch.Tensor, second: torch.Tensor) -> torch.Tensor:
    """The displacement of first o second, p -> phi_first(phi_second(p)): u2(p) + u1(p + u2(p))."""
    _check_field(first, "first")
    _check_field(second, "second")
    return second + _sample(first, second, "bilinear")


def warp_images(images: torch.Tensor, displacement: torch.Tensor) -> torch.Tensor:
    """Images (N, X, Y, Z) or (N, C, X, Y, Z), or one image for all (1, ...), pulled back through the displacement
    with trilinear interpolation: warped(p) = image(p + u(p))."""
    _check_field(displacement, "displacement")
    squeeze = images.ndim == 4
    volumes = images[:, None] if squeeze else images
    if volumes.ndim != 5 or volumes.shape[2:] != displacement.shape[2:]:
        raise ValueError(f"images of shape {tuple(images.shape)} do not match the field {tuple(displacement.shape)}")
    out = _sample(volumes.to(displacement.dtype), displacement, "bilinear")
    return out[:, 0] if squeeze else out


def warp_labels(labels: torch.Tensor, displacement: torch.Tensor) -> torch.Tensor:
    """Label maps (N, X, Y, Z), or one for all (1, X, Y, Z), pulled back through the displacement by nearest
    neighbour (labels stay labels); same dtype as `labels`."""
    _check_field(displacement, "displacement")
    if labels.ndim != 4 or labels.shape[1:] != displacement.shape[2:]:
        raise ValueError(f"labels of shape {tuple(labels.shape)} do not match the field {tuple(displacement.shape)}")
    out = _sample(labels[:, None].to(displacement.dtype), displacement, "nearest")[:, 0]
    return out.round().to(labels.dtype)


def jacobian_determinant(displacement: torch.Tensor) -> torch.Tensor:
    """det(I + du/dp) at every voxel (N, X, Y, Z), by central differences (one-sided at the border)."""
    _check_field(displacement, "displacement")
    (ux, uy, uz) = torch.gradient(displacement, dim=(2, 3, 4))  # d u / d p_j, each (N, 3, X, Y, Z)
    a, b, c = ux[:, 0] + 1, uy[:, 0], uz[:, 0]
    d, e, f = ux[:, 1], uy[:, 1] + 1, uz[:, 1]
    g, h, i = ux[:, 2], uy[:, 2], uz[:, 2] + 1
    return a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
