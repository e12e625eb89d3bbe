"""The experiment grid of paper 18: which predictors run on which task and test group.

Shared by the rules (to list model files) and the scripts (to loop over them), so both agree.
"""

from __future__ import annotations

import numpy as np

POTENTIAL_TASKS = ("digits", "colour", "sphere")
FIXED_SUPPORT_TASKS = ("digits", "sphere")  # Meta-OT's MLP needs one support shared by all pairs
GROUP_SEP = "__"
METHOD_LABELS = {
    "ra": "RA-OT",
    "oa": "OA-OT",
    "sliced_mean": "sliced mean (no regression)",
    "metaot": "Meta-OT (MLP)",
    "exact_emd": "exact OT (EMD)",
    "sinkhorn_cold": "Sinkhorn (cold)",
    "min_swgg": "min-SWGG",
    "expected_sliced": "expected sliced plan",
}


SEEDED_KINDS = ("ra", "oa", "metaot")


def check_config(cfg: dict) -> None:
    """What the schema cannot express and the jobs would refuse or silently skip, checked when the workflow is
    parsed (rules/functions/amortized_ot.smk), on every scale's block: ValueError naming the key."""
    if cfg["main_projections"] not in cfg["projections"]:
        raise ValueError(f"main_projections {cfg['main_projections']} is not one of projections {cfg['projections']}")
    if cfg["digits"]["train_res"] not in cfg["digits"]["test_res"]:
        raise ValueError(
            f"digits.train_res {cfg['digits']['train_res']} is not one of digits.test_res {cfg['digits']['test_res']}"
        )
    for task, kinds in cfg.get("seeded_models", {}).items():
        unknown = sorted(set(kinds) - set(SEEDED_KINDS))
        if unknown:
            raise ValueError(f"seeded_models.{task}: unknown models {unknown} (allowed values: {SEEDED_KINDS})")
        if "metaot" in kinds and task not in FIXED_SUPPORT_TASKS:
            raise ValueError(f"seeded_models.{task}: Meta-OT needs a fixed support ({FIXED_SUPPORT_TASKS})")


def task_res(cfg: dict, task: str) -> int:
    """The atom-count parameter a task is fitted at: grid side, colours, sphere points, batch size."""
    return {
        "digits": cfg["digits"]["train_res"],
        "colour": cfg["colour"]["colours"],
        "sphere": cfg["sphere"]["points"],
        "cfm": cfg["cfm"]["batch_size"],
    }[task]


def res_by_task(cfg: dict, tasks=POTENTIAL_TASKS) -> dict[str, int]:
    """Each task's training resolution (task_res), for the tables, figures and claims that read every task at it."""
    return {task: task_res(cfg, task) for task in tasks}


def test_groups(cfg: dict, task: str) -> dict[str, int]:
    """Test groups of a task and their resolution: 'test' at the training resolution, plus other digit grids."""
    groups = {"test": task_res(cfg, task)}
    if task == "digits":
        groups.update({f"test_r{r}": r for r in cfg["digits"]["test_res"] if r != cfg["digits"]["train_res"]})
    return groups


def fit_seeds(cfg: dict) -> list[int]:
    """The extra fit seeds (besides `seed`) at which the `seeded_models` are refitted on the same training
    pairs, to measure the spread of the comparisons over fits."""
    return [s for s in cfg.get("fit_seeds", []) if s != cfg["seed"]]


def _sweep(cfg: dict, task: str) -> list[int]:
    return cfg["projections"] if task == "digits" else [cfg["main_projections"]]


def seeded_models(cfg: dict, task: str) -> list[str]:
    """Model names refitted at every extra fit seed: RA/OA and Meta-OT, as `seeded_models` lists them per task,
    e.g. ['ra_L32_s1', 'oa_L32_s1', 'metaot_s1', ...]. RA/OA are refitted at every L of the task's sweep (digits:
    the projections, so that claim C4 rests on every fit seed; the other tasks: the main L)."""
    kinds = cfg.get("seeded_models", {}).get(task, [])
    names = []
    for seed in fit_seeds(cfg):
        names += [f"{m}_L{L}_s{seed}" for L in _sweep(cfg, task) for m in ("ra", "oa") if m in kinds]
        if "metaot" in kinds and task in FIXED_SUPPORT_TASKS:
            names.append(f"metaot_s{seed}")
    return names


