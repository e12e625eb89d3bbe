r"""Optimizer step time of each method relative to AdamW, side by side in one process on the same model.

For each method the whole mixed optimizer of a run is built on one model whose gradients come from one backward
pass; after ``warmup`` steps the methods are stepped round-robin ``repeats`` times, so that a change in the
machine's load touches every method alike, and the median wall time of the whole step and of the swept roles
alone (embedding + head, or the router) is reported, with its ratio to the baseline's.

Every method steps the same weights with the same gradients: the weights drift by each method's small steps,
which changes no step's arithmetic (fixed iteration counts, no data-dependent branch), and the job holds one
model, its gradients and each method's optimizer state rather than a model and a gradient per method (at paper
scale 5.0 GB for the dense model's weights and gradients instead of 25 GB with four copies, and 7.6 instead of
30.5 GB for the MoE model). The model lives on ``device`` (the job's: a GPU at paper scale), and a step is timed
from a synchronised start to a synchronised end there.

It does not use the shared training loop (neurips26.common.loop): nothing is trained here; one backward pass
gives the gradients that every method's optimizer steps on, and the steps are timed, not kept.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from . import experiment
from .model import LM, kind_of
from .optimizers import build_optimizer

__all__ = ["step_time_table", "step_times"]


def _model_with_gradients(cfg: dict, arch: str, seed: int, device: torch.device) -> LM:
    model = LM(experiment.model_config(cfg, arch, seed)).to(device)
    gen = torch.Generator().manual_seed(seed)
    seq = cfg["train"]["seq_len"]
    tokens = torch.randint(0, model.config.vocab_size, (cfg["train"]["batch_size"], seq + 1), generator=gen)
    # one row at a time, each row's mean loss over the batch: the gradient of the batch's mean loss (rows are of
    # equal length) with the logits of one row alive (28 x 1,024 x 151,936 fp32 logits are 17 GB at paper scale)
    for row in tokens.to(device).split(1):
        logits = model(row[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), row[:, 1:].reshape(-1)) / len(tokens)
        loss.backward()
    return model


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def step_times(
    cfg: dict, arch: str, repeats: int, warmup: int = 3, seed: int = 0, device: torch.device | str = "cpu"
) -> list[dict]:
    """Rows ``{arch, method, part, median_s, ratio_to_baseline, repeats}``, ``part`` in {"step", "swept"}."""
    if repeats < 1 or warmup < 0:
        raise ValueError(f"need repeats >= 1 and warmup >= 0, got {repeats} and {warmup}")
    device = torch.device(device)
    model = _model_with_gradients(cfg, arch, seed, device)
    methods = list(cfg["methods"] if arch == "dense" else cfg["routers"])
    swept = ("embedding", "lm_head") if arch == "dense" else ("router",)
    mid = len(cfg["lr_multipliers"]) // 2
    optimizers = {}
    for method in methods:
        optimizers[method] = build_optimizer(
            model.named_parameters(), experiment.assignment(cfg, arch, method, mid), kind_of
        )
    times = {m: {"step": [], "swept": []} for m in methods}
    for i in range(warmup + repeats):
        for method, opt in optimizers.items():
            parts = {}
            for kind, inner in opt.optimizers.items():
                _synchronize(device)
                tick = time.perf_counter()
                inner.step()
                _synchronize(device)
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


def step_time_table(cfg: dict, repeats: int, device: torch.device | str = "cpu", warmup: int = 3) -> pd.DataFrame:
    """:func:`step_times` of both sweeps (``experiment.ARCHS``) on ``device``, the dense one first, each method
    stepped ``warmup`` times untimed before the ``repeats``."""
    rows = [row for arch in experiment.ARCHS for row in step_times(cfg, arch, repeats, warmup, device=device)]
    return pd.DataFrame(rows)
