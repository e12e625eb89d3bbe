"""Paper 11's training and scoring: inputs prepared as the reference does, the loss falls, maps are seeded and
localise a defect after training, and an interrupted run resumes to the same weights."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from conftest import crash_after_step
from neurips26.common import loop
from neurips26.ecfr.data import make_sample
from neurips26.ecfr.model import ECFR, ECFRConfig
from neurips26.ecfr.training import anomaly_maps, prepare, train

TINY = ECFRConfig(backbone=(8, 16, 32), decoder=(64, 32, 16, 8), depths=(2, 2, 2, 2), heads=(2, 2, 1, 1),
                  agents=(4, 4, 4, 4), bottleneck_blocks=1, image_size=64)  # fmt: skip


def _batch(defect="good", n=6, classes=("ring", "dome")):
    samples = [make_sample(classes[i % len(classes)], defect, seed=i) for i in range(n)]
    rgb = np.stack([s.rgb for s in samples])
    depth = np.stack([s.depth for s in samples])
    return rgb, depth, np.stack([s.mask for s in samples])


def test_inputs_are_normalised_and_invalid_depth_is_zero_in_the_min_max_as_the_reference():
    rgb, depth, _ = _batch(n=2)
    depth = depth + 0.5  # a scanner's depth: valid points far from 0
    depth[0, :4, :4] = np.nan
    x, d = prepare(rgb, depth)
    assert x.shape == d.shape == (2, 3, 64, 64) and torch.isfinite(d).all()
    raw = d * torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1) + torch.tensor([0.485, 0.456, 0.406]).view(
        1, 3, 1, 1
    )
    assert torch.allclose(raw[0, :, :4, :4], torch.zeros(3, 4, 4), atol=1e-6)  # invalid: 0, the image's minimum
    valid = depth[0][4:, 4:]
    expected = valid / depth[0][np.isfinite(depth[0])].max()  # min-max over [0, max], zeros included
    assert np.allclose(raw[0, 0, 4:, 4:].numpy(), expected, atol=1e-5)
    lowest = depth[1].min()  # no invalid point: min-max over the image's own range
    assert np.allclose(raw[1, 0].numpy(), (depth[1] - lowest) / (depth[1].max() - lowest), atol=1e-5)
    assert torch.allclose(raw[:, 0], raw[:, 2], atol=1e-5)


@pytest.mark.parametrize("cross", [True, False])
def test_training_lowers_the_loss_and_maps_are_deterministic(cross):
    rgb, depth, _ = _batch(n=8)
    x, d = prepare(rgb, depth)
    model = ECFR(TINY)
    rows = train(model, x, d, steps=30, batch=4, lr=5e-3, cross=cross, seed=0)
    assert np.mean([r["loss"] for r in rows[-5:]]) < np.mean([r["loss"] for r in rows[:5]])
    assert rows[-1]["lr"] == pytest.approx(5e-4)  # divided by 10 at 80% of the steps
    maps = anomaly_maps(model, x[:2], d[:2], cross, sigma=1.0)
    assert maps.shape == (2, 64, 64) and np.array_equal(maps, anomaly_maps(model, x[:2], d[:2], cross, sigma=1.0))


def test_an_interrupted_run_resumes_to_the_same_weights(tmp_path, monkeypatch):
    rgb, depth, _ = _batch(n=6)
    x, d = prepare(rgb, depth)
    whole = ECFR(TINY)
    whole_rows = train(whole, x, d, steps=10, batch=3, lr=5e-3, cross=True, seed=1)
    settings = loop.LoopSettings(checkpoint=tmp_path / "ckpt", fingerprint="x", every_steps=4)
    crash_after_step(monkeypatch, 6)  # the job dies after this step; its last checkpoint is earlier
    with pytest.raises(KeyboardInterrupt):
        train(ECFR(TINY), x, d, steps=10, batch=3, lr=5e-3, cross=True, seed=1, loop_settings=settings)
    monkeypatch.undo()
    resumed = ECFR(TINY)
    rows = train(resumed, x, d, steps=10, batch=3, lr=5e-3, cross=True, seed=1, loop_settings=settings)
    for a, b in zip(whole.state_dict().values(), resumed.state_dict().values()):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert rows == whole_rows


def test_a_per_class_run_killed_in_its_second_class_resumes_to_the_same_models(tmp_path, monkeypatch):
    """The first class's model restores from its last checkpoint and finishes; the second resumes where it died."""
    from neurips26.ecfr.experiment import fit_run

    rgb, depth, _ = _batch(n=8)
    x, d = prepare(rgb, depth)
    classes = np.array(["ring", "dome"] * 4)
    cfg = {"teacher": {"widths": [8, 16, 32], "blocks": [1, 1, 1]}, "cfm": {"hidden": 8, "lr": 1e-3},
           "model": {"decoder": [64, 32, 16, 8], "depths": [2, 2, 2, 2], "heads": [2, 2, 1, 1], "agents": [4, 4, 4, 4],
                     "bottleneck_blocks": 1, "drop_path": 0.2},
           "train": {"steps": 16, "batch": 4, "lr": 5e-3, "weight_decay": 1e-4, "decay_at": 0.8,
                     "per_class": "epochs"}}  # fmt: skip
    whole, whole_rows = fit_run("ecfr", "per_class", 0, x, d, classes, cfg, None)

    def settings(group):
        return loop.LoopSettings(checkpoint=tmp_path / f"ckpt.{group}", fingerprint="x", every_steps=3)

    crash_after_step(monkeypatch, 12)  # 8 steps of ring, then the job dies after step 4 of dome
    with pytest.raises(KeyboardInterrupt):
        fit_run("ecfr", "per_class", 0, x, d, classes, cfg, None, settings)
    monkeypatch.undo()
    assert (tmp_path / "ckpt.ring").exists() and (tmp_path / "ckpt.dome").exists()
    resumed, rows = fit_run("ecfr", "per_class", 0, x, d, classes, cfg, None, settings)
    assert list(resumed) == ["ring", "dome"] and rows == whole_rows
    for group in whole:
        for key, value in whole[group].items():
            torch.testing.assert_close(value, resumed[group][key], rtol=0, atol=0)