def fitted_models(cfg: dict, task: str) -> list[str]:
    """Model names fitted for a task: '{ra,oa}_L{L}' (L swept on digits only) and 'metaot' at the base seed,
    then the refits at the extra fit seeds (seeded_models)."""
    names = [f"{m}_L{L}" for L in _sweep(cfg, task) for m in ("ra", "oa")]
    if task in FIXED_SUPPORT_TASKS:
        names.append("metaot")
    return names + seeded_models(cfg, task)


def seeded_sliced_means(cfg: dict, task: str) -> list[str]:
    """The sliced mean at the main L with each extra fit seed's directions, e.g. ['sliced_mean_L32_s1', ...], on
    every task where RA or OA is refitted: the hard claims' null per fit seed, drawn from the same directions as
    that seed's RA/OA fits (sliced.directions(L, dim, seed)), so that their differences pair like with like
    (issue 41's review). The sliced mean needs no fit: these are predictions only."""
    kinds = cfg.get("seeded_models", {}).get(task, [])
    if not any(m in kinds for m in ("ra", "oa")):
        return []
    return [f"sliced_mean_L{cfg['main_projections']}_s{seed}" for seed in fit_seeds(cfg)]


def predictions(cfg: dict, task: str) -> list[tuple[str, str]]:
    """(predictor, test group) pairs: every model and the sliced-mean ablation on 'test' (at the main L also with
    every extra fit seed's directions, seeded_sliced_means); RA/OA at the main L (every fit) and the sliced mean at
    the main L (every fit seed's directions: the hard claims' null) on the other resolutions (Meta-OT cannot change
    atom count)."""
    sliced = seeded_sliced_means(cfg, task)
    names = fitted_models(cfg, task) + [f"sliced_mean_L{L}" for L in _sweep(cfg, task)] + sliced
    runs = [(name, "test") for name in names]
    main = cfg["main_projections"]
    on_other_grids = [f"{m}_L{main}" for m in ("ra", "oa")] + [
        name for name in seeded_models(cfg, task) if parse_name(name, cfg["seed"])[:2] in (("ra", main), ("oa", main))
    ]
    on_other_grids += [f"sliced_mean_L{main}", *sliced]
    runs += [(name, group) for name in on_other_grids for group in test_groups(cfg, task) if group != "test"]
    return runs


def parse_name(name: str, base_seed: int) -> tuple[str, int, int]:
    """A predictor's (method, projections, fit seed): 'ra_L32_s1' -> ('ra', 32, 1), 'metaot' -> ('metaot', 0, base)."""
    stem, sep, seed = name.rpartition("_s")
    if not sep or not seed.isdigit():
        stem, seed = name, str(base_seed)
    method, _, L = stem.partition("_L")
    return method, int(L or 0), int(seed)


def pack(groups: dict[str, dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Flatten {group: {key: array}} into one npz-ready dict with keys 'group__key'."""
    return {f"{group}{GROUP_SEP}{key}": value for group, arrays in groups.items() for key, value in arrays.items()}


def unpack(flat: dict[str, np.ndarray], group: str) -> dict[str, np.ndarray]:
    prefix = f"{group}{GROUP_SEP}"
    found = {key[len(prefix) :]: value for key, value in flat.items() if key.startswith(prefix)}
    if not found:
        raise KeyError(f"no group '{group}' in file (groups: {sorted(group_names(flat))})")
    return found


def group_names(flat: dict[str, np.ndarray]) -> list[str]:
    return sorted({key.split(GROUP_SEP)[0] for key in flat})
