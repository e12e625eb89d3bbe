"""The trained denoisers that BIRD is compared with: epsilon-prediction networks eps(x_t, t).

- `unet_tiny` (`MinimalUNet`): the authors' MinimalUNet (Kamb & Ganguli, `src/models.py`, trained by
  `scripts/training_script.py` with `--nonorm`, `lastksize=3`), scaled down: no normalisation layers, ReLU,
  'same' zero padding, max-pool down / transposed-conv up, and the sinusoidal embedding of t added (through
  ReLU -> Linear) to the input of every block and before the output conv. Channels [32, 64] at 16x16 px.
- `dit_tiny` (`DiT`): facebookresearch/DiT's model at toy size: conv patch embedding, fixed 2-D sin-cos
  positions, transformer blocks with adaLN-Zero conditioning on t, final adaLN layer; patch 2, hidden 64,
  depth 4, 4 heads. DiT's initialisation zeroes every adaLN modulation and the final linear layer, so a fresh
  network outputs exactly zero.

Both map (x (B, C, H, W), t (B,) in (0, 1)) to eps of x's shape. `build_network` builds one from the registry
`ARCHS` with a seed, leaving the global random state alone.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from neurips26.common.dit import AdaLNZeroTrunk, sincos_pos_embed_2d, timestep_embedding, unpatchify

# --------------------------------------------------------------------------- MinimalUNet


def minimal_unet_embedding(t: torch.Tensor, dim: int) -> torch.Tensor:
    """The authors' `EmbeddingModule`: [sin(t / 10000^(i/(d-1))), cos(...)], i < d = dim // 2, t unscaled in [0, 1]."""
    half = dim // 2
    freqs = 10000.0 ** (-torch.arange(half, dtype=torch.float32, device=t.device) / max(half - 1, 1))
    args = t.float()[:, None] * freqs[None]
    return torch.cat([torch.sin(args), torch.cos(args)], dim=1)


class UBlock(nn.Module):
    """x + Linear(ReLU(emb)) per channel, then `depth` x (conv -> ReLU) (the authors' UBlock without normalisation)."""

    def __init__(
        self, c_in: int, c_out: int, emb_dim: int, kernel_size: int = 3, padding_mode: str = "zeros", depth: int = 2
    ):
        super().__init__()
        self.emb = nn.Sequential(nn.ReLU(), nn.Linear(emb_dim, c_in))
        layers: list[nn.Module] = []
        for i in range(depth):
            layers += [
                nn.Conv2d(c_in if i == 0 else c_out, c_out, kernel_size, padding="same", padding_mode=padding_mode),
                nn.ReLU(),
            ]
        self.convs = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor, emb: torch.Tensor) -> torch.Tensor:
        return self.convs(x + self.emb(emb)[:, :, None, None])


class MinimalUNet(nn.Module):
    """The authors' MinimalUNet: UBlocks at each resolution of `fsizes`, the last one as the bottleneck."""

    def __init__(
        self,
        channels: int = 1,
        fsizes: tuple[int, ...] = (32, 64),
        emb_dim: int = 128,
        kernel_size: int = 3,
        last_kernel_size: int = 3,
        padding_mode: str = "zeros",
    ):
        super().__init__()
        fsizes = tuple(fsizes)
        if len(fsizes) < 2:
            raise ValueError(
                f"MinimalUNet needs at least two feature sizes (one level and the bottleneck), got {fsizes}"
            )
        if padding_mode not in ("zeros", "circular"):
            raise ValueError(f"padding_mode must be 'zeros' or 'circular', got {padding_mode!r}")
        self.fsizes, self.emb_dim = fsizes, emb_dim
        block = {"emb_dim": emb_dim, "kernel_size": kernel_size, "padding_mode": padding_mode}
        ins = (channels,) + fsizes[:-2]
        self.down = nn.ModuleList(UBlock(c_in, c_out, **block) for c_in, c_out in zip(ins, fsizes[:-1]))
        self.bottleneck = UBlock(fsizes[-2], fsizes[-1], **block)
        self.upsample = nn.ModuleList(
            nn.ConvTranspose2d(fsizes[i], fsizes[i - 1], kernel_size=2, stride=2) for i in range(len(fsizes) - 1, 0, -1)
        )
        self.up = nn.ModuleList(
            UBlock(2 * fsizes[i - 1], fsizes[i - 1], **block) for i in range(len(fsizes) - 1, 0, -1)
        )
        self.last_emb = nn.Sequential(nn.ReLU(), nn.Linear(emb_dim, fsizes[0]))
        self.out = nn.Conv2d(fsizes[0], channels, last_kernel_size, padding="same", padding_mode=padding_mode)

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        levels = len(self.down)
        if x.shape[-1] % 2**levels or x.shape[-2] % 2**levels:
            raise ValueError(
                f"MinimalUNet with {levels} pooling steps needs image sides divisible by "
                f"{2**levels}, got {tuple(x.shape[-2:])}"
            )
        emb = minimal_unet_embedding(t, self.emb_dim)
        skips = []
        for block in self.down:
            x = block(x, emb)
            skips.append(x)
            x = F.max_pool2d(x, 2)
        x = self.bottleneck(x, emb)
        for upsample, block in zip(self.upsample, self.up):
            x = block(torch.cat([skips.pop(), upsample(x)], dim=1), emb)
        return self.out(x + self.last_emb(emb)[:, :, None, None])


