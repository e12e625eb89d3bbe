"""Paper 14's claims measured from its tables (definitions: config/claims/posttrain_voting.yaml).

Existence claims are decided by the largest certified witness, the seeds that replicate it reported in the note:
A1 (NLHF violates monotonicity at the largest searched beta below the computed bound: null DPO), B1 (DPO violates
strong SD-participation: null proportional Borda). A2 (no NLHF violation above the bound) has a value only where the
directed search's positive control (a violation at 0.95 x bound) succeeded in every seed. Rates carry a Wilson
interval on counts pooled over seeds (D1). Info: B2 (softmax Borda), B3 (weak SD-participation), D1 (DPO's
mixing-consistency rate), D2 (NLHF's monotonicity rate at the smallest beta), D3 (staged against joint at matched
strength). Checks: C1 (NLHF's staged updates do not commute), K1 (RLHF-BT and the DPO-loss minimiser equal DPO's
closed form), K2 (DPO commutes), K3 (every witness replays), K4 (DPO is not linear in the profile), K5 (DPO is
monotone on every search).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from neurips26.common.claims import Measured, wilson

TOL = 1e-7  # the axiom checkers' tolerance (axioms.TOL)
REPLAYS = 40  # witnesses replayed per table by K3 (the worst per rule and axiom first)


def _over_seeds(claim_id: str, values: pd.Series, note: str, null: float | None = None) -> Measured:
    values = values.dropna()
    if values.empty:
        return Measured(claim_id, float("nan"), 0, f"no rows: {note}", null=null)
    return Measured(claim_id, float(values.mean()), int(len(values)), f"{note}; interval: range over seeds",
                    low=float(values.min()), high=float(values.max()), null=null)  # fmt: skip


def _exists(claim_id: str, values: pd.Series, note: str, null: float | None = None) -> Measured:
    """An existence claim: the largest value over seeds (one certified witness decides), the seeds as runs, how many
    of them replicate it in the note."""
    values = values.dropna()
    if values.empty:
        return Measured(claim_id, float("nan"), 0, f"no rows: {note}", null=null)
    found = int((values > TOL).sum())
    return Measured(claim_id, float(values.max()), int(len(values)),
                    f"{note}; found in {found} of {len(values)} seeds (replications)", null=null)  # fmt: skip


def pooled(axioms: pd.DataFrame, rule: str, axiom: str, beta: float | None = None) -> tuple[int, int]:
    """(violations, checks) of ``rule`` on ``axiom`` in the axiom table, pooled over seeds (at ``beta`` if given)."""
    rows = axioms[(axioms["rule"] == rule) & (axioms["axiom"] == axiom)]
    if beta is not None:
        rows = rows[np.isclose(rows["beta"], beta)]
    return int((~rows["holds"]).sum()), int(len(rows))


def _rate(claim_id: str, counts: tuple[int, int], note: str, null: float | None = None) -> Measured:
    """A violation rate with its Wilson interval on the pooled counts."""
    events, n = counts
    if n == 0:
        return Measured(claim_id, float("nan"), 0, f"no rows: {note}", null=null)
    low, high = wilson(events, n)
    return Measured(claim_id, events / n, n, f"{note}; {events}/{n}, 95% Wilson interval", low=low, high=high,
                    null=null)  # fmt: skip


def _seeds(tables: dict) -> list[int]:
    return sorted(set(tables["axioms"]["seed"]) | set(tables["adversarial"]["seed"]))


def bound(threshold: pd.DataFrame) -> float:
    """The computed bound: the largest over the numbers of candidates searched (one ``bound`` row each)."""
    rows = threshold[threshold["kind"] == "bound"]
    return float(rows["threshold"].max()) if len(rows) else float("nan")


def worst_by_seed(tables: dict, rule: str, axiom: str) -> pd.Series:
    """Largest violation magnitude per seed of ``rule`` on ``axiom`` over the axiom table and the adversarial search
    (NaN for a seed where neither checked it)."""
    frames = [t[(t["rule"] == rule) & (t["axiom"] == axiom)][["seed", "magnitude"]]
              for t in (tables["axioms"], tables["adversarial"])]  # fmt: skip
    both = pd.concat(frames)
    return both.groupby("seed")["magnitude"].max().reindex(_seeds(tables))


def bound_upper(threshold: pd.DataFrame) -> float:
    """The upper end of the bound's bisection bracket (the bound itself where a row does not record it)."""
    rows = threshold[threshold["kind"] == "bound"]
    if not len(rows):
        return float("nan")
    return max(json.loads(w).get("upper", t) for w, t in zip(rows["witness"], rows["threshold"]))


SEARCHED = ("search", "below", "control", "test")  # threshold rows with a searched beta (random and directed)


