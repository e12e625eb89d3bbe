"""Paper 07's settings without torch: the model's sizes (``LMConfig``), the training settings (``TrainSettings``),
the parameter roles and the optimizers' constructor arguments, so that the workflow checks a config when it is
parsed (``experiment.check_config``) without importing torch. ``model``, ``training`` and ``optimizers`` take
these from here; a test holds ``OPTIMIZER_ARGUMENTS`` to the optimizer classes' signatures."""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = [
    "KINDS",
    "LMConfig",
    "NU_MODES",
    "OPTIMIZER_ARGUMENTS",
    "ORDERS",
    "ORIENTATIONS",
    "TrainSettings",
    "check_number",
    "check_optimizer_spec",
]

ORIENTATIONS = ("row", "col")
ORDERS = ("row_then_polar", "polar_then_row")
NU_MODES = ("trace", "repo")
# parameter roles of the repo's build_transformer_mixed_optimizer: attention matrices ("hidden"), SwiGLU gate/up
# (d_ff x d, rows are neurons) and down (d x d_ff, columns are neurons) projections, vocabulary-indexed
# matrices, MoE routers (E x d) and everything that is not a matrix (norm gains)
KINDS = ("hidden", "mlp_gate_up", "mlp_down", "embedding", "lm_head", "router", "vector")


# every optimizer of ``optimizers.OPTIMIZERS``: its class, whether it updates 2-D matrices only, and its
# constructor's keyword arguments with their defaults (tests/test_symm_optim_inputs.py compares them)
OPTIMIZER_ARGUMENTS: dict[str, tuple[str, bool, dict]] = {
    "adamw": ("AdamW", False, {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.01}),
    "muon": (
        "Muon",
        True,
        {
            "lr": 0.02,
            "momentum": 0.95,
            "nesterov": True,
            "weight_decay": 0.0,
            "exact": False,
            "ns_steps": 5,
            "eps": 1e-7,
        },
    ),
    "spectral": (
        "SpectralDescent",
        True,
        {"lr": 1e-3, "beta": 0.95, "alpha": 1.0, "eps": 1e-8, "weight_decay": 0.0, "exact": True, "ns_steps": 5},
    ),
    "row_norm": (
        "RowNorm",
        True,
        {"lr": 1e-3, "beta": 0.95, "weight_decay": 0.0, "eps": 1e-8, "center": False, "orientation": "row"},
    ),
    "centered_row_norm": (
        "CenteredRowNorm",
        True,
        {"lr": 1e-3, "beta": 0.95, "weight_decay": 0.0, "eps": 1e-8, "orientation": "row"},
    ),
    "right_polar": (
        "RightPolarGrad",
        True,
        {"lr": 1e-3, "beta": 0.95, "alpha": 1.0, "eps": 1e-8, "weight_decay": 0.0, "nu_mode": "trace"},
    ),
    "left_polar": (
        "LeftPolarGrad",
        True,
        {"lr": 1e-3, "beta": 0.95, "alpha": 1.0, "eps": 1e-8, "weight_decay": 0.0, "center": False},
    ),
    "centered_left_polar": (
        "CenteredLeftPolarGrad",
        True,
        {"lr": 1e-3, "beta": 0.95, "alpha": 1.0, "eps": 1e-8, "weight_decay": 0.0},
    ),
    "hybrid": (
        "HybridPolarGrad",
        True,
        {
            "lr": 1e-3,
            "beta": 0.95,
            "alpha": 1.0,
            "weight_decay": 0.0,
            "eps": 1e-8,
            "order": "row_then_polar",
            "left": False,
            "center": False,
            "orientation": "row",
        },
    ),
}


def check_number(
    name: str,
    value,
    low: float,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = True,
    who: str = "",
) -> None:
    ok = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
    if ok:
        ok = (value > low) if low_open else (value >= low)
    if ok and high is not None:
        ok = (value < high) if high_open else (value <= high)
    if not ok:
        lo = f"{'(' if low_open else '['}{low}"
        hi = f"{high}{')' if high_open else ']'}" if high is not None else "inf)"
        raise ValueError(f"{who}: {name} must be a finite number in {lo}, {hi}, got {value!r}")


