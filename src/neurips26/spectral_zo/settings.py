"""Paper 13's checks of a config block that the schema cannot express, run when the workflow is parsed (so this module
imports no torch): methods in range and defined, probes >= 1, eps > 0, >= 3 seeds at quick scale, and every method's
estimator supports the layer types of the networks it trains (the unsupported type is named). The tables below mirror
the library's (`training.METHODS`, `networks.SUPPORT`, `estimators.NORMALISATIONS`); a test keeps them equal."""

from __future__ import annotations

import math
from collections.abc import Mapping

from neurips26.common.validation import check_int, check_number

SOURCES = ("digits", "mnist5k", "mnist", "fashion_mnist", "cifar10")
OPTION_KEYS = ("kappa", "rank", "orthogonal", "bias_correction", "normalise", "moment", "correction_moment")
MOMENTS = ("batch", "centred", "mean")
ESTIMATORS = ("wp_global", "wp_layerwise", "spsa", "mezo", "node_perturbation", "agzo", "szo", "forward_gradient",
              "backprop")  # fmt: skip
NORMALISATIONS = ("mean", "top")
# the layer kinds each estimator supports (backprop: every kind); the activation-shaped ones read conv2d's patches
SUPPORT = {name: ("linear", "conv2d") for name in ESTIMATORS if name != "backprop"}


def check_method(name: str, spec: Mapping) -> None:
    """ValueError naming the method and key unless `spec` is {estimator, options...} with options in range."""
    if spec.get("estimator") not in ESTIMATORS:
        raise ValueError(f"methods.{name}.estimator: {spec.get('estimator')!r} is not one of {list(ESTIMATORS)}")
    unknown = set(spec) - {"estimator", *OPTION_KEYS}
    if unknown:
        raise ValueError(f"methods.{name}: unknown keys {sorted(unknown)}")
    if "kappa" in spec:
        check_number(f"methods.{name}.kappa", spec["kappa"], low=0.0, high=2.0)
    if "rank" in spec:
        check_int(f"methods.{name}.rank", spec["rank"], low=1)
    if spec.get("normalise", "mean") not in NORMALISATIONS:
        raise ValueError(f"methods.{name}.normalise: {spec['normalise']!r} is not one of {list(NORMALISATIONS)}")
    for key in ("moment", "correction_moment"):
        if spec.get(key, "batch") not in MOMENTS:
            raise ValueError(f"methods.{name}.{key}: {spec[key]!r} is not one of {list(MOMENTS)}")


def layer_kinds(dataset: Mapping) -> tuple[str, ...]:
    """The layer kinds of the network a dataset block names (the MLP: linear only; the ConvNet: conv2d and linear)."""
    return ("conv2d", "linear") if dataset.get("network", "mlp") == "conv" else ("linear",)


def check_config(cfg: Mapping, scale: str = "") -> None:
    """ValueError naming the key of the first violation (see the module docstring)."""
    methods = cfg["methods"]
    for name, spec in methods.items():
        check_method(name, spec)
    for section in ("alignment", "bias_variance", "dimension", "spectral", "train"):
        block = cfg[section]
        for name in block["methods"]:
            if name not in methods:
                raise ValueError(f"{section}.methods: {name!r} is not defined under methods")
        for k in block["probes"] if isinstance(block["probes"], list) else [block["probes"]]:
            check_int(f"{section}.probes", k, low=1)
        check_number(f"{section}.eps", block["eps"], low=0.0, low_open=True)
        if scale == "quick" and len(block["seeds"]) < 3:
            raise ValueError(
                f"{section}.seeds: quick scale decides claims over seeds and needs >= 3, got {block['seeds']}"
            )
    for section in ("alignment", "bias_variance", "dimension"):
        if cfg[section]["dataset"] not in cfg["datasets"]:
            raise ValueError(f"{section}.dataset: {cfg[section]['dataset']!r} is not defined under datasets")
    for dataset in cfg["train"]["datasets"]:
        if dataset not in cfg["datasets"]:
            raise ValueError(f"train.datasets: {dataset!r} is not defined under datasets")
        for name in cfg["train"]["methods"]:
            estimator = methods[name]["estimator"]
            for kind in layer_kinds(cfg["datasets"][dataset]):
                if estimator != "backprop" and kind not in SUPPORT[estimator]:
                    raise ValueError(
                        f"train on {dataset}: method {name}: estimator {estimator!r} does not support {kind} layers "
                        f"(it shapes its probes by a linear layer's input activations); supported: "
                        f"{', '.join(SUPPORT[estimator])}"
                    )
    grouped = [name for group in cfg["train"]["groups"].values() for name in group]
    if sorted(grouped) != sorted(cfg["train"]["methods"]):
        raise ValueError(
            f"train.groups: every method of train.methods must be in exactly one group; grouped {sorted(grouped)}, "
            f"methods {sorted(cfg['train']['methods'])}"
        )
    if min(cfg["train"]["lr_grid"]) <= 0:
        raise ValueError(f"train.lr_grid: learning rates must be > 0, got {cfg['train']['lr_grid']}")


