"""The networks the estimators train (a bias-free MLP and a small bias-free convolutional network, weights as a
list of tensors) and one entry point, `estimate`, that runs a named estimator on either.

On the MLP every estimator of `estimators.ESTIMATORS` runs as written there (explicit batched matmuls), plus
MeZO (`mezo`) and forward gradients (`forward_gradient`). On the convolutional network the estimators that
only need the weights' shapes run with all probes in one batched pass (`torch.func.vmap` over a leading probe
dimension of the weights, which torch turns into grouped convolutions): global and layer-wise weight
perturbation (Gaussian), SPSA (Rademacher), MeZO (in place, one probe at a time) and forward gradients. Node
perturbation, AGZO and SZO-kappa shape their probes by a linear layer's input activations (`a W^T`); on a
convolution they would need the unfolded (im2col) patch moments, which are not implemented: they raise a
ValueError naming the layer type.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch.func import vmap

from neurips26.common.validation import check_choice, check_int, check_number
from neurips26.spectral_zo.estimators import ACTIVATIONS, ESTIMATORS, LossFn, mlp_forward
from neurips26.spectral_zo.forward_gradient import forward_gradient
from neurips26.spectral_zo.mezo import mezo_gradient

Tensor = torch.Tensor
LAYER_KINDS = {2: "linear", 4: "conv2d"}


def layer_kind(weight: Tensor) -> str:
    """'linear' for a 2-D weight `(out, in)`, 'conv2d' for a 4-D one `(out, in, k, k)`."""
    if weight.dim() not in LAYER_KINDS:
        raise ValueError(f"a weight of shape {tuple(weight.shape)} is neither a linear nor a conv2d layer")
    return LAYER_KINDS[weight.dim()]


@dataclass(frozen=True)
class MLP:
    """Bias-free MLP `widths[0] -> ... -> widths[-1]` (`estimators.mlp_forward`); a bias is a constant-1 input."""

    widths: tuple[int, ...]
    activation: str = "relu"

    def __post_init__(self):
        if len(self.widths) < 2 or any(int(w) < 1 for w in self.widths):
            raise ValueError(f"MLP widths must be >= 2 positive sizes, got {self.widths}")
        check_choice("activation", self.activation, ACTIVATIONS)

    def init(self, generator: torch.Generator, dtype=torch.float32) -> list[Tensor]:
        """He-scaled Gaussian weights `N(0, 2/in)`."""
        pairs = zip(self.widths[:-1], self.widths[1:])
        return [torch.randn(o, i, generator=generator, dtype=dtype) * math.sqrt(2 / i) for i, o in pairs]

    def forward(self, params: Sequence[Tensor], x: Tensor) -> Tensor:
        return mlp_forward(params, x, self.activation)[0]


@dataclass(frozen=True)
class ConvNet:
    """Bias-free conv net on `(B, in_channels, side, side)` images: 3x3 convolutions (padding 1) with the given
    channels and strides, each followed by the activation, then one linear layer to `classes` logits."""

    in_channels: int = 1
    side: int = 8
    channels: tuple[int, ...] = (8, 16)
    strides: tuple[int, ...] = (1, 2)
    classes: int = 10
    kernel: int = 3
    activation: str = "relu"

    def __post_init__(self):
        if len(self.channels) != len(self.strides) or not self.channels:
            raise ValueError(f"ConvNet needs one stride per conv layer, got {self.channels} and {self.strides}")
        check_choice("activation", self.activation, ACTIVATIONS)

    def out_side(self) -> int:
        side = self.side
        for stride in self.strides:
            side = (side + 2 * (self.kernel // 2) - self.kernel) // stride + 1
        return side

    def init(self, generator: torch.Generator, dtype=torch.float32) -> list[Tensor]:
        """He-scaled Gaussian weights: conv `(c_out, c_in, k, k)`, then the linear head `(classes, features)`."""
        params, c_in = [], self.in_channels
        for c_out in self.channels:
            fan_in = c_in * self.kernel**2
            shape = (c_out, c_in, self.kernel, self.kernel)
            params.append(torch.randn(shape, generator=generator, dtype=dtype) * math.sqrt(2 / fan_in))
            c_in = c_out
        features = c_in * self.out_side() ** 2
        params.append(torch.randn(self.classes, features, generator=generator, dtype=dtype) * math.sqrt(1 / features))
        return params

    def forward(self, params: Sequence[Tensor], x: Tensor) -> Tensor:
        phi = ACTIVATIONS[self.activation]
        a = x
        for weight, stride in zip(params[:-1], self.strides):
            a = phi(F.conv2d(a, weight, stride=stride, padding=self.kernel // 2))
        return a.flatten(1) @ params[-1].T


Network = MLP | ConvNet


def probe_losses(network: Network, probes: Sequence[Tensor], loss_fn: LossFn, batch: tuple[Tensor, Tensor]) -> Tensor:
    """Mean batch loss `(P,)` at each of P weight settings `probes[l]` `(P, *shape)`, in one vmapped pass."""
    x, y = batch

    def loss(*weights):
        return loss_fn(network.forward(list(weights), x), y).mean()

    losses = vmap(loss)(*probes)
    bad = ~torch.isfinite(losses)
    if bad.any():
        raise ValueError(f"non-finite loss in {int(bad.sum())} of {losses.shape[0]} probes of the forward pass")
    return losses


def central_gradient(network, params, loss_fn, batch, directions, eps) -> list[Tensor]:
    """`(1/K) sum_k [(L(W + eps V_k) - L(W - eps V_k)) / 2 eps] V_k`, the 2K probes in one batched pass."""
    n_probes = directions[0].shape[0]
    probes = [torch.cat([w + eps * v, w - eps * v]) for w, v in zip(params, directions)]
    losses = probe_losses(network, probes, loss_fn, batch)
    slopes = (losses[:n_probes] - losses[n_probes:]) / (2 * eps)
    return [torch.einsum("k,k...->...", slopes, v) / n_probes for v in directions]


def _draw(kind: str, n_probes: int, params, generator) -> list[Tensor]:
    if kind == "rademacher":
        signs = [torch.randint(0, 2, (n_probes, *w.shape), generator=generator) for w in params]
        return [s.to(w.device, w.dtype) * 2 - 1 for s, w in zip(signs, params)]
    return [torch.randn((n_probes, *w.shape), generator=generator, dtype=w.dtype).to(w.device) for w in params]


def _generic(directions: str, layerwise: bool):
    """A weight-shape estimator on any network: Gaussian or Rademacher directions over all layers at once, or
    (layer-wise) K probes per layer moving that layer alone, rescaled by L to the per-layer average."""

    def estimator(network, params, loss_fn, batch, n_probes, eps, generator) -> list[Tensor]:
        drawn = _draw(directions, n_probes, params, generator)
        if not layerwise:
            return central_gradient(network, params, loss_fn, batch, drawn, eps)
        n = len(params)
        blocks = [torch.cat([v if j == i else torch.zeros_like(v) for j in range(n)]) for i, v in enumerate(drawn)]
        return [g * n for g in central_gradient(network, params, loss_fn, batch, blocks, eps)]

    return estimator


def _mezo(network, params, loss_fn, batch, n_probes, eps, generator) -> list[Tensor]:
    seed = int(torch.randint(0, 2**62, (1,), generator=generator))
    return mezo_gradient(params, loss_fn, batch, n_probes, eps, seed, forward=network.forward)


def _forward_gradient(network, params, loss_fn, batch, n_probes, eps, generator) -> list[Tensor]:
    return forward_gradient(params, loss_fn, batch, n_probes, eps, generator, forward=network.forward)


# estimators that need only the weights' shapes: they run on any network
SHAPE_ESTIMATORS: dict[str, Callable[..., list[Tensor]]] = {
    "wp_global": _generic("gaussian", layerwise=False),
    "wp_layerwise": _generic("gaussian", layerwise=True),
    "spsa": _generic("rademacher", layerwise=False),
    "mezo": _mezo,
    "forward_gradient": _forward_gradient,
}
# the layer kinds each estimator supports
SUPPORT: dict[str, tuple[str, ...]] = {
    **{name: ("linear",) for name in ESTIMATORS},
    **{name: ("linear", "conv2d") for name in SHAPE_ESTIMATORS},
}


def check_supported(name: str, params: Sequence[Tensor]) -> None:
    """ValueError naming the first layer whose type estimator `name` does not support."""
    check_choice("estimator", name, SUPPORT)
    for index, weight in enumerate(params):
        kind = layer_kind(weight)
        if kind not in SUPPORT[name]:
            raise ValueError(
                f"estimator {name!r} does not support {kind} layers (params[{index}], shape {tuple(weight.shape)}): "
                f"it shapes its probes by a linear layer's input activations; supported: {', '.join(SUPPORT[name])}"
            )


def estimate(
    name: str,
    network: Network,
    params: Sequence[Tensor],
    loss_fn: LossFn,
    batch: tuple[Tensor, Tensor],
    n_probes: int,
    eps: float,
    generator: torch.Generator,
    **options,
) -> list[Tensor]:
    """The named estimator's gradient estimate of the mean batch loss. On an MLP the activation-shaped and
    weight-perturbation estimators of `estimators.ESTIMATORS` run with the network's activation and `options`
    (kappa, rank, ...); MeZO and forward gradients, and everything on a ConvNet, run on `network.forward`."""
    check_supported(name, params)
    check_int("n_probes", n_probes, low=1)
    check_number("eps", eps, low=0.0, low_open=True)
    if isinstance(network, MLP) and name in ESTIMATORS:
        return ESTIMATORS[name](
            params, loss_fn, batch, n_probes, eps, generator, activation=network.activation, **options
        )
    if options:
        raise ValueError(f"estimator {name!r} takes no options, got {sorted(options)}")
    return SHAPE_ESTIMATORS[name](network, params, loss_fn, batch, n_probes, eps, generator)


ALL_ESTIMATORS = tuple(SUPPORT)


def backprop(network: Network, params: Sequence[Tensor], loss_fn: LossFn, batch: tuple[Tensor, Tensor]):
    """The autograd gradient of the mean batch loss (the reference)."""
    leaves = [w.detach().clone().requires_grad_(True) for w in params]
    x, y = batch
    return list(torch.autograd.grad(loss_fn(network.forward(leaves, x), y).mean(), leaves))
