"""Paper 14's config at one scale, read as the rules need it, and its experiments' tables (the paper was not found: the
rules' closed forms and the axioms' formulations are our reconstruction, :mod:`.rules` and :mod:`.axioms`).

Tables (one parquet file each):

* ``axioms/{source}`` (:func:`axiom_table`): every configured axiom checked on every profile of the source, per
  profile seed, reference (``uniform``, a ``dirichlet`` draw per profile, or on CoVal the ``base_model``'s scores of
  the prompt's responses, :mod:`.references`), rule and beta; reference-free rules
  (proportional Borda, maximal lotteries) are checked once per profile (``beta`` NaN, reference ``none``). Rows
  (source, seed, family, profile, reference, rule, beta, axiom, holds, magnitude, margin, witness): the witness is
  the checker's JSON (:func:`.axioms.replay` re-runs it) on violated rows, empty otherwise. Two-profile axioms pair
  each profile with the next one of its family (the last with the first). The source is ``synthetic`` (impartial
  culture, Mallows and CoVal-like profiles drawn from the seed) or a CoVal ranking block (``world``, ``personal``:
  profiles read by :mod:`.coval`, the seed drawing the references and the pairs).
* ``adversarial`` (:func:`adversarial_table`): hill-climbing (:func:`.search.hill_climb`) for each rule, axiom and
  beta of the ``adversarial`` block, per seed, with its best margin and witness.
* ``threshold`` (:func:`threshold_table`): the NLHF monotonicity search beside DPO's on cyclic profiles with sparse
  Dirichlet references per beta (rows ``kind = search``), the discrete threshold of the worst violations found,
  refined by bisection (``kind = refined``), the computed bound (``kind = bound``, one row per number of candidates:
  :func:`.bounds.realisable_bound` over weights on strict rankings), and per seed the directed search from the
  bound's witness (:func:`.bounds.directed_search`): ``control`` at 0.95 x bound (must find a violation),
  ``test`` at 1.05 x the bisection's upper end (must find none), ``below`` at the largest searched beta below the
  bound (NLHF and DPO).
* ``equivalence`` (:func:`equivalence_table`): RLHF with a Bradley-Terry reward against DPO's closed form.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

__all__ = ["check_config", "axiom_table", "adversarial_table", "threshold_table", "equivalence_table"]

SWEEP_RULES = ("dpo", "nlhf", "probabilistic_borda", "proportional_borda", "maximal_lottery")
SWEEP_AXIOMS = ("monotonicity", "participation", "participation_sd_strong", "participation_sd_weak", "reinforcement",
                "mixing_consistency", "commutativity", "staged_vs_joint")  # fmt: skip
FAMILIES = ("impartial_culture", "mallows", "coval_like")
REFERENCES = ("uniform", "dirichlet", "base_model")
COVAL_SOURCES = ("world", "personal")
SOURCES = ("synthetic", *COVAL_SOURCES)
MIN_SEEDS = {"quick": 3, "paper": 3}


def _names(kind: str, values, known) -> None:
    values = list(values)
    if not values:
        raise ValueError(f"{kind} is empty")
    unknown = [v for v in values if v not in known]
    if unknown:
        raise ValueError(f"unknown {kind} {unknown}; known: {list(known)}")
    if len(set(values)) != len(values):
        raise ValueError(f"{kind} repeat: {values}")


def _betas(kind: str, values) -> None:
    values = list(values)
    if not values:
        raise ValueError(f"{kind} is empty (a grid of regularisation strengths)")
    if any(not np.isfinite(b) or b <= 0 for b in values):
        raise ValueError(f"{kind} must be finite and > 0 (KL regularisation), got {values}")
    if len(set(values)) != len(values):
        raise ValueError(f"{kind} repeat: {values}")


def check_config(cfg: dict, scale: str | None = None) -> None:
    """What the schema cannot say: unknown rule, axiom, family or source names, beta <= 0 or empty grids, fewer
    than three seeds where claims are decided over seeds (quick and paper), a grid without two ends, a base_model
    reference for synthetic profiles."""
    from .rules import RULES

    seeds = list(cfg["seeds"])
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds repeat: {seeds}")
    if scale in MIN_SEEDS and len(seeds) < MIN_SEEDS[scale]:
        raise ValueError(f"seeds: claims are decided over seeds, {scale} needs >= {MIN_SEEDS[scale]}, got {seeds}")
    _names("sources", cfg["sources"], SOURCES)
    _names("rules", cfg["rules"], SWEEP_RULES)
    _names("axioms", cfg["axioms"], SWEEP_AXIOMS)
    _betas("betas", cfg["betas"])
    _names("synthetic.families", cfg["synthetic"]["families"], FAMILIES)
    _names("references.kinds", cfg["references"]["kinds"], REFERENCES)
    if "base_model" in cfg["references"]["kinds"] and "synthetic" in cfg["sources"]:
        raise ValueError("references.kinds: base_model scores CoVal's response texts; synthetic profiles have none")
    adv = cfg["adversarial"]
    _names("adversarial.rules", adv["rules"], RULES)
    _names("adversarial.axioms", adv["axioms"], SWEEP_AXIOMS)
    _betas("adversarial.betas", adv["betas"])
    thr = cfg["threshold"]
    _betas("threshold.betas", thr["betas"])
    low, high, _ = thr["grid"]
    if not 0 < low < high:
        raise ValueError(f"threshold.grid must be [low, high, points] with 0 < low < high, got {thr['grid']}")
    blow, bhigh, _ = thr["bound"]["grid"]
    if not 0 < blow < bhigh:
        raise ValueError(f"threshold.bound.grid must have 0 < low < high, got {thr['bound']['grid']}")
    if 3 not in thr["bound"]["candidates"]:
        raise ValueError("threshold.bound.candidates must include 3 (the directed search starts from its witness)")
    _betas("equivalence.betas", cfg["equivalence"]["betas"])


# ---------------------------------------------------------------- profiles and references


def synthetic_profiles(block: dict, seed: int) -> list[tuple[str, object]]:
    """(family, profile) pairs: ``profiles`` draws of each family of the ``synthetic`` block from ``seed``."""
    from .profiles import coval_like, impartial_culture, mallows

    rng = np.random.default_rng([seed, 14])
    n, m = block["voters"], block["candidates"]
    out = []
    for family in block["families"]:
        for _ in range(block["profiles"]):
            if family == "impartial_culture":
                profile = impartial_culture(n, m, rng)
            elif family == "mallows":
                profile = mallows(n, m, block["phi"], rng, rng.permutation(m))
            else:
                profile = coval_like(rng, n, m, block["tie_prob"])
            out.append((family, profile))
    return out


def references(kinds, m: int, alpha: float, rng: np.random.Generator, base=None) -> dict[str, np.ndarray]:
    """The reference policies of one profile: uniform, a Dirichlet(alpha) draw kept off zero (full support), and
    ``base``, the base model's reference of the profile's prompt (:mod:`.references`; ValueError when the kind is
    asked for without it)."""
    out = {}
    for kind in kinds:
        if kind == "uniform":
            out[kind] = np.full(m, 1 / m)
        elif kind == "base_model":
            if base is None:
                raise ValueError("the base_model reference needs the base model's scores of the profile's prompt")
            out[kind] = np.asarray(base, float)
        else:
            ref = np.clip(rng.dirichlet(np.full(m, alpha)), 1e-6, None)
            out[kind] = ref / ref.sum()
    return out


# ---------------------------------------------------------------- axiom checks on a source's profiles


def _check_rows(rule_name, axiom, profiles, ref, beta, base) -> dict:
    from .axioms import AXIOMS
    from .rules import RULES

    result = AXIOMS[axiom].check(RULES[rule_name], *profiles, ref, beta)
    return base | {
        "rule": rule_name,
        "beta": np.nan if beta is None else float(beta),
        "axiom": axiom,
        "holds": bool(result.holds),
        "magnitude": float(result.magnitude),
        "margin": float(result.margin) if np.isfinite(result.margin) else -1.0,
        "witness": "" if result.witness is None else json.dumps(result.witness),
    }


def axiom_table(cfg: dict, source: str, seed: int, profiles: list[tuple[str, object]] | None = None,
                base_refs: list | None = None) -> pd.DataFrame:  # fmt: skip
    """Every axiom on every profile for one seed (module docstring); ``profiles`` are (family, Profile) pairs
    (default: the synthetic ones of ``seed``), ``base_refs`` the base model's reference of each (CoVal)."""
    from .axioms import AXIOMS
    from .rules import RULES

    rng = np.random.default_rng([seed, 1414])
    profiles = synthetic_profiles(cfg["synthetic"], seed) if profiles is None else profiles
    if base_refs is not None and len(base_refs) != len(profiles):
        raise ValueError(f"base_refs: {len(base_refs)} references for {len(profiles)} profiles")
    by_family: dict[str, list[int]] = {}
    for i, (family, _) in enumerate(profiles):
        by_family.setdefault(family, []).append(i)
    rows = []
    for i, (family, profile) in enumerate(profiles):
        members = by_family[family]
        other = profiles[members[(members.index(i) + 1) % len(members)]][1]
        base = None if base_refs is None else base_refs[i]
        refs = references(cfg["references"]["kinds"], profile.m, cfg["references"]["alpha"], rng, base)
        base = {"source": source, "seed": seed, "family": family, "profile": i}
        for axiom in cfg["axioms"]:
            pair = [profile, other][: AXIOMS[axiom].arity]
            for rule_name in cfg["rules"]:
                rule = RULES[rule_name]
                if AXIOMS[axiom].needs_reference and not rule.uses_reference:
                    continue
                if not rule.uses_reference:
                    rows.append(_check_rows(rule_name, axiom, pair, None, None, base | {"reference": "none"}))
                    continue
                for kind, ref in refs.items():
                    for beta in cfg["betas"]:
                        rows.append(_check_rows(rule_name, axiom, pair, ref, beta, base | {"reference": kind}))
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- adversarial search


