r"""Paper 02's sequence augmentation and sample metrics (AnalogToBi, Kim et al. 2026, arXiv 2603.08720, Sec. 3.4 and
4.1; reference ``PREPROCESSING_Renaming.py``, ``METRIC_Novelty.py``, ``METRIC_N_Gram.py``):

* :func:`rename`: device renaming, per walk and per family an injective random map of the indices used into
  1..cap (the reference replaces each walk by one renamed copy);
* :func:`novel`: a generated circuit is novel when it is isomorphic to no circuit of the reference set (node labels:
  device family, port names verbatim, ``NET`` for internal nets; edge labels: edge types), checked inside the
  reference's Weisfeiler-Lehman hash bucket;
* :func:`memorised`: the paper's 10-gram test, true when one training walk has both the same first n tokens and the
  same last n tokens before ``TRUNCATE``; index-free (device indices dropped on both sides), it tests the topology,
  which renaming alone cannot change (verbatim, renamed indices lower it whatever the model writes);
* :func:`mmd2`: an unbiased squared maximum mean discrepancy with a Gaussian kernel, the realism distance between
  generated and real circuits' feature vectors (bandwidth: the median distance within the reference set).
"""

from __future__ import annotations

import numpy as np

from .generate import graph_hash, graph_of, isomorphic
from .netlist import Circuit
from .tokens import DEVICE_CAPS, END, split_device

__all__ = ["NoveltyIndex", "median_bandwidth", "memorised", "mmd2", "rename", "walk_ends", "without_indices"]


def rename(tokens: list[str], rng: np.random.Generator, pool: int | None = None) -> list[str]:
    """The walk with every device family's indices mapped injectively at random into 1..cap (1..min(cap, pool)
    with ``pool``: a smaller index vocabulary, for small circuits and short training)."""
    used: dict[str, list[int]] = {}
    for t in tokens:
        parsed = split_device(t)
        if parsed and parsed[1] not in used.setdefault(parsed[0], []):
            used[parsed[0]].append(parsed[1])
    mapping = {}
    for family, indices in used.items():
        top = DEVICE_CAPS[family] if pool is None else min(pool, DEVICE_CAPS[family])
        if len(indices) > top:
            raise ValueError(f"{len(indices)} {family} devices exceed the {top} indices renaming draws from")
        targets = rng.choice(np.arange(1, top + 1), size=len(indices), replace=False)
        mapping.update({f"{family}{i}": f"{family}{int(j)}" for i, j in zip(indices, targets)})
    return [mapping.get(t, t) for t in tokens]


class NoveltyIndex:
    """The reference circuits' graphs bucketed by their Weisfeiler-Lehman hash; ``novel(circuit)``. Ports verbatim
    (the reference) or, with ``canonical_ports``, by class (``VIN1`` and ``VIN2`` alike)."""

    def __init__(self, circuits: list[Circuit], canonical_ports: bool = False):
        self.canonical_ports = canonical_ports
        self.buckets: dict[str, list] = {}
        for circuit in circuits:
            g = graph_of(circuit, canonical_ports)
            self.buckets.setdefault(graph_hash(g), []).append(g)

    def novel(self, circuit: Circuit) -> bool:
        g = graph_of(circuit, self.canonical_ports)
        return not any(isomorphic(g, other) for other in self.buckets.get(graph_hash(g), ()))


def walk_ends(tokens: list[str], n: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    body = tokens[: tokens.index(END)] if END in tokens else list(tokens)
    return tuple(body[:n]), tuple(body[-n:])


def without_indices(tokens: list[str]) -> list[str]:
    """The walk with every device token reduced to its family (``NM3`` -> ``NM``): what renaming cannot change."""
    return [parsed[0] if (parsed := split_device(t)) else t for t in tokens]


def memorised(sample: list[str], training: list[list[str]], n: int = 10, index_free: bool = False) -> bool:
    """Whether one training walk shares the sample's first ``n`` tokens and its last ``n`` before ``TRUNCATE``; with
    ``index_free`` on both sides' :func:`without_indices` (the topology's n-grams, whatever the device names)."""
    strip = without_indices if index_free else list
    head, tail = walk_ends(strip(sample), n)
    return any(walk_ends(strip(walk), n) == (head, tail) for walk in training)


def median_bandwidth(y: np.ndarray) -> float:
    """The median pairwise Euclidean distance within y (1 where it is 0): the default Gaussian bandwidth."""
    y = np.atleast_2d(np.asarray(y, float))
    sq = (y * y).sum(1)
    within = np.sqrt(np.maximum(sq[:, None] + sq[None, :] - 2 * y @ y.T, 0.0)[np.triu_indices(len(y), 1)])
    return float(np.median(within)) or 1.0


def mmd2(x: np.ndarray, y: np.ndarray, bandwidth: float | None = None) -> float:
    """Unbiased MMD^2 between samples x (m, d) and y (n, d) with a Gaussian kernel; ``bandwidth`` defaults to the
    median pairwise distance within y. Needs at least 2 rows on each side."""
    x, y = np.atleast_2d(np.asarray(x, float)), np.atleast_2d(np.asarray(y, float))
    if len(x) < 2 or len(y) < 2:
        raise ValueError(f"MMD needs at least 2 samples on each side, got {len(x)} and {len(y)}")

    def d2(a, b):
        return np.maximum((a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2 * a @ b.T, 0.0)

    if bandwidth is None:
        bandwidth = median_bandwidth(y)
    k = lambda a, b: np.exp(-d2(a, b) / (2 * bandwidth**2))  # noqa: E731
    kxx, kyy, kxy = k(x, x), k(y, y), k(x, y)
    m, n = len(x), len(y)
    return float(
        (kxx.sum() - np.trace(kxx)) / (m * (m - 1)) + (kyy.sum() - np.trace(kyy)) / (n * (n - 1)) - 2 * kxy.mean()
    )
