"""What paper 10's datasets are, without pandas or scipy (the workflow reads it when it is parsed): where
MovieLens-100k's atomic files lie in the recbole wheel, the check of an item feature matrix, and the synthetic
generator's settings (SyntheticSpec) and named regimes. The generator itself is :func:`.data.generate`."""

from __future__ import annotations

import importlib.metadata
import importlib.util
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np

ML100K_DIR = ("dataset_example", "ml-100k")  # inside the recbole package
ML100K_FILES = {"inter": "ml-100k.inter", "item": "ml-100k.item"}


# ---------------------------------------------------------------------------------------------------------------------
# MovieLens-100k (RecBole atomic files)


def movielens100k_files() -> dict[str, Path]:
    """Paths of `ml-100k.inter` and `ml-100k.item` shipped in the recbole wheel, found without importing recbole
    (its import pulls in torch). Keys: "inter", "item"."""
    roots: list[Path] = []
    spec = importlib.util.find_spec("recbole")  # a top-level spec is found without executing the package
    if spec is not None and spec.submodule_search_locations:
        roots += [Path(loc) for loc in spec.submodule_search_locations]
    try:
        roots.append(Path(importlib.metadata.distribution("recbole").locate_file("recbole")))
    except importlib.metadata.PackageNotFoundError:
        pass
    if not roots:
        raise FileNotFoundError("the recbole package is not installed (pip install --no-deps recbole==1.2.1)")
    missing = []
    for root in dict.fromkeys(roots):
        paths = {key: root.joinpath(*ML100K_DIR, name) for key, name in ML100K_FILES.items()}
        if all(path.is_file() for path in paths.values()):
            return paths
        missing += [str(path) for path in paths.values() if not path.is_file()]
    raise FileNotFoundError(f"MovieLens-100k atomic files missing from the recbole package: {missing}")


@dataclass(frozen=True)
class SyntheticSpec:
    """Knobs of the synthetic benchmark; defaults are the quick scale (2,000 users, 1,000 items, notes 4.6) in the
    `shortcut_rich` regime.

    Items: `dim`-d unit features around `n_clusters` Gaussian cluster centres (within-cluster offset
    `cluster_spread` per coordinate). Each item has exactly `branching` successors; each successor slot is, with
    probability `smoothness`, one of the item's `neighbours` nearest items by cosine, else uniform. Weights on the
    successors ~ Dirichlet(`dirichlet`). A user's preference z_u is a random convex mix of two cluster centres.
    Sequence length `min_length` + Poisson(`mean_extra_length`); the first item is drawn from p(i | z_u), each next
    one is uniform with probability `noise`, else from p(i | z_u) ∝ exp(kappa f_i . z_u) with probability `history`,
    else from the Markov kernel at the last item.

    The notes fix b, s, h, C=20, dim=16, top-50 neighbours, Dirichlet(0.5), 2-cluster users, noise 0.02 and
    5 + Poisson(12); `kappa`=10 and `cluster_spread`=0.2 are ours [assumed]: they give about 60-150 effective items
    under p(i | z_u) out of 1,000, and a mean cosine of 0.65 to an item's 50 nearest neighbours.
    """

    n_users: int = 2000
    n_items: int = 1000
    n_clusters: int = 20
    dim: int = 16
    branching: int = 3
    smoothness: float = 0.9
    history: float = 0.1
    kappa: float = 10.0
    noise: float = 0.02
    mean_extra_length: float = 12.0
    seed: int = 0
    neighbours: int = 50
    min_length: int = 5
    dirichlet: float = 0.5
    cluster_spread: float = 0.2

    def __post_init__(self):
        def integer(name, low, high=None):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, np.integer))
                or value < low
                or (high is not None and value > high)
            ):
                span = f"[{low}, {high}]" if high is not None else f">= {low}"
                raise ValueError(f"SyntheticSpec.{name} must be an integer in {span}, got {value!r}")

        def real(name, low, high=np.inf, open_low=False):
            value = getattr(self, name)
            ok = isinstance(value, (int, float, np.number)) and not isinstance(value, bool) and np.isfinite(value)
            if not (ok and (value > low if open_low else value >= low) and value <= high):
                span = f"{'(' if open_low else '['}{low}, {high}{')' if high == np.inf else ']'}"
                raise ValueError(f"SyntheticSpec.{name} must be a finite number in {span}, got {value!r}")

        integer("n_users", 1)
        integer("n_items", 2)
        integer("n_clusters", 1, self.n_items)
        integer("dim", 1)
        integer("branching", 1, self.n_items - 1)
        integer("neighbours", 1, self.n_items - 1)
        integer("min_length", 1)
        integer("seed", 0)
        for name in ("smoothness", "history", "noise"):
            real(name, 0.0, 1.0)
        real("kappa", 0.0)
        real("mean_extra_length", 0.0)
        real("dirichlet", 0.0, open_low=True)
        real("cluster_spread", 0.0)


REGIMES = {  # notes 4.4a: branching b, smoothness s, history dependence h
    "shortcut_rich": {"branching": 3, "smoothness": 0.9, "history": 0.1},
    "shortcut_poor": {"branching": 60, "smoothness": 0.1, "history": 0.7},
    "only_lowbranch": {"branching": 3, "smoothness": 0.1, "history": 0.7},
    "only_smooth": {"branching": 60, "smoothness": 0.9, "history": 0.1},
}


def regime_spec(name: str, **overrides) -> SyntheticSpec:
    """The spec of a named regime, with any other field overridden (e.g. seed, n_users)."""
    if name not in REGIMES:
        raise KeyError(f"unknown regime {name!r}; known: {sorted(REGIMES)}")
    unknown = set(overrides) - {f.name for f in fields(SyntheticSpec)}
    if unknown:
        raise ValueError(f"unknown SyntheticSpec field(s) {sorted(unknown)}")
    return SyntheticSpec(**{**REGIMES[name], **overrides})


def check_features(features: np.ndarray, n_items: int) -> None:
    """Raise ValueError unless `features` is a finite (n_items, d) matrix (notes 4.9: row count, NaN)."""
    features = np.asarray(features)
    if features.ndim != 2:
        raise ValueError(f"item features must be 2-D (n_items, dim), got shape {features.shape}")
    if features.shape[0] != n_items:
        raise ValueError(f"item features have {features.shape[0]} rows but there are {n_items} items")
    bad_rows = ~np.isfinite(features).all(axis=1)
    if bad_rows.any():
        first = int(np.argmax(bad_rows))
        raise ValueError(f"item features have NaN/inf in {int(bad_rows.sum())} rows, e.g. row {first}")
