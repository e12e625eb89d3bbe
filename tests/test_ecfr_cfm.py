"""Paper 11's CFM baseline: features on the finest grid, the product of both directions' cosine distances, and
training lowers its loss."""

from __future__ import annotations

import numpy as np
import torch

from neurips26.ecfr.cfm import CFM, cfm_maps, cfm_maps_and_loss, train_cfm


def test_the_map_is_the_product_of_both_directions_and_zero_where_one_direction_is_exact():
    model = CFM((8, 16, 32), hidden=16)
    x, d = torch.randn(2, 3, 64, 64), torch.randn(2, 3, 64, 64)
    f_rgb, f_depth, pred_depth, pred_rgb = model(x, d)
    assert f_rgb.shape == f_depth.shape == pred_depth.shape == (2, 56, 16, 16)
    amap, loss = cfm_maps_and_loss(f_rgb, f_depth, f_depth.clone(), pred_rgb)  # depth predicted exactly
    assert amap.shape == (2, 1, 16, 16) and torch.allclose(amap, torch.zeros_like(amap), atol=1e-6)
    assert loss > 0


def test_training_the_mlps_lowers_the_cosine_loss_and_maps_are_deterministic():
    torch.manual_seed(0)
    model = CFM((8, 16, 32), hidden=32)
    x = torch.rand(8, 3, 64, 64)
    d = x.flip(-1)  # a fixed relation between the two "modalities"
    rows = train_cfm(model, x, d, steps=40, batch=8, lr=1e-2, seed=0)
    assert np.mean([r["loss"] for r in rows[-5:]]) < 0.5 * rows[0]["loss"]
    assert not any(p.requires_grad for p in model.teacher.parameters())
    maps = cfm_maps(model, x[:2], d[:2], sigma=1.0)
    assert maps.shape == (2, 64, 64) and (maps >= 0).all() and np.array_equal(maps, cfm_maps(model, x[:2], d[:2], 1.0))


def test_cfm_upsamples_features_and_maps_with_the_corners_aligned_as_ecfr_does(monkeypatch):
    """C3 compares CFM's maps with ECFR's, which are upsampled with align_corners=True (ADer's): CFM's are too, both
    the scales fused onto the finest grid and the map brought to the image size."""
    import torch.nn.functional as F

    calls = []
    interpolate = F.interpolate

    def spy(*args, **kwargs):
        calls.append(kwargs.get("align_corners"))
        return interpolate(*args, **kwargs)

    monkeypatch.setattr(F, "interpolate", spy)
    model = CFM((8, 16, 32), hidden=16)
    x, d = torch.rand(2, 3, 64, 64), torch.rand(2, 3, 64, 64)
    cfm_maps(model, x, d, sigma=1.0)
    assert calls and all(c is True for c in calls)
    feats = [torch.arange(4.0).reshape(1, 1, 2, 2)]
    fused = CFM.fuse([torch.zeros(1, 1, 4, 4), *feats])
    assert fused[0, 1, 0, 0] == 0.0 and fused[0, 1, -1, -1] == 3.0  # the corners kept, as align_corners=True does
