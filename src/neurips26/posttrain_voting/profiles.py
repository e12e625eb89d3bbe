"""Preference profiles: weak rankings over m candidates with voter counts, their pairwise matrix, and generators.

A ranking is a weak order stored as a tie-level vector: ``levels[c]`` is the level of candidate ``c``
(0 = best; tied candidates share a level; levels are contiguous ``0..L-1``). A profile is ``k`` distinct
rankings with non-negative voter counts (weights). The stated tie rule: a voter who ties ``a`` and ``b``
counts 1/2 for each side of the pair, so every rule defined through the pairwise matrix accepts ties;
:meth:`Profile.require_strict` refuses them for a rule that needs strict rankings.

Generators (all seeded by a ``numpy.random.Generator``): impartial culture (uniform strict rankings),
Mallows (repeated insertion, Doignon et al. 2004) and a CoVal-like mixture: about 17 voters over 4
candidates from 2-3 Mallows groups with ties injected, shaped like OpenAI's CoVal rankings (``A>B>C=D``).
"""

from __future__ import annotations

import itertools
import string
from dataclasses import dataclass

import numpy as np

from neurips26.common.validation import check_int, check_number


def _normalise_levels(levels: np.ndarray) -> np.ndarray:
    """Relabel each row's levels to contiguous ``0..L-1`` keeping their order."""
    out = np.empty_like(levels)
    for i, row in enumerate(levels):
        out[i] = np.unique(row, return_inverse=True)[1]
    return out


@dataclass(frozen=True, eq=False)
class Profile:
    """``levels`` (k, m) int tie levels of ``k`` rankings over ``m`` candidates, ``counts`` (k,) voter weights."""

    levels: np.ndarray
    counts: np.ndarray

    def __post_init__(self):
        levels = np.asarray(self.levels)
        counts = np.asarray(self.counts, dtype=float)
        if levels.ndim != 2 or levels.shape[1] < 2:
            raise ValueError(f"Profile.levels must have shape (rankings, m >= 2), got {levels.shape}")
        if not np.issubdtype(levels.dtype, np.integer) or (levels < 0).any():
            raise ValueError("Profile.levels must be non-negative integers (tie levels, 0 = best)")
        if counts.shape != (levels.shape[0],):
            raise ValueError(f"Profile.counts must have shape ({levels.shape[0]},), got {counts.shape}")
        if not np.isfinite(counts).all() or (counts < 0).any() or counts.sum() <= 0:
            raise ValueError(f"Profile.counts must be finite, >= 0 and not all zero (no voters), got {counts}")
        object.__setattr__(self, "levels", _normalise_levels(levels.astype(np.int64)))
        object.__setattr__(self, "counts", counts)

    @property
    def m(self) -> int:
        return self.levels.shape[1]

    @property
    def n_voters(self) -> float:
        return float(self.counts.sum())

    @property
    def has_ties(self) -> bool:
        return bool((self.levels.max(axis=1) < self.m - 1).any())

    def require_strict(self, who: str = "rule") -> Profile:
        """The profile itself when every ranking is strict; ValueError naming ``who`` otherwise."""
        if self.has_ties:
            bad = [s for s, lv in zip(self.to_strings(), self.levels) if lv.max() < self.m - 1]
            raise ValueError(f"{who} needs strict rankings, got ties in {bad[:3]}")
        return self

    def to_strings(self, labels: str = string.ascii_uppercase) -> list[str]:
        """Rankings as ``"A>B=C>D"`` strings (one per row, counts not included)."""
        out = []
        for row in self.levels:
            groups = ["=".join(labels[c] for c in np.flatnonzero(row == lv)) for lv in range(row.max() + 1)]
            out.append(">".join(groups))
        return out

    def to_dict(self) -> dict:
        """A JSON-able form ``{"rankings": [...], "counts": [...]}`` that :meth:`from_dict` replays."""
        return {"rankings": self.to_strings(), "counts": self.counts.tolist(), "m": self.m}

    @classmethod
    def from_dict(cls, data: dict) -> Profile:
        return cls.from_strings(data["rankings"], data["counts"], m=data.get("m"))

    @classmethod
    def from_strings(cls, rankings, counts=None, m: int | None = None, labels: str = string.ascii_uppercase):
        """Parse ``"A>B>C=D"`` rankings (each must name every one of the ``m`` candidates exactly once)."""
        rankings = list(rankings)
        if not rankings:
            raise ValueError("Profile.from_strings needs at least one ranking (a profile with 0 voters)")
        names = [[g.split("=") for g in r.replace(" ", "").split(">")] for r in rankings]
        if m is None:
            m = len([c for g in names[0] for c in g])
        alphabet = labels[:m]
        levels = np.empty((len(rankings), m), dtype=np.int64)
        for i, (text, groups) in enumerate(zip(rankings, names)):
            flat = [c for g in groups for c in g]
            if sorted(flat) != sorted(alphabet):
                raise ValueError(f"ranking {text!r} must name each of {alphabet!r} exactly once")
            for lv, g in enumerate(groups):
                levels[i, [alphabet.index(c) for c in g]] = lv
        counts = np.ones(len(rankings)) if counts is None else np.asarray(counts, dtype=float)
        return cls(levels, counts)

    def union(self, other: Profile) -> Profile:
        """The multiset union N1 + N2 (voters of both, counts added; rows are not merged)."""
        if other.m != self.m:
            raise ValueError(f"cannot join profiles over {self.m} and {other.m} candidates")
        return Profile(np.vstack([self.levels, other.levels]), np.concatenate([self.counts, other.counts]))

    def scaled(self, factor: float) -> Profile:
        return Profile(self.levels, self.counts * check_number("factor", factor, 0.0, low_open=True))


