"""Paper 19's claims and checks (C1-C5): the measured values; the definitions (statements, kinds,
thresholds, minimum seeds) are in config/claims/amortix.yaml.

Claims comparing fine-tuned policies are decided from the spread over RL seeds: paired differences per seed
(Dr. GRPO minus the global baseline, seed by seed; a fine-tuned seed minus the pretrained policy, which has one
run) with a t interval. Missing rows give NaN (an inconclusive verdict), never a value that lets a comparison pass.
C3's null (the global baseline: REINFORCE centred on the batch mean, which differs from Dr. GRPO only in centring
rewards over the batch instead of within each scaffold's group) is subtracted seed by seed inside its value
(`beyond_null`, issue 41), so C3 tests what group centring adds; both sides are measured on the policies' sampled
outputs against size-matched sampled outputs of the pretrained policy (one decoding mode, issue 41's review).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
from scipy import stats

from neurips26.common.claims import Measured, beyond_null, measured_from_spread, t_interval

MAIN_VARIANT, BASELINE_VARIANT = "drgrpo", "global"
# C3's null (issue 41's review): the batch-mean baseline, Dr. GRPO without its mechanism (group centring) and nothing
# else; plain REINFORCE (`none`) would remove the baseline too
NULL_VARIANT = BASELINE_VARIANT
# the objective's four terms as they enter the score (their mean): QED, (10 - SA) / 9 and the two activity
# probabilities, whose columns are p_<target> (p_egfr, p_cdk2 for the surrogate; p_gsk3b, p_jnk3 with TDC's forests)
OBJECTIVE_TERMS = 4
INSTANCE_METHODS = ("graph GA", "per-instance RL")
SINGLE_SHOT = re.compile(r"^amortized (?P<variant>\w+) seed (?P<seed>\d+) \(single shot\)$")


def _single_shot_by_seed(decoration: pd.DataFrame, variant: str, scaffold_set: str = "test") -> dict[int, float]:
    """Seed -> single-shot mean score of one advantage variant's fine-tuned policies on a scaffold set."""
    rows = decoration[decoration["scaffold_set"] == scaffold_set]
    scores = {}
    for method, score in zip(rows["method"], rows["score"]):
        match = SINGLE_SHOT.match(method)
        if match and match["variant"] == variant:
            scores[int(match["seed"])] = float(score)
    return dict(sorted(scores.items()))


def _score(decoration: pd.DataFrame, method: str, scaffold_set: str = "test") -> float:
    """The score of one method's row; NaN when the row is missing."""
    rows = decoration[(decoration["scaffold_set"] == scaffold_set) & (decoration["method"] == method)]
    return float(rows["score"].iloc[0]) if len(rows) else math.nan


def _per_seed(differences: dict[int, float]) -> str:
    return "per seed " + ", ".join(f"s{s}: {d:+.4f}" for s, d in differences.items()) if differences else "no seeds"


def size_matched(outputs: pd.DataFrame, policy: str, pool: str = "pretrained", mode: str = "sample") -> pd.DataFrame:
    """C3's size-matched baseline, within one decoding mode (issue 41's review: matching a greedy output with a sampled
    one mixes the size change with the gap between decoding modes): for each of `policy`'s outputs in `mode`, the
    `pool` policy's output in the same mode (valid and scaffold-retaining) of the same scaffold whose number of added
    atoms (`n_new`) is closest to it; ties go to the lowest sample index. No oracle score enters the choice, so the
    baseline is the pool policy changed in size only. Greedy decoding has one output per scaffold, so only the sampled
    mode (`evaluate.k_values`' largest K per scaffold) leaves a size to choose. One row per target output: scaffold,
    target_sample, target_n_new, n_new, score and the components."""
    target = outputs[(outputs["method"] == policy) & (outputs["mode"] == mode)]
    candidates = outputs[
        (outputs["method"] == pool)
        & (outputs["mode"] == mode)
        & outputs["valid"].astype(bool)
        & outputs["retained"].astype(bool)
    ]
    merged = candidates.merge(
        target[["scaffold", "sample", "n_new"]].rename(columns={"sample": "target_sample", "n_new": "target_n_new"}),
        on="scaffold",
        how="inner",
    )
    merged = merged.assign(distance=(merged["n_new"] - merged["target_n_new"]).abs())
    order = merged.sort_values(["scaffold", "target_sample", "distance", "sample"])
    return order.groupby(["scaffold", "target_sample"], as_index=False).head(1).drop(columns=["distance"])


