"""The classifiers of paper 15 (softlabel_audit): shapes, sizes, batch independence, refusals."""

import pytest
import torch

from neurips26.softlabel_audit.model import MODELS, build_classifier, n_parameters


@pytest.mark.parametrize(
    ("name", "channels", "side"), [("convnet_tiny", 1, 28), ("convnet_small", 1, 28), ("resnet_small", 3, 32)]
)
def test_every_size_maps_images_to_logits(name, channels, side):
    torch.manual_seed(0)
    model = build_classifier(name, channels, side, 10)
    assert model(torch.rand(3, channels, side, side)).shape == (3, 10)


def test_convnet_tiny_has_the_hand_counted_parameters():
    # conv1 1*8*9+8, conv2 8*16*9+16, fc (16*7*7)*64+64, head 64*10+10
    assert n_parameters(build_classifier("convnet_tiny", 1, 28, 10)) == 80 + 1168 + 50240 + 650


def test_an_items_logits_do_not_depend_on_its_batch():
    torch.manual_seed(1)
    model = build_classifier("resnet_small", 3, 8, 10).eval()  # GroupNorm: no batch statistics
    x = torch.rand(4, 3, 8, 8)
    with torch.no_grad():
        torch.testing.assert_close(model(x)[2:3], model(x[2:3]), rtol=1e-5, atol=1e-5)


def test_unknown_size_and_bad_shapes_are_refused():
    with pytest.raises(ValueError, match="unknown classifier size 'lenet'"):
        build_classifier("lenet", 1, 28, 10)
    with pytest.raises(ValueError, match="num_classes"):
        build_classifier("convnet_tiny", 1, 28, 1)
    with pytest.raises(ValueError, match="at least 4 x 4"):
        build_classifier("convnet_tiny", 1, 2, 10)
    assert set(MODELS) >= {"convnet_tiny", "resnet_small"}