def check_group(who: str, group: dict) -> None:
    """The checks every optimizer makes of a param group's hyper-parameters (``optimizers._Base._validate``)."""
    check_number("lr", group["lr"], 0.0, low_open=True, who=who)
    check_number("weight_decay", group["weight_decay"], 0.0, who=who)
    check_number("eps", group["eps"], 0.0, low_open=True, who=who)
    if "beta" in group:
        check_number("beta", group["beta"], 0.0, 1.0, who=who)
    if "momentum" in group:
        check_number("momentum", group["momentum"], 0.0, 1.0, who=who)
    if "betas" in group:
        betas = group["betas"]
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise ValueError(f"{who}: betas must be a pair, got {betas!r}")
        for i, b in enumerate(betas):
            check_number(f"betas[{i}]", b, 0.0, 1.0, who=who)
    if "alpha" in group:
        check_number("alpha", group["alpha"], 0.0, who=who)
    if "ns_steps" in group:
        steps = group["ns_steps"]
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
            raise ValueError(f"{who}: ns_steps must be an integer >= 1, got {steps!r}")
    for key, allowed in (("orientation", ORIENTATIONS), ("order", ORDERS), ("nu_mode", NU_MODES)):
        if key in group and group[key] not in allowed:
            raise ValueError(f"{who}: {key} must be one of {allowed}, got {group[key]!r}")


def check_optimizer_spec(spec: dict, kind: str) -> None:
    """Refuse what building ``spec`` ({"name", "lr", ...}) for a parameter of role ``kind`` would refuse: an
    unknown optimizer (ValueError), an unknown argument (TypeError, as the constructor raises it), a value out of
    range, or a matrix optimizer for the vectors (ValueError)."""
    if spec["name"] not in OPTIMIZER_ARGUMENTS:
        raise ValueError(f"unknown optimizer {spec['name']!r}, expected one of {sorted(OPTIMIZER_ARGUMENTS)}")
    who, matrix_only, defaults = OPTIMIZER_ARGUMENTS[spec["name"]]
    args = {k: v for k, v in spec.items() if k != "name"}
    for key in args:
        if key not in defaults:
            raise TypeError(f"{who}.__init__() got an unexpected keyword argument {key!r}")
    check_group(who, defaults | args)
    if matrix_only and kind == "vector":
        raise ValueError(f"{who} updates 2-D matrices only, and the role 'vector' holds vectors")


@dataclass(frozen=True)
class LMConfig:
    """Sizes of the model; the defaults are the repo's Qwen3-0.6B-style run (20 layers) except the vocabulary."""

    vocab_size: int = 2048
    d_model: int = 1024
    n_layers: int = 20
    n_heads: int = 16
    n_kv_heads: int = 8
    head_dim: int = 128
    d_ff: int = 3072
    context: int = 1024
    n_experts: int = 0
    top_k: int = 0
    rope_base: float = 1e6
    norm_eps: float = 1e-6
    init_std: float = 0.02
    seed: int = 0

    def __post_init__(self):
        for name in ("vocab_size", "d_model", "n_layers", "n_heads", "n_kv_heads", "head_dim", "d_ff", "context"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"LMConfig.{name} must be a positive integer, got {value!r}")
        for name in ("n_experts", "top_k", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"LMConfig.{name} must be an integer >= 0, got {value!r}")
        if self.n_heads % self.n_kv_heads:
            raise ValueError(f"LMConfig.n_heads={self.n_heads} is not a multiple of n_kv_heads={self.n_kv_heads}")
        if self.head_dim % 2:
            raise ValueError(f"LMConfig.head_dim must be even for rotary embeddings, got {self.head_dim}")
        if self.n_experts and not 1 <= self.top_k <= self.n_experts:
            raise ValueError(f"LMConfig.top_k must lie in [1, n_experts={self.n_experts}], got {self.top_k}")
        if not self.n_experts and self.top_k:
            raise ValueError(f"LMConfig.top_k={self.top_k} needs n_experts > 0")
        for name in ("rope_base", "norm_eps", "init_std"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(f"LMConfig.{name} must be a positive number, got {value!r}")

    @property
    def is_moe(self) -> bool:
        return self.n_experts > 0


@dataclass(frozen=True)
class TrainSettings:
    seq_len: int = 1024
    batch_size: int = 28
    steps: int = 30_000
    eval_every: int = 500
    eval_tokens: int = 10_551_296
    cooldown_frac: float = 0.4
    vector_warmup: int = 100
    spike_factor: float = 1.5
    spike_ema: float = 0.9
    spike_skip: int = 10
    seed: int = 0

    def __post_init__(self):
        for name in ("seq_len", "batch_size", "steps", "eval_every", "eval_tokens"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"TrainSettings.{name} must be a positive integer, got {value!r}")
        for name in ("vector_warmup", "spike_skip", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"TrainSettings.{name} must be an integer >= 0, got {value!r}")
        if not 0 <= self.cooldown_frac <= 1:
            raise ValueError(f"TrainSettings.cooldown_frac must lie in [0, 1], got {self.cooldown_frac!r}")
        if not self.spike_factor > 1:
            raise ValueError(f"TrainSettings.spike_factor must be > 1, got {self.spike_factor!r}")
        if not 0 < self.spike_ema < 1:
            raise ValueError(f"TrainSettings.spike_ema must lie in (0, 1), got {self.spike_ema!r}")
