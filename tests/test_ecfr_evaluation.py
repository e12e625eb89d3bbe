"""Paper 11's per-run metrics (per class, their mean, per defect type), the complexity counts against hand counts,
the pretext teacher, and torchvision's ResNet state dict mapped onto the teacher."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from neurips26.ecfr.complexity import measure, measure_configurations
from neurips26.ecfr.evaluation import image_scores, run_metrics
from neurips26.ecfr.metrics import aupro, image_auroc, pixel_auroc
from neurips26.ecfr.model import Backbone, torchvision_resnet_state
from neurips26.ecfr.teacher import pretext_batch, pretrain_teacher


def _maps():
    rng = np.random.default_rng(0)
    cls = np.array(["a"] * 4 + ["b"] * 4)
    defect = np.array(["good", "good", "hole", "stain"] * 2)
    masks = np.zeros((8, 8, 8), dtype=bool)
    masks[defect != "good", 2:4, 2:4] = True
    maps = rng.random((8, 8, 8)) + 2.0 * masks
    return maps, masks, cls, defect


def test_run_metrics_are_per_class_their_mean_and_per_defect_averaged_over_classes():
    maps, masks, cls, defect = _maps()
    rows = {(r["group"], r["name"]): r for r in run_metrics(maps, masks, cls, defect)}
    assert set(rows) == {("class", "a"), ("class", "b"), ("class", "mean"), ("defect", "hole"), ("defect", "stain")}
    a = cls == "a"
    assert rows[("class", "a")]["i_auroc"] == image_auroc(image_scores(maps[a]), defect[a] != "good")
    assert rows[("class", "a")]["p_auroc"] == pixel_auroc(maps[a], masks[a])
    assert rows[("class", "a")]["aupro"] == aupro(maps[a], masks[a])
    for k in ("i_auroc", "p_auroc", "aupro"):
        assert rows[("class", "mean")][k] == pytest.approx((rows[("class", "a")][k] + rows[("class", "b")][k]) / 2)
    for k, score in (("i_auroc", lambda m, k: image_auroc(image_scores(m[k]), defect[k] != "good")),
                     ("p_auroc", lambda m, k: pixel_auroc(m[k], masks[k]))):  # fmt: skip
        per_class = [score(maps, (cls == c) & ((defect == "hole") | (defect == "good"))) for c in ("a", "b")]
        assert rows[("defect", "hole")][k] == pytest.approx(np.mean(per_class))
    # not pooled: a class whose maps are all shifted up ranks its normals above the other class's defects
    shifted = maps + 10.0 * (cls == "b")[:, None, None]
    again = {(r["group"], r["name"]): r for r in run_metrics(shifted, masks, cls, defect)}
    assert again[("defect", "hole")]["i_auroc"] == pytest.approx(rows[("defect", "hole")]["i_auroc"])
    assert image_scores(maps).tolist() == maps.reshape(8, -1).max(1).tolist()


def test_run_metrics_refuse_misaligned_inputs():
    maps, masks, cls, defect = _maps()
    with pytest.raises(ValueError, match="8 maps, 8 masks, 7 classes"):
        run_metrics(maps, masks, cls[:7], defect)


def test_complexity_counts_parameters_and_flops_of_a_known_network():
    class Pair(nn.Module):
        def __init__(self):
            super().__init__()
            self.frozen = nn.Conv2d(3, 4, 1, bias=False).requires_grad_(False)
            self.trained = nn.Conv2d(3, 2, 3, padding=1, bias=False)

        def forward(self, x, d):
            return self.frozen(x), self.trained(d)

    out = measure(Pair(), 8)
    assert out["params_total_m"] * 1e6 == pytest.approx(12 + 54)
    assert out["params_trainable_m"] * 1e6 == pytest.approx(54)
    macs = 8 * 8 * (4 * 3) + 8 * 8 * (2 * 3 * 9)  # per output pixel: out channels x in channels x kernel
    assert out["gmacs"] * 1e9 == pytest.approx(macs) and out["gflops"] == pytest.approx(2 * out["gmacs"])


def test_complexity_counts_a_configuration_that_is_another_once():
    """At paper scale (and in its rehearsal) the scale's networks are the paper configuration's: each is built and
    counted once, both configurations get its row."""
    built = []

    def build(method, teacher, model, cfm, size):
        built.append((method, size))
        return nn.Conv2d(3, model["width"], 1)  # forward(x, d): the depth image ignored

    class Net(nn.Module):
        def __init__(self, conv):
            super().__init__()
            self.conv = conv

        def forward(self, x, d):
            return self.conv(x)

    paper = {"teacher": {"source": "resnet34", "widths": [1], "blocks": [1]}, "model": {"width": 4}, "cfm": {},
             "size": 8}  # fmt: skip
    scale = {**paper, "teacher": {"widths": [1], "blocks": [1]}}
    rows = measure_configurations(["a", "b"], {"this scale": scale, "paper": paper}, lambda *a: Net(build(*a)))
    assert built == [("a", 8), ("b", 8)]
    expected = [("this scale", "a"), ("this scale", "b"), ("paper", "a"), ("paper", "b")]
    assert [(r["configuration"], r["method"]) for r in rows] == expected
    assert rows[0]["params_total_m"] == rows[2]["params_total_m"] == pytest.approx(16e-6)
    smaller = {**scale, "size": 4}
    configurations = {"this scale": smaller, "paper": paper, "none": None}
    rows = measure_configurations(["a"], configurations, lambda *a: Net(build(*a)))
    assert built[2:] == [("a", 4), ("a", 8)] and len(rows) == 2


def test_the_pretext_batch_labels_rotations_and_pictures():
    rng = np.random.default_rng(0)
    flat = np.zeros((64, 64, 3), dtype=np.float32)
    flat[:32] = 1.0  # the top half bright: its rotation is visible
    x, picture, rotation = pretext_batch([flat], 16, 12, rng, grey=0.0)
    assert x.shape == (12, 3, 16, 16) and (picture == 0).all() and set(rotation.tolist()) <= {0, 1, 2, 3}
    raw = x[:, 0] * 0.229 + 0.485
    for img, r in zip(raw, rotation.tolist()):
        unrotated = np.rot90(img.numpy(), -r)
        assert unrotated[0].mean() >= unrotated[-1].mean()  # bright side back on top


def test_pretext_training_learns_and_freezes_the_teacher():
    backbone, rows = pretrain_teacher((8, 16, 32), (1, 1, 1), 32, steps=60, batch=16, lr=3e-3, seed=0)
    first = np.mean([r["picture_accuracy"] for r in rows[:10]])
    last = np.mean([r["picture_accuracy"] for r in rows[-10:]])
    assert last > first and last > 1.5 / 14  # above chance over the 14 pictures
    assert not backbone.training and not any(p.requires_grad for p in backbone.parameters())


def test_torchvision_resnet_state_maps_onto_the_teacher():
    """A torchvision-named state dict of ResNet-34's layers 1-3 (built here with the same shapes) loads into the
    teacher exactly: every key is used and every tensor lands in its place."""
    teacher = Backbone((64, 128, 256), 0, (3, 4, 6))
    state = {}
    for key, value in teacher.state_dict().items():  # invert the mapping to build torchvision's names
        state[key] = value
    torchvision = {"conv1.weight": torch.randn(64, 3, 7, 7), "fc.weight": torch.randn(1000, 512)}
    for name in ("weight", "bias", "running_mean", "running_var"):
        torchvision[f"bn1.{name}"] = torch.randn(64)
    torchvision["bn1.num_batches_tracked"] = torch.tensor(0)
    parts = {"conv1": (0, 3), "conv2": (128, 3)}
    for layer, (width, n) in enumerate(zip((64, 128, 256), (3, 4, 6))):
        cin = (64, 64, 128)[layer]
        for block in range(n):
            p = f"layer{layer + 1}.{block}."
            torchvision[p + "conv1.weight"] = torch.randn(width, cin if block == 0 else width, 3, 3)
            torchvision[p + "conv2.weight"] = torch.randn(width, width, 3, 3)
            for bn in ("bn1", "bn2"):
                for name in ("weight", "bias", "running_mean", "running_var"):
                    torchvision[f"{p}{bn}.{name}"] = torch.randn(width)
                torchvision[f"{p}{bn}.num_batches_tracked"] = torch.tensor(0)
            if block == 0 and layer > 0:
                torchvision[p + "downsample.0.weight"] = torch.randn(width, cin, 1, 1)
                for name in ("weight", "bias", "running_mean", "running_var"):
                    torchvision[f"{p}downsample.1.{name}"] = torch.randn(width)
                torchvision[f"{p}downsample.1.num_batches_tracked"] = torch.tensor(0)
    torchvision["layer4.0.conv1.weight"] = torch.randn(512, 256, 3, 3)  # beyond layer 3: left out
    del parts, state
    mapped = torchvision_resnet_state(torchvision, (3, 4, 6))
    teacher.load_state_dict(mapped)  # strict: every teacher key is given, none is unknown
    assert torch.equal(teacher.stem[0][0].weight, torchvision["conv1.weight"])
    assert torch.equal(teacher.stages[2][5].body[1].weight, torchvision["layer3.5.conv2.weight"])
    assert torch.equal(teacher.stages[1][0].skip[1].running_var, torchvision["layer2.0.downsample.1.running_var"])


def test_the_published_cfm_counts_as_its_backbones_are_published():
    """DINO's ViT-B/8 has 85.8 M parameters (Caron et al. 2021, Table 1); Point-MAE's encoder about 22 M."""
    from neurips26.ecfr.published import PublishedCFM

    net = PublishedCFM()
    count = lambda m: sum(p.numel() for p in m.parameters()) / 1e6  # noqa: E731
    assert 85.7 < count(net.rgb) < 85.9 and 21 < count(net.points) < 23
    hidden = (768 + 1152) // 2
    mlp = 768 * hidden + hidden + hidden * hidden + hidden + hidden * 1152 + 1152
    assert count(net.rgb_to_points) * 1e6 == mlp
