"""Forward gradients with random tangents (Baydin et al. 2022, "Gradients without Backpropagation").

For a tangent `v ~ N(0, I)` over all weights, forward-mode differentiation (`torch.func.jvp`) gives the exact
directional derivative `d = <grad L, v>` in one forward pass, and `g = d v` is an unbiased estimate of the
gradient (`E[v v^T] = I`). K tangents are averaged; all K run as one batched forward-mode pass
(`torch.func.vmap` over the tangents; in chunks where the pass would pass the probe bound,
`estimators.probe_memory`). There is no finite-difference step, so no eps and no O(eps^2) bias: it
is the reference that zeroth-order estimators approach as eps -> 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch.func import jvp, vmap

from neurips26.common.validation import check_int
from neurips26.spectral_zo.estimators import LossFn, draw_device, probe_chunk, probe_footprint
from neurips26.spectral_zo.mezo import Forward, mlp

Tensor = torch.Tensor


def tangent_derivatives(
    params: Sequence[Tensor], loss_fn: LossFn, batch: tuple, tangents: Sequence[Tensor], forward: Forward
) -> Tensor:
    """`(K,)` exact directional derivatives of the mean batch loss along the K joint tangents
    (`tangents[l]` is `(K, *params[l].shape)`), one batched forward-mode pass."""
    x, y = batch
    params = tuple(w.detach() for w in params)

    def loss(*weights):
        return loss_fn(forward(list(weights), x), y).mean()

    def derivative(*tangent):
        return jvp(loss, params, tangent)[1]

    n_probes = tangents[0].shape[0]
    chunk = probe_chunk(2 * probe_footprint(params, x.shape[0]), n_probes)
    return vmap(derivative, chunk_size=None if chunk >= n_probes else chunk)(*tangents)


def forward_gradient(
    params: Sequence[Tensor],
    loss_fn: LossFn,
    batch: tuple[Tensor, Tensor],
    n_probes: int,
    eps: float | None = None,
    generator: torch.Generator | None = None,
    *,
    forward: Forward | None = None,
    activation: str = "relu",
) -> list[Tensor]:
    """`(1/K) sum_k <grad L, v_k> v_k` per layer with Gaussian tangents; unbiased. `eps` is accepted for the
    common estimator signature and ignored (no finite difference)."""
    check_int("n_probes", n_probes, low=1)
    forward = forward or mlp(activation)
    where = draw_device(generator)
    tangents = [torch.randn((n_probes, *w.shape), generator=generator, dtype=w.dtype, device=where).to(w.device)
                for w in params]  # fmt: skip
    slopes = tangent_derivatives(params, loss_fn, batch, tangents, forward)
    if not bool(torch.isfinite(slopes).all()):
        raise ValueError(f"non-finite directional derivative in {int((~torch.isfinite(slopes)).sum())} tangents")
    return [torch.einsum("k,k...->...", slopes, v) / n_probes for v in tangents]