# --------------------------------------------------------------------------- DiT


class DiT(AdaLNZeroTrunk):
    """A DiT (Peebles & Xie) predicting eps only (no learned sigma), unconditional; blocks and final layer from
    common.dit."""

    def __init__(
        self,
        channels: int = 1,
        image_size: int = 16,
        patch: int = 2,
        hidden: int = 64,
        depth: int = 4,
        heads: int = 4,
        mlp_ratio: float = 4.0,
        freq_dim: int = 256,
    ):
        super().__init__()
        if image_size % patch:
            raise ValueError(f"image size {image_size} is not divisible by the patch size {patch}")
        if hidden % heads:
            raise ValueError(f"hidden size {hidden} is not divisible by {heads} heads")
        self.channels, self.image_size, self.patch, self.freq_dim = channels, image_size, patch, freq_dim
        self.grid = image_size // patch
        self.embed = nn.Conv2d(channels, hidden, kernel_size=patch, stride=patch)
        self.register_buffer("pos", sincos_pos_embed_2d(hidden, self.grid)[None], persistent=False)
        self.time = nn.Sequential(nn.Linear(freq_dim, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.build_trunk(hidden, heads, depth, mlp_ratio, patch * patch * channels)
        self.initialize_weights()

    def initialize_weights(self) -> None:
        """DiT's: Xavier-uniform linears with zero bias, N(0, 0.02) t-MLP, zero adaLN and final layer (adaLN-Zero)."""
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.xavier_uniform_(module.weight)
                nn.init.zeros_(module.bias)
        nn.init.xavier_uniform_(self.embed.weight.view(self.embed.weight.shape[0], -1))
        nn.init.zeros_(self.embed.bias)
        for layer in (self.time[0], self.time[2]):
            nn.init.normal_(layer.weight, std=0.02)
        for layer in [block.ada[1] for block in self.blocks] + [self.ada_out[1], self.head]:
            nn.init.zeros_(layer.weight)
            nn.init.zeros_(layer.bias)

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        if tuple(x.shape[1:]) != (self.channels, self.image_size, self.image_size):
            raise ValueError(
                f"this DiT takes images of shape {(self.channels, self.image_size, self.image_size)}, "
                f"got {tuple(x.shape[1:])}"
            )
        h = self.embed(x).flatten(2).transpose(1, 2) + self.pos
        tokens = self.trunk(h, self.time(timestep_embedding(t, self.freq_dim)))
        return unpatchify(tokens, self.patch, self.grid, self.channels)


# --------------------------------------------------------------------------- registry

# name -> (class, defaults); `channels` and `image_size` come from the data, the rest from a config's spec
ARCHS: dict[str, tuple[type[nn.Module], dict]] = {
    "unet_tiny": (
        MinimalUNet,
        {"fsizes": (32, 64), "emb_dim": 128, "kernel_size": 3, "last_kernel_size": 3, "padding_mode": "zeros"},
    ),
    "dit_tiny": (DiT, {"patch": 2, "hidden": 64, "depth": 4, "heads": 4, "mlp_ratio": 4.0, "freq_dim": 256}),
}
_TAKES_IMAGE_SIZE = {"dit_tiny"}


def resolve_spec(name: str, spec: dict) -> dict:
    """The architecture's defaults overridden by `spec`; an unknown name or key is an error naming it."""
    if name not in ARCHS:
        raise ValueError(f"unknown architecture {name!r}; allowed: {sorted(ARCHS)}")
    defaults = ARCHS[name][1]
    unknown = sorted(set(spec) - set(defaults))
    if unknown:
        raise ValueError(f"unknown keys {unknown} for architecture {name!r}; it takes {sorted(defaults)}")
    merged = {**defaults, **spec}
    if "fsizes" in merged:
        merged["fsizes"] = tuple(merged["fsizes"])
    return merged


def build_network(name: str, spec: dict, channels: int, image_size: int, seed: int = 0) -> nn.Module:
    """The network `name` of ARCHS for images (channels, image_size, image_size), initialised from `seed`.

    The global torch random state is left as it was.
    """
    kwargs = resolve_spec(name, spec)
    if name in _TAKES_IMAGE_SIZE:
        kwargs["image_size"] = image_size
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return ARCHS[name][0](channels=channels, **kwargs)


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
