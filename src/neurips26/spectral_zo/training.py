"""Training with a named gradient estimator at a matched forward-pass budget, in the common training loop.

Plain SGD `W -= lr g` on minibatches drawn from the run's generator, `g` from the estimator (`networks.estimate`;
MeZO steps in place with `mezo.mezo_step` and never holds `g`; `backprop` is the autograd reference). The budget
is counted in passes through the network per step (`FORWARD_PASSES`): a finite-difference probe pair is 2, a
forward-mode (jvp) pass 1, a backward pass 1; the clean pass an activation-shaped estimator reads its geometry
from counts too. The monitoring loss of each step (the clean minibatch loss before the update) and the
evaluations are not counted. A run takes `budget // passes_per_step` steps, or stops at `seconds` of wall time.

A non-finite loss (in any probe, or the clean loss) ends the run at that step without an update, and so does a
finite blow-up: a clean minibatch loss above `BLOWUP` times the step-0 train loss (at least 1), which a float32 run
can reach without overflowing (MeZO at lr 1.0 on CIFAR-10: 5e32). The result says at which step
(`TrainResult.diverged`), and the last checkpoint the loop wrote is kept (the common loop, `neurips26.common.loop`,
checkpoints the weights, the generator and the curve; it resumes bit-identically).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import torch

from neurips26.common.loop import LoopSettings, StopTraining, job_device, run_loop
from neurips26.common.validation import check_choice, check_int, check_number
from neurips26.spectral_zo.data import Split
from neurips26.spectral_zo.estimators import cross_entropy
from neurips26.spectral_zo.mezo import mezo_step
from neurips26.spectral_zo.networks import MLP, ConvNet, Network, backprop, check_supported, estimate

Tensor = torch.Tensor
log = logging.getLogger(__name__)
BLOWUP = 1e4  # a clean minibatch loss above BLOWUP x max(step-0 train loss, 1) is a divergence (finite blow-up)

# passes through the network per step, as a function of (n_probes K, number of layers L)
FORWARD_PASSES: dict[str, Callable[[int, int], int]] = {
    "wp_global": lambda k, n_layers: 2 * k,
    "wp_layerwise": lambda k, n_layers: 2 * k * n_layers,
    "spsa": lambda k, n_layers: 2 * k,
    "mezo": lambda k, n_layers: 2 * k,
    "node_perturbation": lambda k, n_layers: 2 * k + 1,  # + the clean pass for the layer inputs
    "agzo": lambda k, n_layers: k + 2,  # forward differences (K + 1) + the clean pass for the subspace
    "szo": lambda k, n_layers: 2 * k + 1,  # + the clean pass for the second moments
    "forward_gradient": lambda k, n_layers: k,  # K forward-mode passes
    "backprop": lambda k, n_layers: 2,  # one forward, one backward
}
METHODS = tuple(FORWARD_PASSES)


@dataclass
class TrainConfig:
    """One run: the estimator and its settings, SGD, the forward-pass budget, the evaluation schedule."""

    estimator: str
    n_probes: int = 8
    eps: float = 1e-3
    lr: float = 0.05
    batch_size: int = 64
    budget: int = 20_000  # passes through the network (FORWARD_PASSES) for the whole run
    evals: int = 10  # evaluations after step 0, evenly spaced
    seconds: float | None = None  # wall-time limit (None: the budget alone)
    seed: int = 0
    options: dict = field(default_factory=dict)  # estimator options (kappa, rank, orthogonal, ...)

    def __post_init__(self):
        check_choice("estimator", self.estimator, METHODS)
        check_int("n_probes", self.n_probes, low=1)
        check_number("eps", self.eps, low=0.0, low_open=True)
        check_number("lr", self.lr, low=0.0, low_open=True)
        check_int("batch_size", self.batch_size, low=1)
        check_int("evals", self.evals, low=1)
        if "kappa" in self.options:
            check_number("kappa", self.options["kappa"], low=0.0, high=2.0)
        if "rank" in self.options:
            check_int("rank", self.options["rank"], low=1)
        if self.seconds is not None:
            check_number("seconds", self.seconds, low=0.0, low_open=True)

    def passes_per_step(self, n_layers: int) -> int:
        return FORWARD_PASSES[self.estimator](self.n_probes, n_layers)

    def steps(self, n_layers: int) -> int:
        steps = self.budget // self.passes_per_step(n_layers)
        if steps < 1:
            raise ValueError(
                f"budget={self.budget} forward passes is below one step of {self.estimator} "
                f"({self.passes_per_step(n_layers)} passes with n_probes={self.n_probes})"
            )
        return steps


@dataclass
class TrainResult:
    """The curve (one row per evaluation), the steps taken, and where the run diverged (None if it did not)."""

    rows: list[dict]
    steps: int
    passes_per_step: int
    seconds: float
    diverged: str | None = None
    diverged_step: int | None = None
    params: list[Tensor] = field(default_factory=list)


def tensors(split: Split, network: Network, dtype=torch.float32) -> tuple[tuple[Tensor, Tensor], tuple[Tensor, Tensor]]:
    """Train and test `(x, y)` tensors; an MLP gets a constant-1 input feature (its bias)."""

    def convert(x, y):
        x = torch.as_tensor(x, dtype=dtype)
        if isinstance(network, MLP):
            x = torch.cat([x.flatten(1), torch.ones(len(x), 1, dtype=dtype)], 1)
        return x, torch.as_tensor(y)

    return convert(split.x_train, split.y_train), convert(split.x_test, split.y_test)


def digits_network(kind: str, hidden: int = 64) -> Network:
    """The digits01 networks: 'mlp' 65-hidden-10 (64 pixels + bias), 'conv' 1x8x8 -> 8 -> 16 (stride 2) -> 10."""
    networks = {"mlp": lambda: MLP((65, hidden, 10)), "conv": lambda: ConvNet()}
    return networks[check_choice("network", kind, networks)]()


def evaluate(network: Network, params, data: tuple[Tensor, Tensor]) -> tuple[float, float]:
    """Mean cross-entropy and accuracy on `data`."""
    x, y = data
    with torch.no_grad():
        logits = network.forward(params, x)
        return float(cross_entropy(logits, y).mean()), float((logits.argmax(-1) == y).double().mean())


def probe_generator(generator: torch.Generator, device: torch.device) -> torch.Generator:
    """The generator a run draws its probe directions from: the run's own CPU generator on the CPU (and on the test
    suite's fake device), on a GPU a CUDA generator seeded once from it, so that the K x P draws of a step are made
    on the GPU (drawn on the CPU and copied they dominate a GPU step: 0.6 s for K = 64 on the 1.9M-weight MNIST MLP,
    measured on 2 cores). A GPU run is then reproducible on a GPU, not equal to the CPU run of the same seed."""
    if device.type != "cuda":
        return generator
    return torch.Generator(device).manual_seed(int(torch.randint(0, 2**62, (1,), generator=generator)))


def _update(config: TrainConfig, network: Network, params, batch, generator, draws=None) -> None:
    """One SGD step in place; ValueError on a non-finite probe loss (the weights are then unchanged). MeZO's step seed
    comes from `generator`, the other estimators' directions from `draws` (default: `generator`)."""
    if config.estimator == "mezo":
        seed = int(torch.randint(0, 2**62, (1,), generator=generator))
        mezo_step(params, cross_entropy, batch, config.n_probes, config.eps, seed, config.lr, forward=network.forward)
        return
    if config.estimator == "backprop":
        grads = backprop(network, params, cross_entropy, batch)
    else:
        grads = estimate(
            config.estimator, network, params, cross_entropy, batch, config.n_probes, config.eps,
            generator if draws is None else draws, **config.options,
        )  # fmt: skip
    with torch.no_grad():
        for w, g in zip(params, grads):
            w.sub_(g, alpha=config.lr)


