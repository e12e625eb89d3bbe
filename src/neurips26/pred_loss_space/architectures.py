"""The architectures' names, defaults and bottleneck arithmetic, without torch: the workflow checks a
config against them when it is parsed, and every cluster job parses the workflow twice."""

from __future__ import annotations

ARCHS = ("unet_tiny", "jit_tiny", "jit_tiny_bn", "jit_tiny_wide", "mlp_toy")
DATA_KEYS = ("channels", "image_size", "dim")
ARCH_DEFAULTS: dict[str, dict] = {
    "unet_tiny": {"channels": 1, "base": 32, "mults": (1, 2), "t_dim": 128},
    "jit_tiny": {"image_size": 16, "channels": 1, "patch": 4, "width": 64, "depth": 4, "heads": 4},
    "jit_tiny_bn": {"image_size": 16, "channels": 1, "patch": 16, "width": 32, "depth": 4, "heads": 4},
    # jit_tiny_bn's tokenisation without its bottleneck (a width of at least the token dimension): C5's null
    "jit_tiny_wide": {"image_size": 16, "channels": 1, "patch": 16, "width": 256, "depth": 4, "heads": 4},
    "mlp_toy": {"width": 64, "depth": 5},
}
# the constructor keywords of each architecture's class (models.py; a test keeps the two in step)
ARCH_PARAMS: dict[str, tuple[str, ...]] = {
    "unet_tiny": ("channels", "base", "mults", "t_dim"),
    "jit_tiny": ("image_size", "channels", "patch", "width", "depth", "heads", "mlp_ratio"),
    "jit_tiny_bn": ("image_size", "channels", "patch", "width", "depth", "heads", "mlp_ratio"),
    "jit_tiny_wide": ("image_size", "channels", "patch", "width", "depth", "heads", "mlp_ratio"),
    "mlp_toy": ("dim", "width", "depth", "t_dim"),
}


def _check_arch(arch: str) -> str:
    if arch not in ARCHS:
        raise ValueError(f"unknown architecture {arch!r}; allowed: {ARCHS}")
    return arch


def resolve_spec(arch: str, spec: dict) -> dict:
    """The constructor kwargs of `arch`: its defaults overridden by `spec`.

    Data-shape keys (channels, image_size, dim) that an architecture does not take are dropped; any other
    key it does not take is an error (a typo in the config).
    """
    _check_arch(arch)
    accepted = set(ARCH_PARAMS[arch])
    unknown = sorted(set(spec) - accepted - set(DATA_KEYS))
    if unknown:
        raise ValueError(f"unknown keys {unknown} for architecture {arch!r}; it takes {sorted(accepted)}")
    merged = {**ARCH_DEFAULTS[arch], **spec}
    if arch == "mlp_toy" and "dim" not in merged:
        raise ValueError("mlp_toy needs the data dimension 'dim' in its spec")
    return {k: v for k, v in merged.items() if k in accepted}


def token_dim(arch: str, spec: dict) -> int | None:
    """The dimension a token carries into the network's width: patch^2 * channels (JiT), D (toy), None (U-Net)."""
    kwargs = resolve_spec(arch, spec)
    if arch.startswith("jit"):
        return kwargs["patch"] ** 2 * kwargs["channels"]
    if arch == "mlp_toy":
        return kwargs["dim"]
    return None


def has_bottleneck(arch: str, spec: dict) -> bool:
    """True when the token dimension exceeds the network width (the representational bottleneck)."""
    dim = token_dim(arch, spec)
    return dim is not None and dim > resolve_spec(arch, spec)["width"]


def check_bottleneck_label(arch: str, spec: dict, labelled: bool) -> None:
    """Reject a config labelled as (not) a bottleneck whose widths say otherwise."""
    actual = has_bottleneck(arch, spec)
    if actual == bool(labelled):
        return
    dim = token_dim(arch, spec)
    width = resolve_spec(arch, spec).get("width")
    if labelled:
        raise ValueError(
            f"{arch} is labelled a bottleneck but its token dimension {dim} does not exceed its width {width}"
            if dim is not None
            else f"{arch} is labelled a bottleneck but it has no token bottleneck (long skips, no width)"
        )
    raise ValueError(f"{arch} is labelled not a bottleneck but its token dimension {dim} exceeds its width {width}")
