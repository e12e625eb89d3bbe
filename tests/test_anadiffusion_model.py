"""Paper 03 (AnaDiffusion): the networks from MONAI, their shapes and the part routes (shared side-conditioned
hemisphere model, dedicated CB model, whole-brain model; separate hemispheres as the ablation)."""

import pytest
import torch

from neurips26.anadiffusion import model as M
from neurips26.common.ensemble import Ensemble, build

QUICK_AE, QUICK_UNET, SMOKE_UNET = M.AUTOENCODERS["quick"], M.DENOISERS["quick"], M.DENOISERS["smoke"]


def perturbed(module):
    """MONAI zero-initialises the U-Net's output convolution; perturb every weight so outputs depend on inputs."""
    with torch.no_grad():
        for p in module.parameters():
            p.add_(0.05 * torch.randn_like(p))
    return module


def test_quick_autoencoder_halves_the_volume_and_decodes_back_to_its_shape():
    torch.manual_seed(0)
    ae = M.build_autoencoder(QUICK_AE).eval()
    x = torch.rand(2, 1, 24, 28, 24) * 2 - 1
    z = ae.encode(x)
    assert (
        z.shape
        == (2, 3, 12, 14, 12)
        == (2, QUICK_AE.latent_channels, *M.latent_shape((24, 28, 24), QUICK_AE, QUICK_UNET))
    )
    assert ae.decode(z).shape == x.shape
    recon, mu, sigma = ae(x, torch.zeros_like(z))
    torch.testing.assert_close(recon, ae.decode(z))  # eps = 0 is the mean, scale 1
    ae.scale.fill_(4.0)  # the scale multiplies the latent and cancels on decoding
    torch.testing.assert_close(ae.encode(x), 4 * z)
    torch.testing.assert_close(ae.decode(ae.encode(x)), recon)
    assert ae.encode(x[None].expand(3, -1, -1, -1, -1, -1)).shape == (3, 2, 3, 12, 14, 12)  # seeds x batch


def test_quick_unet_keeps_the_latent_shape_and_the_side_changes_its_output():
    torch.manual_seed(0)
    net = perturbed(M.build_denoiser(QUICK_UNET, 3, sides=2)).eval()
    z, t = torch.randn(2, 3, 12, 14, 12), torch.tensor([5, 150])
    left = M.as_denoise(net, M.SIDES["left"])(z, t)
    right = M.as_denoise(net, M.SIDES["right"])(z, t)
    assert left.shape == z.shape
    assert (left - right).abs().max() > 1e-4
    with pytest.raises(ValueError, match="side"):
        M.as_denoise(net, 2)


def test_side_conditioned_ensemble_equals_its_members():
    models = [perturbed(m) for m in build(lambda: M.build_denoiser(SMOKE_UNET, 2, sides=2), [0, 1])]
    z, t = torch.randn(2, 3, 2, 4, 4, 4), torch.randint(0, 100, (2, 3))
    out = M.as_denoise(Ensemble(models), 1)(z, t)
    for i, m in enumerate(models):
        torch.testing.assert_close(out[i], m(z[i], t[i], class_labels=torch.ones(3, dtype=torch.long)))


@pytest.mark.parametrize(
    ("part_model", "names", "conditional"),
    [
        ("shared_side_cond", ["cb", "hemisphere", "whole"], {"hemisphere"}),
        ("separate", ["cb", "lh", "rh", "whole"], set()),
    ],
)
def test_part_layouts_build_one_shared_side_model_or_separate_hemispheres(part_model, names, conditional):
    config = M.DenoiserConfig(**{**SMOKE_UNET.__dict__, "part_model": part_model})
    nets = M.build_denoisers(config, 2)
    assert sorted(nets) == names
    assert {n for n, net in nets.items() if net.num_class_embeds} == conditional
    routes = M.PART_MODELS[part_model]
    assert set(routes) == set(M.PARTS) and all(r.denoiser in nets for r in routes.values())
    if part_model == "shared_side_cond":
        assert (routes["LH"].side, routes["RH"].side, routes["RH"].mirrored) == (0, 1, True)
        assert nets["hemisphere"].class_embedding.num_embeddings == 2


def test_shapes_monai_would_refuse_are_refused_at_config_time():
    assert M.latent_shape((24, 28, 24), QUICK_AE, QUICK_UNET) == (12, 14, 12)
    with pytest.raises(ValueError, match=r"support of CB.*\('Y', 30\).*multiples of 4"):
        M.latent_shape((24, 30, 24), QUICK_AE, QUICK_UNET, where="support of CB")
    three_levels = M.DenoiserConfig(
        **{
            **QUICK_UNET.__dict__,
            "channels": (16, 32, 32),
            "attention_levels": (False,) * 3,
            "num_head_channels": (16, 32, 32),
        }
    )
    with pytest.raises(ValueError, match="not divisible by 8"):
        M.latent_shape((24, 28, 24), QUICK_AE, three_levels)  # 28 / 2 = 14, not divisible by 4
    with pytest.raises(ValueError, match="norm_num_groups"):
        M.AutoencoderConfig(channels=(12, 32), attention_levels=(False, False), norm_num_groups=8)
    with pytest.raises(ValueError, match="num_head_channels"):
        M.DenoiserConfig(
            channels=(16, 32), attention_levels=(False, False), num_head_channels=(16, 12), norm_num_groups=8
        )
    with pytest.raises(ValueError, match="part_model"):
        M.DenoiserConfig(part_model="three")


def test_hemispheres_sharing_a_model_need_one_latent_shape():
    shapes = {"LH": (12, 28, 24), "RH": (12, 28, 24), "CB": (8, 8, 8)}
    assert M.part_latent_shapes(shapes, QUICK_AE, QUICK_UNET) == {"LH": (6, 14, 12), "RH": (6, 14, 12), "CB": (4, 4, 4)}
    uneven = {**shapes, "RH": (8, 28, 24)}
    with pytest.raises(ValueError, match="share the denoiser 'hemisphere'"):
        M.part_latent_shapes(uneven, QUICK_AE, QUICK_UNET)
    separate = M.DenoiserConfig(**{**QUICK_UNET.__dict__, "part_model": "separate"})
    assert M.part_latent_shapes(uneven, QUICK_AE, separate)["RH"] == (4, 14, 12)
