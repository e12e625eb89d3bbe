"""Which RL seeds each advantage variant runs (light: the report imports it without the chemistry stack)."""

from __future__ import annotations


def variant_seeds(cfg: dict, variant: str) -> list[int]:
    """The RL seeds of one advantage variant: `rl.seeds`, plus `rl.extra_seeds` of that variant."""
    rl = cfg["rl"]
    return sorted(set(rl["seeds"]) | set(rl.get("extra_seeds", {}).get(variant, [])))


def policy_names(cfg: dict) -> list[str]:
    """The fine-tuned policies, `{variant}_s{seed}`, in the order of `rl.variants`, then by seed."""
    return [f"{v}_s{s}" for v in cfg["rl"]["variants"] for s in variant_seeds(cfg, v)]
