"""Paper 13's experiments (config -> runs): the named methods of the config, the data of each scale, and the five
measurements of the pipeline, each a function of arrays and plain settings that returns a long table.

* alignment: per-layer cosine of each estimator with backpropagation, against the probe count K and the training
  step of a backprop-trained network (step 0 = initialisation), averaged over repeats (a fresh minibatch each);
* bias-variance: many draws on one fixed batch, the angle of their mean with the gradient and the trace of their
  covariance relative to ||g||^2, raw SZO-kappa beside its bias-corrected estimate from the SAME draws;
* dimension: the whole-network cosine over widths (log cosine against log parameter count);
* spectral: the cosine of each estimator on the synthetic teacher-student task of input spectrum i^(-a);
* training: each method's learning rate picked from one shared grid on a validation split, then seeded runs at a
  matched forward-pass budget, scored on the test split;
* cost: MeZO's in-place step beside batched SPSA (extra tensor memory and wall time).

The SZO-kappa family is OUR RECONSTRUCTION (the paper was not found); AGZO is Lin et al., arXiv 2601.17261; MeZO
Malladi et al. 2023; SPSA Spall 1992; forward gradients Baydin et al. 2022; the activation-subspace argument is
Singhal et al., "How to Guess a Gradient", arXiv 2312.04709.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np
import torch

from neurips26.spectral_zo import settings as config_checks
from neurips26.spectral_zo.alignment import OVERALL, bias_variance, layer_alignment
from neurips26.spectral_zo.data import load_dataset, teacher_student, three_way  # noqa: F401 (re-exported)
from neurips26.spectral_zo.estimators import LOSSES, second_moment, szo_expectation
from neurips26.spectral_zo.mezo import measure_cost
from neurips26.spectral_zo.networks import MLP, ConvNet, backprop, estimate
from neurips26.spectral_zo.training import TrainConfig, train

Tensor = torch.Tensor
SOURCES = config_checks.SOURCES


# ----------------------------------------------------------------------------------------------------------- config
check_config = config_checks.check_config  # parse-time checks: the torch-free `settings` module


def network_for(spec: Mapping, n_inputs: int, n_classes: int = 10):
    """The network a dataset block names: an MLP `n_inputs + 1 (bias) -> hidden... -> classes` or the ConvNet."""
    if spec.get("network", "mlp") == "conv":
        side = int(round(math.sqrt(n_inputs / spec.get("channels", 1))))
        return ConvNet(in_channels=spec.get("channels", 1), side=side, classes=n_classes)
    return MLP((n_inputs + 1, *spec["hidden"], n_classes))


def options(spec: Mapping) -> dict:
    """The estimator options of a method spec (everything but the estimator's name)."""
    return {key: value for key, value in spec.items() if key != "estimator"}


def mlp_tensors(x: np.ndarray, y: np.ndarray) -> tuple[Tensor, Tensor]:
    """Inputs with the constant-1 bias feature appended, and labels (or regression targets)."""
    x = torch.as_tensor(x, dtype=torch.float32).flatten(1)
    return torch.cat([x, torch.ones(len(x), 1)], 1), torch.as_tensor(y)


# ------------------------------------------------------------------------------------------------------- alignment
def _named(grads) -> dict[str, Tensor]:
    return {f"layer{i}": g for i, g in enumerate(grads)}


def method_estimate(spec: Mapping, network, params, loss_fn, batch, probes: int, eps: float, generator):
    """A named method's estimate (backprop: the autograd gradient)."""
    if spec["estimator"] == "backprop":
        return backprop(network, params, loss_fn, batch)
    return estimate(spec["estimator"], network, params, loss_fn, batch, probes, eps, generator, **options(spec))


def backprop_snapshots(network, params, x: Tensor, y: Tensor, steps: list[int], lr: float, batch: int,
                       generator: torch.Generator, loss_fn) -> dict[int, list[Tensor]]:  # fmt: skip
    """The weights after each of `steps` SGD steps of backpropagation (minibatches from `generator`)."""
    params = [w.clone() for w in params]
    out = {0: [w.clone() for w in params]} if 0 in steps else {}
    for step in range(1, max(steps) + 1):
        index = torch.randperm(len(x), generator=generator)[:batch]
        for w, g in zip(params, backprop(network, params, loss_fn, (x[index], y[index]))):
            w.sub_(g, alpha=lr)
        if step in steps:
            out[step] = [w.clone() for w in params]
    return out


def cosines(methods: Mapping[str, Mapping], network, params, loss_fn, batch, probes: list[int], repeats_seed: int,
            eps: float) -> list[dict]:  # fmt: skip
    """Per method, K and layer: the cosine with the batch's backprop gradient. Methods share the generator seed
    (so SZO-kappa and its kappa = 0 null use the same Gaussian draws)."""
    true = _named(backprop(network, params, loss_fn, batch))
    rows = []
    for name, spec in methods.items():
        for k in probes:
            generator = torch.Generator().manual_seed(repeats_seed * 1009 + k)
            est = _named(method_estimate(spec, network, params, loss_fn, batch, k, eps, generator))
            for layer, value in layer_alignment(est, true).items():
                rows.append({"method": name, "probes": k, "layer": layer, "cosine": float(value)})
    return rows


def alignment(methods: Mapping[str, Mapping], data: Mapping[str, np.ndarray], block: Mapping,
              seed: int) -> list[dict]:  # fmt: skip
    """`block` = {hidden, probes, repeats, batch, steps, lr, eps}: rows (seed, step, method, probes, layer, repeat,
    cosine) on the train split, a fresh minibatch per repeat, cross-entropy."""
    x, y = mlp_tensors(data["x_train"], data["y_train"])
    network = MLP((x.shape[1], *block["hidden"], 10))
    generator = torch.Generator().manual_seed(seed)
    params = network.init(generator)
    loss_fn = LOSSES["cross_entropy"]
    snapshots = backprop_snapshots(network, params, x, y, block["steps"], block["lr"], block["batch"], generator,
                                   loss_fn)  # fmt: skip
    rows = []
    for step, weights in snapshots.items():
        for repeat in range(block["repeats"]):
            index = torch.randperm(len(x), generator=generator)[: block["batch"]]
            for row in cosines(methods, network, weights, loss_fn, (x[index], y[index]), block["probes"],
                               seed * 100_003 + step * 1000 + repeat, block["eps"]):  # fmt: skip
                rows.append({"seed": seed, "step": step, "repeat": repeat, **row})
    return rows


def dimension(methods: Mapping[str, Mapping], data: Mapping[str, np.ndarray], block: Mapping,
              seed: int) -> list[dict]:  # fmt: skip
    """`block` = {widths, depth, probes, repeats, batch, eps}: the whole-network cosine at initialisation of MLPs
    of `depth` hidden layers of each width; rows (seed, width, params, method, repeat, cosine)."""
    x, y = mlp_tensors(data["x_train"], data["y_train"])
    loss_fn = LOSSES["cross_entropy"]
    rows = []
    for width in block["widths"]:
        network = MLP((x.shape[1], *[width] * block["depth"], 10))
        generator = torch.Generator().manual_seed(seed)
        params = network.init(generator)
        n_params = sum(w.numel() for w in params)
        for repeat in range(block["repeats"]):
            index = torch.randperm(len(x), generator=generator)[: block["batch"]]
            batch = (x[index], y[index])
            for row in cosines(methods, network, params, loss_fn, batch, [block["probes"]],
                               seed * 100_003 + width * 1000 + repeat, block["eps"]):  # fmt: skip
                if row["layer"] == OVERALL:
                    rows.append({"seed": seed, "width": width, "params": n_params, "repeat": repeat,
                                 "method": row["method"], "cosine": row["cosine"]})  # fmt: skip
    return rows


def spectral(methods: Mapping[str, Mapping], block: Mapping, alpha: float, seed: int) -> list[dict]:
    """`block` = {dim, hidden, n_train, teacher, probes, repeats, batch, eps}: per-layer cosines at initialisation on
    the teacher-student regression of input spectrum i^(-alpha) (data seed = `seed`), squared error."""
    task = teacher_student(dim=block["dim"], alpha=alpha, n_train=block["n_train"], n_test=16,
                           teacher=block["teacher"], hidden=block["hidden"], seed=seed)  # fmt: skip
    x, y = mlp_tensors(task.data.x_train, task.data.y_train)
    y = y.float()
    network = MLP((x.shape[1], block["hidden"], y.shape[1]))
    generator = torch.Generator().manual_seed(seed)
    params = network.init(generator)
    loss_fn = LOSSES["squared_error"]
    rows = []
    for repeat in range(block["repeats"]):
        index = torch.randperm(len(x), generator=generator)[: block["batch"]]
        for row in cosines(methods, network, params, loss_fn, (x[index], y[index]), [block["probes"]],
                           seed * 100_003 + repeat, block["eps"]):  # fmt: skip
            rows.append({"seed": seed, "alpha": float(alpha), "repeat": repeat, **row})
    return rows


# -------------------------------------------------------------------------------------------------- bias-variance
def _draws(spec, network, params, loss_fn, batch, probes, eps, n_draws, seed) -> list[np.ndarray]:
    """Per layer, the (D, P) flattened draws of a method, draw d from generator seed (seed, d)."""
    draws = []
    for d in range(n_draws):
        generator = torch.Generator().manual_seed(seed * 1_000_003 + d)
        draws.append([g.flatten().numpy() for g in method_estimate(spec, network, params, loss_fn, batch, probes,
                                                                   eps, generator)])  # fmt: skip
    return [np.stack([d[i] for d in draws]) for i in range(len(draws[0]))]


def angle_degrees(mean: np.ndarray, true: np.ndarray) -> float:
    cos = float(mean @ true / max(np.linalg.norm(mean) * np.linalg.norm(true), 1e-300))
    return math.degrees(math.acos(max(-1.0, min(1.0, cos))))


def bias_variance_table(methods: Mapping[str, Mapping], data: Mapping[str, np.ndarray], block: Mapping,
                        seed: int) -> list[dict]:  # fmt: skip
    """`block` = {hidden, probes, draws, batch, eps}: per method and layer, from `draws` draws on ONE fixed batch of
    the initial network: the angle (degrees) between the draws' mean and the gradient, the trace of their
    covariance / ||g||^2, the relative bias, its chance floor, the mean cosine. Methods with `bias_correction` are
    drawn with the same seeds as their raw twin (the method without it), so the pair differs only by the
    correction."""
    x, y = mlp_tensors(data["x_train"], data["y_train"])
    network = MLP((x.shape[1], *block["hidden"], 10))
    generator = torch.Generator().manual_seed(seed)
    params = network.init(generator)
    index = torch.randperm(len(x), generator=generator)[: block["batch"]]
    batch, loss_fn = (x[index], y[index]), LOSSES["cross_entropy"]
    true = [g.flatten().numpy().astype(np.float64) for g in backprop(network, params, loss_fn, batch)]
    rows = []
    for name, spec in methods.items():
        draws = _draws(spec, network, params, loss_fn, batch, block["probes"], block["eps"], block["draws"], seed)
        expected = [None] * len(draws)
        if spec["estimator"] == "szo":
            expected = [e.flatten().double().numpy()
                        for e in szo_expectation(params, loss_fn, batch, **options(spec))]  # fmt: skip
        for layer, (d, g, e) in enumerate(zip(draws, true, expected)):
            stats = bias_variance(d, g)
            e_norm = math.nan if e is None else float(np.linalg.norm(e) / np.linalg.norm(g))
            rows.append({"seed": seed, "method": name, "layer": f"layer{layer}", "n_in": params[layer].shape[1],
                         "angle_mean": angle_degrees(d.mean(0), g), "variance": stats.variance, "bias": stats.bias,
                         "bias_floor": stats.bias_floor, "bias_sq_debiased": stats.bias_sq_debiased,
                         "mean_cosine": stats.mean_cosine, "n_draws": stats.n_draws,
                         "angle_expected": math.nan if e is None else angle_degrees(e, g),
                         "expected_norm": e_norm})  # fmt: skip
    return rows


def activation_spectrum(data: Mapping[str, np.ndarray], hidden: list[int], batch: int, seed: int) -> list[dict]:
    """Eigenvalues of each layer's input second moment on one batch of the initial network (their spread is what
    SZO-kappa shapes its probes by and what the bias correction inverts)."""
    from neurips26.spectral_zo.estimators import mlp_forward

    x, _ = mlp_tensors(data["x_train"], data["y_train"])
    network = MLP((x.shape[1], *hidden, 10))
    generator = torch.Generator().manual_seed(seed)
    params = network.init(generator)
    index = torch.randperm(len(x), generator=generator)[:batch]
    rows = []
    for layer, a in enumerate(mlp_forward(params, x[index])[1]):
        eig = torch.linalg.eigvalsh(second_moment(a)).clamp(min=0).flip(0).numpy()
        rows.append({"seed": seed, "layer": f"layer{layer}", "top_over_mean": float(eig[0] / eig.mean()),
                     "effective_rank": float(eig.sum() ** 2 / (eig**2).sum())})  # fmt: skip
    return rows


# -------------------------------------------------------------------------------------------------------- training
def train_config(spec: Mapping, block: Mapping, lr: float, seed: int) -> TrainConfig:
    return TrainConfig(estimator=spec["estimator"], n_probes=block["probes"], eps=block["eps"], lr=lr,
                       batch_size=block["batch"], budget=block["budget"], evals=block["evals"], seed=seed,
                       options=options(spec))  # fmt: skip


def _tensors(arrays: Mapping[str, np.ndarray], network, part: str) -> tuple[Tensor, Tensor]:
    x, y = arrays[f"x_{part}"], arrays[f"y_{part}"]
    if isinstance(network, MLP):
        return mlp_tensors(x, y)
    return torch.as_tensor(x, dtype=torch.float32), torch.as_tensor(y)


# a run whose validation accuracy is within this of the majority class's share has collapsed to a constant prediction
COLLAPSE_MARGIN = 0.01


def chance_accuracy(labels) -> float:
    """The accuracy of always predicting the most frequent label."""
    _, counts = np.unique(np.asarray(labels), return_counts=True)
    return float(counts.max() / counts.sum())


def tune(spec: Mapping, network, arrays: Mapping[str, np.ndarray], block: Mapping, log: Callable = print,
         device=None):  # fmt: skip
    """Each lr of the shared grid on the validation split (training seed `tune_seed`): rows (lr, val accuracy at
    the end, diverged step, collapsed, edge) and the chosen lr (highest validation accuracy). A diverged run scores
    nothing, and a run at chance (within COLLAPSE_MARGIN of the majority class: it collapsed to a constant
    prediction) is treated the same way, so neither is chosen while another lr learned. `edge` marks a chosen lr
    at either end of the grid (the best may lie beyond it)."""
    train_data, val = _tensors(arrays, network, "train"), _tensors(arrays, network, "val")
    chance = chance_accuracy(arrays["y_val"])
    rows = []
    for lr in block["lr_grid"]:
        result = train(train_config(spec, block, lr, block["tune_seed"]), network, train_data, val, device=device)
        accuracy = math.nan if result.diverged else result.rows[-1]["test_accuracy"]
        collapsed = bool(math.isfinite(accuracy) and accuracy <= chance + COLLAPSE_MARGIN)
        rows.append({"lr": lr, "val_accuracy": accuracy, "diverged_step": result.diverged_step,
                     "collapsed": collapsed})  # fmt: skip
        log(f"tune lr {lr}: validation accuracy {accuracy:.4f}" + (f" (diverged at step {result.diverged_step})"
                                                                   if result.diverged else "")
            + (" (collapsed: chance level)" if collapsed else ""))  # fmt: skip
    learned = [r for r in rows if math.isfinite(r["val_accuracy"]) and not r["collapsed"]]
    finite = learned or [r for r in rows if math.isfinite(r["val_accuracy"])]
    chosen = max(finite, key=lambda r: r["val_accuracy"])["lr"] if finite else min(block["lr_grid"])
    ends = (min(block["lr_grid"]), max(block["lr_grid"]))
    for r in rows:
        r["chosen"] = r["lr"] == chosen
        r["edge"] = bool(r["chosen"] and len(block["lr_grid"]) > 1 and r["lr"] in ends)
    return rows, chosen


def train_seed(spec: Mapping, network, arrays: Mapping[str, np.ndarray], block: Mapping, lr: float, seed: int,
               settings=None, device=None):  # fmt: skip
    """One seeded run at `lr` on the train split, evaluated on the test split (`training.train`), on `device`."""
    train_data, test = _tensors(arrays, network, "train"), _tensors(arrays, network, "test")
    return train(train_config(spec, block, lr, seed), network, train_data, test, settings=settings, device=device)


# ------------------------------------------------------------------------------------------------------------ cost
def cost(block: Mapping, n_inputs: int) -> list[dict]:
    """`block` = {widths, probes, batch, repeats}: MeZO's step, MeZO's materialised estimate and batched SPSA on
    MLPs `n_inputs + 1 -> width -> width -> 10`, extra tensor bytes and best wall time."""
    rows = []
    for width in block["widths"]:
        network = MLP((n_inputs + 1, width, width, 10))
        generator = torch.Generator().manual_seed(0)
        params = network.init(generator)
        x = torch.cat([torch.rand(block["batch"], n_inputs, generator=generator), torch.ones(block["batch"], 1)], 1)
        y = torch.randint(0, 10, (block["batch"],), generator=generator)
        for k in block["probes"]:
            for name, c in measure_cost(params, LOSSES["cross_entropy"], (x, y), k, repeats=block["repeats"]).items():
                rows.append({"width": width, "params": sum(w.numel() for w in params), "probes": k, "method": name,
                             "extra_bytes": c.extra_bytes, "seconds": c.seconds})  # fmt: skip
    return rows
