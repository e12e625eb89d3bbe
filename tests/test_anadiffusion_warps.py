"""Random diffeomorphisms by scaling and squaring: invertible, diffeomorphic, mask-consistent (paper 03)."""

import math

import numpy as np
import pytest
import torch
from scipy import ndimage

from neurips26.anadiffusion.volumes import PART_LABELS, check_part_masks, part_masks
from neurips26.anadiffusion.warps import (
    compose,
    integrate_velocity,
    inverse_displacement,
    jacobian_determinant,
    random_field,
    smooth,
    warp_images,
    warp_labels,
)

SHAPE = (24, 28, 24)
INNER = (slice(None), slice(None), slice(4, -4), slice(4, -4), slice(4, -4))


def _partition():
    """A brain-like ellipsoid cut into left, right and a lower back part, labelled as the template's parts."""
    x, y, z = np.meshgrid(*[np.linspace(-1, 1, s) for s in SHAPE], indexing="ij")
    brain = x**2 / 0.7 + y**2 / 0.8 + z**2 / 0.7 < 1
    parts = np.where(x < 0, PART_LABELS["LH"], PART_LABELS["RH"])
    parts = np.where((z < -0.2) & (y < -0.2), PART_LABELS["CB"], parts)
    return np.where(brain, parts, 0).astype(np.uint8)


def _velocity(n=2, rms=0.6, sigma=1.5, seed=0):
    """Cohort-sized fields: 8 mm voxels, 12 mm smoothing, about 5 mm RMS (the global and a part's field)."""
    return random_field(n, SHAPE, sigma, rms, torch.Generator().manual_seed(seed))


def test_zero_and_constant_velocities_give_identity_and_translation():
    assert integrate_velocity(torch.zeros(1, 3, *SHAPE)).abs().max() == 0
    v = torch.zeros(1, 3, *SHAPE)
    v[:, 0], v[:, 2] = 1.5, -0.5
    assert torch.allclose(integrate_velocity(v), v, atol=1e-5)


def test_linear_velocity_integrates_to_its_exponential_scaling():
    log_scale = 0.08
    centre = torch.tensor([11.5, 13.5, 11.5]).reshape(1, 3, 1, 1, 1)
    grid = torch.stack(torch.meshgrid(*[torch.arange(s, dtype=torch.float32) for s in SHAPE], indexing="ij"))[None]
    u = integrate_velocity(log_scale * (grid - centre))
    expected = (math.exp(log_scale) - 1) * (grid - centre)
    assert torch.allclose(u[INNER], expected[INNER], atol=2e-2)
    det = jacobian_determinant(u)[INNER[:1] + INNER[2:]]
    assert torch.allclose(det, torch.full_like(det, math.exp(3 * log_scale)), rtol=1e-2)


def test_warp_composed_with_its_inverse_is_the_identity():
    v = _velocity()
    u, u_inv = integrate_velocity(v), inverse_displacement(v)
    assert u[INNER].abs().max() > 1.0  # a real deformation, more than a voxel somewhere
    for residual in (compose(u, u_inv), compose(u_inv, u)):
        assert residual[INNER].abs().max() < 0.15  # voxels
    assert compose(u, u)[INNER].abs().max() > 1.0  # the tolerance separates an inverse from a non-inverse


def test_warping_an_image_there_and_back_restores_it():
    v = _velocity(n=2)
    image = torch.from_numpy(ndimage.gaussian_filter(np.random.default_rng(0).normal(size=SHAPE), 3.0)).float()
    image = image[None].expand(2, *SHAPE)
    there = warp_images(image, integrate_velocity(v))
    back = warp_images(there, inverse_displacement(v))
    moved = (there - image)[INNER[:1] + INNER[2:]].square().mean().sqrt()
    restored = (back - image)[INNER[:1] + INNER[2:]].square().mean().sqrt()
    assert restored < 0.35 * moved  # what remains is the blur of two linear interpolations


def test_jacobian_determinant_is_positive_everywhere():
    v = _velocity(n=4, rms=1.0)  # stronger than the cohort's fields
    det = jacobian_determinant(integrate_velocity(v))
    assert det.min() > 0 and det.max() > 1.3 and det.min() < 0.8  # deformed, yet never folded


