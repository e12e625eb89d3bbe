r"""Optimizer step time of each method relative to AdamW, side by side in one process on the same model.

For each method the whole mixed optimizer of a run is built on its own copy of one model whose gradients come
from one backward pass; after ``warmup`` steps the methods are stepped round-robin ``repeats`` times, so that
a change in the machine's load touches every method alike, and the median wall time of the whole step and of
the swept roles alone (embedding + head, or the router) is reported, with its ratio to the baseline's.

It does not use the shared training loop (neurips26.common.loop): nothing is trained here; one backward pass
gives the gradients that every method's optimizer steps on, and the steps are timed, not kept.
"""

from __future__ import annotations

import copy
import time

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from . import experiment
from .model import LM, kind_of
from .optimizers import build_optimizer

__all__ = ["step_time_table", "step_times"]


def _model_with_gradients(cfg: dict, arch: str, seed: int) -> LM:
    model = LM(experiment.model_config(cfg, arch, seed))
    gen = torch.Generator().manual_seed(seed)
    seq = cfg["train"]["seq_len"]
    tokens = torch.randint(0, model.config.vocab_size, (cfg["train"]["batch_size"], seq + 1), generator=gen)
    logits = model(tokens[:, :-1])
    F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1)).backward()
    return model


def step_times(cfg: dict, arch: str, repeats: int, warmup: int = 3, seed: int = 0) -> list[dict]:
    """Rows ``{arch, method, part, median_s, ratio_to_baseline, repeats}``, ``part`` in {"step", "swept"}."""
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    reference = _model_with_gradients(cfg, arch, seed)
    methods = list(cfg["methods"] if arch == "dense" else cfg["routers"])
    swept = ("embedding", "lm_head") if arch == "dense" else ("router",)
    mid = len(cfg["lr_multipliers"]) // 2
    optimizers = {}
    for method in methods:
        model = copy.deepcopy(reference)
        for p_ref, p in zip(reference.parameters(), model.parameters()):
            p.grad = p_ref.grad.clone()
        optimizers[method] = build_optimizer(
            model.named_parameters(), experiment.assignment(cfg, arch, method, mid), kind_of
        )
    times = {m: {"step": [], "swept": []} for m in methods}
    for i in range(warmup + repeats):
        for method, opt in optimizers.items():
            parts = {}
            for kind, inner in opt.optimizers.items():
                tick = time.perf_counter()
                inner.step()
                parts[kind] = time.perf_counter() - tick
            if i >= warmup:
                times[method]["step"].append(sum(parts.values()))
                times[method]["swept"].append(sum(parts[k] for k in swept if k in parts))
    baseline = cfg["baseline"] if arch == "dense" else cfg["router_baseline"]
    rows = []
    for method in methods:
        for part in ("step", "swept"):
            median = float(np.median(times[method][part]))
            base = float(np.median(times[baseline][part]))
            rows.append(
                {
                    "arch": arch,
                    "method": method,
                    "part": part,
                    "median_s": median,
                    "ratio_to_baseline": median / base if base > 0 else float("nan"),
                    "repeats": repeats,
                }
            )
    return rows


def step_time_table(cfg: dict, repeats: int) -> pd.DataFrame:
    """:func:`step_times` of both sweeps (``experiment.ARCHS``), the dense one first."""
    return pd.DataFrame([row for arch in experiment.ARCHS for row in step_times(cfg, arch, repeats)])
