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


def task_res(cfg: dict, task: str) -> int:
    """The atom-count parameter a task is fitted at: grid side, colours, sphere points, batch size."""
    return {
        "digits": cfg["digits"]["train_res"],
        "colour": cfg["colour"]["colours"],
        "sphere": cfg["sphere"]["points"],
        "cfm": cfg["cfm"]["batch_size"],
    }[task]


def test_groups(cfg: dict, task: str) -> dict[str, int]:
    """Test groups of a task and their resolution: 'test' at the training resolution, plus other digit grids."""
    groups = {"test": task_res(cfg, task)}
    if task == "digits":
        groups.update({f"test_r{r}": r for r in cfg["digits"]["test_res"] if r != cfg["digits"]["train_res"]})
    return groups


def fitted_models(cfg: dict, task: str) -> list[str]:
    """Model names fitted for a task: '{ra,oa}_L{L}' (L swept on digits only) and 'metaot'."""
    sweep = cfg["projections"] if task == "digits" else [cfg["main_projections"]]
    names = [f"{m}_L{L}" for L in sweep for m in ("ra", "oa")]
    if task in FIXED_SUPPORT_TASKS:
        names.append("metaot")
    return names


def predictions(cfg: dict, task: str) -> list[tuple[str, str]]:
    """(predictor, test group) pairs: every model and the sliced-mean ablation on 'test';
    RA/OA at the main L on the other resolutions (Meta-OT cannot change atom count)."""
    sweep = cfg["projections"] if task == "digits" else [cfg["main_projections"]]
    names = fitted_models(cfg, task) + [f"sliced_mean_L{L}" for L in sweep]
    runs = [(name, "test") for name in names]
    main = cfg["main_projections"]
    runs += [(f"{m}_L{main}", group) for group in test_groups(cfg, task) if group != "test" for m in ("ra", "oa")]
    return runs


def pack(groups: dict[str, dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Flatten {group: {key: array}} into one npz-ready dict with keys 'group__key'."""
    return {f"{group}{GROUP_SEP}{key}": value for group, arrays in groups.items() for key, value in arrays.items()}


def unpack(flat: dict[str, np.ndarray], group: str) -> dict[str, np.ndarray]:
    prefix = f"{group}{GROUP_SEP}"
    found = {key[len(prefix):]: value for key, value in flat.items() if key.startswith(prefix)}
    if not found:
        raise KeyError(f"no group '{group}' in file (groups: {sorted(group_names(flat))})")
    return found


def group_names(flat: dict[str, np.ndarray]) -> list[str]:
    return sorted({key.split(GROUP_SEP)[0] for key in flat})
