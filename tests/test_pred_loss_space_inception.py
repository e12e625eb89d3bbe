"""The FID Inception-v3 in plain torch: state-dict layout, FID pools, loader, preprocessing.

No weights file and no network: random weights saved in the same layout stand in for the real file
(pt_inception-2015-12-05-6726825d.pth).
"""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from neurips26.pred_loss_space import inception
from neurips26.pred_loss_space.inception import (
    FIDInceptionV3,
    inception_features,
    load_inception,
    to_rgb,
)

# The expected layout, from torchvision's Inception3 (aux_logits=False) with pytorch-fid's FID
# blocks: per BasicConv2d its name and conv weight shape (out, in, kh, kw). Each one has
# .conv.weight and .bn.{weight, bias, running_mean, running_var, num_batches_tracked}.
STEM = {
    "Conv2d_1a_3x3": (32, 3, 3, 3),
    "Conv2d_2a_3x3": (32, 32, 3, 3),
    "Conv2d_2b_3x3": (64, 32, 3, 3),
    "Conv2d_3b_1x1": (80, 64, 1, 1),
    "Conv2d_4a_3x3": (192, 80, 3, 3),
}


def block_a(i, pool):  # out: 64 + 64 + 96 + pool
    return {"branch1x1": (64, i, 1, 1),
            "branch5x5_1": (48, i, 1, 1), "branch5x5_2": (64, 48, 5, 5),
            "branch3x3dbl_1": (64, i, 1, 1), "branch3x3dbl_2": (96, 64, 3, 3),
            "branch3x3dbl_3": (96, 96, 3, 3),
            "branch_pool": (pool, i, 1, 1)}  # fmt: skip


def block_b(i):  # out: 384 + 96 + i (max pool)
    return {"branch3x3": (384, i, 3, 3),
            "branch3x3dbl_1": (64, i, 1, 1), "branch3x3dbl_2": (96, 64, 3, 3),
            "branch3x3dbl_3": (96, 96, 3, 3)}  # fmt: skip


def block_c(i, c7):  # out: 4 * 192
    return {"branch1x1": (192, i, 1, 1),
            "branch7x7_1": (c7, i, 1, 1), "branch7x7_2": (c7, c7, 1, 7),
            "branch7x7_3": (192, c7, 7, 1),
            "branch7x7dbl_1": (c7, i, 1, 1), "branch7x7dbl_2": (c7, c7, 7, 1),
            "branch7x7dbl_3": (c7, c7, 1, 7), "branch7x7dbl_4": (c7, c7, 7, 1),
            "branch7x7dbl_5": (192, c7, 1, 7),
            "branch_pool": (192, i, 1, 1)}  # fmt: skip


def block_d(i):  # out: 320 + 192 + i (max pool)
    return {"branch3x3_1": (192, i, 1, 1), "branch3x3_2": (320, 192, 3, 3),
            "branch7x7x3_1": (192, i, 1, 1), "branch7x7x3_2": (192, 192, 1, 7),
            "branch7x7x3_3": (192, 192, 7, 1), "branch7x7x3_4": (192, 192, 3, 3)}  # fmt: skip


def block_e(i):  # out: 320 + 2 * 384 + 2 * 384 + 192
    return {"branch1x1": (320, i, 1, 1),
            "branch3x3_1": (384, i, 1, 1), "branch3x3_2a": (384, 384, 1, 3),
            "branch3x3_2b": (384, 384, 3, 1),
            "branch3x3dbl_1": (448, i, 1, 1), "branch3x3dbl_2": (384, 448, 3, 3),
            "branch3x3dbl_3a": (384, 384, 1, 3), "branch3x3dbl_3b": (384, 384, 3, 1),
            "branch_pool": (192, i, 1, 1)}  # fmt: skip


BLOCKS = {
    "Mixed_5b": block_a(192, 32),
    "Mixed_5c": block_a(256, 64),
    "Mixed_5d": block_a(288, 64),
    "Mixed_6a": block_b(288),
    "Mixed_6b": block_c(768, 128),
    "Mixed_6c": block_c(768, 160),
    "Mixed_6d": block_c(768, 160),
    "Mixed_6e": block_c(768, 192),
    "Mixed_7a": block_d(768),
    "Mixed_7b": block_e(1280),
    "Mixed_7c": block_e(2048),
}
# Output (channels, size) of stages for a 299x299 input, as annotated in torchvision's Inception3.
STAGE_SHAPES = {"Mixed_5b": (256, 35), "Mixed_5d": (288, 35), "Mixed_6a": (768, 17),
                "Mixed_6e": (768, 17), "Mixed_7a": (1280, 8), "Mixed_7b": (2048, 8),
                "Mixed_7c": (2048, 8)}  # fmt: skip
FID_AVG_POOL_BLOCKS = ["Mixed_5b", "Mixed_5c", "Mixed_5d", "Mixed_6b", "Mixed_6c", "Mixed_6d",
                       "Mixed_6e", "Mixed_7b"]  # fmt: skip


