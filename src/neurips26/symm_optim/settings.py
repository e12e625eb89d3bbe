"""Paper 07's settings without torch: the model's sizes (``LMConfig``), the training settings (``TrainSettings``),
the parameter roles and the optimizers' constructor arguments, so that the workflow checks a config when it is
parsed (``experiment.check_config``) without importing torch. ``model``, ``training`` and ``optimizers`` take
these from here; a test holds ``OPTIMIZER_ARGUMENTS`` to the optimizer classes' signatures."""

from __future__ import annotations

from dataclasses import dataclass

from neurips26.common.validation import check_choice, check_int, check_number, integer, number, validate

__all__ = [
    "KINDS",
    "LMConfig",
    "NU_MODES",
    "OPTIMIZER_ARGUMENTS",
    "ORDERS",
    "ORIENTATIONS",
    "TrainSettings",
    "check_group",
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


def check_group(who: str, group: dict) -> None:
    """The checks every optimizer makes of a param group's hyper-parameters (``optimizers._Base._validate``),
    torch-free so that the workflow runs them on the config when it is parsed: lr and eps > 0, momenta in [0, 1),
    weight decay and alpha >= 0, ns_steps >= 1, and a known orientation, hybrid order and ``nu`` mode."""
    check_number("lr", group["lr"], 0.0, low_open=True, who=who)
    check_number("weight_decay", group["weight_decay"], 0.0, who=who)
    check_number("eps", group["eps"], 0.0, low_open=True, who=who)
    for key in ("beta", "momentum"):
        if key in group:
            check_number(key, group[key], 0.0, 1.0, high_open=True, who=who)
    if "betas" in group:
        betas = group["betas"]
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise ValueError(f"{who}.betas must be a pair, got {betas!r}")
        for i, b in enumerate(betas):
            check_number(f"betas[{i}]", b, 0.0, 1.0, high_open=True, who=who)
    if "alpha" in group:
        check_number("alpha", group["alpha"], 0.0, who=who)
    if "ns_steps" in group:
        check_int("ns_steps", group["ns_steps"], 1, who=who)
    for key, allowed in (("orientation", ORIENTATIONS), ("order", ORDERS), ("nu_mode", NU_MODES)):
        if key in group:
            check_choice(key, group[key], allowed, who=who)


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

    vocab_size: int = integer(1, default=2048)
    d_model: int = integer(1, default=1024)
    n_layers: int = integer(1, default=20)
    n_heads: int = integer(1, default=16)
    n_kv_heads: int = integer(1, default=8)
    head_dim: int = integer(1, default=128)
    d_ff: int = integer(1, default=3072)
    context: int = integer(1, default=1024)
    n_experts: int = integer(0, default=0)
    top_k: int = integer(0, default=0)
    rope_base: float = number(0.0, low_open=True, default=1e6)
    norm_eps: float = number(0.0, low_open=True, default=1e-6)
    init_std: float = number(0.0, low_open=True, default=0.02)
    seed: int = integer(0, default=0)

    def __post_init__(self):
        validate(self)
        if self.n_heads % self.n_kv_heads:
            raise ValueError(f"LMConfig.n_heads={self.n_heads} is not a multiple of n_kv_heads={self.n_kv_heads}")
        if self.head_dim % 2:
            raise ValueError(f"LMConfig.head_dim must be even for rotary embeddings, got {self.head_dim}")
        if self.n_experts and not 1 <= self.top_k <= self.n_experts:
            raise ValueError(f"LMConfig.top_k must lie in [1, n_experts={self.n_experts}], got {self.top_k}")
        if not self.n_experts and self.top_k:
            raise ValueError(f"LMConfig.top_k={self.top_k} needs n_experts > 0")

    @property
    def is_moe(self) -> bool:
        return self.n_experts > 0


@dataclass(frozen=True)
class TrainSettings:
    seq_len: int = integer(1, default=1024)
    batch_size: int = integer(1, default=28)
    steps: int = integer(1, default=30_000)
    eval_every: int = integer(1, default=500)
    eval_tokens: int = integer(1, default=10_551_296)
    cooldown_frac: float = number(0.0, 1.0, default=0.4)
    vector_warmup: int = integer(0, default=100)
    spike_factor: float = number(1.0, low_open=True, default=1.5)
    spike_ema: float = number(0.0, 1.0, low_open=True, high_open=True, default=0.9)
    spike_skip: int = integer(0, default=10)
    seed: int = integer(0, default=0)

    def __post_init__(self):
        validate(self)
