"""What paper 10's datasets are, without pandas or scipy (the workflow reads it when it is parsed): where
MovieLens-100k's atomic files lie in the recbole wheel, the check of an item feature matrix, and the synthetic
generator's settings (SyntheticSpec) and named regimes. The generator itself is :func:`.synthetic.generate`."""

from __future__ import annotations

import importlib.metadata
import importlib.util
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np

from neurips26.common.validation import integer, number, validate

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
    """Knobs of the synthetic benchmark; defaults are the quick scale (2,000 users, 1,000 items) in the
    `shortcut_rich` regime.

    Items: `dim`-d unit features around `n_clusters` Gaussian cluster centres (within-cluster offset
    `cluster_spread` per coordinate). Each item has exactly `branching` successors; each successor slot is, with
    probability `smoothness`, one of the item's `neighbours` nearest items by cosine, else uniform. Weights on the
    successors ~ Dirichlet(`dirichlet`). A user's preference z_u is a random convex mix of two cluster centres.
    Sequence length `min_length` + Poisson(`mean_extra_length`); the first item is drawn from p(i | z_u), each next
    one is uniform with probability `noise`, else from p(i | z_u) ∝ exp(kappa f_i . z_u) with probability `history`,
    else from the Markov kernel at the last item.

    Our design fixes b, s, h, C=20, dim=16, top-50 neighbours, Dirichlet(0.5), 2-cluster users, noise 0.02 and
    5 + Poisson(12); `kappa`=10 and `cluster_spread`=0.2 were tuned so that they give about 60-150 effective items
    under p(i | z_u) out of 1,000, and a mean cosine of 0.65 to an item's 50 nearest neighbours.
    """

    n_users: int = integer(1, default=2000)
    n_items: int = integer(2, default=1000)
    n_clusters: int = integer(1, default=20)
    dim: int = integer(1, default=16)
    branching: int = integer(1, default=3)
    smoothness: float = number(0.0, 1.0, default=0.9)
    history: float = number(0.0, 1.0, default=0.1)
    kappa: float = number(0.0, default=10.0)
    noise: float = number(0.0, 1.0, default=0.02)
    mean_extra_length: float = number(0.0, default=12.0)
    seed: int = integer(0, default=0)
    neighbours: int = integer(1, default=50)
    min_length: int = integer(1, default=5)
    dirichlet: float = number(0.0, low_open=True, default=0.5)
    cluster_spread: float = number(0.0, default=0.2)

    def __post_init__(self):
        validate(self)
        for name, high in (
            ("n_clusters", self.n_items),
            ("branching", self.n_items - 1),
            ("neighbours", self.n_items - 1),
        ):
            if getattr(self, name) > high:
                raise ValueError(
                    f"SyntheticSpec.{name} must be <= {high} (n_items {self.n_items}), got {getattr(self, name)!r}"
                )


REGIMES = {  # branching b, smoothness s, history dependence h: each shortcut on or off
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


def unit_rows(block: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (zero rows left at zero)."""
    norms = np.linalg.norm(block, axis=1, keepdims=True)
    return block / np.where(norms > 0, norms, 1.0)


def check_features(features: np.ndarray, n_items: int) -> None:
    """Raise ValueError unless `features` is a finite (n_items, d) matrix (row count, NaN)."""
    features = np.asarray(features)
    if features.ndim != 2:
        raise ValueError(f"item features must be 2-D (n_items, dim), got shape {features.shape}")
    if features.shape[0] != n_items:
        raise ValueError(f"item features have {features.shape[0]} rows but there are {n_items} items")
    bad_rows = ~np.isfinite(features).all(axis=1)
    if bad_rows.any():
        first = int(np.argmax(bad_rows))
        raise ValueError(f"item features have NaN/inf in {int(bad_rows.sum())} rows, e.g. row {first}")
