"""Paper 02's measured values for the claims and checks of ``config/claims/analogtobi.yaml``.

Rates pool the samples of every seed of an arm (counts from the ablation table) and are decided by an interval that
is the union of the pooled Wilson interval (one rate) or Newcombe interval (a difference of two rates, arms taken as
independent) and the range of the per-seed values, so that seeds disagreeing in direction leave the verdict
inconclusive. The realism claim compares MMD^2 values by a percentile bootstrap over the valid samples of both arms.
A missing arm, or an arm without samples, gives NaN (inconclusive), never a value that passes.

Checks read the data and the samples: every terminated grammar-decoded walk passes the ERC; every training
circuit's bipartite walk is accepted by the grammar and decodes back to an isomorphic circuit; the same round trip for
device-pin walks.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd

from neurips26.common.claims import Measured, rate_difference, wilson

from . import devpin, serialize
from .evaluation import FEATURES
from .generate import graph_of, isomorphic
from .grammar import accepts
from .metrics import median_bandwidth, mmd2
from .netlist import parse

__all__ = ["measure_claims"]

_F = [f"f_{f}" for f in FEATURES]


def _arm(ablation: pd.DataFrame, config: str, decoding: str) -> pd.DataFrame:
    return ablation[(ablation["config"] == config) & (ablation["decoding"] == decoding)]


def _rate(claim_id: str, arm: pd.DataFrame, events: str, trials: str, what: str) -> Measured:
    k, n = int(arm[events].sum()), int(arm[trials].sum())
    if n == 0:
        return Measured(claim_id, math.nan, 0, note=f"{what}: no samples")
    low, high = wilson(k, n)
    per_seed = (arm[events] / arm[trials]).dropna()
    low, high = min(low, per_seed.min()), max(high, per_seed.max())
    seeds = ", ".join(f"{s}: {e}/{t}" for s, e, t in zip(arm["seed"], arm[events], arm[trials]))
    return Measured(claim_id, k / n, len(arm), low=low, high=high,
                    note=f"{what}: {k}/{n} pooled over {len(arm)} seed(s) (per seed {seeds}); interval: 95% Wilson "
                         f"joined with the per-seed range")  # fmt: skip


def _difference(claim_id: str, a: pd.DataFrame, b: pd.DataFrame, events: str, trials: str, what: str) -> Measured:
    ka, na, kb, nb = (int(a[events].sum()), int(a[trials].sum()), int(b[events].sum()), int(b[trials].sum()))
    if na == 0 or nb == 0:
        return Measured(claim_id, math.nan, 0, note=f"{what}: an arm has no samples ({ka}/{na} vs {kb}/{nb})")
    spread = rate_difference(ka, na, kb, nb)
    paired = a.set_index("seed")[events] / a.set_index("seed")[trials] - (
        b.set_index("seed")[events] / b.set_index("seed")[trials]
    )
    paired = paired.dropna()
    low = min(spread.low, paired.min()) if len(paired) else spread.low
    high = max(spread.high, paired.max()) if len(paired) else spread.high
    per_seed = ", ".join(f"{s}: {v:+.3f}" for s, v in paired.items())
    return Measured(claim_id, spread.mean, min(len(a), len(b)), low=low, high=high,
                    note=f"{what}: {ka}/{na} vs {kb}/{nb}, difference {spread.mean:+.3f} (per seed {per_seed}); "
                         f"interval: 95% Newcombe joined with the per-seed differences")  # fmt: skip


def _mmd_difference(claim_id: str, worse: pd.DataFrame, better: pd.DataFrame, reference: pd.DataFrame,
                    what: str, resamples: int = 200, seed: int = 0) -> Measured:  # fmt: skip
    """MMD^2(worse) - MMD^2(better) against the held-out circuits, with a bootstrap over the valid samples."""
    x, y, ref = (d[_F].to_numpy(float) for d in (worse, better, reference))
    if min(len(x), len(y), len(ref)) < 2:
        return Measured(claim_id, math.nan, 0,
                        note=f"{what}: needs 2 valid samples per arm, has {len(x)} and {len(y)}")  # fmt: skip
    h = median_bandwidth(ref)  # one bandwidth for the point and every resample
    value = mmd2(x, ref, h) - mmd2(y, ref, h)
    seeds = min(worse["seed"].nunique(), better["seed"].nunique())
    rng = np.random.default_rng(seed)
    draws = [
        mmd2(x[rng.integers(0, len(x), len(x))], ref, h) - mmd2(y[rng.integers(0, len(y), len(y))], ref, h)
        for _ in range(resamples)
    ]
    low, high = np.quantile(draws, [0.025, 0.975])
    return Measured(claim_id, value, seeds, low=min(low, value), high=max(high, value),
                    note=f"{what}: MMD^2 {mmd2(x, ref, h):.4f} vs {mmd2(y, ref, h):.4f} ({len(x)} and {len(y)} valid "
                         f"samples of {seeds} seed(s), {len(ref)} held-out circuits); 95% percentile bootstrap over "
                         f"samples, "
                         f"{resamples} resamples")  # fmt: skip


def _checks(metrics: pd.DataFrame, circuits: pd.DataFrame, walks: dict[str, pd.DataFrame]) -> list[Measured]:
    out = []
    grammar = metrics[(metrics["decoding"] == "grammar") & metrics["terminated"]]
    ok = int((grammar["erc"] == 0).sum())
    out.append(Measured("K1", ok / len(grammar) if len(grammar) else math.nan, len(grammar),
                        note=f"{ok}/{len(grammar)} terminated grammar-decoded walks pass the ERC"))  # fmt: skip
    train = circuits[circuits["split"] == "train"].set_index("id")
    for claim_id, rep in (("K2", "bipart"), ("K3", "devpin")):
        first = walks[rep][(walks[rep]["split"] == "train") & (walks[rep]["walk"] == 0)]
        good = 0
        for w in first.itertuples():
            tokens = w.tokens.split()
            c = train.loc[w.id]
            original = parse(c.netlist, c.path, duplicate_names="renumber")
            if rep == "bipart":
                back = serialize.circuit_of(tokens) if accepts(tokens)[0] else None
            else:
                back = devpin.decode(tokens) if devpin.erc_level(tokens) == 0 else None
            good += back is not None and isomorphic(graph_of(back), graph_of(original))
        what = "accepted by the grammar and decoded" if rep == "bipart" else "decoded"
        out.append(Measured(claim_id, good / len(first) if len(first) else math.nan, len(first),
                            note=f"{good}/{len(first)} training circuits' first {rep} walks {what} back to an "
                                 f"isomorphic circuit"))  # fmt: skip
    return out


def measure_claims(
    ablation: pd.DataFrame,
    metrics: pd.DataFrame,
    reference: pd.DataFrame,
    circuits: pd.DataFrame,
    walks: dict[str, pd.DataFrame],
    main: dict,
) -> list[Measured]:
    cfg, dec = main["config"], main["decoding"]
    plain = cfg.replace("-rename", "-norename") if cfg.endswith("-rename") else cfg
    devpin_arm = _arm(ablation, "devpin-type-norename", "free")
    main_arm = _arm(ablation, cfg, dec)
    norename = _arm(ablation, plain, dec)
    random_arm = _arm(ablation, "random", "grammar")
    real_rate = (reference["spice"] == "converged").mean() if len(reference) else math.nan
    electrical = _rate("C2", main_arm, "spice_converged", "spice_first", f"{cfg} {dec}")
    electrical = replace(electrical, note=f"{electrical.note}; held-out real circuits under the same models and bias: "
                                          f"{real_rate:.3f} converge")  # fmt: skip
    if "unavailable" in set(metrics["spice"]):
        electrical = Measured("C2", math.nan, 0, note="ngspice is not installed: electrical validity not measured")
    main_valid = metrics[(metrics["config"] == cfg) & (metrics["decoding"] == dec) & metrics["valid"]]
    random_valid = metrics[(metrics["config"] == "random") & metrics["valid"]]
    return [
        *_checks(metrics, circuits, walks),
        _rate("C1", main_arm, "valid", "samples", f"validity of {cfg} {dec}"),
        electrical,
        _difference(
            "C3", main_arm, _arm(ablation, cfg, "free"), "valid", "samples", f"validity of {cfg} grammar vs free"
        ),  # fmt: skip
        _difference(
            "C4",
            _arm(ablation, "bipart-type-norename", "grammar"),
            devpin_arm,
            "valid",
            "samples",
            "validity of bipart-type-norename grammar vs devpin-type-norename",
        ),  # fmt: skip
        _difference(
            "C5",
            _arm(ablation, "bipart-type-norename", "free"),
            devpin_arm,
            "valid",
            "samples",
            "validity of bipart-type-norename free vs devpin-type-norename",
        ),  # fmt: skip
        _difference(
            "C6", main_arm, devpin_arm, "novel", "samples", f"valid and novel of {cfg} {dec} vs devpin-type-norename"
        ),  # fmt: skip
        _difference("C7", main_arm, norename, "novel", "valid", f"novel among valid, {cfg} vs {plain} ({dec})"),
        _difference(
            "C8",
            main_arm,
            norename,
            "memorised_valid",
            "valid",
            f"10-gram memorisation among valid walks, {cfg} vs {plain} ({dec})",
        ),  # fmt: skip
        _rate("C9", main_arm, "type_ok", "valid", f"type accuracy of {cfg} {dec}"),
        _difference(
            "C10",
            main_arm,
            random_arm,
            "type_ok",
            "valid",
            f"type accuracy of {cfg} {dec} vs random logits under the grammar",
        ),  # fmt: skip
        _mmd_difference(
            "C11", random_valid, main_valid, reference, f"realism: random logits vs {cfg} {dec}"
        ),  # fmt: skip
    ]
