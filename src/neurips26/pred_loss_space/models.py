"""Small denoisers f(z_t, t) for the prediction-space x loss-space matrix, and an FD feature network.

- `UNetTiny`: a 2-level U-Net with long skips (no representational bottleneck).
- `JiTTiny`: a JiT-style ViT (linear patch embedding, fixed sin-cos positions, adaLN-Zero blocks,
  linear patch head). A token of dimension patch^2 * channels wider than the transformer width is a
  representational bottleneck (JiT-B/16 at 256 px: 768-d tokens, 768 wide).
- `MLPToy`: JiT's toy ReLU MLP for d-dimensional data embedded in D dimensions; width < D is the
  bottleneck.

Every denoiser maps (z of shape (B, ...), t of shape (B,) in [0, 1]) to an output of z's shape.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from neurips26.common.dit import AdaLNZeroTrunk, sincos_pos_embed_2d, timestep_embedding, unpatchify
from neurips26.pred_loss_space.architectures import (  # noqa: F401 (re-exported for callers)
    ARCH_DEFAULTS,
    ARCHS,
    DATA_KEYS,
    _check_arch,
    check_bottleneck_label,
    has_bottleneck,
    resolve_spec,
    token_dim,
)


class TimeMLP(nn.Module):
    """Sinusoidal features of t -> Linear -> SiLU -> Linear."""

    def __init__(self, dim: int, freq_dim: int | None = None):
        super().__init__()
        self.freq_dim = freq_dim or dim
        self.net = nn.Sequential(nn.Linear(self.freq_dim, dim), nn.SiLU(), nn.Linear(dim, dim))

    def forward(self, t: torch.Tensor) -> torch.Tensor:
        return self.net(timestep_embedding(t, self.freq_dim))


# --------------------------------------------------------------------------- U-Net


class ResBlock(nn.Module):
    """GroupNorm -> SiLU -> conv3x3, + t embedding, GroupNorm -> SiLU -> conv3x3, + (1x1) residual."""

    def __init__(self, c_in: int, c_out: int, t_dim: int, groups: int = 8):
        super().__init__()
        self.norm1 = nn.GroupNorm(min(groups, c_in), c_in)
        self.conv1 = nn.Conv2d(c_in, c_out, 3, padding=1)
        self.temb = nn.Linear(t_dim, c_out)
        self.norm2 = nn.GroupNorm(min(groups, c_out), c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, padding=1)
        self.skip = nn.Identity() if c_in == c_out else nn.Conv2d(c_in, c_out, 1)

    def forward(self, h: torch.Tensor, temb: torch.Tensor) -> torch.Tensor:
        out = self.conv1(F.silu(self.norm1(h)))
        out = out + self.temb(temb)[:, :, None, None]
        out = self.conv2(F.silu(self.norm2(out)))
        return out + self.skip(h)


class UNetTiny(nn.Module):
    """A U-Net with one ResBlock per resolution level and long skip connections.

    Down: conv_in, then per level a ResBlock (its output kept as a skip) and a stride-2 conv between levels.
    Up: per level a ResBlock on concat(h, skip), nearest 2x upsampling between levels; GroupNorm, SiLU, conv.
    """

    def __init__(self, channels: int = 1, base: int = 32, mults: tuple[int, ...] = (1, 2), t_dim: int = 128):
        super().__init__()
        mults = tuple(mults)
        if not mults:
            raise ValueError("UNetTiny needs at least one resolution level (mults is empty)")
        widths = [base * m for m in mults]
        self.levels = len(widths)
        self.time = TimeMLP(t_dim)
        self.conv_in = nn.Conv2d(channels, base, 3, padding=1)
        self.down = nn.ModuleList()
        self.downsample = nn.ModuleList()
        c = base
        for i, w in enumerate(widths):
            self.down.append(ResBlock(c, w, t_dim))
            c = w
            if i < self.levels - 1:
                self.downsample.append(nn.Conv2d(c, c, 3, stride=2, padding=1))
        self.up = nn.ModuleList()
        for i in reversed(range(self.levels)):
            self.up.append(ResBlock(c + widths[i], widths[i], t_dim))
            c = widths[i]
        self.norm_out = nn.GroupNorm(min(8, c), c)
        self.conv_out = nn.Conv2d(c, channels, 3, padding=1)

    def forward(self, z: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        size = z.shape[-1]
        if size % 2 ** (self.levels - 1):
            raise ValueError(f"image size {size} is not divisible by 2^{self.levels - 1} for {self.levels} levels")
        temb = self.time(t)
        h = self.conv_in(z)
        skips = []
        for i, block in enumerate(self.down):
            h = block(h, temb)
            skips.append(h)
            if i < self.levels - 1:
                h = self.downsample[i](h)
        for j, block in enumerate(self.up):
            h = block(torch.cat([h, skips.pop()], dim=1), temb)
            if j < self.levels - 1:  # nearest upsampling without a conv: the next ResBlock's convs mix it
                h = F.interpolate(h, scale_factor=2.0, mode="nearest")
        return self.conv_out(F.silu(self.norm_out(h)))


# --------------------------------------------------------------------------- JiT


class JiTTiny(AdaLNZeroTrunk):
    """A JiT-style ViT on raw patches: linear embedding, adaLN-Zero blocks and final layer (common.dit), linear
    patch head."""

    def __init__(
        self,
        image_size: int = 16,
        channels: int = 1,
        patch: int = 4,
        width: int = 64,
        depth: int = 4,
        heads: int = 4,
        mlp_ratio: float = 4.0,
    ):
        super().__init__()
        if image_size % patch:
            raise ValueError(f"image size {image_size} is not divisible by the patch size {patch}")
        if width % heads:
            raise ValueError(f"width {width} is not divisible by {heads} heads")
        self.image_size, self.channels, self.patch = image_size, channels, patch
        self.grid = image_size // patch
        self.token_dim = patch * patch * channels
        self.embed = nn.Linear(self.token_dim, width)
        self.register_buffer("pos", sincos_pos_embed_2d(width, self.grid)[None], persistent=False)
        self.time = TimeMLP(width)
        # SiLU rather than DiT's GELU in the MLP: GELU is ~3x slower on CPU and JiT itself uses a SiLU-gated MLP
        self.build_trunk(width, heads, depth, mlp_ratio, self.token_dim, activation=nn.SiLU)

    def patchify(self, z: torch.Tensor) -> torch.Tensor:
        b, c, h, w = z.shape
        p, g = self.patch, self.grid
        if (c, h, w) != (self.channels, self.image_size, self.image_size):
            raise ValueError(
                f"JiTTiny expects images of shape {(self.channels, self.image_size, self.image_size)}, got {(c, h, w)}"
            )
        return z.reshape(b, c, g, p, g, p).permute(0, 2, 4, 3, 5, 1).reshape(b, g * g, p * p * c)

    def unpatchify(self, tokens: torch.Tensor) -> torch.Tensor:
        return unpatchify(tokens, self.patch, self.grid, self.channels)

    def forward(self, z: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        x = self.embed(self.patchify(z)) + self.pos
        return self.unpatchify(self.trunk(x, self.time(t)))


# --------------------------------------------------------------------------- toy MLP


class MLPToy(nn.Module):
    """JiT's toy denoiser: a `depth`-layer ReLU MLP on concat(z, sinusoidal t embedding)."""

    def __init__(self, dim: int, width: int = 64, depth: int = 5, t_dim: int = 32):
        super().__init__()
        if depth < 2:
            raise ValueError(f"MLPToy needs depth >= 2 (input and output layers), got {depth}")
        self.t_dim = t_dim
        layers: list[nn.Module] = [nn.Linear(dim + t_dim, width), nn.ReLU()]
        for _ in range(depth - 2):
            layers += [nn.Linear(width, width), nn.ReLU()]
        layers.append(nn.Linear(width, dim))
        self.net = nn.Sequential(*layers)

    def forward(self, z: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return self.net(torch.cat([z, timestep_embedding(t, self.t_dim).to(z.dtype)], dim=-1))


# --------------------------------------------------------------------------- factory and bottleneck


def _class_of(arch: str) -> type[nn.Module]:
    classes = {"unet_tiny": UNetTiny, "jit_tiny": JiTTiny, "jit_tiny_bn": JiTTiny, "jit_tiny_wide": JiTTiny}
    return {**classes, "mlp_toy": MLPToy}[_check_arch(arch)]


def build_model(arch: str, spec: dict) -> nn.Module:
    """The denoiser `arch` built from `spec` (constructor kwargs plus data-shape keys)."""
    kwargs = resolve_spec(arch, spec)
    if "mults" in kwargs:
        kwargs["mults"] = tuple(kwargs["mults"])
    return _class_of(arch)(**kwargs)


# --------------------------------------------------------------------------- FD features


class FeatureNet(nn.Module):
    """A small CNN digit classifier; its penultimate layer gives the features of a Frechet-distance proxy.

    `features` returns the penultimate layer before its ReLU (no dead units, so the feature covariance of
    a sample is not singular); `forward` returns class logits.
    """

    def __init__(self, channels: int = 1, n_classes: int = 10, feature_dim: int = 32):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(channels, 16, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.AdaptiveAvgPool2d(4),
            nn.Flatten(),
            nn.Linear(32 * 4 * 4, feature_dim),
        )
        self.head = nn.Linear(feature_dim, n_classes)
        self.feature_dim = feature_dim

    def features(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(F.relu(self.features(x)))