# ------------------------------------------------------------------------------------------- runtime of a train job
# forward passes per step, (n_probes K, layers L) -> passes: mirrors `training.FORWARD_PASSES` (a test keeps them equal)
PASSES = {
    "wp_global": lambda k, n_layers: 2 * k,
    "wp_layerwise": lambda k, n_layers: 2 * k * n_layers,
    "spsa": lambda k, n_layers: 2 * k,
    "mezo": lambda k, n_layers: 2 * k,
    "node_perturbation": lambda k, n_layers: 2 * k + 1,
    "agzo": lambda k, n_layers: k + 2,
    "szo": lambda k, n_layers: 2 * k + 1,
    "forward_gradient": lambda k, n_layers: k,
    "backprop": lambda k, n_layers: 2,
}
# The cost model of one paper-scale training job on its GPU (profiles/slurm: spectral_zo_train gets one), NOT measured
# on a GPU (none was available): a forward pass of a probe is 2 x batch x weights flop at GPU_FLOPS (30% of an H100's
# 67 TFLOP/s fp32 peak) plus PROBE_BYTES per weight of probe tensors (the direction drawn on the GPU, W +- eps V
# written and read by the matmul) at GPU_BANDWIDTH; every step adds the loop's fixed cost, measured on the CPU with a
# 9-4-10 MLP whose arithmetic is negligible (2,000 steps of batch 128: backprop 1.0 ms, weight perturbation and SZO at
# K = 64 6.3-6.6 ms, node perturbation 11.1 ms; kernel launches replace it on a GPU); MeZO's 2K passes run one by one
# (SEQUENTIAL_PASS_S each). The request is RUNTIME_MARGIN x that, plus STARTUP_MIN.
GPU_FLOPS = 20e12
GPU_BANDWIDTH = 2e12
PROBE_BYTES = 24
FLOP_FACTOR = {"backprop": 3, "forward_gradient": 3}  # a backward pass, a forward-mode (jvp) pass: ~3 forwards
STEP_S = {"backprop": 0.001}
STEP_S_DEFAULT = 0.012
SEQUENTIAL_PASS_S = {"mezo": 0.0002}
RUNTIME_MARGIN = 3.0
STARTUP_MIN = 5


def network_weights(widths) -> int:
    """The weights of the bias-free MLP `widths[0] -> ... -> widths[-1]` (widths[0] includes the bias input)."""
    return sum(a * b for a, b in zip(widths[:-1], widths[1:]))


def run_seconds(estimator: str, probes: int, budget: int, batch: int, widths) -> float:
    """Predicted GPU seconds of one training run (the cost model above, without margin)."""
    n_layers, weights = len(widths) - 1, network_weights(widths)
    passes = PASSES[estimator](probes, n_layers)
    steps = budget // passes
    per_pass = FLOP_FACTOR.get(estimator, 1) * 2 * batch * weights / GPU_FLOPS
    if estimator != "backprop":
        per_pass += PROBE_BYTES * weights / GPU_BANDWIDTH
    per_step = STEP_S.get(estimator, STEP_S_DEFAULT) + passes * SEQUENTIAL_PASS_S.get(estimator, 0.0)
    return steps * (passes * per_pass + per_step)


def train_minutes(cfg: Mapping, dataset: str, group: str, n_inputs: int) -> int:
    """The runtime (minutes) a paper-scale training job of (dataset, group) requests: each method of the group, its
    tuning runs (train.lr_grid) and seeds (train.seeds) at the forward-pass budget, RUNTIME_MARGIN x the cost model,
    plus STARTUP_MIN."""
    train, methods = cfg["train"], cfg["methods"]
    widths = [n_inputs + 1, *cfg["datasets"][dataset]["hidden"], 10]
    runs = len(train["lr_grid"]) + len(train["seeds"])
    seconds = sum(
        runs * run_seconds(methods[name]["estimator"], train["probes"], train["budget"], train["batch"], widths)
        for name in train["groups"][group]
    )
    return int(math.ceil(RUNTIME_MARGIN * seconds / 60)) + STARTUP_MIN