def pairwise_matrix(profile: Profile) -> np.ndarray:
    """``P[a, b]`` = share of voters preferring ``a`` to ``b``, ties counting 1/2 (so ``P + P.T = 1``)."""
    lv = profile.levels
    prefer = (lv[:, :, None] < lv[:, None, :]) + 0.5 * (lv[:, :, None] == lv[:, None, :])
    return np.einsum("k,kab->ab", profile.counts, prefer) / profile.counts.sum()


def borda_scores(levels: np.ndarray) -> np.ndarray:
    """Per-ranking Borda score: candidates ranked strictly below plus half of those tied (rows of ``levels``)."""
    lv = np.atleast_2d(levels)
    below = (lv[:, :, None] < lv[:, None, :]).sum(-1)
    tied = (lv[:, :, None] == lv[:, None, :]).sum(-1) - 1
    return below + 0.5 * tied


def all_strict_rankings(m: int) -> np.ndarray:
    """The ``m!`` strict rankings as tie-level rows, in lexicographic order of the candidate sequence."""
    perms = np.array(list(itertools.permutations(range(m))))
    levels = np.empty_like(perms)
    np.put_along_axis(levels, perms, np.arange(m)[None, :], axis=1)
    return levels


def impartial_culture(n: int, m: int, rng: np.random.Generator) -> Profile:
    """``n`` voters, each a uniformly random strict ranking over ``m`` candidates."""
    check_int("n", n, 1), check_int("m", m, 2)
    order = np.argsort(rng.random((n, m)), axis=1)
    levels = np.empty_like(order)
    np.put_along_axis(levels, order, np.arange(m)[None, :], axis=1)
    return Profile(levels, np.ones(n))


def mallows(n: int, m: int, phi: float, rng: np.random.Generator, center: np.ndarray | None = None) -> Profile:
    """``n`` strict rankings from Mallows(center, phi) by repeated insertion: the i-th candidate of the center
    goes to position j <= i with probability proportional to ``phi ** (i - j)`` (phi=1: impartial culture)."""
    check_int("n", n, 1), check_int("m", m, 2), check_number("phi", phi, 0.0, 1.0)
    center = np.arange(m) if center is None else np.asarray(center)
    orders = np.zeros((n, 0), dtype=np.int64)
    for i in range(m):
        w = phi ** (i - np.arange(i + 1, dtype=float))
        pos = np.searchsorted(np.cumsum(w / w.sum()), rng.random(n), side="right").clip(max=i)
        j = np.arange(i + 1)[None, :]
        shifted = np.take_along_axis(orders, np.clip(j - (j > pos[:, None]), 0, max(i - 1, 0)), axis=1) if i else j
        orders = np.where(j == pos[:, None], center[i], shifted)
    levels = np.empty_like(orders)
    np.put_along_axis(levels, orders, np.arange(m)[None, :], axis=1)
    return Profile(levels, np.ones(n))


def inject_ties(profile: Profile, prob: float, rng: np.random.Generator) -> Profile:
    """Each ranking, with probability ``prob``, merges one random pair of adjacent levels into a tie."""
    levels = profile.levels.copy()
    for row in levels[rng.random(len(levels)) < prob]:
        top = row.max()
        if top > 0:
            lv = rng.integers(top)
            row[row > lv] -= 1
    return Profile(levels, profile.counts)


def coval_like(rng: np.random.Generator, n: int = 17, m: int = 4, tie_prob: float = 0.1) -> Profile:
    """CoVal-shaped profile: ``n`` voters from a mixture of 2-3 Mallows groups (phi in [0.3, 0.9], random
    centers), then ties injected with probability ``tie_prob`` per ranking."""
    groups = int(rng.integers(2, 4))
    sizes = rng.multinomial(n, rng.dirichlet(np.ones(groups)))
    parts = [mallows(s, m, float(rng.uniform(0.3, 0.9)), rng, rng.permutation(m)) for s in sizes if s > 0]
    out = parts[0]
    for p in parts[1:]:
        out = out.union(p)
    return inject_ties(out, tie_prob, rng)


GENERATORS = {"impartial_culture": impartial_culture, "mallows": mallows, "coval_like": coval_like}