def train(
    config: TrainConfig,
    network: Network,
    train_data: tuple[Tensor, Tensor],
    test_data: tuple[Tensor, Tensor],
    params: list[Tensor] | None = None,
    settings: LoopSettings | None = None,
    device: torch.device | str | None = None,
) -> TrainResult:
    """Train `network` (weights from `network.init` with the run's seed unless `params` are given) with the
    configured estimator; rows `{step, forward_passes, seconds, train_loss, test_loss, test_accuracy}` at step 0
    and `config.evals` evenly spaced steps (the last one included), losses over the whole train and test sets.

    The weights and the data sit on `device` (default: `loop.job_device()`); the run's generator stays on the CPU and
    the minibatch indices (and MeZO's step seeds) are drawn there; the probe directions too, except on a GPU, where
    they are drawn by a CUDA generator seeded from it (`probe_generator`). The returned `params` are on the CPU."""
    device = job_device() if device is None else torch.device(device)
    generator = torch.Generator().manual_seed(config.seed)
    if params is None:
        params = network.init(generator)
    draws = probe_generator(generator, device)
    params = [w.detach().to(device) for w in params]
    train_data = tuple(t.to(device) for t in train_data)
    test_data = tuple(t.to(device) for t in test_data)
    if config.estimator != "backprop":
        check_supported(config.estimator, params)
    n_layers = len(params)
    passes, steps = config.passes_per_step(n_layers), config.steps(n_layers)
    eval_steps = {round(steps * (i + 1) / config.evals) for i in range(config.evals)}
    x, y = train_data
    rows: list[dict] = []
    began = time.perf_counter()

    def record(step: int) -> None:
        train_loss = evaluate(network, params, train_data)[0]
        test_loss, accuracy = evaluate(network, params, test_data)
        rows.append(
            {
                "step": step,
                "forward_passes": step * passes,
                "seconds": time.perf_counter() - began,
                "train_loss": train_loss,
                "test_loss": test_loss,
                "test_accuracy": accuracy,
            }
        )

    def step_fn(step: int):
        if step == 0 and not rows:
            record(0)
        if config.seconds is not None and time.perf_counter() - began > config.seconds:
            record(step)
            raise StopTraining
        index = torch.randperm(len(x), generator=generator)[: config.batch_size].to(device)
        batch = (x[index], y[index])
        with torch.no_grad():
            loss = float(cross_entropy(network.forward(params, batch[0]), batch[1]).mean())
        if loss != loss or abs(loss) == float("inf"):
            return loss
        bound = BLOWUP * max(rows[0]["train_loss"], 1.0)
        if loss > bound:
            log.warning("%s: minibatch loss %.4g at step %d exceeds %.4g (%g x the step-0 loss): diverged",
                        config.estimator, loss, step, bound, BLOWUP)  # fmt: skip
            return float("inf")
        try:
            _update(config, network, params, batch, generator, draws)
        except ValueError as error:
            if "non-finite" not in str(error):
                raise
            return float("nan")
        if step + 1 in eval_steps:
            record(step + 1)
        return loss

    state = {"params": {str(i): w for i, w in enumerate(params)}, "generator": generator, "rows": rows}
    if draws is not generator:
        state["draws"] = draws
    groups = {f"params.{i}": [w] for i, w in enumerate(params)}
    loop_settings = replace(settings or LoopSettings(name=f"spectral_zo {config.estimator}"), record_divergence=True)
    result = run_loop(step_fn, steps, state, loop_settings, groups)
    diverged = result.diverged
    return TrainResult(
        rows=rows,
        steps=result.steps,
        passes_per_step=passes,
        seconds=time.perf_counter() - began,
        diverged=None if diverged is None else str(diverged),
        diverged_step=None if diverged is None else diverged.step,
        params=[w.cpu() for w in params],
    )


def checkpoint_settings(path: str | Path, fingerprint: str, every_steps: int) -> LoopSettings:
    """Loop settings that checkpoint to `path` every `every_steps` steps."""
    return LoopSettings(checkpoint=Path(path), fingerprint=fingerprint, every_steps=every_steps)
