"""Paper 02's tables from the per-sample metrics: the ablation table (the paper's Table 3: one row per configuration,
decoding and seed, then the mean and standard deviation over seeds), the per-type table of one configuration (the
paper's Table 2) and the throughput table.

Rates, all over the samples of a row unless said: ``validity`` (terminated and ERC-valid), ``novelty`` (valid and
novel, the paper's "Valid & Novel"; ``novel_of_valid`` divides by the valid samples, the paper's novelty),
``memorisation`` (the 10-gram test; ``memorised_of_valid`` among the valid samples; ``memorised_topology_of_valid``
index-free), ``type_accuracy`` (of the valid samples of a type-conditioned set, the classifier's type equal to the
requested one); ``*_canonical``: novelty and type accuracy with ports read by class, not by name; ``electrical``
(converged in ngspice among the first ``spice_per_type`` samples of each requested type, invalid ones counting as
failures; NaN where ngspice was unavailable), ``realism_mmd`` (MMD^2 of the valid samples' features against the
held-out circuits', NaN with fewer than 2 valid samples); ``cut`` (walks still open at the length limit) and
``erc1``..``erc5`` (terminated walks failing the ERC first at that level; 5: the designer rule).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .evaluation import FEATURES
from .metrics import mmd2

__all__ = ["RATES", "ablation_rows", "ablation_summary", "per_type_table"]

RATES = ["validity", "novelty", "novel_of_valid", "novel_of_valid_canonical", "memorisation", "memorised_of_valid",
         "memorised_topology_of_valid", "type_accuracy", "type_accuracy_canonical", "electrical",
         "realism_mmd"]  # fmt: skip
_F = [f"f_{f}" for f in FEATURES]


def _rates(group: pd.DataFrame, reference: np.ndarray, typed: bool) -> dict:
    n = len(group)
    valid = group[group["valid"]]
    first = group[group["spice"] != "not_simulated"]
    simulated = first[first["spice"].isin(["converged", "failed"])]
    unavailable = (first["spice"] == "unavailable").any()
    electrical = math.nan if unavailable or len(first) == 0 else float((first["spice"] == "converged").mean())
    mmd = mmd2(valid[_F].to_numpy(float), reference) if len(valid) >= 2 and len(reference) >= 2 else math.nan
    return {
        "samples": n,
        "terminated": int(group["terminated"].sum()),
        "valid": len(valid),
        "novel": int(group["novel"].sum()),
        "memorised": int(group["memorised"].sum()),
        "memorised_valid": int((group["memorised"] & group["valid"]).sum()),
        "novel_canonical": int(group["novel_canonical"].sum()),
        "memorised_topology_valid": int((group["memorised_topology"] & group["valid"]).sum()),
        "type_ok": int(group["type_ok"].sum()),
        "type_ok_canonical": int(group["type_ok_canonical"].sum()),
        "cut": int((~group["terminated"]).sum()),
        **{f"erc{k}": int((group["terminated"] & (group["erc"] == k)).sum()) for k in (1, 2, 3, 4, 5)},
        "spice_first": len(first),
        "spice_simulated": len(simulated),
        "spice_converged": int((first["spice"] == "converged").sum()),
        "validity": len(valid) / n if n else math.nan,
        "novelty": float(group["novel"].mean()) if n else math.nan,
        "novel_of_valid": float(valid["novel"].mean()) if len(valid) else math.nan,
        "novel_of_valid_canonical": float(valid["novel_canonical"].mean()) if len(valid) else math.nan,
        "memorisation": float(group["memorised"].mean()) if n else math.nan,
        "memorised_of_valid": float(valid["memorised"].mean()) if len(valid) else math.nan,
        "memorised_topology_of_valid": float(valid["memorised_topology"].mean()) if len(valid) else math.nan,
        "type_accuracy": float(valid["type_ok"].mean()) if typed and len(valid) else math.nan,
        "type_accuracy_canonical": float(valid["type_ok_canonical"].mean()) if typed and len(valid) else math.nan,
        "electrical": electrical,
        "realism_mmd": mmd,
        "mean_devices": float(valid["n_devices"].mean()) if len(valid) else math.nan,
    }


def ablation_rows(metrics: pd.DataFrame, reference: pd.DataFrame) -> pd.DataFrame:
    """One row per (configuration, decoding, seed) of the per-sample ``metrics`` (columns ``config``, ``decoding``,
    ``seed``, ``typed`` and :mod:`.evaluation`'s), against the held-out circuits' ``reference`` features."""
    ref = reference[_F].to_numpy(float)
    rows = []
    for (config, decoding, seed), group in metrics.groupby(["config", "decoding", "seed"], sort=False):
        rows.append({"config": config, "decoding": decoding, "seed": int(seed),
                     **_rates(group, ref, bool(group["typed"].iloc[0]))})  # fmt: skip
    return pd.DataFrame(rows)


def ablation_summary(rows: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation over seeds of every rate of :func:`ablation_rows`, per (config, decoding)."""
    out = []
    for (config, decoding), group in rows.groupby(["config", "decoding"], sort=False):
        row = {"config": config, "decoding": decoding, "seeds": len(group), "samples": int(group["samples"].sum())}
        for rate in RATES:
            values = group[rate].astype(float)
            row[rate] = float(values.mean()) if values.notna().any() else math.nan
            row[f"{rate}_sd"] = float(values.std(ddof=1)) if values.notna().sum() > 1 else math.nan
        out.append(row)
    return pd.DataFrame(out)


def per_type_table(metrics: pd.DataFrame, reference: pd.DataFrame, config: str, decoding: str) -> pd.DataFrame:
    """The rates per requested type for one configuration and decoding, seeds pooled."""
    chosen = metrics[(metrics["config"] == config) & (metrics["decoding"] == decoding)]
    rows = []
    for circuit_type, group in chosen.groupby("type", sort=True):
        ref = reference[reference["type"] == circuit_type][_F].to_numpy(float)
        rows.append({"type": circuit_type, **_rates(group, ref, True)})
    return pd.DataFrame(rows)
