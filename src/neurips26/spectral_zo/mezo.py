"""MeZO: in-place two-sided SPSA with the seed trick (Malladi et al. 2023, "Fine-Tuning Language Models with
Just Forward Passes", Algorithm 1).

One probe at a time: the weights are moved in place to `W + eps z`, then `W - eps z`, then back to `W`, with
`z` regenerated from the probe's seed each time, so no direction is ever stored beside the weights (at most
one layer's `z` is alive at once). The projected gradient of probe k is `(L+ - L-) / 2 eps`; the SGD update
`W -= lr/K sum_k pg_k z_k` again regenerates each `z_k` from its seed. The restore is exact up to floating
point rounding (`(w + e) - 2e + e`), as in MeZO's code.

The network is any `forward(params, x) -> outputs` over a list of weight tensors (default: the bias-free MLP
of `estimators.mlp_forward`); `measure_cost` counts the extra tensor memory and wall time of a MeZO step
against batched SPSA (all probes in one forward pass, `estimators.perturbation_gradient`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from neurips26.common.tensor_memory import TensorMemory
from neurips26.common.validation import check_choice, check_int, check_number
from neurips26.spectral_zo.estimators import LossFn, mlp_forward, perturbation_gradient

Tensor = torch.Tensor
Forward = Callable[[Sequence[Tensor], Tensor], Tensor]


def _gaussian(shape, like: Tensor, generator: torch.Generator) -> Tensor:
    return torch.randn(shape, generator=generator, dtype=like.dtype, device=like.device)


def _rademacher(shape, like: Tensor, generator: torch.Generator) -> Tensor:
    return torch.randint(0, 2, shape, generator=generator, device=like.device).to(like.dtype) * 2 - 1


DISTRIBUTIONS: dict[str, Callable[[tuple, Tensor, torch.Generator], Tensor]] = {
    "gaussian": _gaussian,  # MeZO's choice
    "rademacher": _rademacher,  # SPSA's (Spall 1992)
}


def mlp(activation: str = "relu") -> Forward:
    """`forward(params, x)` of the bias-free MLP of `estimators.mlp_forward`."""
    return lambda params, x: mlp_forward(params, x, activation)[0]


def probe_seeds(seed: int, n_probes: int) -> list[int]:
    """K probe seeds drawn from one step seed (MeZO draws a fresh seed per probe)."""
    check_int("n_probes", n_probes, low=1)
    generator = torch.Generator().manual_seed(int(seed))
    return [int(s) for s in torch.randint(0, 2**62, (n_probes,), generator=generator)]


def _layer_noise(params: Sequence[Tensor], seed: int, distribution: str):
    """z of each layer in turn, regenerated from `seed` (the same values on every call)."""
    draw = DISTRIBUTIONS[distribution]
    device = params[0].device  # z is drawn where the weights are (a CUDA generator on a GPU), never copied over
    generator = torch.Generator(device=device if device.type == "cuda" else "cpu").manual_seed(seed)
    for w in params:
        yield w, draw(w.shape, w, generator)


def perturb_(params: Sequence[Tensor], seed: int, scale: float, distribution: str = "gaussian") -> None:
    """`W += scale * z(seed)` in place, one layer's z alive at a time (MeZO's `perturb_parameters`)."""
    with torch.no_grad():
        for w, z in _layer_noise(params, seed, distribution):
            w.add_(z, alpha=scale)


def directions(params: Sequence[Tensor], seeds: Sequence[int], distribution: str = "gaussian") -> list[Tensor]:
    """The directions `(K, *shape)` per layer that the seeds generate (materialised: for tests and comparisons)."""
    per_probe = [[z for _, z in _layer_noise(params, s, distribution)] for s in seeds]
    return [torch.stack([probe[index] for probe in per_probe]) for index in range(len(params))]


def _loss(forward: Forward, params, loss_fn: LossFn, batch) -> float:
    x, y = batch
    with torch.no_grad():
        return float(loss_fn(forward(params, x), y).mean())


@dataclass
class MezoProbes:
    """Per probe: its seed, the losses at `W + eps z` and `W - eps z`, and the projected gradient."""

    seeds: list[int]
    loss_plus: list[float]
    loss_minus: list[float]
    projected: list[float]


def mezo_probes(
    params: Sequence[Tensor],
    loss_fn: LossFn,
    batch: tuple[Tensor, Tensor],
    n_probes: int,
    eps: float,
    seed: int,
    *,
    forward: Forward | None = None,
    distribution: str = "gaussian",
) -> MezoProbes:
    """The K projected gradients `(L(W + eps z_k) - L(W - eps z_k)) / 2 eps`, one probe at a time, params moved in
    place and restored (2K forward passes). A non-finite loss raises ValueError after the restore."""
    check_int("n_probes", n_probes, low=1)
    check_number("eps", eps, low=0.0, low_open=True)
    check_choice("distribution", distribution, DISTRIBUTIONS)
    forward = forward or mlp()
    seeds = probe_seeds(seed, n_probes)
    plus, minus = [], []
    for probe_seed in seeds:
        perturb_(params, probe_seed, eps, distribution)
        plus.append(_loss(forward, params, loss_fn, batch))
        perturb_(params, probe_seed, -2 * eps, distribution)
        minus.append(_loss(forward, params, loss_fn, batch))
        perturb_(params, probe_seed, eps, distribution)
    bad = [k for k, (a, b) in enumerate(zip(plus, minus)) if not (abs(a) < float("inf") and abs(b) < float("inf"))]
    if bad:
        raise ValueError(f"non-finite loss in {len(bad)} of {n_probes} MeZO probes (first: probe {bad[0]})")
    projected = [(a - b) / (2 * eps) for a, b in zip(plus, minus)]
    return MezoProbes(seeds, plus, minus, projected)


def mezo_gradient(
    params, loss_fn, batch, n_probes, eps, seed, *, forward=None, distribution="gaussian"
) -> list[Tensor]:
    """The MeZO estimate `(1/K) sum_k pg_k z_k` materialised per layer (for alignment; training uses
    `mezo_step`, which never holds it)."""
    probes = mezo_probes(params, loss_fn, batch, n_probes, eps, seed, forward=forward, distribution=distribution)
    grads = [torch.zeros_like(w) for w in params]
    for probe_seed, pg in zip(probes.seeds, probes.projected):
        for g, (_, z) in zip(grads, _layer_noise(params, probe_seed, distribution)):
            g.add_(z, alpha=pg / n_probes)
    return grads


def mezo_step(params, loss_fn, batch, n_probes, eps, seed, lr, *, forward=None, distribution="gaussian") -> MezoProbes:
    """One MeZO-SGD step in place: `W -= (lr/K) sum_k pg_k z_k`, each z_k regenerated from its seed."""
    check_number("lr", lr, low=0.0, low_open=True)
    probes = mezo_probes(params, loss_fn, batch, n_probes, eps, seed, forward=forward, distribution=distribution)
    for probe_seed, pg in zip(probes.seeds, probes.projected):
        perturb_(params, probe_seed, -lr * pg / n_probes, distribution)
    return probes


@dataclass
class Cost:
    """Peak tensor bytes allocated beyond the resident weights and data during one call, and its wall time."""

    name: str
    extra_bytes: int
    seconds: float


def measure(name: str, fn: Callable[[], object], resident: Sequence[Tensor], repeats: int = 3) -> Cost:
    """Peak extra tensor memory (`common.tensor_memory.TensorMemory`, storages alive beyond `resident`) of one
    call of `fn`, and its best wall time over `repeats` further calls."""
    with TensorMemory(resident=list(resident)) as counter:
        fn()
    seconds = []
    for _ in range(repeats):
        began = time.perf_counter()
        fn()
        seconds.append(time.perf_counter() - began)
    return Cost(name, counter.peak - counter.resident, min(seconds))


def measure_cost(
    params: Sequence[Tensor],
    loss_fn: LossFn,
    batch: tuple[Tensor, Tensor],
    n_probes: int,
    eps: float = 1e-3,
    seed: int = 0,
    activation: str = "relu",
    repeats: int = 3,
) -> dict[str, Cost]:
    """Extra memory and wall time of one gradient step on an MLP: MeZO in place (update applied, no gradient
    held), MeZO with the estimate materialised, and batched two-sided SPSA (the 2K probes in one pass, the
    directions held; `estimators.perturbation_gradient`). A copy of the weights is measured (and stepped with
    lr 1e-3); the caller's `params` are not touched."""
    weights = [w.detach().clone() for w in params]
    resident = [*weights, *batch]
    forward = mlp(activation)

    def spsa_batched():
        generator = torch.Generator().manual_seed(seed)
        draws = [_rademacher((n_probes, *w.shape), w, generator) for w in weights]
        return perturbation_gradient(weights, loss_fn, batch, draws, eps, "central", activation)

    return {
        "mezo_step": measure(
            "mezo_step",
            lambda: mezo_step(weights, loss_fn, batch, n_probes, eps, seed, 1e-3, forward=forward),
            resident,
            repeats,
        ),
        "mezo_gradient": measure(
            "mezo_gradient",
            lambda: mezo_gradient(weights, loss_fn, batch, n_probes, eps, seed, forward=forward),
            resident,
            repeats,
        ),
        "spsa_batched": measure("spsa_batched", spsa_batched, resident, repeats),
    }
