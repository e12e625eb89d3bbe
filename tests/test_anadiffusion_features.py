"""Feature networks of the regional Frechet distance: the rand3d proxy, MedicalNet's geometry and checkpoint loader,
and masking to a region."""

import numpy as np
import pytest
import torch

from neurips26.anadiffusion import features


def volumes(n=3, shape=(12, 14, 12), seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, size=(n, *shape)).astype(np.float32)


@pytest.fixture(scope="module")
def resnet10():
    torch.manual_seed(0)
    model = features.medicalnet_backbone(10)
    for module in model.modules():  # non-trivial BatchNorm statistics, so that a wrong load shows
        if isinstance(module, torch.nn.BatchNorm3d):
            module.running_mean.uniform_(-0.1, 0.1)
            module.running_var.uniform_(0.5, 1.5)
    return model


# -------------------------------------------------------------------------------------------------- rand3d proxy


def test_rand3d_is_a_fixed_network_labelled_as_a_proxy():
    net = features.build_feature_network("rand3d", seed=0)
    assert net.proxy and net.name == "rand3d" and not net.zscore
    x = volumes()
    first = features.volume_features(net, x, batch_size=2)
    assert first.shape == (3, 128) and first.dtype == np.float64
    again = features.volume_features(features.build_feature_network("rand3d"), x)
    np.testing.assert_allclose(again, first, rtol=1e-5, atol=1e-7)  # batches of 2 and 8: float32 sums reorder
    other = features.volume_features(features.build_feature_network("rand3d", seed=1), x)
    assert np.abs(other - first).max() > 1e-3
    assert (first[:, 64:] >= 0).all()  # the second half are standard deviations


def test_regional_features_see_only_their_region():
    net = features.build_feature_network("rand3d")
    x = volumes(n=2)
    left = np.zeros(x.shape[1:], dtype=bool)
    left[:6] = True
    regions = {"LH": left, "RH": ~left}
    base = features.regional_features(net, x, regions)
    changed = x.copy()
    changed[:, 6:] = np.clip(changed[:, 6:] + 0.5, -1, 1)  # edit the right side only
    after = features.regional_features(net, changed, regions)
    np.testing.assert_array_equal(after["LH"], base["LH"])
    assert np.abs(after["RH"] - base["RH"]).max() > 1e-3
    # a region is the volume with background -1 outside it
    masked = np.where(left, x, -1.0).astype(np.float32)
    np.testing.assert_allclose(base["LH"], features.volume_features(net, masked), rtol=1e-5, atol=1e-7)


def test_per_volume_masks_follow_their_volume():
    net = features.build_feature_network("rand3d")
    x = volumes(n=2)
    masks = np.zeros(x.shape, dtype=bool)
    masks[0, :6], masks[1, 6:] = True, True
    got = features.regional_features(net, x, {"part": masks}, batch_size=1)["part"]
    want = features.volume_features(net, np.where(masks, x, -1.0).astype(np.float32))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_regional_features_refuse_bad_inputs():
    net = features.build_feature_network("rand3d")
    x = volumes(n=2)
    whole = np.ones(x.shape[1:], dtype=bool)
    with pytest.raises(ValueError, match=r"outside \[-1, 1\], the paper's"):
        features.regional_features(net, x * 2, {"whole": whole})
    bad = x.copy()
    bad[1, 2, 3, 4] = np.nan
    with pytest.raises(ValueError, match="1 non-finite"):
        features.regional_features(net, bad, {"whole": whole})
    with pytest.raises(ValueError, match=r"\(N, D, H, W\)"):
        features.regional_features(net, x[0], {"whole": whole})
    with pytest.raises(ValueError, match="region seam: mask is empty"):
        features.regional_features(net, x, {"whole": whole, "seam": np.zeros_like(whole)})
    with pytest.raises(ValueError, match="region CB: mask shape"):
        features.regional_features(net, x, {"CB": whole[:-1]})
    with pytest.raises(ValueError, match="must be boolean"):
        features.regional_features(net, x, {"whole": whole.astype(np.uint8)})


