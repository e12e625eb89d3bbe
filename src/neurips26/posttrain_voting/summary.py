"""Paper 14's report tables: the axiom table per rule (holds, or violated with a witness), violation frequency and
magnitude against beta, the NLHF threshold against its bound, staged against joint."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pandas as pd

from neurips26.common.report import markdown_table


def _witness_text(witness: str) -> str:
    """A short, replayable description of a witness: the profiles as rankings with counts, beta and reference."""
    if not witness:
        return ""
    w = json.loads(witness)

    def profile(p):
        counts = Counter()
        for r, c in zip(p["rankings"], p["counts"]):
            counts[r] += c
        return "; ".join(f"{c:g}x {r}" for r, c in counts.items() if c > 0)

    parts = [f"N = [{profile(w['profile'])}]"]
    if w.get("other") and w["axiom"] != "monotonicity":
        parts.append(f"M = [{profile(w['other'])}]")
    if w.get("voter"):
        parts.append(f"joining {w['voter']}")
    if w.get("candidate") is not None:
        parts.append(f"lift {'ABCDEF'[w['candidate']]}")
    if w.get("beta") is not None:
        parts.append(f"beta {w['beta']:g}")
    if w.get("ref") is not None:
        parts.append("ref (" + ", ".join(f"{x:.3g}" for x in w["ref"]) + ")")
    return ", ".join(parts)


def _unique_lotteries(witness: str) -> bool:
    """Whether every profile of a witness has a unique maximal lottery (:func:`.rules.maximal_lottery_unique`)."""
    from .profiles import Profile, pairwise_matrix
    from .rules import maximal_lottery_unique

    w = json.loads(witness)
    profiles = [Profile.from_dict(w[k]) for k in ("profile", "other") if w.get(k)]
    return all(maximal_lottery_unique(pairwise_matrix(p)) for p in profiles)


def axiom_matrix(axioms: pd.DataFrame, adversarial: pd.DataFrame) -> pd.DataFrame:
    """Rule x axiom: violated or holds (on every check run), the random checks' violation frequency, the largest
    magnitude (random and adversarial), and the worst witness."""
    rows = []
    both = pd.concat([axioms.assign(search="random"), adversarial.assign(search="adversarial")], ignore_index=True)
    for (rule, axiom), group in both.groupby(["rule", "axiom"], sort=False):
        random = group[group["search"] == "random"]
        worst = group.loc[group["magnitude"].idxmax()]
        violated = (~group["holds"]).any()
        status = "violated" if violated else "holds"
        if axiom == "reinforcement" and not violated and (group["margin"] < -1e-7).all():
            status = "premise never met"  # f(A) = f(B) never held: no evidence either way
        if rule == "maximal_lottery" and violated and not _unique_lotteries(worst["witness"]):
            status = "violated (lottery not unique)"
        rows.append({
            "rule": rule, "axiom": axiom, "status": status,
            "frequency": (~random["holds"]).mean() if len(random) else np.nan,
            "checks": len(group), "max magnitude": float(group["magnitude"].max()),
            "found by": worst["search"] if violated else "",
            "witness": _witness_text(worst["witness"]) if violated else "",
        })  # fmt: skip
    return pd.DataFrame(rows)


def frequency_by_beta(axioms: pd.DataFrame) -> pd.DataFrame:
    """Violation frequency (and mean magnitude of the violations) per rule, axiom and beta, seeds pooled."""
    rows = axioms[axioms["beta"].notna()]
    grouped = rows.groupby(["rule", "axiom", "beta"])
    out = grouped["holds"].apply(lambda h: (~h).mean()).rename("frequency").to_frame()
    out["mean magnitude"] = grouped.apply(lambda g: g.loc[~g["holds"], "magnitude"].mean() if (~g["holds"]).any()
                                          else 0.0)  # fmt: skip
    wide = out["frequency"].unstack("beta")
    wide.columns = [f"beta={b:g}" for b in wide.columns]
    return wide.reset_index()


def threshold_summary(threshold: pd.DataFrame) -> dict:
    bound = threshold[threshold["kind"] == "bound"]
    witness = json.loads(bound["witness"].iloc[0]) if len(bound) else {}
    search = threshold[threshold["kind"] == "search"]
    share = (search.groupby(["rule", "beta"])[["violations", "draws"]].sum()
             .assign(share=lambda f: f["violations"] / f["draws"])["share"].unstack("beta"))  # fmt: skip
    share.columns = [f"beta={b:g}" for b in share.columns]
    refined = threshold[threshold["kind"] == "refined"][["seed", "threshold"]]
    directed = threshold[threshold["kind"].isin(["control", "test", "below"])][
        ["seed", "kind", "rule", "beta", "max_margin", "violations"]
    ]
    per_m = [json.loads(w).get("m", "?") for w in bound["witness"]]
    return {
        "bound": float(bound["threshold"].max()) if len(bound) else float("nan"),
        "bound_per_m": ", ".join(f"m = {m}: {t:.4f}" for m, t in zip(per_m, bound["threshold"])),
        "bound_ref": ", ".join(f"{x:.3g}" for x in witness.get("ref", [])),
        "directed": directed,
        "search_share": share.reset_index(),
        "refined": refined,
    }


def report_tables(tables: dict) -> dict:
    axioms = tables["axioms"]
    staged = axioms[axioms["axiom"].isin(["staged_vs_joint", "commutativity"]) & axioms["beta"].notna()]
    staged = staged.groupby(["axiom", "rule", "beta"])["magnitude"].mean().unstack("beta")
    staged.columns = [f"beta={b:g}" for b in staged.columns]
    return {
        "axiom_matrix": markdown_table(axiom_matrix(axioms, tables["adversarial"]), digits=3),
        "frequency": markdown_table(frequency_by_beta(axioms), digits=3),
        "staged_table": markdown_table(staged.reset_index(), digits=3) if len(staged) else "(not checked)",
        "threshold": threshold_summary(tables["threshold"]),
        "equivalence_gap": float(tables["equivalence"]["gap"].max()),
        "sources": sorted(axioms["source"].unique()),
    }