def test_folding_displacement_has_a_negative_determinant():
    u = torch.zeros(1, 3, *SHAPE)
    u[:, 0] = -1.5 * torch.arange(SHAPE[0], dtype=torch.float32).reshape(-1, 1, 1)  # x -> -0.5 x: a reflection
    assert jacobian_determinant(u).max() < 0


def test_warped_part_labels_equal_the_warped_partition():
    u = integrate_velocity(_velocity(n=2))
    parts = torch.from_numpy(_partition())[None]
    labels = warp_labels(parts, u)
    assert labels.dtype == torch.uint8
    masks = torch.stack([warp_labels((parts == PART_LABELS[p]).to(torch.uint8), u) for p in PART_LABELS], dim=1)
    brain = warp_labels((parts > 0).to(torch.uint8), u).bool()
    assert np.array_equal(part_masks(labels.numpy()), masks.bool().numpy())
    check_part_masks(masks.bool().numpy(), brain.numpy())  # no overlap, cover the warped brain, none empty
    assert not torch.equal(labels, parts.expand_as(labels))  # the labels did move


def test_linear_warp_keeps_soft_memberships_a_partition_of_unity():
    onehot = torch.nn.functional.one_hot(torch.from_numpy(_partition().astype(np.int64)), 4)
    members = smooth(onehot.permute(3, 0, 1, 2)[None].float(), 1.5)
    warped = warp_images(members, integrate_velocity(_velocity(n=2)))
    assert torch.allclose(warped.sum(1), torch.ones(2, *SHAPE), atol=1e-5)


def test_random_fields_have_the_requested_rms_and_are_reproducible():
    v = random_field(64, SHAPE, 1.5, torch.linspace(0.5, 2.0, 64), torch.Generator().manual_seed(1))
    rms = v.square().sum(1).mean(dim=(1, 2, 3)).sqrt()
    assert torch.allclose(rms.mean(), torch.linspace(0.5, 2.0, 64).mean(), rtol=0.05)
    again = random_field(64, SHAPE, 1.5, torch.linspace(0.5, 2.0, 64), torch.Generator().manual_seed(1))
    assert torch.equal(v, again)
    # Gaussian smoothing of white noise: correlation exp(-d^2 / (4 sigma^2)) at lag d
    lag = (v[:, :, 1:] * v[:, :, :-1]).mean() / v.square().mean()
    assert lag.item() == pytest.approx(math.exp(-1 / (4 * 1.5**2)), abs=0.01)


def test_smooth_matches_scipy():
    x = torch.randn(2, 3, 10, 11, 12)
    expected = ndimage.gaussian_filter(x.numpy(), (0, 0, 1.2, 1.2, 1.2), mode="nearest", truncate=3.0)
    assert np.allclose(smooth(x, 1.2).numpy(), expected, atol=1e-5)


def test_integer_translation_shifts_images_and_labels_exactly():
    image = torch.arange(np.prod(SHAPE), dtype=torch.float32).reshape(1, *SHAPE)
    u = torch.zeros(1, 3, *SHAPE)
    u[:, 1] = 2.0  # warped(p) = image(p + 2 e_y)
    assert torch.allclose(warp_images(image, u)[:, :, :-2], image[:, :, 2:], atol=1e-2)
    assert torch.equal(warp_labels(image.to(torch.int64), u)[:, :, :-2], image[:, :, 2:].to(torch.int64))


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: integrate_velocity(torch.zeros(1, 2, *SHAPE)), r"velocity must be a tensor of shape \(N, 3"),
        (lambda: integrate_velocity(torch.full((1, 3, *SHAPE), float("nan"))), "non-finite"),
        (lambda: integrate_velocity(torch.zeros(1, 3, *SHAPE), steps=-1), "steps"),
        (lambda: warp_images(torch.zeros(1, 5, 5, 5), torch.zeros(1, 3, *SHAPE)), "do not match"),
        (lambda: random_field(1, SHAPE, 0.0, 1.0, torch.Generator()), "sigma"),
    ],
)
def test_bad_fields_are_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()