def adversarial_table(block: dict, seed: int) -> pd.DataFrame:
    """Hill-climbing for each rule, axiom and beta of the ``adversarial`` block (reference-free rules once),
    references uniform, over integer counts on the strict rankings of ``candidates`` candidates."""
    from .axioms import AXIOMS
    from .rules import RULES
    from .search import hill_climb

    rows = []
    for rule_name in block["rules"]:
        rule = RULES[rule_name]
        for axiom in block["axioms"]:
            if AXIOMS[axiom].needs_reference and not rule.uses_reference:
                continue
            for beta in block["betas"] if rule.uses_reference else [None]:
                rng = np.random.default_rng([seed, 7, len(rows)])
                result, _ = hill_climb(rule, axiom, beta, rng, m=block["candidates"], steps=block["steps"],
                                       restarts=block["restarts"])  # fmt: skip
                rows.append({
                    "seed": seed, "rule": rule_name, "axiom": axiom,
                    "beta": np.nan if beta is None else float(beta), "holds": bool(result.holds),
                    "magnitude": float(result.magnitude), "margin": float(result.margin),
                    "witness": "" if result.witness is None else json.dumps(result.witness),
                })  # fmt: skip
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- NLHF monotonicity threshold


def cyclic_profile(rng: np.random.Generator):
    """A 3-candidate profile around the Condorcet cycle A>B>C>A (1-7 voters on each cyclic ranking, 0-1 on the
    others, half of them the unanimous cycle 3-3-3): the witness family of the bound (:mod:`.bounds`)."""
    from .profiles import Profile, all_strict_rankings

    rankings = all_strict_rankings(3)
    cyclic = [0, 3, 4]  # A>B>C, B>C>A, C>A>B in all_strict_rankings' order
    counts = rng.integers(0, 2, 6)
    counts[cyclic] += rng.integers(1, 8, 3)
    if rng.random() < 0.5:
        counts[cyclic] = 3
    keep = counts > 0
    return Profile(rankings[keep], counts[keep].astype(float))