def test_the_registry_refuses_unknown_names_and_misplaced_weights(tmp_path):
    with pytest.raises(ValueError, match="unknown feature network 'inception'"):
        features.build_feature_network("inception")
    with pytest.raises(ValueError, match="takes a seed, not weights"):
        features.build_feature_network("rand3d", weights=tmp_path / "w.pth")
    with pytest.raises(ValueError, match="needs its pretrained weights"):
        features.build_feature_network("medicalnet_resnet10")
    with pytest.raises(ValueError, match="do not exist"):
        features.build_feature_network("medicalnet_resnet10", weights=tmp_path / "missing.pth")


# ------------------------------------------------------------------------------------------------------ MedicalNet


def test_medicalnet_geometry_is_stride_8_with_dilated_last_layers(resnet10):
    seen = {}
    hook = resnet10.layer4.register_forward_hook(lambda module, args, out: seen.update(shape=tuple(out.shape)))
    with torch.no_grad():
        out = resnet10(torch.zeros(2, 1, 32, 24, 16))
    hook.remove()
    assert out.shape == (2, 512)
    assert seen["shape"] == (2, 512, 4, 3, 2)  # stem and max-pool /4, layer2 /2, layer3 and layer4 stride 1
    assert resnet10.layer4[0].conv1.dilation == (4, 4, 4) and resnet10.layer3[0].conv2.padding == (2, 2, 2)
    assert resnet10.conv1.stride == (2, 2, 2) and resnet10.conv1.kernel_size == (7, 7, 7)


def medicalnet_checkpoint(model):
    """A state dict in MedicalNet's published layout: DataParallel keys and the segmentation head."""
    state = {f"module.{k}": v.clone() for k, v in model.state_dict().items() if not k.endswith("num_batches_tracked")}
    state["module.conv_seg.0.weight"] = torch.zeros(512, 32, 2, 2, 2)
    return {"state_dict": state}


def test_medicalnet_checkpoint_loads_into_a_fresh_network(resnet10, tmp_path):
    path = tmp_path / "resnet_10_23dataset.pth"
    torch.save(medicalnet_checkpoint(resnet10), path)
    net = features.build_feature_network("medicalnet_resnet10", weights=path)
    assert not net.proxy and net.zscore and net.name == "medicalnet_resnet10"
    x = volumes(n=2, shape=(16, 16, 16))
    got = features.volume_features(net, x)
    with torch.no_grad():
        t = torch.as_tensor(x)[:, None]
        flat = t.flatten(1)
        z = (t - flat.mean(1).view(-1, 1, 1, 1, 1)) / flat.std(1, correction=0).view(-1, 1, 1, 1, 1)
        want = resnet10.eval()(z).double().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    fresh = features.volume_features(features.FeatureNetwork("x", features.medicalnet_backbone(10), False, True), x)
    assert np.abs(fresh - got).max() > 1e-3  # the weights were really loaded


def test_medicalnet_loader_names_what_does_not_match(resnet10):
    checkpoint = medicalnet_checkpoint(resnet10)
    target = features.medicalnet_backbone(10)
    state = dict(checkpoint["state_dict"])
    del state["module.layer2.0.conv1.weight"]
    with pytest.raises(ValueError, match=r"1 missing keys \['layer2.0.conv1.weight'\]"):
        features.load_medicalnet_state(target, state, 10)
    state = dict(checkpoint["state_dict"], **{"module.fc.weight": torch.zeros(2, 512)})
    with pytest.raises(ValueError, match=r"1 unexpected keys \['fc.weight'\]"):
        features.load_medicalnet_state(target, state, 10)
    state = dict(checkpoint["state_dict"], **{"module.conv1.weight": torch.zeros(64, 1, 3, 3, 3)})
    with pytest.raises(ValueError, match=r"conv1.weight has shape \(64, 1, 3, 3, 3\)"):
        features.load_medicalnet_state(target, state, 10)
    # a ResNet-10 checkpoint is not a ResNet-18 one
    with pytest.raises(ValueError, match="resnet_18.pth: not a MedicalNet ResNet-18 checkpoint"):
        features.load_medicalnet_state(features.medicalnet_backbone(18), checkpoint, 18, source="resnet_18.pth")