class _Fixed(torch.nn.Module):
    """A stand-in model whose teacher and student features are constant vectors per scale and stream."""

    def __init__(self, t_rgb, t_depth, s_rgb, s_depth):
        super().__init__()
        self.feats = [t_rgb, t_depth, s_rgb, s_depth]

    def forward(self, rgb, depth):
        n = len(rgb)
        return [[torch.tensor(v, dtype=torch.float32).view(1, -1, 1, 1).expand(n, -1, side, side) for v, side in
                 zip(vectors, (4, 2))] for vectors in self.feats]  # fmt: skip


def test_the_map_sums_one_minus_cosine_over_scales_of_the_compared_pairs():
    """Cross-modal: the depth stream against the RGB teacher and the RGB stream against the depth teacher; same-modal:
    each stream against its own teacher; per pair and scale 1 - cos, upsampled and summed (hand-computed values)."""
    t_rgb, t_depth = [[1, 0], [1, 0]], [[0, 1], [0, 1]]
    s_rgb, s_depth = [[1, 0], [1, 1]], [[0, 1], [1, 0]]
    model = _Fixed(t_rgb, t_depth, s_rgb, s_depth)
    x = torch.zeros(2, 3, 8, 8)
    # cross: (t_rgb, s_depth): 1 - cos([1,0],[0,1]) = 1 and 1 - cos([1,0],[1,0]) = 0;
    #        (t_depth, s_rgb): 1 - cos([0,1],[1,0]) = 1 and 1 - cos([0,1],[1,1]) = 1 - 1/sqrt(2)
    cross = anomaly_maps(model, x, x, cross=True, sigma=0.0)
    assert cross.shape == (2, 8, 8) and np.allclose(cross, 1 + 0 + 1 + (1 - 2**-0.5), atol=1e-6)
    # same: (t_rgb, s_rgb): 0 and 1 - 1/sqrt(2); (t_depth, s_depth): 0 and 1
    same = anomaly_maps(model, x, x, cross=False, sigma=0.0)
    assert np.allclose(same, 0 + (1 - 2**-0.5) + 0 + 1, atol=1e-6)


def test_stochastic_depth_drops_whole_samples_in_training_only_and_deepest_stages_most():
    from neurips26.ecfr.model import drop_path

    x = torch.ones(4000, 3)
    torch.manual_seed(0)
    out = drop_path(x, 0.25, training=True)
    kept = out[:, 0] > 0
    assert torch.all((out == 0) | torch.isclose(out, torch.tensor(1 / 0.75))) and torch.all(out == out[:, :1])
    assert abs(kept.float().mean().item() - 0.75) < 0.03
    assert torch.equal(drop_path(x, 0.25, training=False), x)
    model = ECFR(TINY)
    rates = [model.decoder.rgb[i].blocks[0].drop for i in range(4)]
    assert rates[0][0] == pytest.approx(0.2) and rates[-1][-1] == 0.0  # linspace(0, 0.2) reversed
    assert all(a >= b for stage in rates for a, b in zip(stage, stage[1:]))


class _Ramp(torch.nn.Module):
    """On a 2 x 2 grid, teacher features that all point one way and student features equal to them in the first
    column and at 45 degrees to them in the second: the distance map is 0, then 1 - 1/sqrt(2), per column."""

    def forward(self, rgb, depth):
        n = len(rgb)
        teacher = torch.tensor([1.0, 0.0]).view(1, 2, 1, 1).expand(n, 2, 2, 2)
        student = torch.tensor([[1.0, 1.0], [0.0, 1.0]]).view(1, 2, 1, 2).expand(n, 2, 2, 2)  # 0 and 1 - 1/sqrt(2)
        return [teacher], [teacher], [student], [student]


def test_the_map_is_upsampled_with_the_grids_corners_aligned_as_the_reference():
    """ADer's cal_anomaly_map upsamples with align_corners=True: the map is linear from the first pixel column to
    the last (align_corners=False would hold the border half-cells flat)."""
    x = torch.zeros(1, 3, 8, 8)
    row = anomaly_maps(_Ramp(), x, x, cross=False, sigma=0.0)[0, 0]
    left, right = 2 * 0.0, 2 * (1 - 2**-0.5)  # two compared pairs (RGB and depth), one scale each
    assert np.allclose(row, np.linspace(left, right, 8), atol=1e-6)
