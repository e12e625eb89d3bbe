"""Paper 15's trained members: a label condition and a seed (torch-free, so that the jobs that only read runs need
no torch)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Member", "members_grid"]


@dataclass(frozen=True)
class Member:
    """One trained classifier: the label condition whose targets it learns and the seed of its draw."""

    condition: str
    seed: int


def members_grid(conditions: Sequence[str], seeds: Sequence[int]) -> list[Member]:
    """Every (condition, seed) pair, condition-major: [(c0, s0), (c0, s1), ..., (c1, s0), ...]."""
    return [Member(str(c), int(s)) for c in conditions for s in seeds]
