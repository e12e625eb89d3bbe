"""Which RL seeds each advantage variant runs, and which job trains which seeds (light: the report and the rules
import it without the chemistry stack)."""

from __future__ import annotations

import re

POLICY_NAME = re.compile(r"^(?P<variant>drgrpo|grpo|global|none)_s(?P<seed>\d+)$")


def variant_seeds(cfg: dict, variant: str) -> list[int]:
    """The RL seeds of one advantage variant: `rl.seeds`, plus `rl.extra_seeds` of that variant."""
    rl = cfg["rl"]
    return sorted(set(rl["seeds"]) | set(rl.get("extra_seeds", {}).get(variant, [])))


def policy_names(cfg: dict) -> list[str]:
    """The fine-tuned policies, `{variant}_s{seed}`, in the order of `rl.variants`, then by seed."""
    return [f"{v}_s{s}" for v in cfg["rl"]["variants"] for s in variant_seeds(cfg, v)]


def seed_groups(cfg: dict, variant: str) -> list[list[int]]:
    """The variant's seeds in groups of `rl.seeds_per_job` (default 1), in seed order: one RL job per group."""
    seeds = variant_seeds(cfg, variant)
    size = cfg["rl"].get("seeds_per_job", 1)
    return [seeds[i : i + size] for i in range(0, len(seeds), size)]


def group_name(seeds: list[int]) -> str:
    """The seeds wildcard of an RL job: its seeds joined by '-' ('0-1-2'; one seed: '0', the single-run name)."""
    return "-".join(str(s) for s in seeds)


def group_seeds(name: str) -> list[int]:
    """The seeds of an RL job's seeds wildcard (group_name's inverse)."""
    return [int(s) for s in name.split("-")]


def rl_jobs(cfg: dict) -> list[str]:
    """The RL jobs, `{variant}_s{seeds}`: one per seed group of each variant (rules/amortix.smk amortix_rl)."""
    return [f"{v}_s{group_name(g)}" for v in cfg["rl"]["variants"] for g in seed_groups(cfg, v)]


def parse_policy(name: str) -> tuple[str, int]:
    """(variant, seed) of a fine-tuned policy's name `{variant}_s{seed}`."""
    match = POLICY_NAME.match(name)
    if not match:
        raise ValueError(f"not a fine-tuned policy's name: {name!r} (expected <variant>_s<seed>)")
    return match["variant"], int(match["seed"])


def rl_job_of(cfg: dict, name: str) -> str:
    """The RL job that trains policy `{variant}_s{seed}`."""
    variant, seed = parse_policy(name)
    for group in seed_groups(cfg, variant):
        if seed in group:
            return f"{variant}_s{group_name(group)}"
    raise ValueError(f"policy {name!r} is not among the configured RL runs {policy_names(cfg)}")
