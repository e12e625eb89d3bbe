r"""Axiom checkers for reference-dependent probabilistic voting rules: each returns :class:`AxiomResult`.

The axioms in probabilistic form (our reconstruction; the paper was not found; sources: Brandt 2017 "Rolling
the dice" for monotonicity, reinforcement/population-consistency and participation; Diaconis and Zabell 1982
for commutativity of successive updates). ``f(N; ref)`` is the rule's lottery, ``margin`` the signed size of
the worst breach (> ``tol`` means violated; it is also the objective of the adversarial search), and
``magnitude = max(margin, 0)``.

* ``monotonicity``: lifting candidate ``c`` one step in one voter's ranking (``c`` passes the whole tie class
  directly above it; if ``c`` is tied, it moves alone just above its tie class: only pairs ``(c, b)`` improve,
  others are unchanged) must not lower ``f(N)(c)``. margin = max over all such lifts of the drop in ``f(c)``
  less the certified error of both lotteries (NLHF's duality-gap bound; 0 for closed forms), so a violation is
  counted only when the drop exceeds what the solver certifies.
* ``participation``: a voter ``v`` joining must not lower her expected Borda utility (candidates below plus
  half the tied ones): margin = max over joining rankings (default: every strict ranking) of
  ``E_{f(N)}[u_v] - E_{f(N + v)}[u_v]``.
* ``participation_sd_strong`` and ``participation_sd_weak``: the stochastic-dominance forms for probabilistic
  rules (Brandl, Brandt and Hofbauer; Brandt 2017): the joiner's lottery after joining must SD-dominate the one
  before (strong), or at least the one before must not strictly SD-dominate the one after (weak).
* ``reinforcement``: if ``f(A) = f(B)`` (within ``tol``) then ``f(A + B) = f(A)``; margin is
  ``max |f(A + B) - f(A)|`` when the premise holds, else ``-max |f(A) - f(B)|`` (vacuously satisfied; -1 for a
  pair with one pairwise matrix, which meets the premise only trivially).
* ``mixing_consistency``: ``f(A + B) = (n_A f(A) + n_B f(B)) / (n_A + n_B)`` (the linear, population-weighted
  mixture; proportional Borda satisfies it exactly). margin = max abs difference.
* ``commutativity``: staged post-training in either order agrees, ``f(B; f(A; ref)) = f(A; f(B; ref))``.
* ``staged_vs_joint``: staged ``f(B; f(A; ref), beta)`` against joint ``f(A + B; ref, beta / 2)`` (a discrepancy
  measure at matched regularisation strength: two stages at ``beta`` apply the reward twice).

The last two need a reference-dependent rule.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from neurips26.posttrain_voting.profiles import Profile, all_strict_rankings, borda_scores, pairwise_matrix
from neurips26.posttrain_voting.rules import RULES, Rule

TOL = 1e-7


class AxiomResult(NamedTuple):
    """``holds`` (margin <= tol), a replayable ``witness`` dict when violated, ``magnitude`` >= 0, signed ``margin``."""

    holds: bool
    witness: dict | None
    magnitude: float
    margin: float


def _prefer(levels: np.ndarray) -> np.ndarray:
    lv = np.atleast_2d(levels)
    return (lv[:, :, None] < lv[:, None, :]) + 0.5 * (lv[:, :, None] == lv[:, None, :])


def lift(levels: np.ndarray, c: int) -> np.ndarray | None:
    """One-step lift of candidate ``c`` in a weak ranking (tie levels); None when ``c`` is alone on top."""
    lv = np.asarray(levels, dtype=float).copy()
    own = lv[c]
    if (lv == own).sum() > 1:
        lv[c] = own - 0.5  # alone just above its former tie class
    elif own > 0:
        lv[c] = own - 1.5  # above the whole class directly above
    else:
        return None
    return np.unique(lv, return_inverse=True)[1]


def _result(margin: float, tol: float, witness: Callable[[], dict]) -> AxiomResult:
    holds = bool(margin <= tol)
    return AxiomResult(holds, None if holds else witness(), float(max(margin, 0.0)), float(margin))


def _base(rule: Rule, ref, beta, axiom: str) -> dict:
    return {
        "axiom": axiom,
        "rule": rule.name,
        "beta": None if beta is None else float(beta),
        "ref": None if ref is None else np.asarray(ref, float).tolist(),
    }


def solve_certified(rule: Rule, P, ref, beta) -> tuple[np.ndarray, np.ndarray]:
    """The rule's lottery and a bound on its L1 error: NLHF's certified ``sqrt(gap / beta)`` (:mod:`.nlhf`);
    0 for the closed-form rules."""
    if rule.name == "nlhf":
        from neurips26.posttrain_voting.nlhf import nlhf_equilibrium

        res = nlhf_equilibrium(P, ref, beta)
        return res.policy, res.distance_bound
    pi = rule(P, ref, beta)
    return pi, np.zeros(pi.shape[:-1])


def check_monotonicity(rule: Rule, profile: Profile, ref=None, beta=None, tol: float = TOL) -> AxiomResult:
    """Every one-voter one-step lift of every candidate, evaluated in one batch."""
    rows, cands, new_rows = [], [], []
    for i, row in enumerate(profile.levels):
        for c in range(profile.m):
            lifted = lift(row, c)
            if lifted is not None:
                rows.append(i), cands.append(c), new_rows.append(lifted)
    if not rows:
        return AxiomResult(True, None, 0.0, -np.inf)
    rows, cands, new_rows = np.array(rows), np.array(cands), np.array(new_rows)
    weight = np.minimum(profile.counts[rows], 1.0)
    P = pairwise_matrix(profile)
    delta = (_prefer(new_rows) - _prefer(profile.levels[rows])) * (weight / profile.n_voters)[:, None, None]
    before, err_before = solve_certified(rule, P, ref, beta)
    after, err_after = solve_certified(rule, P[None] + delta, ref, beta)
    drops = before[cands] - after[np.arange(len(cands)), cands] - err_before - err_after
    k = int(np.argmax(drops))

    def witness():
        counts = profile.counts.copy()
        counts[rows[k]] -= weight[k]
        lifted = Profile(np.vstack([profile.levels, new_rows[k]]), np.r_[counts, weight[k]])
        return _base(rule, ref, beta, "monotonicity") | {
            "profile": profile.to_dict(),
            "other": lifted.to_dict(),
            "candidate": int(cands[k]),
            "before": float(before[cands[k]]),
            "after": float(after[k, cands[k]]),
            "certified_error": float(err_before + err_after[k]),
        }

    return _result(float(drops[k]), tol, witness)


def check_participation(
    rule: Rule, profile: Profile, ref=None, beta=None, joiners: np.ndarray | None = None, tol: float = TOL
) -> AxiomResult:
    """A joining voter (each ranking of ``joiners``, default every strict ranking) must not lose Borda utility."""
    joiners = all_strict_rankings(profile.m) if joiners is None else np.atleast_2d(joiners)
    n = profile.n_voters
    P = pairwise_matrix(profile)
    P_join = (n * P[None] + _prefer(joiners)) / (n + 1)
    utility = borda_scores(joiners)
    before = utility @ rule(P, ref, beta)
    after = (utility * rule(P_join, ref, beta)).sum(-1)
    k = int(np.argmax(before - after))

    def witness():
        joined = profile.union(Profile(joiners[k : k + 1], np.ones(1)))
        return _base(rule, ref, beta, "participation") | {
            "profile": profile.to_dict(),
            "other": joined.to_dict(),
            "voter": Profile(joiners[k : k + 1], np.ones(1)).to_strings()[0],
            "before": float(before[k]),
            "after": float(after[k]),
        }

    return _result(float(before[k] - after[k]), tol, witness)


def check_participation_sd(
    rule: Rule,
    profile: Profile,
    ref=None,
    beta=None,
    joiners: np.ndarray | None = None,
    tol: float = TOL,
    strong: bool = True,
) -> AxiomResult:
    """Stochastic-dominance participation (Brandl, Brandt and Hofbauer; Brandt 2017): with ``d_k`` the joiner's
    top-k mass before joining minus after (k = 1..m-1 along her ranking), the strong form needs ``f(N + v)`` to
    SD-dominate ``f(N)`` (every ``d_k <= 0``; margin ``max_k d_k``); the weak form only forbids ``f(N)`` strictly
    SD-dominating ``f(N + v)`` (violated when every ``d_k >= 0`` and some ``d_k > tol``; margin ``max_k d_k``
    then, else ``min_k d_k`` < 0). Each ``d_k`` is taken net of the certified error of both lotteries."""
    joiners = all_strict_rankings(profile.m) if joiners is None else np.atleast_2d(joiners)
    n = profile.n_voters
    P = pairwise_matrix(profile)
    P_join = (n * P[None] + _prefer(joiners)) / (n + 1)
    before, err_before = solve_certified(rule, P, ref, beta)
    after, err_after = solve_certified(rule, P_join, ref, beta)
    order = np.argsort(joiners, axis=-1, kind="stable")  # candidates best first (strict rankings: levels 0..m-1)
    top_before = np.cumsum(before[order], -1)[:, :-1]
    top_after = np.cumsum(np.take_along_axis(after, order, -1), -1)[:, :-1]
    d = top_before - top_after
    slack = err_before + err_after[:, None]
    if strong:
        margins = (d - slack).max(-1)
    else:
        margins = np.where((d - slack).min(-1) >= 0, (d - slack).max(-1), (d - slack).min(-1))
    k = int(np.argmax(margins))
    name = "participation_sd_strong" if strong else "participation_sd_weak"

    def witness():
        joined = profile.union(Profile(joiners[k : k + 1], np.ones(1)))
        return _base(rule, ref, beta, name) | {
            "profile": profile.to_dict(),
            "other": joined.to_dict(),
            "voter": Profile(joiners[k : k + 1], np.ones(1)).to_strings()[0],
            "top_before": top_before[k].tolist(),
            "top_after": top_after[k].tolist(),
        }

    return _result(float(margins[k]), tol, witness)


def _check_participation_sd_weak(rule, profile, ref=None, beta=None, joiners=None, tol=TOL):
    return check_participation_sd(rule, profile, ref, beta, joiners, tol, strong=False)


def _pair_witness(rule, ref, beta, axiom, A, B, **values):
    return lambda: _base(rule, ref, beta, axiom) | {"profile": A.to_dict(), "other": B.to_dict()} | values


def check_reinforcement(rule: Rule, A: Profile, B: Profile, ref=None, beta=None, tol: float = TOL) -> AxiomResult:
    """If ``f(A) = f(B)`` then ``f(A + B) = f(A)``. A pair with the same pairwise matrix meets the premise only
    trivially (every rule here reads the profile through ``P``, so ``f(A + B) = f(A)``): it counts as premise not
    met (margin -1)."""
    PA, PB = pairwise_matrix(A), pairwise_matrix(B)
    if np.abs(PA - PB).max() < 1e-12:
        return AxiomResult(True, None, 0.0, -1.0)
    fa, fb = rule(PA, ref, beta), rule(PB, ref, beta)
    premise = float(np.abs(fa - fb).max())
    if premise > tol:
        return AxiomResult(True, None, 0.0, -premise)
    fab = rule(pairwise_matrix(A.union(B)), ref, beta)
    gap = float(np.abs(fab - fa).max())
    return _result(gap, tol, _pair_witness(rule, ref, beta, "reinforcement", A, B, joint=fab.tolist()))


def check_mixing_consistency(rule: Rule, A: Profile, B: Profile, ref=None, beta=None, tol: float = TOL) -> AxiomResult:
    """``f(A + B)`` equals the population-weighted mixture of ``f(A)`` and ``f(B)``."""
    fa, fb = rule(pairwise_matrix(A), ref, beta), rule(pairwise_matrix(B), ref, beta)
    fab = rule(pairwise_matrix(A.union(B)), ref, beta)
    mix = (A.n_voters * fa + B.n_voters * fb) / (A.n_voters + B.n_voters)
    gap = float(np.abs(fab - mix).max())
    return _result(gap, tol, _pair_witness(rule, ref, beta, "mixing_consistency", A, B, joint=fab.tolist()))


def _needs_reference(rule: Rule, axiom: str) -> None:
    if not rule.uses_reference:
        raise ValueError(f"{axiom} applies to reference-dependent rules; {rule.name!r} takes no reference")


def staged(rule: Rule, first: Profile, second: Profile, ref, beta) -> np.ndarray:
    """``f(second; f(first; ref))``: post-train on ``first``, then on ``second`` from the result."""
    return rule(pairwise_matrix(second), rule(pairwise_matrix(first), ref, beta), beta)


def check_commutativity(rule: Rule, A: Profile, B: Profile, ref=None, beta=None, tol: float = TOL) -> AxiomResult:
    """Staged post-training in either order gives the same policy."""
    _needs_reference(rule, "commutativity")
    ab, ba = staged(rule, A, B, ref, beta), staged(rule, B, A, ref, beta)
    gap = float(np.abs(ab - ba).max())
    return _result(gap, tol, _pair_witness(rule, ref, beta, "commutativity", A, B, ab=ab.tolist(), ba=ba.tolist()))


def check_staged_vs_joint(rule: Rule, A: Profile, B: Profile, ref=None, beta=None, tol: float = TOL) -> AxiomResult:
    """Staged ``f(B; f(A; ref), beta)`` against joint ``f(A + B; ref, beta / 2)``: two stages at ``beta`` apply the
    reward twice (DPO: ``ref exp((r_A + r_B) / beta)``), so the joint run is compared at matched strength."""
    _needs_reference(rule, "staged_vs_joint")
    ab, joint = staged(rule, A, B, ref, beta), rule(pairwise_matrix(A.union(B)), ref, beta / 2)
    gap = float(np.abs(ab - joint).max())
    return _result(gap, tol, _pair_witness(rule, ref, beta, "staged_vs_joint", A, B, joint=joint.tolist()))


@dataclass(frozen=True)
class Axiom:
    """A named checker taking one profile (``arity`` 1) or two (``arity`` 2)."""

    name: str
    check: Callable
    arity: int
    needs_reference: bool = False


AXIOMS = {
    "monotonicity": Axiom("monotonicity", check_monotonicity, 1),
    "participation": Axiom("participation", check_participation, 1),
    "participation_sd_strong": Axiom("participation_sd_strong", check_participation_sd, 1),
    "participation_sd_weak": Axiom("participation_sd_weak", _check_participation_sd_weak, 1),
    "reinforcement": Axiom("reinforcement", check_reinforcement, 2),
    "mixing_consistency": Axiom("mixing_consistency", check_mixing_consistency, 2),
    "commutativity": Axiom("commutativity", check_commutativity, 2, needs_reference=True),
    "staged_vs_joint": Axiom("staged_vs_joint", check_staged_vs_joint, 2, needs_reference=True),
}


def replay(witness: dict, tol: float = TOL) -> AxiomResult:
    """Re-run the check a witness records (rule, beta, reference, profiles) from its JSON-able form."""
    axiom = AXIOMS[witness["axiom"]]
    rule = RULES[witness["rule"]]
    ref = None if witness["ref"] is None else np.asarray(witness["ref"])
    A = Profile.from_dict(witness["profile"])
    if axiom.arity == 1 and axiom.name.startswith("participation"):
        voter = Profile.from_strings([witness["voter"]], m=A.m).levels
        return axiom.check(rule, A, ref, witness["beta"], joiners=voter, tol=tol)
    if axiom.arity == 1:
        return axiom.check(rule, A, ref, witness["beta"], tol=tol)
    return axiom.check(rule, A, Profile.from_dict(witness["other"]), ref, witness["beta"], tol=tol)
