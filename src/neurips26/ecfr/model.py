r"""ECFR's networks (paper 11; the official code is ``wang1393/An-Efficient-Cross-modal-Feature-Reconstruction-
Model-for-Multimodal-Multi-class-Anomaly-Detection``, ``model/ecfr.py``, built on ADer), written anew at
configurable widths.

* :class:`Backbone`: the frozen teacher, one network applied to RGB and to the 3-channel depth image, returning three
  scales (strides 4, 8, 16), as the reference's ImageNet ResNet-34 ``out_indices=[1, 2, 3]``. At quick scale no
  pretrained weights load offline: the backbone is a ResNet-style network with fixed-seed random weights (labelled
  so in the report).
* :class:`Aggregation`: per modality, RD4AD's multi-scale fusion and one-class bottleneck (the reference's
  ``FeatureAggregation``): the three scales fused at stride 16, then bottleneck blocks at stride 32.
* :class:`AgentAttention` (Han et al. 2024): queries pooled into ``agents`` agent tokens that attend to the keys,
  then the queries attend to the agents; a depthwise 3x3 convolution of V is added. The reference's learned
  agent/position biases are left out.
* :class:`AFIR`: both modalities' tokens pass one agent attention (shared weights, each modality attending within
  itself); the attention output, reinterpreted as the reference does, is reduced by a shared 1x1 convolution to a
  context from which each modality's recalibration (:class:`ACR`: conv-BN-ReLU-conv-BN, global pooling, sigmoid)
  computes channel weights: ``x <- ReLU(x * w + x)``.
* :class:`HAC`: attention sub-blocks (the first a cross attention: queries and values from the stream, keys from the
  other modality's recalibrated features; the rest self-attention) beside two depthwise-convolution branches
  (1x1, depthwise 5x5 or 7x7, 1x1, each with instance norm and SiLU), concatenated, fused by a 1x1 convolution, plus
  the input.
* :class:`Decoder`: two streams (RGB, depth) of four stages; between stages a shared patch expansion (linear to
  twice the channels, 2x2 pixel shuffle, layer norm); AFIR before every stage but the last. The outputs of stages
  1-3 are returned from the finest, matching the teacher's three scales.

:class:`ECFR` puts them together; ``cross=True`` is the paper's cross-modal reconstruction (the RGB stream's output is
compared with the *depth* teacher features and vice versa, :func:`pairs`), ``cross=False`` the same-modal control
(each stream reconstructs its own modality's features: the "identical shortcut").
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["ECFR", "ECFRConfig", "Backbone", "n_parameters", "pairs", "torchvision_resnet_state"]


@dataclass(frozen=True)
class ECFRConfig:
    backbone: tuple[int, int, int] = (64, 128, 256)  # the teacher's channels at strides 4, 8, 16
    backbone_blocks: tuple[int, int, int] = (3, 4, 6)  # basic blocks per stage (ResNet-34's layers 1-3)
    decoder: tuple[int, int, int, int] = (512, 256, 128, 64)  # stage widths, the first at stride 32
    depths: tuple[int, int, int, int] = (2, 4, 4, 2)
    heads: tuple[int, int, int, int] = (8, 4, 2, 1)
    agents: tuple[int, int, int, int] = (49, 49, 16, 9)
    bottleneck_blocks: int = 3
    drop_path: float = 0.2  # the decoder's stochastic-depth rate (the reference's drop_path_rate)
    image_size: int = 256
    cross: bool = True
    seed: int = 0


def _conv_bn(cin: int, cout: int, k: int = 3, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, k // 2, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


class _Basic(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.body = nn.Sequential(_conv_bn(cin, cout, 3, stride), nn.Conv2d(cout, cout, 3, 1, 1, bias=False),
                                  nn.BatchNorm2d(cout))  # fmt: skip
        self.skip = nn.Identity() if stride == 1 and cin == cout else nn.Sequential(
            nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))  # fmt: skip

    def forward(self, x):
        return F.relu(self.body(x) + self.skip(x))


class Backbone(nn.Module):
    """A ResNet-style teacher: stem (7x7 convolution with stride 2, max pooling) and three stages of basic blocks
    (``blocks`` per stage; ResNet-34's layers 1-3 are widths (64, 128, 256) with (3, 4, 6) blocks); frozen, in eval
    mode."""

    def __init__(self, widths: tuple[int, int, int], seed: int = 0, blocks: tuple[int, int, int] = (2, 2, 2)):
        super().__init__()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.stem = nn.Sequential(_conv_bn(3, widths[0], 7, 2), nn.MaxPool2d(3, 2, 1))
            stages, cin = [], widths[0]
            for i, (w, n) in enumerate(zip(widths, blocks)):
                stages.append(
                    nn.Sequential(_Basic(cin, w, 1 if i == 0 else 2), *(_Basic(w, w, 1) for _ in range(n - 1)))
                )
                cin = w
            self.stages = nn.ModuleList(stages)
        self.requires_grad_(False)
        self.eval()

    def train(self, mode: bool = True):  # frozen: batch norm keeps its statistics
        return super().train(False)

    def forward(self, x):
        x, out = self.stem(x), []
        for stage in self.stages:
            x = stage(x)
            out.append(x)
        return out


def torchvision_resnet_state(state: dict[str, torch.Tensor], blocks: tuple[int, int, int]) -> dict[str, torch.Tensor]:
    """torchvision's ResNet state dict (``conv1``, ``bn1``, ``layer1.0.conv1``, ...) renamed to :class:`Backbone`'s
    keys, layers 1-3 only (the reference truncates ResNet-34 after layer 3)."""
    out = {}
    for key in ("weight", "bias", "running_mean", "running_var", "num_batches_tracked"):
        if f"bn1.{key}" in state:
            out[f"stem.0.1.{key}"] = state[f"bn1.{key}"]
    out["stem.0.0.weight"] = state["conv1.weight"]
    parts = {"conv1": "body.0.0", "bn1": "body.0.1", "conv2": "body.1", "bn2": "body.2", "downsample.0": "skip.0",
             "downsample.1": "skip.1"}  # fmt: skip
    for layer, n in enumerate(blocks):
        for block in range(n):
            prefix = f"layer{layer + 1}.{block}."
            for key, value in state.items():
                if key.startswith(prefix):
                    rest = key[len(prefix) :]
                    name, field = rest.rsplit(".", 1)
                    out[f"stages.{layer}.{block}.{parts[name]}.{field}"] = value
    return out


class _Bottleneck(nn.Module):
    def __init__(self, cin: int, planes: int, stride: int):
        super().__init__()
        cout = planes * 4
        self.body = nn.Sequential(_conv_bn(cin, planes, 1), _conv_bn(planes, planes, 3, stride),
                                  nn.Conv2d(planes, cout, 1, bias=False), nn.BatchNorm2d(cout))  # fmt: skip
        self.skip = nn.Identity() if stride == 1 and cin == cout else nn.Sequential(
            nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))  # fmt: skip

    def forward(self, x):
        return F.relu(self.body(x) + self.skip(x))


class Aggregation(nn.Module):
    """Multi-scale fusion of the teacher's three scales, then ``blocks`` bottleneck blocks (the first stride 2) to
    ``out`` channels (RD4AD's one-class bottleneck)."""

    def __init__(self, widths: tuple[int, int, int], out: int, blocks: int):
        super().__init__()
        c1, c2, c3 = widths
        self.down1 = _conv_bn(c1, c2, 3, 2)
        self.lat2 = _conv_bn(c2, c2, 1)
        self.down2 = _conv_bn(c2, c3, 3, 2)
        self.lat3 = _conv_bn(c3, c3, 1)
        self.fuse = _conv_bn(c3, c3, 1)
        planes = out // 4
        layers = [_Bottleneck(c3, planes, 2)] + [_Bottleneck(out, planes, 1) for _ in range(blocks - 1)]
        self.blocks = nn.Sequential(*layers)

    def forward(self, feats):
        f = self.lat2(feats[1]) + self.down1(feats[0])
        f = self.down2(f) + self.lat3(feats[2])
        return self.blocks(self.fuse(f))


class AgentAttention(nn.Module):
    """Agent attention over tokens (B, H, W, C): ``keys`` (same shape) give the keys, the input queries and values."""

    def __init__(self, dim: int, heads: int, agents: int):
        super().__init__()
        if dim % heads:
            raise ValueError(f"width {dim} is not a multiple of the {heads} heads")
        side = int(round(agents**0.5))
        if side * side != agents:
            raise ValueError(f"the number of agent tokens must be a square, got {agents}")
        self.heads, self.scale = heads, (dim // heads) ** -0.5
        self.q, self.k, self.v = (nn.Linear(dim, dim, bias=False) for _ in range(3))
        self.proj = nn.Linear(dim, dim)
        self.dwc = nn.Conv2d(dim, dim, 3, 1, 1, groups=dim)
        self.pool = nn.AdaptiveAvgPool2d(side)

    def attend(self, x, keys):
        b, h, w, c = x.shape
        q, k, v = self.q(x), self.k(keys), self.v(x)
        agent = self.pool(q.permute(0, 3, 1, 2)).flatten(2).transpose(1, 2)  # (B, A, C)

        def split(t):
            return t.reshape(b, -1, self.heads, c // self.heads).transpose(1, 2)

        qh, kh, vh, ah = split(q), split(k), split(v), split(agent)
        agent_v = torch.softmax(ah * self.scale @ kh.transpose(-2, -1), -1) @ vh
        out = torch.softmax(qh * self.scale @ ah.transpose(-2, -1), -1) @ agent_v
        out = out.transpose(1, 2).reshape(b, h * w, c)
        return out + self.dwc(v.permute(0, 3, 1, 2)).flatten(2).transpose(1, 2)

    def forward(self, x, keys):
        b, h, w, c = x.shape
        return self.proj(self.attend(x, keys)).reshape(b, h, w, c)


class ACR(nn.Module):
    """Channel recalibration of a modality's features ``x`` (B, C, H, W) by weights computed from ``context``."""

    def __init__(self, dim: int):
        super().__init__()
        self.body = nn.Sequential(_conv_bn(dim, dim), nn.Conv2d(dim, dim, 3, 1, 1, bias=False), nn.BatchNorm2d(dim))

    def forward(self, x, context):
        w = torch.sigmoid(self.body(context).mean((2, 3), keepdim=True))
        return F.relu(x * w + x)


class AFIR(nn.Module):
    def __init__(self, dim: int, heads: int, agents: int):
        super().__init__()
        self.attention = AgentAttention(dim, heads, agents)
        self.reduce = nn.Conv2d(dim, dim // 2, 1)
        self.acr_rgb, self.acr_depth = ACR(dim), ACR(dim)

    def forward(self, rgb, depth):
        """rgb, depth (B, H, W, C) -> recalibrated (B, H, W, C) each."""
        b, h, w, c = rgb.shape
        both = torch.cat([rgb, depth], 0)  # each modality attends within itself, with shared weights
        out = self.attention.proj(self.attention.attend(both, both))  # (2B, N, C)
        out = torch.cat([out[:b], out[b:]], 1)  # (B, 2N, C): the two modalities' tokens side by side
        context = self.reduce(out.reshape(b, c, 2 * h * w, 1)).reshape(b, c, h, w)  # the reference's reinterpretation
        to_map = lambda t: t.permute(0, 3, 1, 2)  # noqa: E731
        new_rgb, new_depth = self.acr_rgb(to_map(rgb), context), self.acr_depth(to_map(depth), context)
        return new_rgb.permute(0, 2, 3, 1), new_depth.permute(0, 2, 3, 1)


def drop_path(x: torch.Tensor, rate: float, training: bool) -> torch.Tensor:
    """Stochastic depth (timm's ``drop_path``): each sample's branch is dropped with probability ``rate`` in
    training and the kept ones scaled by ``1 / (1 - rate)``; the identity in evaluation."""
    if not training or rate == 0.0:
        return x
    keep = 1.0 - rate
    mask = x.new_empty((x.shape[0],) + (1,) * (x.ndim - 1)).bernoulli_(keep)
    return x * mask / keep


class HAC(nn.Module):
    def __init__(self, dim: int, heads: int, agents: int, attention_blocks: int, drop: tuple[float, ...] = ()):
        super().__init__()
        self.drop = tuple(drop) or (0.0,) * attention_blocks  # stochastic depth of each attention sub-block
        self.norms = nn.ModuleList(nn.LayerNorm(dim, eps=1e-6) for _ in range(attention_blocks))
        self.attention = nn.ModuleList(AgentAttention(dim, heads, agents) for _ in range(attention_blocks))

        def branch(k):
            return nn.Sequential(
                nn.Conv2d(dim, dim, 1), nn.InstanceNorm2d(dim), nn.SiLU(),
                nn.Conv2d(dim, dim, k, 1, k // 2, groups=dim, bias=False), nn.InstanceNorm2d(dim), nn.SiLU(),
                nn.Conv2d(dim, dim, 1), nn.InstanceNorm2d(dim), nn.SiLU(),
            )  # fmt: skip

        self.conv5, self.conv7 = branch(5), branch(7)
        self.fuse = nn.Conv2d(3 * dim, dim, 1)

    def forward(self, x, cross):
        out = x
        for i, (norm, attn) in enumerate(zip(self.norms, self.attention)):
            keys = norm(cross) if i == 0 else norm(out)
            out = out + drop_path(attn(norm(out), keys), self.drop[i], self.training)
        maps = x.permute(0, 3, 1, 2)
        fused = self.fuse(torch.cat([out.permute(0, 3, 1, 2), self.conv5(maps), self.conv7(maps)], 1))
        return fused.permute(0, 2, 3, 1) + x


class _Stage(nn.Module):
    def __init__(self, dim: int, depth: int, heads: int, agents: int, drop: tuple[float, ...]):
        super().__init__()
        self.blocks = nn.ModuleList(HAC(dim, heads, agents, depth, drop) for _ in range(max(1, depth // 2)))

    def forward(self, x, cross):
        for i, block in enumerate(self.blocks):
            x = block(x, cross if i == 0 else x)
        return x


class _Expand(nn.Module):
    """(B, H, W, 2d) -> (B, 2H, 2W, d): linear to 4d, 2x2 pixel shuffle, layer norm."""

    def __init__(self, dim: int):
        super().__init__()
        self.linear = nn.Linear(2 * dim, 4 * dim, bias=False)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        b, h, w, _ = x.shape
        x = self.linear(x).reshape(b, h, w, 2, 2, -1).permute(0, 1, 3, 2, 4, 5).reshape(b, 2 * h, 2 * w, -1)
        return self.norm(x)


class Decoder(nn.Module):
    def __init__(self, cfg: ECFRConfig):
        super().__init__()
        dims = cfg.decoder
        for a, b in zip(dims, dims[1:]):
            if a != 2 * b:
                raise ValueError(f"decoder widths must halve from stage to stage, got {dims}")
        # stochastic depth as the reference's decoder: linspace(0, rate) over all stages' depths, reversed (the
        # deepest, coarsest stage drops most), each stage's share given to the attention sub-blocks of its HACs
        rates = torch.linspace(0, cfg.drop_path, sum(cfg.depths)).tolist()[::-1]
        starts = [sum(cfg.depths[:i]) for i in range(len(dims))]
        drops = [tuple(rates[s : s + n]) for s, n in zip(starts, cfg.depths)]
        specs = list(zip(dims, cfg.depths, cfg.heads, cfg.agents, drops))
        self.rgb = nn.ModuleList(_Stage(*spec) for spec in specs)
        self.depth = nn.ModuleList(_Stage(*spec) for spec in specs)
        self.afir = nn.ModuleList(AFIR(d, h, a) for d, h, a in zip(dims[:-1], cfg.heads, cfg.agents))
        self.expand = nn.ModuleList(_Expand(d) for d in dims[1:])

    def forward(self, rgb, depth):
        rgb, depth = rgb.permute(0, 2, 3, 1), depth.permute(0, 2, 3, 1)
        out_rgb, out_depth = [], []
        for i in range(len(self.rgb)):
            if i:
                rgb, depth = self.expand[i - 1](rgb), self.expand[i - 1](depth)
            if i < len(self.afir):
                new_rgb, new_depth = self.afir[i](rgb, depth)
                rgb, depth = self.rgb[i](rgb, new_depth), self.depth[i](depth, new_rgb)
            else:
                rgb, depth = self.rgb[i](rgb, rgb), self.depth[i](depth, depth)
            if i:
                out_rgb.insert(0, rgb.permute(0, 3, 1, 2))
                out_depth.insert(0, depth.permute(0, 3, 1, 2))
        return out_rgb, out_depth


class ECFR(nn.Module):
    def __init__(self, cfg: ECFRConfig):
        super().__init__()
        if tuple(reversed(cfg.decoder[1:])) != tuple(cfg.backbone):
            raise ValueError(f"decoder stages 1-3 {cfg.decoder[1:]} must mirror the teacher's widths {cfg.backbone}")
        self.cfg = cfg
        self.teacher = Backbone(cfg.backbone, cfg.seed, cfg.backbone_blocks)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(cfg.seed + 1)
            self.agg_rgb = Aggregation(cfg.backbone, cfg.decoder[0], cfg.bottleneck_blocks)
            self.agg_depth = Aggregation(cfg.backbone, cfg.decoder[0], cfg.bottleneck_blocks)
            self.decoder = Decoder(cfg)
            for module in (self.agg_rgb, self.agg_depth):
                module.apply(_init_aggregation)
            self.decoder.apply(_init_decoder)

    @torch.no_grad()
    def teach(self, rgb, depth):
        """The frozen teacher's three scales of both modalities."""
        return self.teacher(rgb), self.teacher(depth)

    def student(self, t_rgb, t_depth):
        """The two decoder streams' three scales, from the teacher's features."""
        return self.decoder(self.agg_rgb(t_rgb), self.agg_depth(t_depth))

    def forward(self, rgb, depth):
        """(teacher RGB, teacher depth, student RGB stream, student depth stream), three scales each."""
        t_rgb, t_depth = self.teach(rgb, depth)
        return (t_rgb, t_depth, *self.student(t_rgb, t_depth))


def _init_decoder(m: nn.Module) -> None:
    """The reference decoder's initialisation: linear layers truncated normal (sd 0.02) with zero bias, layer norms
    at 1 and 0, convolutions normal with sd sqrt(2 / fan_out), fan_out = k * k * out / groups, zero bias."""
    if isinstance(m, nn.Linear):
        nn.init.trunc_normal_(m.weight, std=0.02)
        if m.bias is not None:
            nn.init.zeros_(m.bias)
    elif isinstance(m, nn.LayerNorm):
        nn.init.ones_(m.weight)
        nn.init.zeros_(m.bias)
    elif isinstance(m, nn.Conv2d):
        fan_out = m.kernel_size[0] * m.kernel_size[1] * m.out_channels // m.groups
        nn.init.normal_(m.weight, 0.0, (2.0 / fan_out) ** 0.5)
        if m.bias is not None:
            nn.init.zeros_(m.bias)


def _init_aggregation(m: nn.Module) -> None:
    """RD4AD's bottleneck initialisation: convolutions Kaiming normal (fan_out, ReLU), batch norms at 1 and 0."""
    if isinstance(m, nn.Conv2d):
        nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
    elif isinstance(m, nn.BatchNorm2d):
        nn.init.ones_(m.weight)
        nn.init.zeros_(m.bias)


def pairs(t_rgb, t_depth, s_rgb, s_depth, cross: bool):
    """The (teacher, student) feature pairs the loss and the anomaly map compare: cross-modal, the depth stream
    against the RGB teacher and the RGB stream against the depth teacher; same-modal, each against its own."""
    if cross:
        return [(t_rgb, s_depth), (t_depth, s_rgb)]
    return [(t_rgb, s_rgb), (t_depth, s_depth)]


def n_parameters(module: nn.Module, trainable_only: bool = False) -> int:
    return sum(p.numel() for p in module.parameters() if p.requires_grad or not trainable_only)
