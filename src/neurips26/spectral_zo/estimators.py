"""Zeroth-order gradient estimators for a bias-free MLP given as a list of weight matrices.

The network is `h_l = a_{l-1} W_l^T`, `a_l = phi(h_l)` for hidden layers and the last `h_L` as output; a bias
is a constant-1 input feature. A loss function maps outputs `(..., B, C)` and targets to per-example losses
`(..., B)`; the batch loss is their mean. Every estimator uses forward passes only, and all probes of one
call run as ONE batched forward pass (the probes are a leading batch dimension of the weights, explicit
batched matmuls), except the clean pass that the activation-shaped estimators read their geometry from.

Estimators (registry `ESTIMATORS`, common signature `(params, loss_fn, batch, n_probes, eps, generator)`):
  * weight perturbation, global (one Gaussian direction over all parameters per probe) and layer-wise
    (each layer probed alone), central differences;
  * SPSA (Spall 1992): two-sided, Rademacher directions over all parameters;
  * node perturbation: Gaussian noise on the pre-activations, per-example central differences, the
    gradient from the outer product with the layer's input (as compared with weight perturbation by
    Oripov et al. 2025, arXiv 2501.15403);
  * AGZO (Lin et al., arXiv 2601.17261): directions `R U_r^T` in the span of the top-r right singular
    vectors of the layer's input activations, one-sided forward difference as in AGZO;
  * SZO-kappa: directions `Z M` with `M = (C / mean eig C)^{kappa/2}` and `C` the second moment of the
    layer input; kappa = 0 is weight perturbation. The paper (SZO-kappa) was not found: this family, its
    normalisation and its bias correction `g (C^kappa + lambda I)^{-1}` are OUR RECONSTRUCTION.
Orthogonalised probes (Rando et al. 2025, arXiv 2505.19720): the isotropic seeds of a layer (Gaussian Z, or
AGZO's R) are made orthonormal over the probe batch by QR and rescaled to norm sqrt(dim), so each probe keeps
the covariance of the i.i.d. draw. The central-difference estimator is the one of MeZO (Malladi et al. 2023)
without its in-place seed trick; forward gradients (Baydin et al. 2022) are the first-order-free reference.

Memory bound: a batched pass holds every probe's weights (2K copies of the network for central differences, 2KL for
the layer-wise schedule), 11 GB at K = 256 on a 785-1024-1024-10 MLP. Where a pass would pass the bound of
`probe_memory` (default `DEFAULT_PROBE_BYTES`; a job sets it from its memory request, `set_probe_bound`), its
probes run in chunks that fit it, from the same draws: the estimate equals the one-pass estimate up to float
rounding. Where the whole pass fits, it runs as one pass, as written above.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import torch

from neurips26.common.validation import check_choice, check_int, check_number

Tensor = torch.Tensor
LossFn = Callable[[Tensor, Tensor], Tensor]

ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {
    "relu": torch.relu,
    "tanh": torch.tanh,
    "identity": lambda h: h,
}
SCHEDULES = ("joint", "layerwise")
DIFFERENCES = ("central", "forward")


def squared_error(outputs: Tensor, targets: Tensor) -> Tensor:
    """Per-example `0.5 * ||outputs - targets||^2`, outputs `(..., B, C)`, targets `(B, C)`."""
    return 0.5 * (outputs - targets).pow(2).sum(-1)


def cross_entropy(outputs: Tensor, targets: Tensor) -> Tensor:
    """Per-example softmax cross-entropy, outputs (logits) `(..., B, C)`, integer targets `(B,)`."""
    log_prob = torch.log_softmax(outputs, dim=-1)
    index = targets.expand(outputs.shape[:-1]).unsqueeze(-1)
    return -log_prob.gather(-1, index).squeeze(-1)


LOSSES: dict[str, LossFn] = {"squared_error": squared_error, "cross_entropy": cross_entropy}


def check_params(params: Sequence[Tensor]) -> None:
    """ValueError unless `params` is a non-empty chain of 2-D weight matrices (the only layer type supported)."""
    if len(params) == 0:
        raise ValueError("params must hold at least one weight matrix, got an empty list")
    for index, weight in enumerate(params):
        if weight.dim() != 2:
            raise ValueError(
                f"params[{index}] has shape {tuple(weight.shape)}: only linear layers (2-D weight matrices) are "
                "supported by these estimators"
            )
        if index and weight.shape[1] != params[index - 1].shape[0]:
            raise ValueError(
                f"params[{index}] takes {weight.shape[1]} inputs but params[{index - 1}] gives "
                f"{params[index - 1].shape[0]} outputs"
            )


def mlp_forward(
    params: Sequence[Tensor], x: Tensor, activation: str = "relu", node_noise: Sequence[Tensor] | None = None
) -> tuple[Tensor, list[Tensor]]:
    """Outputs and the input of every layer. Weights may carry leading probe dimensions `(..., out, in)`;
    `node_noise[l]` (broadcastable to `(..., B, out_l)`) is added to layer l's pre-activation."""
    phi = ACTIVATIONS[check_choice("activation", activation, ACTIVATIONS)]
    inputs, a = [], x
    for index, weight in enumerate(params):
        inputs.append(a)
        h = torch.matmul(a, weight.transpose(-1, -2))
        if node_noise is not None:
            h = h + node_noise[index]
        a = phi(h) if index < len(params) - 1 else h
    return h, inputs


