"""The networks the estimators train (a bias-free MLP and a small bias-free convolutional network, weights as a
list of tensors) and one entry point, `estimate`, that runs a named estimator on either.

On the MLP every estimator of `estimators.ESTIMATORS` runs as written there (explicit batched matmuls), plus
MeZO (`mezo`) and forward gradients (`forward_gradient`). On the convolutional network every estimator runs with all
probes in one batched pass (`torch.func.vmap` over a leading probe dimension of the weights or of the node noise,
which torch turns into grouped convolutions), MeZO excepted (in place, one probe at a time). The activation-shaped
estimators read a conv layer `(C_out, C_in, k, k)` as a linear map of its input's unfolded patches (im2col,
`torch.nn.functional.unfold`: `(B*L, C_in*k*k)` rows, L output positions): SZO's moment is `C = P^T P / (B L)` and its
directions `Z (C/s)^(kappa/2)` reshaped to the weight; AGZO's subspace the patches' top right singular vectors; node
perturbation perturbs the conv output per example and position and forms `sum xi patches^T` (the weight gradient of
the perturbation, `conv2d_weight`). A weight that is neither 2-D (linear) nor 4-D (conv2d) is refused by name.
Where a batched pass would pass the probe bound (`estimators.probe_memory`), its probes run in chunks that fit it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch.func import vmap

from neurips26.common.validation import check_choice, check_int, check_number
from neurips26.spectral_zo.estimators import (
    ACTIVATIONS,
    DIFFERENCES,
    ESTIMATORS,
    SCHEDULES,
    LossFn,
    activation_subspace,
    chunked_slopes,
    draw_device,
    mlp_forward,
    orthogonalize,
    probe_chunk,
    probe_footprint,
    szo_correct,
    szo_directions,
)
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

    def forward(self, params: Sequence[Tensor], x: Tensor, node_noise: Sequence[Tensor] | None = None) -> Tensor:
        """Logits `(B, classes)`; `node_noise[l]` (layer l's output, any shape of its size: `(B, C_out, L)`) is
        added to its pre-activation."""
        phi = ACTIVATIONS[self.activation]
        a = x
        for index, (weight, stride) in enumerate(zip(params[:-1], self.strides)):
            h = F.conv2d(a, weight, stride=stride, padding=self.kernel // 2)
            a = phi(h if node_noise is None else h + node_noise[index].reshape(h.shape))
        h = a.flatten(1) @ params[-1].T
        return h if node_noise is None else h + node_noise[-1].reshape(h.shape)

    def layer_inputs(self, params: Sequence[Tensor], x: Tensor) -> list[Tensor]:
        """Every layer's input as patches `(B, n_in, L)` (`n_in` the weight's entries per output, L its output
        positions): a conv layer's the unfolded (im2col) patches of its input, the head's the flattened features
        (L = 1). `W.reshape(out, n_in) @ patches` is the layer's pre-activation."""
        phi, a, patches = ACTIVATIONS[self.activation], x, []
        for weight, stride in zip(params[:-1], self.strides):
            patches.append(F.unfold(a, self.kernel, padding=self.kernel // 2, stride=stride))
            a = phi(F.conv2d(a, weight, stride=stride, padding=self.kernel // 2))
        return [*patches, a.flatten(1).unsqueeze(-1)]


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


def difference_gradient(network, params, loss_fn, batch, directions, eps, differences="central") -> list[Tensor]:
    """`(1/K) sum_k d_k V_k` with `d_k` the finite difference of the batch loss along `(V_1k, ..., V_Lk)`: central
    differences from the 2K probes `W +- eps V`, forward ones from `W + eps V` and W, in one batched pass (in chunks
    where it would pass the probe bound)."""
    check_choice("differences", differences, DIFFERENCES)
    n_probes = directions[0].shape[0]
    passes = 2 * n_probes if differences == "central" else n_probes + 1
    chunk = probe_chunk(probe_footprint(params, batch[0].shape[0]), passes)
    if chunk < passes:
        slopes = chunked_slopes(lambda probes: probe_losses(network, probes, loss_fn, batch), params, directions, eps,
                                differences, chunk)  # fmt: skip
    elif differences == "central":
        probes = [torch.cat([w + eps * v, w - eps * v]) for w, v in zip(params, directions)]
        losses = probe_losses(network, probes, loss_fn, batch)
        slopes = (losses[:n_probes] - losses[n_probes:]) / (2 * eps)
    else:
        probes = [torch.cat([w + eps * v, w.unsqueeze(0)]) for w, v in zip(params, directions)]
        losses = probe_losses(network, probes, loss_fn, batch)
        slopes = (losses[:n_probes] - losses[n_probes]) / eps
    return [torch.einsum("k,k...->...", slopes, v) / n_probes for v in directions]


def central_gradient(network, params, loss_fn, batch, directions, eps) -> list[Tensor]:
    """`(1/K) sum_k [(L(W + eps V_k) - L(W - eps V_k)) / 2 eps] V_k`, the 2K probes in one batched pass."""
    return difference_gradient(network, params, loss_fn, batch, directions, eps, "central")


def scheduled_gradient(network, params, loss_fn, batch, directions, eps, schedule="joint", differences="central"):
    """Joint: every probe moves all layers. Layer-wise: layer l's K probes move layer l alone (L*K probes, one
    batched pass), the joint average over L*K probes rescaled by L to the per-layer average."""
    check_choice("schedule", schedule, SCHEDULES)
    if schedule == "joint":
        return difference_gradient(network, params, loss_fn, batch, directions, eps, differences)
    n = len(params)
    passes = n * (2 * directions[0].shape[0] if differences == "central" else directions[0].shape[0] + 1)
    if probe_chunk(probe_footprint(params, batch[0].shape[0]), passes) < passes:
        grads = []
        for index, v in enumerate(directions):
            chunk = probe_chunk(probe_footprint([params[index]], batch[0].shape[0]), 2 * v.shape[0])

            def evaluate(probes, index=index):
                count = probes[index].shape[0]
                return probe_losses(network, [w if j == index else w.expand(count, *w.shape)
                                              for j, w in enumerate(probes)], loss_fn, batch)  # fmt: skip

            slopes = chunked_slopes(evaluate, params, [v], eps, differences, chunk, moved=index)
            grads.append(torch.einsum("k,k...->...", slopes, v) / v.shape[0])
        return grads
    blocks = [torch.cat([v if j == i else torch.zeros_like(v) for j in range(n)]) for i, v in enumerate(directions)]
    return [g * n for g in difference_gradient(network, params, loss_fn, batch, blocks, eps, differences)]


def _draw(kind: str, n_probes: int, params, generator) -> list[Tensor]:
    if kind == "rademacher":
        where = draw_device(generator)
        signs = [torch.randint(0, 2, (n_probes, *w.shape), generator=generator, device=where) for w in params]
        return [s.to(w.device, w.dtype) * 2 - 1 for s, w in zip(signs, params)]
    return [torch.randn((n_probes, *w.shape), generator=generator, dtype=w.dtype, device=draw_device(generator))
            .to(w.device) for w in params]  # fmt: skip


def _generic(directions: str, layerwise: bool):
    """A weight-shape estimator on any network: Gaussian or Rademacher directions over all layers at once, or
    (layer-wise) K probes per layer moving that layer alone, rescaled by L to the per-layer average."""

    def estimator(network, params, loss_fn, batch, n_probes, eps, generator) -> list[Tensor]:
        drawn = _draw(directions, n_probes, params, generator)
        schedule = "layerwise" if layerwise else "joint"
        return scheduled_gradient(network, params, loss_fn, batch, drawn, eps, schedule)

    return estimator


def patch_rows(patches: Tensor) -> Tensor:
    """Patches `(B, n_in, L)` as the rows `(B*L, n_in)` whose second moment is a layer's im2col moment."""
    return patches.transpose(1, 2).reshape(-1, patches.shape[1])


def conv_szo(network, params, loss_fn, batch, n_probes, eps, generator, *, kappa=1.0, orthogonal=False,
             bias_correction=False, ridge=1e-3, normalise="mean", moment="batch", correction_moment=None,
             schedule="joint") -> list[Tensor]:  # fmt: skip
    """SZO-kappa (our reconstruction, `estimators.szo`) on any network with `layer_inputs`: C the second moment of a
    layer's im2col patches (`C = P^T P / (B L)`), `V = Z (C/s)^(kappa/2)` in the unfolded basis reshaped to the
    weight, so `E[g] = G (C/s)^kappa` with G the gradient unfolded to `(C_out, C_in k k)`."""
    check_number("kappa", kappa, low=0.0, high=2.0)
    check_number("ridge", ridge, low=0.0, low_open=True)
    rows = [patch_rows(p) for p in network.layer_inputs(params, batch[0])]
    directions, spectra = szo_directions(
        params, rows, n_probes, generator, kappa=kappa, orthogonal=orthogonal, normalise=normalise, moment=moment
    )
    grads = scheduled_gradient(network, params, loss_fn, batch, directions, eps, schedule)
    if not bias_correction:
        return grads
    return szo_correct(grads, rows, spectra, kappa=kappa, normalise=normalise, ridge=ridge, moment=moment,
                       correction_moment=correction_moment)  # fmt: skip


def conv_agzo(network, params, loss_fn, batch, n_probes, eps, generator, *, rank=8, orthogonal=False,
              differences="forward") -> list[Tensor]:  # fmt: skip
    """AGZO (Lin et al., arXiv 2601.17261) on any network with `layer_inputs`: `V = R U^T` with U the top-`rank`
    right singular vectors of a layer's im2col patches, reshaped to the weight; `E[g] = G U U^T` (G unfolded)."""
    check_int("rank", rank, low=1)
    rows = [patch_rows(p) for p in network.layer_inputs(params, batch[0])]
    for index, r in enumerate(rows):
        if rank > r.shape[1]:
            raise ValueError(f"rank must be <= {r.shape[1]} (inputs per output of params[{index}]), got {rank}")
    bases = [activation_subspace(r, rank) for r in rows]
    directions = []
    for w, u in zip(params, bases):
        seeds = torch.randn((n_probes, w.shape[0], u.shape[1]), generator=generator, dtype=w.dtype,
                            device=draw_device(generator)).to(w.device)  # fmt: skip
        seeds = orthogonalize(seeds) if orthogonal else seeds
        directions.append((seeds @ u.T).reshape(n_probes, *w.shape))
    return difference_gradient(network, params, loss_fn, batch, directions, eps, differences)


def conv_node_perturbation(network, params, loss_fn, batch, n_probes, eps, generator) -> list[Tensor]:
    """Node perturbation on any network with `layer_inputs` and `forward(..., node_noise)`: every layer's output gets
    `+- eps xi` (xi Gaussian per probe, example, channel and position) in one vmapped pass, and
    `g_l = (1/KB) sum_{k,n} [(l_n^+ - l_n^-) / 2 eps] sum_p xi_{k,n,:,p} patch_{n,:,p}^T` (the conv weight gradient
    of the perturbation, from the clean patches)."""
    x, y = batch
    patches = network.layer_inputs(params, x)
    noise = [
        torch.randn(
            (n_probes, x.shape[0], w.shape[0], p.shape[2]),
            generator=generator,
            dtype=w.dtype,
            device=draw_device(generator),
        ).to(w.device)
        for w, p in zip(params, patches)
    ]

    def per_example(*layer_noise):
        return loss_fn(network.forward(params, x, node_noise=list(layer_noise)), y)

    per_probe = 3 * x.element_size() * sum(xi[0].numel() for xi in noise)
    pairs = max(1, probe_chunk(per_probe, 2 * n_probes) // 2)
    losses = []
    for start in range(0, n_probes, pairs):
        part = vmap(per_example)(*[eps * torch.cat([xi[start : start + pairs], -xi[start : start + pairs]])
                                   for xi in noise])  # fmt: skip
        half = part.shape[0] // 2
        losses.append(part[:half] - part[half:])
    losses = torch.cat(losses)
    if not bool(torch.isfinite(losses).all()):
        raise ValueError(f"non-finite loss in the node-perturbation pass of {2 * n_probes} probes")
    slopes = losses / (2 * eps)
    scale = n_probes * x.shape[0]
    return [
        (torch.einsum("kb,kbol,bil->oi", slopes, xi, p) / scale).reshape(w.shape)
        for xi, p, w in zip(noise, patches, params)
    ]


def _mezo(network, params, loss_fn, batch, n_probes, eps, generator) -> list[Tensor]:
    seed = int(torch.randint(0, 2**62, (1,), generator=generator, device=draw_device(generator)))
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
# the activation-shaped estimators on a network with `layer_inputs` (the ConvNet): im2col patches
PATCH_ESTIMATORS: dict[str, Callable[..., list[Tensor]]] = {
    "szo": conv_szo,
    "agzo": conv_agzo,
    "node_perturbation": conv_node_perturbation,
}
# the layer kinds each estimator supports (every one: linear and conv2d; any other weight is refused by name)
SUPPORT: dict[str, tuple[str, ...]] = {name: ("linear", "conv2d") for name in {**ESTIMATORS, **SHAPE_ESTIMATORS}}


def check_supported(name: str, params: Sequence[Tensor]) -> None:
    """ValueError naming the first layer whose type estimator `name` does not support."""
    check_choice("estimator", name, SUPPORT)
    for index, weight in enumerate(params):
        kind = layer_kind(weight)
        if kind not in SUPPORT[name]:
            raise ValueError(
                f"estimator {name!r} does not support {kind} layers (params[{index}], shape {tuple(weight.shape)}): "
                f"supported: {', '.join(SUPPORT[name])}"
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
    (kappa, rank, ...); MeZO and forward gradients, and everything on a ConvNet, run on `network.forward`, the
    activation-shaped ones (`PATCH_ESTIMATORS`) with the same options on its im2col patches."""
    check_supported(name, params)
    check_int("n_probes", n_probes, low=1)
    check_number("eps", eps, low=0.0, low_open=True)
    if isinstance(network, MLP) and name in ESTIMATORS:
        return ESTIMATORS[name](
            params, loss_fn, batch, n_probes, eps, generator, activation=network.activation, **options
        )
    if name in PATCH_ESTIMATORS:
        return PATCH_ESTIMATORS[name](network, params, loss_fn, batch, n_probes, eps, generator, **options)
    if options:
        raise ValueError(f"estimator {name!r} takes no options, got {sorted(options)}")
    return SHAPE_ESTIMATORS[name](network, params, loss_fn, batch, n_probes, eps, generator)


ALL_ESTIMATORS = tuple(SUPPORT)


def backprop(network: Network, params: Sequence[Tensor], loss_fn: LossFn, batch: tuple[Tensor, Tensor]):
    """The autograd gradient of the mean batch loss (the reference)."""
    leaves = [w.detach().clone().requires_grad_(True) for w in params]
    x, y = batch
    return list(torch.autograd.grad(loss_fn(network.forward(leaves, x), y).mean(), leaves))