def objective_terms(rows: pd.DataFrame) -> dict[str, pd.Series]:
    """The objective's terms of each row, by name: QED, SA ((10 - SA) / 9) and P_<TARGET> per activity column."""
    terms = {"QED": rows["qed"], "SA": (10.0 - rows["sa"]) / 9.0}
    return terms | {c.upper(): rows[c] for c in rows.columns if c.startswith("p_")}


def _term_means(rows: pd.DataFrame) -> dict[str, float]:
    """Mean over rows of each objective term's share of the score (term / 4; invalid rows count 0)."""
    return {
        name: float(np.nan_to_num(term.to_numpy(dtype=float), nan=0.0).mean() / OBJECTIVE_TERMS)
        for name, term in objective_terms(rows).items()
    }


def beyond_size(outputs: pd.DataFrame, policy: str, pool: str = "pretrained", mode: str = "sample") -> dict[str, float]:
    """`policy`'s gains on its scaffolds within one decoding mode (`mode`: its sampled outputs by default, each a single
    shot with no oracle call), means over the mode's outputs of the scaffolds both policies decoded: `over_start`
    (minus `pool`'s outputs), `size` (the size-matched `pool` outputs minus `pool`'s outputs: what a change of size
    alone gives) and `beyond_size` (minus the size-matched outputs), each also per objective term (`over_start_QED`,
    ...). NaN when the policy or the pool has no output in `mode`; a scaffold without a matched candidate is
    dropped."""
    rows = outputs[outputs["mode"] == mode]
    mine, start = rows[rows["method"] == policy], rows[rows["method"] == pool]
    matched = size_matched(outputs, policy, pool, mode)
    scaffolds = set(mine["scaffold"]) & set(start["scaffold"]) & set(matched["scaffold"])
    if not scaffolds:
        return {"over_start": math.nan, "size": math.nan, "beyond_size": math.nan, "scaffolds": 0}

    def score(rows: pd.DataFrame) -> float:
        return float(rows["score"].fillna(0.0).where(rows["valid"].astype(bool), 0.0).mean())

    mine, start, matched = (frame[frame["scaffold"].isin(scaffolds)] for frame in (mine, start, matched))
    result = {
        "over_start": score(mine) - score(start),
        "size": score(matched) - score(start),
        "beyond_size": score(mine) - score(matched),
        "scaffolds": len(scaffolds),
        "n_new": float(mine["n_new"].mean()),
        "n_new_start": float(start["n_new"].mean()),
    }
    for name, value in _term_means(mine).items():
        result[f"over_start_{name}"] = value - _term_means(start)[name]
        result[f"beyond_size_{name}"] = value - _term_means(matched)[name]
    return result


def _seeds_of(outputs: pd.DataFrame, variant: str) -> list[int]:
    names = outputs["method"].drop_duplicates() if len(outputs) else pd.Series(dtype=object)
    return sorted(int(m.rsplit("_s", 1)[1]) for m in names if re.fullmatch(rf"{variant}_s\d+", m))


