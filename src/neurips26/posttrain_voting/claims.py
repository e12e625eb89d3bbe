"""Paper 14's claims measured from its tables (definitions: config/claims/posttrain_voting.yaml).

Every claim over seeds is measured per profile seed and reported as the mean with the range over seeds
``[min, max]`` as its interval (the verdict needs every seed on one side of the threshold). Claims: A1 (NLHF violates
monotonicity below the computed bound, DPO never: null DPO), A2 (no NLHF violation above the bound), B1 (DPO violates
mixing consistency and participation: null proportional Borda), B2 (info: the softmax probabilistic Borda too), C1
(NLHF violates commutativity: null DPO), D1 (DPO's mixing-consistency violations are frequent on the source's
profiles: null proportional Borda), D2 and D3 (info: NLHF's monotonicity violation frequency at the smallest beta;
staged against joint); checks K1 (RLHF-BT equals DPO), K2 (DPO commutes exactly), K3 (every witness replays).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from neurips26.common.claims import Measured

TOL = 1e-7  # the axiom checkers' tolerance (axioms.TOL)
REPLAYS = 40  # witnesses replayed per table by K3 (the worst per rule and axiom first)


def _over_seeds(claim_id: str, values: pd.Series, note: str, null: float | None = None) -> Measured:
    values = values.dropna()
    if values.empty:
        return Measured(claim_id, float("nan"), 0, f"no rows: {note}", null=null)
    return Measured(claim_id, float(values.mean()), int(len(values)), f"{note}; interval: range over seeds",
                    low=float(values.min()), high=float(values.max()), null=null)  # fmt: skip


def _seeds(tables: dict) -> list[int]:
    return sorted(set(tables["axioms"]["seed"]) | set(tables["adversarial"]["seed"]))


def bound(threshold: pd.DataFrame) -> float:
    rows = threshold[threshold["kind"] == "bound"]
    return float(rows["threshold"].iloc[0]) if len(rows) else float("nan")


def worst_by_seed(tables: dict, rule: str, axiom: str) -> pd.Series:
    """Largest violation magnitude per seed of ``rule`` on ``axiom`` over the axiom table and the adversarial search
    (NaN for a seed where neither checked it)."""
    frames = [t[(t["rule"] == rule) & (t["axiom"] == axiom)][["seed", "magnitude"]]
              for t in (tables["axioms"], tables["adversarial"])]  # fmt: skip
    both = pd.concat(frames)
    return both.groupby("seed")["magnitude"].max().reindex(_seeds(tables))


def _monotonicity_below(threshold: pd.DataFrame, rule: str, limit: float) -> pd.Series:
    rows = threshold[(threshold["kind"] == "search") & (threshold["rule"] == rule) & (threshold["beta"] < limit)]
    return rows.groupby("seed")["max_margin"].max()


def largest_violating_beta(threshold: pd.DataFrame) -> pd.Series:
    """Per seed, the largest beta at which NLHF's monotonicity was seen violated: the refined discrete thresholds
    and the searched betas with a violation; inf for a seed where the search found none (no evidence)."""
    search = threshold[(threshold["kind"] == "search") & (threshold["rule"] == "nlhf")]
    out = {}
    for seed, rows in search.groupby("seed"):
        seen = list(rows.loc[rows["violations"] > 0, "beta"])
        refined = threshold[(threshold["kind"] == "refined") & (threshold["seed"] == seed)]["threshold"]
        seen += [t for t in refined if t > 0]
        out[seed] = max(seen) if seen else np.inf
    return pd.Series(out, dtype=float)


def frequency(axioms: pd.DataFrame, rule: str, axiom: str, beta: float | None = None) -> pd.Series:
    """Violation frequency per seed of ``rule`` on ``axiom`` in the axiom table (at ``beta`` where given)."""
    rows = axioms[(axioms["rule"] == rule) & (axioms["axiom"] == axiom)]
    if beta is not None:
        rows = rows[np.isclose(rows["beta"], beta)]
    return (~rows["holds"]).groupby(rows["seed"]).mean()


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


def measure_claims(tables: dict) -> list[Measured]:
    """Every claim of config/claims/posttrain_voting.yaml from the tables ``axioms`` (all sources), ``adversarial``,
    ``threshold`` and ``equivalence``."""
    axioms, threshold = tables["axioms"], tables["threshold"]
    limit = bound(threshold)
    out = []

    nlhf_below = _monotonicity_below(threshold, "nlhf", limit)
    dpo_all = threshold[(threshold["kind"] == "search") & (threshold["rule"] == "dpo")]["max_margin"]
    dpo_null = float(dpo_all.max()) if len(dpo_all) else None
    out.append(_over_seeds("A1", nlhf_below, f"NLHF's largest monotonicity drop at beta < the bound {limit:.4g}; "
                           f"DPO's over every searched beta in null_value", null=dpo_null))  # fmt: skip

    ratio = largest_violating_beta(threshold) / limit
    out.append(_over_seeds("A2", ratio, f"largest violating beta / bound ({limit:.4g}); inf where none was found"))

    def both(rule: str) -> pd.Series:
        return pd.concat([worst_by_seed(tables, rule, a) for a in ("mixing_consistency", "participation")], axis=1).min(
            axis=1, skipna=False
        )

    borda = both("proportional_borda")
    out.append(_over_seeds("B1", both("dpo"), "min over {mixing consistency, participation} of DPO's largest violation "
                           "per seed; proportional Borda's (max over seeds) in null_value",
                           null=float(borda.max()) if borda.notna().any() else None))  # fmt: skip
    soft = both("probabilistic_borda")
    out.append(_over_seeds("B2", soft, "the same for the softmax probabilistic Borda (pi ∝ ref exp(Borda share/beta))"))

    dpo_comm = worst_by_seed(tables, "dpo", "commutativity")
    out.append(_over_seeds("C1", worst_by_seed(tables, "nlhf", "commutativity"), "NLHF's largest |staged A,B - "
                           "staged B,A| per seed; DPO's in null_value",
                           null=float(dpo_comm.max()) if dpo_comm.notna().any() else None))  # fmt: skip

    beta = _middle_beta(axioms)
    prop = frequency(axioms, "proportional_borda", "mixing_consistency")
    out.append(_over_seeds("D1", frequency(axioms, "dpo", "mixing_consistency", beta),
                           f"DPO's mixing-consistency violation frequency at the middle beta {beta}; proportional "
                           "Borda's in null_value", null=float(prop.max()) if len(prop) else None))  # fmt: skip
    smallest = float(axioms["beta"].min()) if axioms["beta"].notna().any() else None
    out.append(_over_seeds("D2", frequency(axioms, "nlhf", "monotonicity", smallest),
                           f"NLHF's monotonicity violation frequency at the smallest beta {smallest}"))  # fmt: skip
    staged = axioms[axioms["axiom"] == "staged_vs_joint"]
    ratio_sj = (staged[staged["rule"] == "nlhf"].groupby("seed")["magnitude"].mean()
                / staged[staged["rule"] == "dpo"].groupby("seed")["magnitude"].mean())  # fmt: skip
    out.append(_over_seeds("D3", ratio_sj, "mean staged-vs-joint discrepancy of NLHF / of DPO"))

    eq = tables["equivalence"]
    out.append(Measured("K1", float(eq["gap"].max()) if len(eq) else float("nan"), int(len(eq)),
                        "largest |rlhf_bt - dpo| over profiles, seeds and betas"))  # fmt: skip
    out.append(Measured("K2", float(dpo_comm.max()) if dpo_comm.notna().any() else float("nan"),
                        int(dpo_comm.notna().sum()), "DPO's largest commutativity gap over seeds"))  # fmt: skip
    gap, replayed = replay_gap(tables)
    out.append(Measured("K3", gap, replayed, f"{replayed} witnesses replayed (axioms.replay)"))
    return out