def expected_shapes() -> dict[str, tuple[int, ...]]:
    convs = dict(STEM)
    for block, table in BLOCKS.items():
        convs.update({f"{block}.{name}": shape for name, shape in table.items()})
    shapes = {"fc.weight": (1008, 2048), "fc.bias": (1008,)}
    for name, shape in convs.items():
        shapes[f"{name}.conv.weight"] = shape
        for stat in ("weight", "bias", "running_mean", "running_var"):
            shapes[f"{name}.bn.{stat}"] = (shape[0],)
        shapes[f"{name}.bn.num_batches_tracked"] = ()
    return shapes


def randomize(model: torch.nn.Module, seed: int = 0) -> torch.nn.Module:
    """Seeded He-scaled conv weights and non-trivial batch-norm statistics (no vanishing signal)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, t in model.state_dict().items():
            if name.endswith("conv.weight"):
                t.copy_(torch.randn(t.shape, generator=g) * (2 / t[0].numel()) ** 0.5)
            elif name.endswith(("bn.weight", "running_var")):
                t.copy_(0.5 + torch.rand(t.shape, generator=g))
            elif name.endswith(("bn.bias", "running_mean")) or name.startswith("fc."):
                t.copy_(0.1 * torch.randn(t.shape, generator=g))
    return model.eval()


@pytest.fixture(scope="module")
def model():
    return randomize(FIDInceptionV3(), seed=0)


def capture_input(module: torch.nn.Module, store: list):
    return module.register_forward_pre_hook(lambda _m, args: store.append(args[0].detach().clone()))


# ----- layout -----


def test_state_dict_keys_and_shapes_match_the_table():
    state = FIDInceptionV3().state_dict()
    expected = expected_shapes()
    assert len(expected) == 94 * 6 + 2
    assert set(state) == set(expected)
    assert {k: tuple(v.shape) for k, v in state.items()} == expected
    assert not any(k.startswith("AuxLogits") for k in state)  # pytorch-fid: aux_logits=False


def test_parameter_count_agrees_with_torchvision():
    # torchvision's inception_v3 (with AuxLogits, 1000 classes) has 27,161,264 parameters;
    # AuxLogits holds 128*768 + 2*128 + 768*128*25 + 2*768 + 768*1000 + 1000 = 3,326,696;
    # the FID fc has 8 more classes.
    n = sum(p.numel() for p in FIDInceptionV3().parameters())
    assert n == 27_161_264 - 3_326_696 + 8 * (2048 + 1)


def test_batchnorm_and_conv_settings():
    net = FIDInceptionV3()
    bns = [m for m in net.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    convs = [m for m in net.modules() if isinstance(m, torch.nn.Conv2d)]
    assert len(bns) == len(convs) == 94
    assert all(bn.eps == 0.001 for bn in bns) and all(conv.bias is None for conv in convs)


# ----- forward -----


def record(shapes: dict, name: str):
    return lambda _m, _args, out: shapes.update({name: tuple(out.shape)})


def test_forward_gives_finite_pool3_features_in_any_batching(model):
    seen = {}
    hooks = [getattr(model, k).register_forward_hook(record(seen, k)) for k in STAGE_SHAPES]
    x = torch.rand(2, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        feats = model(x)
    for h in hooks:
        h.remove()
    assert seen == {k: (2, c, n, n) for k, (c, n) in STAGE_SHAPES.items()}
    assert feats.shape == (2, 2048)
    assert torch.isfinite(feats).all() and (feats >= 0).all()  # mean of ReLU outputs
    assert feats.abs().max() > 0 and not torch.allclose(feats[0], feats[1])
    # the helper takes [-1, 1] images (here as numpy), returns float64, the same one at a time
    one_by_one = inception_features(model, (2 * x - 1).numpy(), batch=1)
    assert one_by_one.dtype == np.float64 and one_by_one.shape == (2, 2048)
    np.testing.assert_allclose(one_by_one, feats.double().numpy(), rtol=1e-5, atol=1e-6)
    assert inception_features(model, x[:0]).shape == (0, 2048)


@pytest.mark.parametrize("block", FID_AVG_POOL_BLOCKS)
def test_fid_average_pools_leave_the_padding_out(model, block):
    mixed = getattr(model, block)
    in_channels = BLOCKS[block]["branch_pool"][1]
    const = torch.full((1, in_channels, 5, 5), 3.0)
    rand = torch.randn(1, in_channels, 5, 5, generator=torch.Generator().manual_seed(2))
    seen = []
    hook = capture_input(mixed.branch_pool, seen)
    with torch.no_grad():
        mixed(const), mixed(rand)
    hook.remove()
    # torchvision's pool (zeros counted) would give 3 * 4/9 in the corners, 3 * 6/9 on the edges
    assert torch.allclose(seen[0], const)
    tf_pool = F.avg_pool2d(rand, 3, stride=1, padding=1, count_include_pad=False)
    assert torch.allclose(seen[1], tf_pool)
    assert not torch.allclose(seen[1], F.avg_pool2d(rand, 3, stride=1, padding=1))


def test_mixed_7c_max_pools(model):
    x = torch.randn(1, 2048, 4, 4, generator=torch.Generator().manual_seed(3))
    seen = []
    hook = capture_input(model.Mixed_7c.branch_pool, seen)
    with torch.no_grad():
        model.Mixed_7c(x)
    hook.remove()
    assert torch.equal(seen[0], F.max_pool2d(x, 3, stride=1, padding=1))


# ----- preprocessing and batching -----


def bilinear_matrix(n_in: int, n_out: int) -> np.ndarray:
    """Row i: the weights of the inputs in output i of a bilinear resize, align_corners=False."""
    m = np.zeros((n_out, n_in))
    for i in range(n_out):
        src = max((i + 0.5) * n_in / n_out - 0.5, 0.0)
        lo = int(np.floor(src))
        hi, w = min(lo + 1, n_in - 1), src - lo
        m[i, lo] += 1 - w
        m[i, hi] += w
    return m


class Stop(Exception):
    pass


def stop(*_):
    raise Stop


def test_preprocessing_matches_a_manual_computation(model):
    images = np.array([[[[-1.0, 0.5], [0.25, 1.0]]]])  # (1, 1, 2, 2) in [-1, 1], grayscale
    seen = []
    hook = capture_input(model.Conv2d_1a_3x3, seen)
    halt = model.Conv2d_1a_3x3.register_forward_pre_hook(stop)  # the input is all we need
    with pytest.raises(Stop):
        inception_features(model, images)
    hook.remove(), halt.remove()
    r = bilinear_matrix(2, 299)
    expected = 2 * (r @ ((images[0, 0] + 1) / 2) @ r.T) - 1  # [-1,1] -> [0,1] -> 299² -> [-1,1]
    assert seen[0].shape == (1, 3, 299, 299)
    for c in range(3):
        np.testing.assert_allclose(seen[0][0, c].numpy(), expected, atol=1e-6)


def test_grayscale_is_repeated():
    gray = torch.rand(2, 1, 8, 8, generator=torch.Generator().manual_seed(4)) * 2 - 1
    rgb = to_rgb(gray)
    assert rgb.shape == (2, 3, 8, 8) and all(torch.equal(rgb[:, c], gray[:, 0]) for c in range(3))
    assert to_rgb(rgb) is rgb
    with pytest.raises(ValueError, match="shape"):
        to_rgb(torch.zeros(2, 2, 8, 8))


# ----- loader -----


def tiny_state(model: torch.nn.Module, value: float = 0.5) -> dict[str, torch.Tensor]:
    """The model's state-dict layout, each tensor one stored element expanded (a small file)."""
    return {k: constant(v.shape, value, v.dtype) for k, v in model.state_dict().items()}