def largest_violating_beta(threshold: pd.DataFrame) -> pd.Series:
    """Per seed, the largest beta at which NLHF's monotonicity was seen violated (certified margin above the
    tolerance): the refined discrete thresholds, the random search's and the directed search's betas with a
    violation; inf for a seed where nothing was found (no evidence)."""
    search = threshold[threshold["kind"].isin(SEARCHED) & (threshold["rule"] == "nlhf")]
    out = {}
    for seed, rows in search.groupby("seed"):
        seen = list(rows.loc[rows["violations"] > 0, "beta"])
        refined = threshold[(threshold["kind"] == "refined") & (threshold["seed"] == seed)]["threshold"]
        seen += [t for t in refined if t > 0]
        out[seed] = max(seen) if seen else np.inf
    return pd.Series(out, dtype=float)


def _middle_beta(axioms: pd.DataFrame) -> float | None:
    betas = sorted(axioms["beta"].dropna().unique())
    return float(betas[len(betas) // 2]) if betas else None


def replay_gap(tables: dict, limit: int = REPLAYS) -> tuple[float, int]:
    """Largest |replayed margin - recorded margin| over the worst witnesses per (rule, axiom) of the axiom and
    adversarial tables (``limit`` per table), and how many were replayed; a replay that holds counts as inf."""
    from .axioms import replay

    gaps = []
    for name in ("axioms", "adversarial"):
        table = tables[name]
        violated = table[table["witness"] != ""].sort_values("magnitude", ascending=False)
        chosen = violated.groupby(["rule", "axiom"], sort=False).head(1)
        chosen = pd.concat([chosen, violated.drop(chosen.index)]).head(limit)
        for _, row in chosen.iterrows():
            result = replay(json.loads(row["witness"]))
            gaps.append(np.inf if result.holds else abs(result.margin - row["margin"]))
    return (float(max(gaps)) if gaps else float("nan")), len(gaps)


def monotonicity_claims(threshold: pd.DataFrame, limit: float) -> list[Measured]:
    """A1: an existence claim decided by the certified witness at the largest searched beta below the bound (random
    and directed search), the seeds that replicate it as runs; DPO's largest certified drop anywhere as its null.
    A2: the largest violating beta over the bound, only where the directed search has power in every seed (a
    violation at 0.95 x bound); otherwise no value (inconclusive)."""
    searched = threshold[threshold["kind"].isin(SEARCHED)]
    seeds = sorted(set(searched["seed"]))
    nlhf = searched[searched["rule"] == "nlhf"]
    below = nlhf.loc[nlhf["beta"] < limit, "beta"]
    dpo = searched.loc[searched["rule"] == "dpo", "max_margin"]
    dpo_null = float(dpo.max()) if len(dpo) else None
    if below.empty:
        out = [Measured("A1", float("nan"), 0, f"no searched beta below the bound {limit:.4g}", null=dpo_null)]
    else:
        top = float(below.max())
        at = nlhf[np.isclose(nlhf["beta"], top)].groupby("seed")["max_margin"].max()
        replicated = int((at > TOL).sum())
        out = [Measured("A1", float(at.max()), int(len(at)),
                        f"NLHF's largest certified monotonicity drop at beta {top:.4g}, the largest searched beta "
                        f"below the bound {limit:.4g} (random and directed search); found in {replicated} of "
                        f"{len(at)} seeds (replications); DPO's largest over every search in null_value",
                        null=dpo_null)]  # fmt: skip
    control = nlhf[nlhf["kind"] == "control"].groupby("seed")["violations"].max().reindex(seeds)
    test = nlhf[nlhf["kind"] == "test"].groupby("seed")["violations"].max().reindex(seeds)
    upper = bound_upper(threshold)
    ratio = largest_violating_beta(threshold) / upper
    if not seeds or control.isna().any() or (control == 0).any():
        out.append(Measured("A2", float("nan"), len(seeds), "the directed search found no violation at 0.95 x the "
                            f"bound {limit:.4g} in some seed: the search lacks power, no evidence"))  # fmt: skip
    else:
        out.append(Measured("A2", float(ratio.max()), int(len(ratio)),
                            f"largest certified violating beta / the bound's upper end {upper:.4g} (bound "
                            f"{limit:.4g}), max over seeds; the directed "
                            f"search's control at 0.95 x bound found a violation in every seed, its test at 1.05 x "
                            f"found one in {int(test.fillna(0).sum())} seed(s)"))  # fmt: skip
    return out


def measure_claims(tables: dict) -> list[Measured]:
    """Every claim of config/claims/posttrain_voting.yaml from the tables ``axioms`` (all sources), ``adversarial``,
    ``threshold`` and ``equivalence``."""
    axioms, threshold = tables["axioms"], tables["threshold"]
    limit = bound(threshold)
    out = []

    out += monotonicity_claims(threshold, limit)

    def both(rule: str) -> pd.Series:
        return pd.concat([worst_by_seed(tables, rule, a) for a in ("mixing_consistency", "participation")], axis=1).min(
            axis=1, skipna=False
        )

    strong = worst_by_seed(tables, "dpo", "participation_sd_strong")
    utility = worst_by_seed(tables, "dpo", "participation").max()
    prop = worst_by_seed(tables, "proportional_borda", "participation_sd_strong")
    out.append(_exists("B1", strong, f"DPO's largest certified strong SD-participation violation (random and "
                       f"adversarial search; witnesses replayed by K3); its Borda-utility participation violation "
                       f"{utility:.3g}; proportional Borda's strong SD value in null_value",
                       null=float(prop.max()) if prop.notna().any() else None))  # fmt: skip
    out.append(_exists("B3", worst_by_seed(tables, "dpo", "participation_sd_weak"),
                       "DPO's largest weak SD-participation violation (the original strictly SD-dominates the "
                       "joined lottery for the joiner)"))  # fmt: skip
    soft = both("probabilistic_borda")
    out.append(_over_seeds("B2", soft, "the same for the softmax probabilistic Borda (pi ∝ ref exp(Borda share/beta))"))

    dpo_comm = worst_by_seed(tables, "dpo", "commutativity")
    out.append(
        _exists(
            "C1",
            worst_by_seed(tables, "nlhf", "commutativity"),
            "NLHF's largest |staged A,B - staged "
            "B,A| (a closed-form property confirmed numerically; it can fail only if the solver is wrong)",
        )
    )

    beta = _middle_beta(axioms)
    prop_mix = pooled(axioms, "proportional_borda", "mixing_consistency")
    out.append(
        _rate(
            "D1",
            pooled(axioms, "dpo", "mixing_consistency", beta),
            f"DPO's mixing-consistency violation rate at the middle beta {beta}, pooled over seeds; "
            "proportional Borda's in null_value",
            null=prop_mix[0] / prop_mix[1] if prop_mix[1] else None,
        )
    )
    smallest = float(axioms["beta"].min()) if axioms["beta"].notna().any() else None
    events, n = pooled(axioms, "nlhf", "monotonicity", smallest)
    low, high = wilson(events, n)
    out.append(Measured("D2", events / n if n else float("nan"), n,
                        f"NLHF's monotonicity violation rate at the smallest beta {smallest}, pooled over seeds: "
                        f"{events}/{n}, 95% Wilson interval [{low:.3g}, {high:.3g}]; any certified violation "
                        "decides the existence"))  # fmt: skip
    staged = axioms[axioms["axiom"] == "staged_vs_joint"]
    ratio_sj = (staged[staged["rule"] == "nlhf"].groupby("seed")["magnitude"].mean()
                / staged[staged["rule"] == "dpo"].groupby("seed")["magnitude"].mean())  # fmt: skip
    out.append(_over_seeds("D3", ratio_sj, "mean staged-vs-joint (at matched strength beta/2) discrepancy of NLHF / "
                           "of DPO"))  # fmt: skip

    eq = tables["equivalence"]
    gaps = eq[[c for c in ("gap", "gap_loss") if c in eq]].max(axis=1) if len(eq) else pd.Series(dtype=float)
    out.append(
        Measured(
            "K1",
            float(gaps.max()) if len(gaps) else float("nan"),
            int(len(eq)),
            "largest |rlhf_bt - dpo| and |DPO-loss minimiser - dpo| over profiles, seeds and betas",
        )
    )
    out.append(Measured("K2", float(dpo_comm.max()) if dpo_comm.notna().any() else float("nan"),
                        int(dpo_comm.notna().sum()), "DPO's largest commutativity gap over seeds"))  # fmt: skip
    gap, replayed = replay_gap(tables)
    out.append(Measured("K3", gap, replayed, f"{replayed} witnesses replayed (axioms.replay)"))
    mix = worst_by_seed(tables, "dpo", "mixing_consistency")
    out.append(Measured("K4", float(mix.max()) if mix.notna().any() else float("nan"), int(mix.notna().sum()),
                        "DPO's largest mixing-consistency gap: DPO is not linear in the profile"))  # fmt: skip
    mono = [worst_by_seed(tables, "dpo", "monotonicity")]
    thr = threshold[(threshold["rule"] == "dpo") & threshold["kind"].isin(SEARCHED)]
    values = pd.concat(mono + [thr["max_margin"].clip(lower=0)]).dropna()
    out.append(Measured("K5", float(values.max()) if len(values) else float("nan"), int(len(values)),
                        "DPO's largest monotonicity drop over the axiom table, the adversarial and threshold "
                        "searches"))  # fmt: skip
    return out
