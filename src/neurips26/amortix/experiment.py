"""Paper 19's config: the environment settings built from a scale's block, and the checks the schema cannot
express (run when the workflow is parsed, before any job).

Light on purpose: rules/functions/amortix.smk imports it at parse time, so it loads neither torch nor pandas nor
the chemistry stack; only the check of `pmo.start` imports rdkit.Chem (inside the function).
"""

from __future__ import annotations

from dataclasses import dataclass

from neurips26.amortix.advantages import GROUPED  # numpy only
from neurips26.amortix.seeds import (  # noqa: F401 (used by the rules)
    group_seeds,
    policy_names,
    rl_job_of,
    rl_jobs,
    variant_seeds,
)
from neurips26.common.validation import integer, validate

# valence budget of a new (neutral) decoration atom; S may be hypervalent (sulfones, sulfonamides)
MAX_VALENCE = {"C": 4, "N": 3, "O": 2, "F": 1, "S": 6, "Cl": 1, "Br": 1, "I": 1, "P": 5}


@dataclass(frozen=True)
class EnvConfig:
    """What decorations may contain: the elements of new atoms, the size limit and the ring closures."""

    decoration_vocab: tuple[str, ...] = ("C", "N", "O", "F", "S", "Cl")
    scaffold_vocab: tuple[str, ...] = ("C", "N", "O", "F", "S", "Cl", "Br", "P", "I")
    max_new_atoms: int = integer(1, default=12)
    max_atoms: int = integer(1, default=50)
    max_actions: int = integer(1, default=16)
    ring_sizes: tuple[int, ...] = (5, 6)

    def __post_init__(self) -> None:
        validate(self)
        unknown = [e for e in self.decoration_vocab if e not in MAX_VALENCE]
        if unknown:
            raise ValueError(f"decoration vocabulary has elements without a valence rule: {unknown}")
        missing = [e for e in self.decoration_vocab if e not in self.scaffold_vocab]
        if missing:
            raise ValueError(f"decoration elements {missing} must also be in the scaffold vocabulary")


# the entries of `rl` and `pmo` that each step reads (rules/functions/amortix.smk hands exactly these to its jobs)
RL_RUN_KEYS = ("steps", "batch_scaffolds", "group_size", "lr", "val_every", "val_scaffolds")  # one RL run
RL_REPORT_KEYS = ("variants", "seeds", "extra_seeds", "steps", "batch_scaffolds", "group_size", "lr")  # the report
PMO_RUN_KEYS = ("start", "budget", "group_size", "lr", "seeds")  # one PMO-lite job (its oracle is a wildcard)
PMO_TABLE_KEYS = ("budget", "top_k", "freq")  # the PMO-lite table's top-k AUC


def pick(block: dict, keys: tuple[str, ...]) -> dict:
    """The entries `keys` of a config block, those present (rl.extra_seeds is optional). The variants and seeds
    of `rl` are not among an RL run's keys: they decide which runs exist, so adding a seed runs only the new run
    (and the tables downstream) while the params of the existing runs stay the same."""
    return {key: block[key] for key in keys if key in block}


def env_config(env: dict, max_heavy: int) -> EnvConfig:
    """The environment of a scale: its `env` block and `corpus.max_heavy` (the size limit of a molecule)."""
    return EnvConfig(
        decoration_vocab=tuple(env["decoration_vocab"]),
        max_new_atoms=env["max_new_atoms"],
        max_actions=env["max_actions"],
        max_atoms=max_heavy,
        ring_sizes=tuple(env["ring_sizes"]),
    )


def element_index(config: EnvConfig) -> dict[str, int]:
    return {element: k for k, element in enumerate(config.scaffold_vocab)}


def check_config(cfg: dict) -> None:
    """Raise ValueError naming the key: bad environment, extra seeds of a variant that is not run, group sizes
    below 2 for group-normalised advantages, a model width not divisible by its heads, more baseline scaffolds
    than test scaffolds, a bad PMO start."""
    try:
        config = env_config(cfg["env"], cfg["corpus"]["max_heavy"])
    except ValueError as error:
        raise ValueError(f"env: {error}") from None
    low, high = cfg["corpus"]["scaffold_heavy"]
    if low > high:
        raise ValueError(f"corpus.scaffold_heavy: lower bound {low} above upper bound {high}")
    if high >= cfg["corpus"]["max_heavy"]:
        raise ValueError(
            f"corpus.scaffold_heavy: scaffolds up to {high} atoms leave no room under max_heavy "
            f"{cfg['corpus']['max_heavy']}"
        )
    unknown = sorted(set(cfg["rl"].get("extra_seeds", {})) - set(cfg["rl"]["variants"]))
    if unknown:
        raise ValueError(f"rl.extra_seeds: variants {unknown} are not in rl.variants {cfg['rl']['variants']}")
    grouped = [v for v in cfg["rl"]["variants"] if v in GROUPED]
    if grouped and cfg["rl"]["group_size"] < 2:
        raise ValueError(
            f"rl.group_size: {grouped} normalise rewards within a group, which needs at least 2 "
            f"completions per scaffold (got {cfg['rl']['group_size']})"
        )
    for key in ("baselines.per_instance", "pmo"):
        block = cfg["baselines"]["per_instance"] if key != "pmo" else cfg["pmo"]
        if block["group_size"] < 2:
            raise ValueError(
                f"{key}.group_size: Dr. GRPO needs at least 2 completions per group (got {block['group_size']})"
            )
    if cfg["policy"]["d_model"] % cfg["policy"]["n_heads"]:
        raise ValueError(
            f"policy.d_model {cfg['policy']['d_model']} is not divisible by policy.n_heads {cfg['policy']['n_heads']}"
        )
    if cfg["baselines"]["scaffolds"] > cfg["evaluate"]["test_scaffolds"]:
        raise ValueError(
            f"baselines.scaffolds ({cfg['baselines']['scaffolds']}) exceeds evaluate.test_scaffolds "
            f"({cfg['evaluate']['test_scaffolds']}): baselines run on a subset of the test scaffolds"
        )
    if sum(cfg["split"]["fractions"]) > 1 + 1e-9:
        raise ValueError(f"split.fractions sum to {sum(cfg['split']['fractions'])} > 1")
    from neurips26.amortix.scaffold_check import check_scaffold_smiles  # rdkit.Chem only (about 0.2 s)

    try:
        check_scaffold_smiles(cfg["pmo"]["start"], config.scaffold_vocab, config.max_atoms)
    except ValueError as error:
        raise ValueError(f"pmo.start: {error}") from None