def constant(shape, value=0.5, dtype=torch.float32) -> torch.Tensor:
    return torch.full((), value, dtype=dtype).expand(shape)


def test_loader_round_trip(model, tmp_path):
    path = tmp_path / inception.WEIGHTS_NAME
    torch.save(model.state_dict(), path)
    loaded = load_inception(path)
    assert isinstance(loaded, FIDInceptionV3)
    assert not loaded.training and not any(p.requires_grad for p in loaded.parameters())
    for key, value in model.state_dict().items():
        assert torch.equal(loaded.state_dict()[key], value), key


def test_loader_reads_the_legacy_format_without_num_batches_tracked(model, tmp_path):
    # the file may predate torch's zip format and BatchNorm's num_batches_tracked: still loads
    state = {k: v for k, v in tiny_state(model).items() if not k.endswith("num_batches_tracked")}
    path = tmp_path / "legacy.pth"
    torch.save(state, path, _use_new_zipfile_serialization=False)
    loaded = load_inception(path)
    assert (loaded.Mixed_7c.branch_pool.conv.weight == 0.5).all() and (loaded.fc.bias == 0.5).all()


def test_loader_missing_file(tmp_path):
    path = tmp_path / "nowhere" / inception.WEIGHTS_NAME
    with pytest.raises(FileNotFoundError, match="nowhere"):
        load_inception(path)


@pytest.mark.parametrize("fault", ["renamed", "extra-aux", "shape"])
def test_loader_rejects_a_mismatched_state_dict(model, tmp_path, fault):
    state = tiny_state(model)
    if fault == "renamed":
        state["Mixed_5b.branch_pool_x.conv.weight"] = state.pop("Mixed_5b.branch_pool.conv.weight")
        needle = "Mixed_5b.branch_pool_x.conv.weight"
    elif fault == "extra-aux":
        state["AuxLogits.fc.weight"] = constant((1008, 768))
        needle = "AuxLogits"
    else:
        state["fc.weight"] = constant((1000, 2048))
        needle = "fc.weight"
    path = tmp_path / f"{fault}.pth"
    torch.save(state, path)
    with pytest.raises(ValueError, match=f"{fault}.pth") as err:
        load_inception(path)
    assert needle in str(err.value)


def test_loader_rejects_an_unreadable_file(tmp_path):
    path = tmp_path / "garbage.pth"
    path.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="garbage.pth"):
        load_inception(path)