def computed_bound(block: dict) -> tuple[float, list[dict]]:
    """The bound: :func:`.bounds.realisable_bound` for each number of candidates of ``block["candidates"]`` (weights on
    strict rankings, random starts, a wide beta grid); the largest, and every witness."""
    from .bounds import realisable_bound

    low, high, points = block["grid"]
    rng = np.random.default_rng([14, 3838])
    found = [realisable_bound(m, rng, block["starts"], block["steps"], np.geomspace(low, high, points),
                              block["bisect"]) for m in block["candidates"]]  # fmt: skip
    return max(b for b, _ in found), [w | {"bound": b} for b, w in found]


def directed_starts(witness: dict, voters: int):
    """The directed search's start profiles: the bound's witness weights rounded at ``voters`` voters, and the
    Condorcet cycle with ``voters`` per cyclic ranking; each with one B>A>C voter (a lift of A over B exists)."""
    from .profiles import Profile, all_strict_rankings

    counts = np.round(np.asarray(witness["weights"]) * voters)
    rankings = all_strict_rankings(3)
    weighted = Profile(np.vstack([rankings, Profile.from_strings(["B>A>C"]).levels]), np.r_[counts, 1.0])
    cycle = Profile.from_strings(["A>B>C", "B>C>A", "C>A>B", "B>A>C"], [voters, voters, voters, 1])
    keep = weighted.counts > 0
    return [Profile(weighted.levels[keep], weighted.counts[keep]), cycle]