def c3_beyond_size(outputs: pd.DataFrame) -> Measured:
    """C3: per RL seed, the Dr. GRPO policy's sampled single-shot test score minus the size-matched sampled pretrained
    baseline's (its gain beyond size, within one decoding mode), minus the same for the global baseline (the null,
    `NULL_VARIANT`) on the same seed, or minus 0 where the null's gain is not above 0 (`beyond_null`); t interval over
    the paired seeds. No null field: the null is subtracted inside the value. The note keeps the former measurement
    (Dr. GRPO's gain beyond size with its interval, and the null's), splits the gain over the pretrained start into
    the objective's terms, gives what the change of size alone buys and the greedy outputs' gain over the start."""
    needed = {"mode", "n_new", "scaffold", "sample", "score", "qed", "sa"}
    if not len(outputs) or not needed <= set(outputs.columns):
        return Measured("C3", math.nan, 0, note=f"the policies' outputs lack {sorted(needed - set(outputs.columns))}")
    main = {s: beyond_size(outputs, f"{MAIN_VARIANT}_s{s}") for s in _seeds_of(outputs, MAIN_VARIANT)}
    null = {s: beyond_size(outputs, f"{NULL_VARIANT}_s{s}") for s in _seeds_of(outputs, NULL_VARIANT)}
    greedy = {s: beyond_size(outputs, f"{MAIN_VARIANT}_s{s}", mode="greedy") for s in main}
    gains = {s: r["beyond_size"] for s, r in main.items() if np.isfinite(r["beyond_size"])}
    null_gains = {s: r["beyond_size"] for s, r in null.items() if np.isfinite(r["beyond_size"])}
    paired = beyond_null(gains, null_gains)

    def mean(key: str, runs: dict) -> float:
        values = [r[key] for r in runs.values() if np.isfinite(r.get(key, math.nan))]
        return float(np.mean(values)) if values else math.nan

    names = list(objective_terms(outputs.head(0)))
    parts = ", ".join(f"{name} {mean(f'over_start_{name}', main):+.4f}" for name in names)
    unpaired = sorted((set(gains) | set(null_gains)) - set(paired))
    former = t_interval(list(gains.values()))
    note = (
        f"{MAIN_VARIANT} minus max({NULL_VARIANT}, 0), beyond size, sampled outputs, paired by RL seed: "
        f"{_per_seed(paired)}"
        + (f" (seeds without a partner: {unpaired})" if unpaired else "")
        + f"; former C3 ({MAIN_VARIANT} beyond the size-matched pretrained baseline): {former.text()}, "
        f"{_per_seed(gains)}; its null {NULL_VARIANT} beyond size: "
        + (", ".join(f"s{s}: {v:+.4f}" for s, v in null_gains.items()) or "not run")
        + (f" (mean {np.mean(list(null_gains.values())):+.4f})" if null_gains else "")
        + f"; {MAIN_VARIANT}'s sampled gain over the pretrained start {mean('over_start', main):+.4f} (by term: "
        f"{parts}), of which the size change alone gives {mean('size', main):+.4f} (added atoms "
        f"{mean('n_new', main):.2f} against {mean('n_new_start', main):.2f}); {NULL_VARIANT}'s "
        f"{mean('over_start', null):+.4f}; greedy single shot: {MAIN_VARIANT} over the pretrained greedy output "
        f"{mean('over_start', greedy):+.4f} (no size match within greedy decoding: one output per scaffold)"
    )
    return measured_from_spread("C3", t_interval(list(paired.values())), note)


def variance_ratio(numerator: list[float], denominator: list[float], confidence: float = 0.95) -> Measured:
    """var(numerator) / var(denominator) over seeds with the F interval of the ratio (normal seeds assumed);
    NaN when a side has fewer than 2 seeds or zero spread in the denominator."""
    a = np.asarray([v for v in numerator if np.isfinite(v)], dtype=float)
    b = np.asarray([v for v in denominator if np.isfinite(v)], dtype=float)
    runs = int(min(len(a), len(b)))
    if runs < 2 or b.var(ddof=1) == 0:
        return Measured("", math.nan, runs)
    ratio = float(a.var(ddof=1) / b.var(ddof=1))
    tail = (1 - confidence) / 2
    f_high, f_low = stats.f.ppf([1 - tail, tail], len(a) - 1, len(b) - 1)
    return Measured("", ratio, runs, low=ratio / float(f_high), high=ratio / float(f_low))


