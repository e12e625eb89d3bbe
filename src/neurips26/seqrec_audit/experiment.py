"""Paper 10's config: what each dataset name means, the TGH settings built from a scale's block, and
the checks the schema cannot express (run at parse time, before any job)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from neurips26.common.sources import is_fetchable
from neurips26.seqrec_audit.catalog import REGIMES, SyntheticSpec, regime_spec
from neurips26.seqrec_audit.methods import BASELINE_NAMES, TRAINED

if TYPE_CHECKING:  # the workflow parses with this module: scipy (heuristic) is imported where it is used
    from neurips26.seqrec_audit.heuristic import TGHConfig

K = 10  # TGH returns ranked top-10 lists; its ring budgets must fill them
# Amazon 2014 (McAuley et al., SNAP) 5-core categories used by the paper, as named in the files
AMAZON_CATEGORIES = {
    "amazon_beauty": "Beauty",
    "amazon_sports": "Sports_and_Outdoors",
    "amazon_toys": "Toys_and_Games",
    "amazon_cds": "CDs_and_Vinyl",
}
REAL = {"ml100k": "movielens100k", "ml1m": "movielens1m", **{name: "amazon2014" for name in AMAZON_CATEGORIES}}
REPLICATE = re.compile(r"^(?P<regime>[a-z_]+)_seed(?P<seed>\d+)$")


def replicate_name(regime: str, seed: int) -> str:
    """The dataset name of `regime` regenerated with data seed `seed` (a replicate for the claims' seed spread)."""
    return f"{regime}_seed{seed}"


def replicate_of(name: str) -> tuple[str, int | None]:
    """(regime, data seed) of a replicate name such as `shortcut_rich_seed1`; (name, None) for any other dataset."""
    match = REPLICATE.match(name)
    if match and match["regime"] in REGIMES:
        return match["regime"], int(match["seed"])
    return name, None


def replicate_datasets(cfg: dict) -> list[str]:
    """Every replicate dataset of this scale's `replicates` block (none when the block is absent)."""
    block = cfg.get("replicates", {})
    return [replicate_name(regime, seed) for regime in block.get("datasets", []) for seed in block.get("seeds", [])]


BATCHED = ("sasrec", "bert4rec")  # the models whose seeds train together (seeds.py); TIGER trains one seed per job
SEED_GROUP = re.compile(r"^\d+(-\d+)*$")


def seed_groups(cfg: dict, model: str) -> list[list[int]]:
    """The trained seeds of `model` cut into the groups one job trains together: `trained.seeds` in order, in
    groups of `trained.seeds_per_job` (default 1) for SASRec and BERT4Rec, one seed per group for TIGER."""
    trained = cfg["trained"]
    size = trained.get("seeds_per_job", 1) if model in BATCHED else 1
    seeds = list(trained["seeds"])
    return [seeds[start : start + size] for start in range(0, len(seeds), size)]


def seed_group_name(seeds: list[int]) -> str:
    """A group's name in the train rule's paths, `{model}_s{name}`: its seeds joined by '-' ('0-1-2'; '0')."""
    return "-".join(str(int(seed)) for seed in seeds)


def parse_seed_group(name: str) -> list[int]:
    """The seeds of a group name ('0-1-2' -> [0, 1, 2]); distinct seeds only."""
    if not SEED_GROUP.match(name):
        raise ValueError(f"seed group {name!r} is not seeds joined by '-' (e.g. '0-1-2')")
    seeds = [int(part) for part in name.split("-")]
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seed group {name!r} repeats a seed")
    return seeds


def trained_jobs(cfg: dict) -> list[tuple[str, str]]:
    """(model, seed group name) of every train job of one dataset, models in `trained.models` order."""
    return [(m, seed_group_name(group)) for m in cfg["trained"]["models"] for group in seed_groups(cfg, m)]


def dataset_kind(name: str) -> str:
    """'synthetic' for a regime of the generator (or a replicate of one), else the reader of a real dataset."""
    if replicate_of(name)[1] is not None or name in REGIMES:
        return "synthetic"
    if name in REAL:
        return REAL[name]
    raise ValueError(f"unknown dataset {name!r}; known: {sorted(REGIMES) + sorted(REAL)}")


def source_files(name: str) -> dict[str, str]:
    """The downloaded files a real dataset reads, by role (archive, or reviews and meta); none for ML-100k (inside
    the recbole wheel) and the synthetic regimes."""
    kind = dataset_kind(name)
    if kind == "movielens1m":
        return {"archive": "ml-1m.zip"}
    if kind == "amazon2014":
        category = AMAZON_CATEGORIES[name]
        return {"reviews": f"reviews_{category}_5.json.gz", "meta": f"meta_{category}.json.gz"}
    return {}


def synthetic_spec(cfg: dict, name: str) -> SyntheticSpec:
    """The regime `name` at this scale's size (`synthetic` block), seeded by the scale's seed, or for a replicate
    name (`<regime>_seed<k>`) by data seed k."""
    regime, seed = replicate_of(name)
    return regime_spec(regime, seed=cfg["seed"] if seed is None else seed, **cfg["synthetic"])


def tgh_configs(cfg: dict) -> dict[str, TGHConfig]:
    """One TGHConfig per variant of `tgh.variants` (name -> ring budgets per source), with the shared alpha,
    padding, seed and the protocol's history flag."""
    from neurips26.seqrec_audit.heuristic import TGHConfig

    t = cfg["tgh"]
    return {
        name: TGHConfig(
            budgets=tuple(tuple(b) for b in budgets),
            alpha=t["alpha"],
            pad=t["pad"],
            seed=t["seed"],
            exclude_history=cfg["protocol"]["exclude_history"],
        )
        for name, budgets in t["variants"].items()
    }


def training_free_methods(cfg: dict) -> list[str]:
    return list(cfg["methods"])


def check_config(cfg: dict) -> None:
    """Raise ValueError naming the key: unknown datasets or methods, TGH ring budgets that do not sum to 10 (or a
    variant name that does not start with `tgh`), a bad synthetic size, a trained model without valid settings,
    replicates of a dataset that is not a synthetic regime of this scale, or with the scale's own seed, a `bound`
    block on a regime that is not among the datasets or with fewer than 2 data seeds."""
    for name in cfg["datasets"]:
        try:
            kind = dataset_kind(name)
        except ValueError as error:
            raise ValueError(f"datasets: {error}") from None
        unchecked = [f for f in source_files(name).values() if not is_fetchable(f"seqrec_audit/{f}")]
        if unchecked:
            raise ValueError(
                f"datasets: {name} needs {unchecked}, which are neither pinned nor locked on first fetch "
                f"(config/sources.yaml, folder seqrec_audit); pin or lock them there, or drop the dataset"
            )
        if kind == "synthetic":
            try:
                synthetic_spec(cfg, name)
            except ValueError as error:
                raise ValueError(f"synthetic: {error}") from None
    replicates = cfg.get("replicates", {})
    for regime in replicates.get("datasets", []):
        if regime not in REGIMES or regime not in cfg["datasets"]:
            raise ValueError(
                f"replicates.datasets: {regime} is not a synthetic regime among `datasets` "
                f"({[d for d in cfg['datasets'] if d in REGIMES]})"
            )
    if cfg["seed"] in replicates.get("seeds", []):
        raise ValueError(f"replicates.seeds: {cfg['seed']} is the scale's own `seed` (the regimes themselves)")
    bound = cfg.get("bound")
    if bound:
        if bound["regime"] not in REGIMES or bound["regime"] not in cfg["datasets"]:
            raise ValueError(f"bound.regime: {bound['regime']} is not a synthetic regime among `datasets`")
        if int(bound["n_seeds"]) < 2:
            raise ValueError(f"bound.n_seeds: {bound['n_seeds']} data seeds give no interval (at least 2)")
    variants = cfg["tgh"]["variants"]
    for name, budgets in variants.items():
        if not name.startswith("tgh"):
            raise ValueError(
                f"tgh.variants.{name}: variant names start with 'tgh' (claims tell TGH from the "
                f"baselines by that prefix)"
            )
        total = sum(sum(b) for b in budgets)
        if total != K:
            raise ValueError(f"tgh.variants.{name}: ring budgets {budgets} sum to {total}, not K={K}")
    known = set(BASELINE_NAMES) | set(variants)
    unknown = [m for m in cfg["methods"] if m not in known]
    if unknown:
        raise ValueError(
            f"methods: {unknown} are neither baselines {sorted(BASELINE_NAMES)} nor TGH variants {sorted(variants)}"
        )
    if not any(m in variants for m in cfg["methods"]):
        raise ValueError(f"methods: no TGH variant among {cfg['methods']}; the audit compares TGH with the rest")
    for name in cfg["trained"]["models"]:
        if name not in cfg:
            raise ValueError(f"trained.models: {name} has no `{name}:` block of settings")
    for name in (n for n in TRAINED if n in cfg):
        block = cfg[name]  # value ranges are the schema's; the model modules (torch) are not imported at parse time
        if block["d_model"] % block["n_heads"]:
            raise ValueError(f"{name}: d_model {block['d_model']} is not divisible by n_heads {block['n_heads']}")
