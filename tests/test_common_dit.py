"""common.dit carries the DiT trunk of papers 01 and 04: seeded initialisations and outputs equal those of the
blocks each paper wrote before (numbers recorded from bird/networks.py and pred_loss_space/models.py at 40b0739)."""

import hashlib

import pytest
import torch

from neurips26.bird import networks
from neurips26.common import dit
from neurips26.pred_loss_space import models

BLOCK_NAMES = [
    f"blocks.{i}.{p}.{w}"
    for i in range(2)
    for p in ("qkv", "proj", "mlp.0", "mlp.2", "ada.1")
    for w in ("weight", "bias")
]
TRUNK_NAMES = BLOCK_NAMES + ["ada_out.1.weight", "ada_out.1.bias", "head.weight", "head.bias"]
RECORDED = {  # init digest, first six outputs and output sum after a seeded perturbation of every parameter
    "bird": (
        "c9fb2ec8cb006062",
        [
            0.1588468998670578,
            -0.7042136788368225,
            0.4262283742427826,
            -0.28074485063552856,
            0.821682333946228,
            0.15879637002944946,
        ],
        15.715255741029978,
    ),
    "jit": (
        "87453e3e6fa19bc0",
        [
            -0.14581044018268585,
            -0.034838564693927765,
            0.1393568217754364,
            -0.5127608180046082,
            0.1814076006412506,
            -0.379680871963501,
        ],
        -36.22967863082886,
    ),
    "jit1": (
        "242ab6812720b358",
        [
            0.22348864376544952,
            0.2996528744697571,
            0.14137710630893707,
            0.23625308275222778,
            0.12830334901809692,
            -0.48384371399879456,
        ],
        -2.810362077318132,
    ),
}
JIT_SPECS = {
    "jit": {"image_size": 8, "channels": 1, "patch": 2, "width": 32, "depth": 2, "heads": 2},
    "jit1": {"image_size": 8, "channels": 3, "patch": 8, "width": 32, "depth": 1, "heads": 4},  # one token
}


def _digest(tensor: torch.Tensor) -> str:
    return hashlib.sha256(tensor.detach().contiguous().numpy().tobytes()).hexdigest()[:16]


def _check(model: torch.nn.Module, key: str, channels: int, perturb_seed: int, input_seed: int) -> None:
    init, first, total = RECORDED[key]
    assert _digest(torch.cat([p.flatten() for p in model.parameters()])) == init
    generator = torch.Generator().manual_seed(perturb_seed)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.05 * torch.randn(p.shape, generator=generator))
        generator = torch.Generator().manual_seed(input_seed)
        x, t = torch.randn(3, channels, 8, 8, generator=generator), torch.rand(3, generator=generator)
        out = model(x, t)
    assert out.flatten()[:6].tolist() == pytest.approx(first, rel=1e-5, abs=1e-6)
    assert float(out.double().sum()) == pytest.approx(total, rel=1e-5)


def test_bird_dit_matches_the_recorded_network():
    model = networks.build_network("dit_tiny", {"depth": 2}, 1, 8, seed=3)
    names = [n for n, _ in model.named_parameters()]
    assert (
        names
        == ["embed.weight", "embed.bias", "time.0.weight", "time.0.bias", "time.2.weight", "time.2.bias"] + TRUNK_NAMES
    )
    _check(model, "bird", 1, 7, 11)


@pytest.mark.parametrize("key", sorted(JIT_SPECS))
def test_jit_matches_the_recorded_network(key):
    torch.manual_seed(5)
    model = models.JiTTiny(**JIT_SPECS[key])
    names = [n for n, _ in model.named_parameters()]
    assert names[:6] == ["embed.weight", "embed.bias"] + [
        f"time.net.{i}.{w}" for i in (0, 2) for w in ("weight", "bias")
    ]
    assert names[6:] == [
        n for n in TRUNK_NAMES if JIT_SPECS[key]["depth"] == 2 or n.startswith(("blocks.0", "ada_out", "head"))
    ]
    _check(model, key, JIT_SPECS[key]["channels"], 9, 13)


def test_timestep_embedding_matches_both_papers_features():
    """DiT's sinusoidal features, [cos, sin] of T_SCALE t times max_period^(-i / half), recomputed in float64 (a
    digest of the float32 output was recorded before, but sin and cos round differently between CPUs)."""
    import math

    t = torch.tensor([0.0, 0.1, 0.5, 0.999])
    for dim in (64, 33):  # bird's (even width), pred_loss_space's (odd: a zero column)
        half = dim // 2
        freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float64) / half)
        args = dit.T_SCALE * t.double()[:, None] * freqs[None]
        expected = torch.cat(
            [torch.cos(args), torch.sin(args)] + ([torch.zeros(4, 1, dtype=torch.float64)] * (dim % 2)), 1
        )
        got = dit.timestep_embedding(t, dim)
        assert got.dtype == torch.float32 and got.shape == (4, dim)
        torch.testing.assert_close(got.double(), expected, rtol=0, atol=5e-4)
        if dim % 2:
            assert torch.equal(got[:, -1], torch.zeros(4))


def test_fresh_trunk_is_zero_and_blocks_are_identity():
    block = dit.DiTBlock(16, 2)
    x, c = torch.randn(2, 5, 16), torch.randn(2, 16)
    assert torch.equal(block(x, c), x)
    model = networks.build_network("dit_tiny", {"depth": 1}, 1, 8)
    assert torch.equal(model(torch.randn(2, 1, 8, 8), torch.rand(2)), torch.zeros(2, 1, 8, 8))


def test_unpatchify_inverts_token_layout():
    tokens = torch.arange(2 * 4 * 12, dtype=torch.float32).reshape(2, 4, 12)  # grid 2, patch 2, 3 channels
    images = dit.unpatchify(tokens, patch=2, grid=2, channels=3)
    assert images.shape == (2, 3, 4, 4)
    assert images[0, :, 0, 0].tolist() == tokens[0, 0, :3].tolist()  # token 0, pixel (0, 0), channels last
    assert images[1, 1, 3, 1].item() == tokens[1, 2, (1 * 2 + 1) * 3 + 1].item()  # row 3 col 1: token 2, (1, 1)


def test_width_not_divisible_by_heads_is_refused():
    with pytest.raises(ValueError, match="not divisible by 3 heads"):
        models.JiTTiny(image_size=8, channels=1, patch=2, width=32, depth=1, heads=3)