def measure_claims(
    decoration: pd.DataFrame, best_of_k: pd.DataFrame, pmo: pd.DataFrame, training: pd.DataFrame, outputs: pd.DataFrame
) -> list[Measured]:
    """`decoration`, `best_of_k`, `pmo`, `training`: the tables of the tables step; `outputs`: every candidate of
    every policy (greedy and sampled), with a `method` column naming the policy (`pretrained`, `drgrpo_s0`, ...)."""
    measured = []

    # C1a, C1b (checks): the environment's masks keep the scaffold and the valence of every atom
    valid = outputs[outputs["valid"].astype(bool)]
    policies = int(outputs["method"].nunique()) if len(outputs) else 0
    retention = float(valid["retained"].astype(bool).mean()) if len(valid) else math.nan
    measured.append(
        Measured(
            "C1a",
            retention,
            policies,
            note=f"{int((~valid['retained'].astype(bool)).sum())} of {len(valid)} valid outputs lose the scaffold"
            if len(valid)
            else "no valid output",
        )
    )
    validity = outputs.groupby("method")["valid"].mean() if len(outputs) else pd.Series(dtype=float)
    lowest = float(validity.min()) if len(validity) else math.nan
    invalid = int((~outputs["valid"].astype(bool)).sum())
    measured.append(
        Measured(
            "C1b",
            lowest,
            policies,
            note=(
                f"{invalid} invalid of {len(outputs)} outputs" + (f"; lowest: {validity.idxmin()}" if invalid else "")
            )
            if len(validity)
            else "no output",
        )
    )

    # C2a, C2b: Dr. GRPO against the global baseline, final greedy validation score, paired by seed
    final = {
        v: dict(zip(rows["seed"].astype(int), rows["final_val_score"].astype(float)))
        for v, rows in training.groupby("variant")
    }
    main, base = final.get(MAIN_VARIANT, {}), final.get(BASELINE_VARIANT, {})
    paired = {s: main[s] - base[s] for s in sorted(set(main) & set(base))}
    measured.append(measured_from_spread("C2a", t_interval(list(paired.values())), _per_seed(paired)))
    ratio = variance_ratio(list(base.values()), list(main.values()))
    if min(len(base), len(main)) >= 2:
        spread = (
            f"std over seeds: {BASELINE_VARIANT} {np.std(list(base.values()), ddof=1):.4f} ({len(base)} "
            f"seeds), {MAIN_VARIANT} {np.std(list(main.values()), ddof=1):.4f} ({len(main)} seeds); "
            "95% F interval, normal seed scores assumed"
        )
    else:
        spread = f"seeds: {BASELINE_VARIANT} {len(base)}, {MAIN_VARIANT} {len(main)}"
    measured.append(Measured("C2b", ratio.value, ratio.runs, note=spread, low=ratio.low, high=ratio.high))

    # C3: fine-tuned (each seed) minus the size-matched pretrained baseline, sampled single shots on the held-out test
    # scaffolds, minus the same for the null without group centring (the global baseline; paired by seed)
    measured.append(c3_beyond_size(outputs))
    seeds = _single_shot_by_seed(decoration, MAIN_VARIANT)

    # C4: fine-tuned single shot (0 oracle calls) minus the pretrained policy's best of 4 samples (4 calls)
    best_of_4 = _score(decoration, "pretrained best-of-4")
    margin = {s: v - best_of_4 for s, v in seeds.items()}
    policies_k = best_of_k[best_of_k["policy"].str.startswith(f"{MAIN_VARIANT}_s")]
    break_even = policies_k.groupby("policy")["break_even_k"].first()
    measured.append(
        measured_from_spread(
            "C4",
            t_interval(list(margin.values())),
            f"{_per_seed(margin)}; pretrained best-of-4 {best_of_4:.4f}; break-even K per policy: "
            + (", ".join(f"{p}: {k:g}" for p, k in break_even.items()) or "none"),
        )
    )

    # C4b: fine-tuned single shot minus the best instance optimiser, on the baselines' subset of test scaffolds
    instance = [_score(decoration, m, "baseline subset") for m in INSTANCE_METHODS]
    best_instance = max(instance) if all(np.isfinite(instance)) else math.nan
    subset = _single_shot_by_seed(decoration, MAIN_VARIANT, "baseline subset")
    versus = {s: v - best_instance for s, v in subset.items()}
    measured.append(
        measured_from_spread(
            "C4b",
            t_interval(list(versus.values())),
            f"{_per_seed(versus)}; " + ", ".join(f"{m} {v:.4f}" for m, v in zip(INSTANCE_METHODS, instance)),
        )
    )

    # C5: PMO-lite, amortized RL minus random sampling of the pretrained policy, on every oracle
    measured.append(pmo_margin(pmo))
    return measured


def pmo_margin(pmo: pd.DataFrame) -> Measured:
    """C5: per oracle, AUC top-k of amortized minus random over seeds (paired by seed; a table without a `seed`
    column holds one seed). The claim is about every oracle: the value is the lowest oracle's mean difference, and
    the interval runs from the lowest lower end to the lowest upper end of the oracles' t intervals, so it lies
    above 0 only when every oracle's does and below 0 when some oracle's does. NaN without both methods."""
    auc = [c for c in pmo.columns if c.startswith("auc_top")]
    table = pmo if "seed" in pmo.columns else pmo.assign(seed=0)
    if not auc or not len(table):
        return Measured("C5", math.nan, 0, note="no PMO-lite runs")
    wide = table.pivot_table(index=["oracle", "seed"], columns="method", values=auc[0], aggfunc="first")
    if not {"amortized", "random"} <= set(wide.columns):
        return Measured("C5", math.nan, 0, note="PMO-lite lacks the amortized or the random run")
    difference = (wide["amortized"] - wide["random"]).dropna()
    spreads = {oracle: t_interval(rows.tolist()) for oracle, rows in difference.groupby(level="oracle")}
    if not spreads:
        return Measured("C5", math.nan, 0, note="no oracle with both runs")
    runs = min(s.runs for s in spreads.values())
    note = "; ".join(f"{o}: {s.text()}" for o, s in spreads.items())
    value = min(s.mean for s in spreads.values())
    if runs < 2:
        return Measured("C5", value, runs, note=note)
    return Measured(
        "C5",
        value,
        runs,
        note=note,
        low=min(s.low for s in spreads.values()),
        high=min(s.high for s in spreads.values()),
    )