def threshold_table(block: dict, seeds: list[int]) -> pd.DataFrame:
    """The search of NLHF and DPO monotonicity violations per seed and beta, the refined thresholds of the worst
    violations, the computed bound, and the directed search from its witness (module docstring)."""
    from scipy.special import softmax

    from .axioms import check_monotonicity
    from .bounds import directed_search, discrete_threshold
    from .rules import RULES

    low, high, points = block["grid"]
    grid = np.geomspace(low, high, points)
    limit, witnesses = computed_bound(block["bound"])
    rows = [{"kind": "bound", "seed": -1, "rule": "nlhf", "beta": np.nan, "draws": 0, "violations": 0,
             "max_margin": np.nan, "threshold": w["bound"], "witness": json.dumps(w)} for w in witnesses]  # fmt: skip
    below = [b for b in block["betas"] if b < limit]
    upper = max((w.get("upper", limit) for w in witnesses), default=limit)  # the bisection's bracket [limit, upper]
    directed_betas = {"control": 0.95 * limit, "test": 1.05 * upper}
    if below:
        directed_betas["below"] = max(below)
    witness3 = next(w for w in witnesses if w.get("m") == 3) if witnesses and witnesses[0] else None
    for seed in seeds:
        rng = np.random.default_rng([seed, 3838])
        draws = [(cyclic_profile(rng), None) for _ in range(block["draws"])]
        draws = [(p, _support(rng.dirichlet(np.full(3, block["alpha"])))) for p, _ in draws]
        found = []
        for rule_name in ("nlhf", "dpo"):
            for beta in block["betas"]:
                margins = [check_monotonicity(RULES[rule_name], p, r, beta, tol=block["tol"]) for p, r in draws]
                bad = [k for k, res in enumerate(margins) if not res.holds]
                worst = max(bad, key=lambda k: margins[k].margin) if bad else None
                rows.append({"kind": "search", "seed": seed, "rule": rule_name, "beta": float(beta),
                             "draws": len(draws), "violations": len(bad),
                             "max_margin": max(res.margin for res in margins),
                             "threshold": np.nan,
                             "witness": "" if worst is None else json.dumps(margins[worst].witness)})  # fmt: skip
                if rule_name == "nlhf":
                    found += [(beta, k) for k in bad]
        # the largest violating betas' profiles, refined to their discrete threshold by bisection
        chosen = sorted({k for _, k in sorted(found, reverse=True)}, key=lambda k: -max(b for b, j in found if j == k))
        for k in chosen[: block["refine"]]:
            profile, ref = draws[k]
            t = discrete_threshold(profile, ref, grid, tol=block["tol"])
            rows.append({"kind": "refined", "seed": seed, "rule": "nlhf", "beta": np.nan, "draws": 1,
                         "violations": 1, "max_margin": np.nan, "threshold": t,
                         "witness": json.dumps({"profile": profile.to_dict(), "ref": ref.tolist()})})  # fmt: skip
        if witness3 is None:
            continue
        # directed search from the bound's witness: positive control below, test above, A1's largest beta below
        d = block["directed"]
        refs = np.r_[[witness3["ref"]], softmax(np.c_[rng.normal(0, 3, (d["refs"], 2)), np.zeros(d["refs"])], -1)]
        starts = directed_starts(witness3, block["bound_voters"])
        for kind, beta in directed_betas.items():
            for rule_name in ("nlhf", "dpo") if kind == "below" else ("nlhf",):
                if rule_name == "nlhf":
                    value, profile, ref = directed_search(starts, refs, beta, d["max_iter"], d["moves"], block["tol"])
                else:
                    res = [check_monotonicity(RULES["dpo"], p, r, beta, tol=block["tol"]) for p in starts for r in refs]
                    value, profile, ref = max(x.margin for x in res), starts[0], refs[0]
                rows.append({"kind": kind, "seed": seed, "rule": rule_name, "beta": float(beta), "draws": 1,
                             "violations": int(value > block["tol"]), "max_margin": float(value), "threshold": np.nan,
                             "witness": json.dumps({"axiom": "monotonicity", "rule": rule_name, "beta": float(beta),
                                                    "ref": np.asarray(ref).tolist(),
                                                    "profile": profile.to_dict()})})  # fmt: skip
    return pd.DataFrame(rows)