def true_gradient(params: Sequence[Tensor], loss_fn: LossFn, batch: tuple[Tensor, Tensor], activation: str = "relu"):
    """The backpropagation gradient of the mean batch loss: the reference every estimator is aligned with."""
    leaves = [w.detach().clone().requires_grad_(True) for w in params]
    x, y = batch
    loss = loss_fn(mlp_forward(leaves, x, activation)[0], y).mean()
    return list(torch.autograd.grad(loss, leaves))


def _check_common(params, n_probes, eps) -> None:
    check_params(params)
    check_int("n_probes", n_probes, low=1)
    check_number("eps", eps, low=0.0, low_open=True)


def _batch_loss(params, loss_fn, batch, activation, node_noise=None) -> Tensor:
    x, y = batch
    per_example = loss_fn(mlp_forward(params, x, activation, node_noise)[0], y)
    bad = ~torch.isfinite(per_example)
    if bad.any():
        raise ValueError(f"non-finite loss in {int(bad.any(-1).sum())} of {bad.shape[0]} probes of the forward pass")
    return per_example


DEFAULT_PROBE_BYTES = 2**30  # the bound of one batched pass's probe tensors where no job set one
_probe_bytes = [DEFAULT_PROBE_BYTES]


@contextmanager
def probe_memory(n_bytes: int | None) -> Iterator[None]:
    """Bound (bytes) the probe tensors of one batched pass of every estimator within the block; None: no bound."""
    if n_bytes is not None:
        check_int("probe bytes", n_bytes, low=1)
    _probe_bytes.append(n_bytes)
    try:
        yield
    finally:
        _probe_bytes.pop()


def set_probe_bound(n_bytes: int | None) -> None:
    """Set the process's bound (a job's script, from its memory request); `probe_memory` blocks override it."""
    if n_bytes is not None:
        check_int("probe bytes", n_bytes, low=1)
    _probe_bytes[0] = n_bytes


def probe_bound() -> int | None:
    """The bound in force (bytes), None where unbounded."""
    return _probe_bytes[-1]


def probe_footprint(weights: Sequence[Tensor], rows: int, outputs: Sequence[int] = ()) -> int:
    """Bytes one probe of a batched pass holds: its copy of the moved `weights` and, for `rows` examples, the
    pre-activation and activation of each layer output size in `outputs`."""
    itemsize = weights[0].element_size()
    return itemsize * (sum(w.numel() for w in weights) + 2 * rows * sum(outputs))


