"""The experiment of one scale of ``config/fairness_audit.yaml``: which data sets exist, which coalitions are valued
and which feature sets the tuned predictor is trained on, and the checks of the config that the schema cannot
express (run when the workflow is parsed, before any job).

Data set names: ``{scenario}_s{seed}`` for the SCM scenario families, ``random_{i}`` for draws from the prior, and
``adult``, ``compas``, ``german`` for the real data sets (paper scale).

Shapley values are exact (all ``2^d`` coalitions, ``d <= 12``) or Monte Carlo over ``permutations`` random orders
(``shapley.method``); the coalitions a Monte Carlo run needs are known before any measure is computed (the orders
depend on the seed only), plus every singleton and every leave-one-out set for the marginal and leave-one-out
baselines. The tuned predictor is trained on a feature-set grid (the full set, every leave-one-out set,
every singleton) and on the removal sets of the feature-selection rankings, so the selection experiment is read
off the same fits.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

# the workflow parses with this module: names come from .catalog, and the modules that need pandas, scipy or
# scikit-learn (data, scm, true_bias) are imported inside the functions that use them
from .catalog import MEASURE_NOTIONS, READER_NAMES, SCENARIO_NAMES
from .shapley import MAX_EXACT_PLAYERS, monte_carlo_shapley
from .sources import SOURCES

if TYPE_CHECKING:
    from .data import AuditData

__all__ = [
    "check_config",
    "coalition_masks",
    "dataset_names",
    "make_dataset",
    "parse_dataset",
    "redundancy_datasets",
    "scm_dataset",
    "true_bias_coalitions",
]

REAL_PLAYERS = {"adult": 11, "compas": 8, "german": 12}  # players of real_data's readers
_SCM = re.compile(r"^(?P<scenario>[a-z_]+)_s(?P<seed>\d+)$")
_RANDOM = re.compile(r"^random_(?P<index>\d+)$")


def dataset_names(cfg: dict) -> list[str]:
    scm = cfg["scm"]
    names = [f"{s}_s{seed}" for s in scm["scenarios"] for seed in scm["seeds"]]
    names += [f"random_{i}" for i in range(scm["random_draws"])]
    return names + list(cfg["real"]["datasets"])


def redundancy_datasets(cfg: dict) -> list[str]:
    """The data sets of the redundancy check (claim C3): every seed of the scenario ``redundancy.scenario``."""
    return [f"{cfg['redundancy']['scenario']}_s{seed}" for seed in cfg["scm"]["seeds"]]


def parse_dataset(name: str) -> dict:
    """``{"kind": "real"|"scm"|"random", ...}`` of a data set name; ValueError for a name of none of the forms."""
    if name in READER_NAMES:
        return {"kind": "real", "name": name}
    if match := _RANDOM.match(name):
        return {"kind": "random", "index": int(match["index"])}
    if (match := _SCM.match(name)) and match["scenario"] in SCENARIO_NAMES:
        return {"kind": "scm", "scenario": match["scenario"], "seed": int(match["seed"])}
    raise ValueError(
        f"unknown data set {name!r}: expected <scenario>_s<seed> with a scenario of {list(SCENARIO_NAMES)}, "
        f"random_<i>, or one of {list(READER_NAMES)}"
    )


def scenario_of(name: str) -> str:
    parsed = parse_dataset(name)
    return parsed.get("scenario", parsed["kind"] if parsed["kind"] == "random" else "real")


def scm_dataset(cfg: dict, name: str) -> tuple[AuditData, dict]:
    """The sampled SCM data set ``name`` and its parameters (JSON-able)."""
    from .scm import random_draw, sample_scm, scenario

    parsed, scm = parse_dataset(name), cfg["scm"]
    if parsed["kind"] == "scm":
        params = scenario(parsed["scenario"], scm["d"], parsed["seed"])
        seed = parsed["seed"]
    elif parsed["kind"] == "random":
        seed = cfg["seed"] * 1000 + parsed["index"]
        params = random_draw(scm["d"], seed)
    else:
        raise ValueError(f"{name!r} is a real data set, not an SCM draw")
    data = sample_scm(params, scm["n"], seed=seed + 7919, name=name, min_group=cfg["min_group"])
    return data, params.to_dict()


def make_dataset(name: str, settings, raw: list[str]) -> tuple[AuditData, dict]:
    """Data set ``name`` and how it was made: a real data set read from its raw files (``settings.real``: source,
    impute, missing; ``settings.min_group``), or an SCM draw (``settings.seed``, ``settings.min_group``,
    ``settings.scm``)."""
    if parse_dataset(name)["kind"] == "real":
        from .real_data import READERS

        real = settings.real
        options = {"min_group": settings.min_group, "impute": real["impute"]}
        if name == "adult":
            options["missing"] = real["missing"]
        return READERS[name](*raw, **options), {"source": real["source"], "files": list(raw)}
    return scm_dataset({"seed": settings.seed, "min_group": settings.min_group, "scm": settings.scm}, name)


def coalition_masks(d: int, method: str, permutations: int, seed: int) -> list[int] | None:
    """The coalitions to value: None (all ``2^d``) for exact Shapley, else the masks the Monte Carlo orders reach,
    every singleton and every leave-one-out set."""
    if method == "exact":
        if d > MAX_EXACT_PLAYERS:
            raise ValueError(
                f"exact Shapley over {d} players would value 2^{d} coalitions; the limit is "
                f"{MAX_EXACT_PLAYERS} players: use shapley.method: monte_carlo"
            )
        return list(range(1 << d))
    reached: set[int] = set()
    monte_carlo_shapley(lambda mask: reached.add(int(mask)) or 0.0, d, permutations, seed)
    full = (1 << d) - 1
    reached |= {0, full} | {1 << i for i in range(d)} | {full ^ (1 << i) for i in range(d)}
    return sorted(reached)


def true_bias_coalitions(players: list[str], rankings: dict[str, list[str]], k_max: int) -> list[tuple[str, ...]]:
    """The grid (full set, leave-one-out sets, singletons) and every ranking's removal sets up to k_max."""
    from .true_bias import coalition_key, standard_coalitions

    sets = [tuple(c) for c in standard_coalitions(players)]
    for ranking in rankings.values():
        for k in range(1, k_max + 1):
            removed = set(ranking[:k])
            sets.append(tuple(p for p in players if p not in removed))
    out, seen = [], set()
    for coalition in sets:
        key = coalition_key(coalition)
        if coalition and key not in seen:
            seen.add(key)
            out.append(coalition)
    return out


