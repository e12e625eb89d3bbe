"""Search for axiom violations: random profiles (frequency and magnitude) and hill-climbing (adversarial).

Random search draws profiles from a generator (default :func:`profiles.coval_like`) and references from
Dirichlet(alpha) (or a fixed one), checks the axiom and reports how often it is violated and by how much.
Adversarial search climbs over integer voter counts on the ``m!`` strict rankings (one count vector per
profile the axiom takes), maximising the checker's signed margin with +-1 moves, several restarts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurips26.common.validation import check_int
from neurips26.posttrain_voting.axioms import AXIOMS, AxiomResult
from neurips26.posttrain_voting.profiles import Profile, all_strict_rankings, coval_like
from neurips26.posttrain_voting.rules import Rule


@dataclass(frozen=True)
class SearchSummary:
    """Violations found by one search for one rule, axiom and beta; ``witness`` is the worst one (or None)."""

    rule: str
    axiom: str
    beta: float | None
    trials: int
    violations: int
    mean_magnitude: float
    max_magnitude: float
    witness: dict | None

    @property
    def frequency(self) -> float:
        return self.violations / self.trials


def _check(rule: Rule, axiom: str, profiles: list[Profile], ref, beta) -> AxiomResult:
    return AXIOMS[axiom].check(rule, *profiles, ref, beta)


def random_search(
    rule: Rule,
    axiom: str,
    beta: float | None,
    rng: np.random.Generator,
    trials: int = 50,
    generator=coval_like,
    ref: np.ndarray | None = None,
    alpha: float = 2.0,
    m: int = 4,
) -> SearchSummary:
    """``trials`` random draws of the axiom's profiles (``generator(rng)``) and references (``ref`` or Dirichlet)."""
    check_int("trials", trials, 1, who="random_search")
    arity = AXIOMS[axiom].arity
    results = []
    for _ in range(trials):
        profiles = [generator(rng) for _ in range(arity)]
        r = ref if ref is not None else rng.dirichlet(np.full(m, alpha))
        results.append(_check(rule, axiom, profiles, r, beta))
    bad = [r for r in results if not r.holds]
    worst = max(bad, key=lambda r: r.magnitude) if bad else None
    mags = [r.magnitude for r in bad]
    return SearchSummary(
        rule.name,
        axiom,
        beta,
        trials,
        len(bad),
        float(np.mean(mags)) if mags else 0.0,
        float(max(mags, default=0.0)),
        None if worst is None else worst.witness,
    )


def _profile(counts: np.ndarray, rankings: np.ndarray) -> Profile:
    keep = counts > 0
    return Profile(rankings[keep], counts[keep].astype(float))


def hill_climb(
    rule: Rule,
    axiom: str,
    beta: float | None,
    rng: np.random.Generator,
    m: int = 3,
    ref: np.ndarray | None = None,
    steps: int = 150,
    restarts: int = 3,
    max_start: int = 4,
) -> tuple[AxiomResult, list[Profile]]:
    """Maximise the axiom's margin over integer counts on strict rankings; returns the best result and profiles."""
    check_int("steps", steps, 1, who="hill_climb"), check_int("restarts", restarts, 1, who="hill_climb")
    rankings = all_strict_rankings(m)
    ref = np.full(m, 1 / m) if ref is None else ref
    arity = AXIOMS[axiom].arity
    best: tuple[AxiomResult, list[Profile]] | None = None
    for _ in range(restarts):
        counts = rng.integers(0, max_start + 1, size=(arity, len(rankings)))
        counts[:, 0] += counts.sum(1) == 0
        current = _check(rule, axiom, [_profile(c, rankings) for c in counts], ref, beta)
        for _ in range(steps):
            trial = counts.copy()
            i, j = rng.integers(arity), rng.integers(len(rankings))
            trial[i, j] = max(trial[i, j] + rng.choice((-1, 1)), 0)
            if trial[i].sum() == 0:
                continue
            result = _check(rule, axiom, [_profile(c, rankings) for c in trial], ref, beta)
            if result.margin >= current.margin:
                counts, current = trial, result
        if best is None or current.margin > best[0].margin:
            best = (current, [_profile(c, rankings) for c in counts])
    return best
