"""Paper 11's CFM baseline: features on the finest grid, the product of both directions' cosine distances, and
training lowers its loss."""

from __future__ import annotations

import torch

from neurips26.ecfr.cfm import CFM, cfm_maps_and_loss


def test_the_map_is_the_product_of_both_directions_and_zero_where_one_direction_is_exact():
    model = CFM((8, 16, 32), hidden=16)
    x, d = torch.randn(2, 3, 64, 64), torch.randn(2, 3, 64, 64)
    f_rgb, f_depth, pred_depth, pred_rgb = model(x, d)
    assert f_rgb.shape == f_depth.shape == pred_depth.shape == (2, 56, 16, 16)
    amap, loss = cfm_maps_and_loss(f_rgb, f_depth, f_depth.clone(), pred_rgb)  # depth predicted exactly
    assert amap.shape == (2, 1, 16, 16) and torch.allclose(amap, torch.zeros_like(amap), atol=1e-6)
    assert loss > 0


def test_training_the_mlps_lowers_the_cosine_loss():
    torch.manual_seed(0)
    model = CFM((8, 16, 32), hidden=32)
    x = torch.rand(8, 3, 64, 64)
    d = x.flip(-1)  # a fixed relation between the two "modalities"
    params = [p for p in model.parameters() if p.requires_grad]
    optimiser = torch.optim.Adam(params, 1e-2)
    losses = []
    for _ in range(40):
        loss = cfm_maps_and_loss(*model(x, d))[1]
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(float(loss))
    assert losses[-1] < 0.5 * losses[0]
    assert not any(p.requires_grad for p in model.teacher.parameters())
