"""Paper 19's config: the checks the schema cannot express (run at parse time, before any job), and the
environment and policy settings built from a scale's block."""

from __future__ import annotations

from neurips26.amortix import environment as env
from neurips26.amortix.advantages import GROUPED
from neurips26.amortix.seeds import policy_names, variant_seeds  # noqa: F401 (used by the rules)


def env_config(cfg: dict) -> env.EnvConfig:
    e = cfg["env"]
    return env.EnvConfig(decoration_vocab=tuple(e["decoration_vocab"]), max_new_atoms=e["max_new_atoms"],
                         max_actions=e["max_actions"], max_atoms=cfg["corpus"]["max_heavy"],
                         ring_sizes=tuple(e["ring_sizes"]))


def element_index(config: env.EnvConfig) -> dict[str, int]:
    return {element: k for k, element in enumerate(config.scaffold_vocab)}


def run_config(cfg: dict) -> dict:
    """The scale's block as the jobs of one run see it (demonstrations to PMO): without `rl.extra_seeds`, which
    only decides which runs exist. Snakemake reruns a job whose params changed, so adding seeds then reruns only the
    new runs and the tables downstream."""
    if "extra_seeds" not in cfg["rl"]:
        return cfg
    return {**cfg, "rl": {k: v for k, v in cfg["rl"].items() if k != "extra_seeds"}}


def check_config(cfg: dict) -> None:
    """Raise ValueError naming the key: bad environment, extra seeds of a variant that is not run, group sizes
    below 2 for group-normalised advantages, a model width not divisible by its heads, more baseline scaffolds
    than test scaffolds, a bad PMO start."""
    try:
        config = env_config(cfg)
    except ValueError as error:
        raise ValueError(f"env: {error}") from None
    low, high = cfg["corpus"]["scaffold_heavy"]
    if low > high:
        raise ValueError(f"corpus.scaffold_heavy: lower bound {low} above upper bound {high}")
    if high >= cfg["corpus"]["max_heavy"]:
        raise ValueError(f"corpus.scaffold_heavy: scaffolds up to {high} atoms leave no room under max_heavy "
                         f"{cfg['corpus']['max_heavy']}")
    unknown = sorted(set(cfg["rl"].get("extra_seeds", {})) - set(cfg["rl"]["variants"]))
    if unknown:
        raise ValueError(f"rl.extra_seeds: variants {unknown} are not in rl.variants {cfg['rl']['variants']}")
    grouped = [v for v in cfg["rl"]["variants"] if v in GROUPED]
    if grouped and cfg["rl"]["group_size"] < 2:
        raise ValueError(f"rl.group_size: {grouped} normalise rewards within a group, which needs at least 2 "
                         f"completions per scaffold (got {cfg['rl']['group_size']})")
    for key in ("baselines.per_instance", "pmo"):
        block = cfg["baselines"]["per_instance"] if key != "pmo" else cfg["pmo"]
        if block["group_size"] < 2:
            raise ValueError(f"{key}.group_size: Dr. GRPO needs at least 2 completions per group "
                             f"(got {block['group_size']})")
    if cfg["policy"]["d_model"] % cfg["policy"]["n_heads"]:
        raise ValueError(f"policy.d_model {cfg['policy']['d_model']} is not divisible by policy.n_heads "
                         f"{cfg['policy']['n_heads']}")
    if cfg["baselines"]["scaffolds"] > cfg["evaluate"]["test_scaffolds"]:
        raise ValueError(f"baselines.scaffolds ({cfg['baselines']['scaffolds']}) exceeds evaluate.test_scaffolds "
                         f"({cfg['evaluate']['test_scaffolds']}): baselines run on a subset of the test scaffolds")
    if sum(cfg["split"]["fractions"]) > 1 + 1e-9:
        raise ValueError(f"split.fractions sum to {sum(cfg['split']['fractions'])} > 1")
    try:
        env.make_scaffold(cfg["pmo"]["start"], config)
    except ValueError as error:
        raise ValueError(f"pmo.start: {error}") from None