def check_config(cfg: dict) -> None:
    """Raise ValueError naming the first problem the schema cannot see."""
    for name in dataset_names(cfg):
        parse_dataset(name)
    if len(set(dataset_names(cfg))) != len(dataset_names(cfg)):
        raise ValueError(f"data sets are listed twice: {dataset_names(cfg)}")
    unknown = [m for m in cfg["measures"] if m not in MEASURE_NOTIONS]
    if unknown:
        raise ValueError(f"unknown measures {unknown}, expected some of {sorted(MEASURE_NOTIONS)}")
    for notion, measure in cfg["selection"]["measures"].items():
        if measure not in cfg["measures"]:
            raise ValueError(f"selection.measures.{notion}: {measure!r} is not among the measures {cfg['measures']}")
        if MEASURE_NOTIONS[measure] != notion:
            raise ValueError(
                f"selection.measures.{notion}: {measure!r} is aligned with {MEASURE_NOTIONS[measure]}, not {notion}"
            )
    for key in ("selection", "axioms"):
        if cfg[key]["estimator"] not in cfg["estimators"]:
            raise ValueError(
                f"{key}.estimator {cfg[key]['estimator']!r} is not among the estimators {cfg['estimators']}"
            )
    if "ce" not in cfg["estimators"]:
        raise ValueError("estimators must include 'ce' (the DPI check and the validation use it)")
    method = cfg["shapley"]["method"]
    names = dataset_names(cfg)
    widths = [cfg["scm"]["d"]] if any(parse_dataset(n)["kind"] != "real" for n in names) else []
    widths += [REAL_PLAYERS[name] for name in cfg["real"]["datasets"]]
    if method == "exact" and max(widths, default=0) > MAX_EXACT_PLAYERS:
        raise ValueError(
            f"shapley.method exact: a data set has {max(widths)} features, more than the "
            f"{MAX_EXACT_PLAYERS} exact Shapley allows (2^d coalitions): use monte_carlo"
        )
    if cfg["real"]["source"] not in SOURCES:
        raise ValueError(f"real.source must be one of {SOURCES}, got {cfg['real']['source']!r}")
    red = cfg["redundancy"]
    if red["scenario"] not in cfg["scm"]["scenarios"] or not cfg["scm"]["seeds"]:
        raise ValueError(
            f"redundancy.scenario {red['scenario']!r} must be one of the SCM scenarios "
            f"{cfg['scm']['scenarios']}, with at least one seed"
        )
    if red["player"] not in [f"X{i + 1}" for i in range(cfg["scm"]["d"])]:
        raise ValueError(
            f"redundancy.player {red['player']!r} is not a feature of the SCM data sets (X1..X{cfg['scm']['d']})"
        )
    if red["estimator"] not in cfg["estimators"]:
        raise ValueError(f"redundancy.estimator {red['estimator']!r} is not among the estimators")
    split = cfg["true_bias"]["split"]
    if len(split) != 3 or not np.isclose(sum(split), 1.0) or min(split) <= 0:
        raise ValueError(f"true_bias.split must be three positive fractions summing to 1, got {split}")