def _support(ref: np.ndarray, floor: float = 1e-6) -> np.ndarray:
    ref = np.clip(np.asarray(ref, float), floor, None)
    return ref / ref.sum()


# ---------------------------------------------------------------- RLHF-BT against DPO


def equivalence_table(cfg: dict, seeds: list[int]) -> pd.DataFrame:
    """``max |rlhf_bt - dpo|`` per seed, profile and beta on the first synthetic profiles (L-BFGS against the
    Gibbs closed form; references Dirichlet)."""
    from .profiles import pairwise_matrix
    from .rules import RULES, dpo_by_loss

    rows = []
    for seed in seeds:
        rng = np.random.default_rng([seed, 99])
        for i, (family, profile) in enumerate(
            synthetic_profiles(cfg["synthetic"], seed)[: cfg["equivalence"]["profiles"]]
        ):
            P = pairwise_matrix(profile)
            ref = _support(rng.dirichlet(np.ones(profile.m)))
            for beta in cfg["equivalence"]["betas"]:
                closed = RULES["dpo"](P, ref, beta)
                gap = np.abs(RULES["rlhf_bt"](P, ref, beta) - closed).max()
                gap_loss = np.abs(dpo_by_loss(P, ref, beta) - closed).max()
                rows.append({"seed": seed, "profile": i, "family": family, "beta": float(beta), "gap": float(gap),
                             "gap_loss": float(gap_loss)})  # fmt: skip
    return pd.DataFrame(rows)