def probe_chunk(per_probe: int, n_probes: int) -> int:
    """Probes per batched pass: all `n_probes` where they fit the bound (or none is set), else as many as fit, >= 1."""
    bound = probe_bound()
    if bound is None or per_probe * n_probes <= bound:
        return n_probes
    return max(1, bound // max(per_probe, 1))


def _outputs(params: Sequence[Tensor]) -> list[int]:
    return [w.shape[0] for w in params]


def chunked_slopes(evaluate: Callable[[list[Tensor]], Tensor], params, directions, eps, differences, chunk, moved=None):
    """The K finite-difference slopes along `directions` with at most `chunk` probes a pass: `evaluate(probes)` gives
    the mean batch loss `(P,)` of a list of per-layer weights, each `(P, *shape)` or the unbatched weight. `moved`
    (a layer index) perturbs that layer alone, `directions` then that layer's `(K, *shape)`; else every layer."""
    n_probes = directions[0].shape[0]

    def probes(part: slice, signs: tuple[float, ...]) -> list[Tensor]:
        def shift(w, v):
            return torch.cat([w + sign * eps * v[part] for sign in signs])

        if moved is None:
            return [shift(w, v) for w, v in zip(params, directions)]
        return [shift(w, directions[0]) if j == moved else w for j, w in enumerate(params)]

    slopes = []
    if differences == "forward":
        clean = evaluate([w.unsqueeze(0) for w in params])
        for start in range(0, n_probes, chunk):
            slopes.append((evaluate(probes(slice(start, start + chunk), (1.0,))) - clean) / eps)
        return torch.cat(slopes)
    pairs = max(1, chunk // 2)
    for start in range(0, n_probes, pairs):
        losses = evaluate(probes(slice(start, start + pairs), (1.0, -1.0)))
        half = losses.shape[0] // 2
        slopes.append((losses[:half] - losses[half:]) / (2 * eps))
    return torch.cat(slopes)


def perturbation_gradient(
    params: Sequence[Tensor],
    loss_fn: LossFn,
    batch: tuple[Tensor, Tensor],
    directions: Sequence[Tensor],
    eps: float,
    differences: str = "central",
    activation: str = "relu",
) -> list[Tensor]:
    """`(1/K) sum_k d_k V_k` per layer, with `d_k` the finite-difference directional derivative of the batch loss
    along the joint direction `(V_1k, ..., V_Lk)`; `directions[l]` is `(K, out_l, in_l)`. Central differences
    use the 2K probes `W +- eps V` in one batched pass; forward differences the K probes `W + eps V` and the clean
    weights in one batched pass of K + 1."""
    check_choice("differences", differences, DIFFERENCES)
    n_probes = directions[0].shape[0]
    passes = 2 * n_probes if differences == "central" else n_probes + 1
    chunk = probe_chunk(probe_footprint(params, batch[0].shape[0], _outputs(params)), passes)
    if chunk < passes:
        slopes = chunked_slopes(lambda probes: _batch_loss(probes, loss_fn, batch, activation).mean(-1), params,
                                directions, eps, differences, chunk)  # fmt: skip
    elif differences == "central":
        probes = [torch.cat([w + eps * v, w - eps * v]) for w, v in zip(params, directions)]
        losses = _batch_loss(probes, loss_fn, batch, activation).mean(-1)
        slopes = (losses[:n_probes] - losses[n_probes:]) / (2 * eps)
    else:
        probes = [torch.cat([w + eps * v, w.unsqueeze(0)]) for w, v in zip(params, directions)]
        losses = _batch_loss(probes, loss_fn, batch, activation).mean(-1)
        slopes = (losses[:n_probes] - losses[n_probes]) / eps
    return [torch.einsum("k,koi->oi", slopes, v) / n_probes for v in directions]


def orthogonalize(seeds: Tensor) -> Tensor:
    """Probes `(K, ...)` made orthonormal over the probe batch (QR, signs fixed so the frame is Haar) and
    rescaled to norm sqrt(dim), so each keeps identity covariance; needs K <= dim."""
    n_probes, dim = seeds.shape[0], seeds[0].numel()
    if n_probes > dim:
        raise ValueError(f"orthogonal probes need n_probes <= {dim} (the layer's dimension), got {n_probes}")
    q, r = torch.linalg.qr(seeds.reshape(n_probes, dim).T)
    q = q * torch.sign(torch.diagonal(r)).where(torch.diagonal(r) != 0, torch.ones(()))
    return (q.T * math.sqrt(dim)).reshape(seeds.shape)


def draw_device(generator: torch.Generator | None) -> torch.device:
    """Where a generator draws: its own device (a CUDA generator draws on the GPU, the CPU's on the CPU, and the
    draws are then moved to the weights)."""
    return torch.device("cpu") if generator is None else generator.device


def _gaussian(shape, like: Tensor, generator, orthogonal: bool) -> Tensor:
    seeds = torch.randn(shape, generator=generator, dtype=like.dtype, device=draw_device(generator)).to(like.device)
    return orthogonalize(seeds) if orthogonal else seeds


def _scheduled_gradient(params, loss_fn, batch, directions, eps, schedule, differences, activation) -> list[Tensor]:
    """Joint: every probe moves all layers. Layer-wise: layer l's K probes move layer l alone (L*K probes, still
    one batched pass); the joint average over L*K probes is rescaled by L to the per-layer average. Where that pass
    passes the probe bound, each layer's probes run apart (the other layers unbatched), in chunks that fit it."""
    check_choice("schedule", schedule, SCHEDULES)
    if schedule == "joint":
        return perturbation_gradient(params, loss_fn, batch, directions, eps, differences, activation)
    n_layers = len(params)
    rows, outputs = batch[0].shape[0], _outputs(params)
    passes = n_layers * (2 * directions[0].shape[0] if differences == "central" else directions[0].shape[0] + 1)
    if probe_chunk(probe_footprint(params, rows, outputs), passes) < passes:
        grads = []
        for index, v in enumerate(directions):
            chunk = probe_chunk(probe_footprint([params[index]], rows, outputs[index:]), 2 * v.shape[0])
            slopes = chunked_slopes(lambda probes: _batch_loss(probes, loss_fn, batch, activation).mean(-1), params,
                                    [v], eps, differences, chunk, moved=index)  # fmt: skip
            grads.append(torch.einsum("k,koi->oi", slopes, v) / v.shape[0])
        return grads
    blocks = [
        torch.cat([v if j == index else torch.zeros_like(v) for j in range(n_layers)])
        for index, v in enumerate(directions)
    ]
    grads = perturbation_gradient(params, loss_fn, batch, blocks, eps, differences, activation)
    return [g * n_layers for g in grads]


def weight_perturbation(
    params, loss_fn, batch, n_probes, eps, generator, *, schedule="joint", orthogonal=False, activation="relu"
) -> list[Tensor]:
    """Gaussian weight perturbation, central differences: unbiased up to O(eps^2), E[V V^T] = I."""
    _check_common(params, n_probes, eps)
    directions = [_gaussian((n_probes, *w.shape), w, generator, orthogonal) for w in params]
    return _scheduled_gradient(params, loss_fn, batch, directions, eps, schedule, "central", activation)


def wp_global(params, loss_fn, batch, n_probes, eps, generator, **options) -> list[Tensor]:
    """Weight perturbation with one Gaussian direction over all parameters per probe (2K forward passes)."""
    return weight_perturbation(params, loss_fn, batch, n_probes, eps, generator, schedule="joint", **options)


def wp_layerwise(params, loss_fn, batch, n_probes, eps, generator, **options) -> list[Tensor]:
    """Weight perturbation with K probes per layer, each moving that layer alone (2KL forward passes)."""
    return weight_perturbation(params, loss_fn, batch, n_probes, eps, generator, schedule="layerwise", **options)


def spsa(params, loss_fn, batch, n_probes, eps, generator, *, activation="relu") -> list[Tensor]:
    """Two-sided SPSA with Rademacher directions over all parameters (Spall 1992); Delta^{-1} = Delta."""
    _check_common(params, n_probes, eps)
    directions = [
        torch.randint(0, 2, (n_probes, *w.shape), generator=generator, device=draw_device(generator)).to(
            w.device, w.dtype
        )
        * 2
        - 1
        for w in params
    ]
    return perturbation_gradient(params, loss_fn, batch, directions, eps, "central", activation)


def node_perturbation(params, loss_fn, batch, n_probes, eps, generator, *, activation="relu") -> list[Tensor]:
    """Node perturbation: all pre-activations get `+- eps xi` (xi Gaussian per probe, example and unit) in one
    batched pass; `g_l = (1/KB) sum_{k,n} [(l_n^+ - l_n^-) / 2 eps] xi_{l,k,n} a_{l-1,n}^T` with the clean inputs."""
    _check_common(params, n_probes, eps)
    x, _ = batch
    inputs = mlp_forward(params, x, activation)[1]
    noise = [
        torch.randn(
            (n_probes, x.shape[0], w.shape[0]), generator=generator, dtype=w.dtype, device=draw_device(generator)
        ).to(w.device)
        for w in params
    ]
    pairs = max(1, probe_chunk(3 * x.shape[0] * sum(_outputs(params)) * x.element_size(), 2 * n_probes) // 2)
    slopes = []
    for start in range(0, n_probes, pairs):
        both = [eps * torch.cat([xi[start : start + pairs], -xi[start : start + pairs]]) for xi in noise]
        losses = _batch_loss(params, loss_fn, batch, activation, node_noise=both)
        half = losses.shape[0] // 2
        slopes.append((losses[:half] - losses[half:]) / (2 * eps))
    slopes = torch.cat(slopes)
    scale = n_probes * x.shape[0]
    return [torch.einsum("kb,kbo,bi->oi", slopes, xi, a) / scale for xi, a in zip(noise, inputs)]


def eye(n: int, like: Tensor) -> Tensor:
    return torch.eye(n, dtype=like.dtype, device=like.device)


def second_moment(activations: Tensor) -> Tensor:
    """`C = A^T A / B` of a layer's input activations `(B, n_in)`."""
    return activations.T @ activations / activations.shape[0]


MOMENTS = ("batch", "centred", "mean")


def layer_moment(activations: Tensor, moment: str = "batch") -> Tensor:
    """The matrix SZO shapes its probes by: `batch` the second moment `A^T A / B` (SZO proper); `centred` the
    covariance (the mean activation removed: the spectrum without the DC direction); `mean` the rank-1 outer product
    of the mean activation (the DC direction alone, no spectrum). The last two are nulls, not the method."""
    check_choice("moment", moment, MOMENTS)
    if moment == "batch":
        return second_moment(activations)
    mu = activations.mean(0)
    if moment == "mean":
        return torch.outer(mu, mu)
    centred = activations - mu
    return centred.T @ centred / activations.shape[0]


NORMALISATIONS = ("mean", "top")


def moment_factor(activations: Tensor, moment: str = "batch") -> Tensor:
    """A factor `F` with `F^T F = layer_moment(activations, moment)`: `A / sqrt(B)`, the centred `A` over sqrt(B), or
    the mean activation as one row. Its rows (at most B) bound the moment's rank."""
    check_choice("moment", moment, MOMENTS)
    if moment == "mean":
        return activations.mean(0, keepdim=True)
    centred = activations - activations.mean(0) if moment == "centred" else activations
    return centred / math.sqrt(activations.shape[0])


class Spectrum:
    """The eigendecomposition `C = V diag(lam) V^T` of a layer's moment, `V (n_in, r)` orthonormal and C zero on the
    complement of its span: taken ONCE per layer and step, and reused by SZO's directions `Z (C/s)^(kappa/2)`, the
    normalisation `s` and the bias correction. From a factor `F (m, n_in)` with `m < n_in` (a batch smaller than the
    layer's input) the thin SVD of F gives it at `O(m^2 n_in)` instead of an `n_in x n_in` eigh, and applying
    `(C/s)^p` to `X (..., n_in)` costs `O(r)` per entry of X instead of `O(n_in)`."""

    def __init__(self, values: Tensor, vectors: Tensor, n_in: int):
        self.values, self.vectors, self.n_in = values.clamp(min=0), vectors, n_in

    @classmethod
    def of_factor(cls, factor: Tensor) -> Spectrum:
        if factor.shape[0] < factor.shape[1]:
            _, singular, vh = torch.linalg.svd(factor, full_matrices=False)
            return cls(singular.square(), vh.T, factor.shape[1])
        return cls.of_moment(factor.T @ factor)

    @classmethod
    def of_moment(cls, moment: Tensor) -> Spectrum:
        values, vectors = torch.linalg.eigh(moment)
        return cls(values, vectors, moment.shape[0])

    def scale(self, normalise: str) -> Tensor:
        """The mean eigenvalue (over all n_in) or the largest."""
        check_choice("normalise", normalise, NORMALISATIONS)
        if normalise == "mean":
            return self.values.sum() / self.n_in
        return self.values.max()

    def powers(self, power: float, normalise: str) -> tuple[Tensor, float]:
        """`(lam / s)^power` on V's span and its value on the complement (`0^power`: 1 at power 0, else 0)."""
        scale = self.scale(normalise)
        values = self.values / scale if scale > 0 else self.values
        return values.pow(power), 1.0 if power == 0 else 0.0

    def apply(self, x: Tensor, power: float, normalise: str = "mean") -> Tensor:
        """`x (C/s)^power` for `x (..., n_in)`."""
        if power == 0:
            return x
        on_span, _ = self.powers(power, normalise)
        return ((x @ self.vectors) * on_span) @ self.vectors.T

    def dense(self, power: float, normalise: str = "mean") -> Tensor:
        """`(C/s)^power` as an `n_in x n_in` matrix."""
        return self.apply(eye(self.n_in, self.vectors), power, normalise)

    def correct(self, g: Tensor, kappa: float, normalise: str = "mean", ridge: float = 1e-3) -> Tensor:
        """`g (P + lambda I)^{-1}`, `P = (C/s)^kappa`, `lambda = ridge tr(P) / n_in` (1 where P = 0)."""
        on_span, off_span = self.powers(kappa, normalise)
        trace = on_span.sum() + off_span * (self.n_in - on_span.shape[0])
        lam = ridge * trace / self.n_in
        lam = lam if lam > 0 else torch.ones((), dtype=g.dtype, device=g.device)
        outside = 1.0 / (off_span + lam)
        return g * outside + ((g @ self.vectors) * (1.0 / (on_span + lam) - outside)) @ self.vectors.T


def layer_spectrum(activations: Tensor, moment: str = "batch", index: int = 0) -> Spectrum:
    """The spectrum of `layer_moment(activations, moment)`; ValueError on a non-finite moment (`params[index]`)."""
    factor = moment_factor(activations, moment)
    if not bool(torch.isfinite(factor).all()):
        raise ValueError(f"non-finite activation second moment at the input of params[{index}] (overflow)")
    return Spectrum.of_factor(factor)


def spectral_power(moment: Tensor, power: float, normalise: str = "mean") -> Tensor:
    """`(C / s)^power` with `s` the mean eigenvalue of C (`normalise="mean"`) or its largest (`"top"`: ours, the
    stabilised variant, whose expected update `G (C/s)^kappa` never exceeds the gradient along any direction),
    eigenvalues clipped at 0; an all-zero C (dead layer) gives `0^power` (I at 0)."""
    return Spectrum.of_moment(moment).dense(power, normalise)


def szo_directions(weights, inputs, n_probes, generator, *, kappa, orthogonal, normalise, moment):
    """SZO's probes `Z_l (C_l / s)^(kappa/2)` for weights `(out, ...)` whose input patches `inputs[l] (rows, n_in)`
    have `n_in` = the weight's entries per output, reshaped to the weight; and each layer's spectrum."""
    check_choice("normalise", normalise, NORMALISATIONS)
    spectra = [layer_spectrum(a, moment, index) for index, a in enumerate(inputs)]
    seeds = [_gaussian((n_probes, *w.shape), w, generator, orthogonal) for w in weights]
    directions = [
        s.apply(z.reshape(n_probes, w.shape[0], -1), kappa / 2, normalise).reshape(z.shape)
        for s, z, w in zip(spectra, seeds, weights)
    ]
    return directions, spectra


def szo_correct(grads, inputs, spectra, *, kappa, normalise, ridge, moment, correction_moment):
    """SZO's bias correction of each layer's estimate (reshaped to `(out, n_in)` and back), by the probes' spectra
    unless `correction_moment` names another moment."""
    if correction_moment is not None and correction_moment != moment:
        spectra = [layer_spectrum(a, correction_moment, index) for index, a in enumerate(inputs)]
    return [
        s.correct(g.reshape(g.shape[0], -1), kappa, normalise, ridge).reshape(g.shape) for g, s in zip(grads, spectra)
    ]


def szo(
    params: Sequence[Tensor],
    loss_fn: LossFn,
    batch: tuple[Tensor, Tensor],
    n_probes: int,
    eps: float,
    generator: torch.Generator | None,
    *,
    kappa: float = 1.0,
    orthogonal: bool = False,
    bias_correction: bool = False,
    ridge: float = 1e-3,
    normalise: str = "mean",
    moment: str = "batch",
    correction_moment: str | None = None,
    schedule: str = "joint",
    activation: str = "relu",
) -> list[Tensor]:
    """SZO-kappa (our reconstruction): `V_l = Z_l M_l`, `M_l = (C_l / mean eig)^{kappa/2}` from the clean pass, so
    `E[g_raw] = G C^kappa` (right-preconditioned, a descent direction). With `bias_correction` the estimate is
    multiplied by `(C^kappa + lambda I)^{-1}`, `lambda = ridge * tr(C^kappa) / n_in`. kappa = 0 is weight
    perturbation with the same draws. `normalise="top"` (our stabilised variant, chosen after the mean-normalised
    one diverged in training) divides C by its largest eigenvalue instead of its mean: the same directions up to
    one scale per layer, so the same cosine, but an expected update no larger than the gradient. `moment` picks the
    matrix the probes are shaped by (`layer_moment`: `centred` and `mean` are nulls); `correction_moment` (default:
    the same) the one the bias correction inverts, so a mismatched correction is a null too. The ORTHOGONALISATION
    acts on the Gaussian seeds Z, not on the shaped probes Z M. One decomposition per layer (`Spectrum`) serves the
    directions, the normalisation and the correction."""
    _check_common(params, n_probes, eps)
    check_number("kappa", kappa, low=0.0, high=2.0)
    check_number("ridge", ridge, low=0.0, low_open=True)
    inputs = mlp_forward(params, batch[0], activation)[1]
    directions, spectra = szo_directions(
        params, inputs, n_probes, generator, kappa=kappa, orthogonal=orthogonal, normalise=normalise, moment=moment
    )
    grads = _scheduled_gradient(params, loss_fn, batch, directions, eps, schedule, "central", activation)
    if not bias_correction:
        return grads
    return szo_correct(grads, inputs, spectra, kappa=kappa, normalise=normalise, ridge=ridge, moment=moment,
                       correction_moment=correction_moment)  # fmt: skip


def bias_corrected(g: Tensor, moment: Tensor, kappa: float, normalise: str = "mean", ridge: float = 1e-3) -> Tensor:
    """`g (P + lambda I)^{-1}` with `P = (C / s)^kappa` and `lambda = ridge * tr(P) / n_in` (1 where P = 0)."""
    return Spectrum.of_moment(moment).correct(g, kappa, normalise, ridge)


def szo_expectation(params, loss_fn, batch, *, kappa: float = 1.0, bias_correction: bool = False, ridge: float = 1e-3,
                    normalise: str = "mean", moment: str = "batch", correction_moment: str | None = None,
                    activation: str = "relu", **_) -> list[Tensor]:  # fmt: skip
    """The exact expectation of `szo` over its Gaussian seeds, up to the O(eps^2) of central differences:
    `E[g_raw] = G (C/s)^kappa` (E[M Z^T Z M] = M^2 per layer, the joint schedule's cross-layer terms vanish), and
    the corrected `E[g_raw] (P + lambda I)^{-1}`, G the backprop gradient. Orthogonal seeds have the same mean."""
    inputs = mlp_forward(params, batch[0], activation)[1]
    return spectral_expectation(true_gradient(params, loss_fn, batch, activation), inputs, kappa=kappa,
                                bias_correction=bias_correction, ridge=ridge, normalise=normalise, moment=moment,
                                correction_moment=correction_moment)  # fmt: skip


def spectral_expectation(grads, inputs, *, kappa=1.0, bias_correction=False, ridge=1e-3, normalise="mean",
                         moment="batch", correction_moment=None) -> list[Tensor]:  # fmt: skip
    """`G_l (C_l/s)^kappa` (and its correction) for gradients `(out, ...)` and input patch matrices `(rows, n_in)`."""
    spectra = [layer_spectrum(a, moment, index) for index, a in enumerate(inputs)]
    means = [s.apply(g.reshape(g.shape[0], -1), kappa, normalise).reshape(g.shape) for g, s in zip(grads, spectra)]
    if not bias_correction:
        return means
    return szo_correct(means, inputs, spectra, kappa=kappa, normalise=normalise, ridge=ridge, moment=moment,
                       correction_moment=correction_moment)  # fmt: skip


def activation_subspace(activations: Tensor, rank: int) -> Tensor:
    """Orthonormal `(n_in, r')` basis of the top right singular vectors of `activations (B, n_in)`,
    `r' = min(rank, B, n_in)` (exact SVD where AGZO uses a few power iterations)."""
    return torch.linalg.svd(activations, full_matrices=False)[2][:rank].T


def agzo(
    params,
    loss_fn,
    batch,
    n_probes,
    eps,
    generator,
    *,
    rank=8,
    orthogonal=False,
    differences="forward",
    activation="relu",
) -> list[Tensor]:
    """AGZO (Lin et al., arXiv 2601.17261): `V_l = R_l U_l^T`, `U_l` the top-`rank` activation subspace of layer l's
    input, `R_l` Gaussian; `E[g] = G U U^T`, unbiased when the activations span at most `rank` directions."""
    _check_common(params, n_probes, eps)
    check_int("rank", rank, low=1)
    for index, w in enumerate(params):
        if rank > w.shape[1]:
            raise ValueError(f"rank must be <= {w.shape[1]} (inputs of params[{index}]), got {rank}")
    inputs = mlp_forward(params, batch[0], activation)[1]
    bases = [activation_subspace(a, rank) for a in inputs]
    seeds = [_gaussian((n_probes, w.shape[0], u.shape[1]), w, generator, orthogonal) for w, u in zip(params, bases)]
    directions = [r @ u.T for r, u in zip(seeds, bases)]
    return perturbation_gradient(params, loss_fn, batch, directions, eps, differences, activation)


ESTIMATORS: dict[str, Callable[..., list[Tensor]]] = {
    "wp_global": wp_global,
    "wp_layerwise": wp_layerwise,
    "spsa": spsa,
    "node_perturbation": node_perturbation,
    "agzo": agzo,
    "szo": szo,
}
