"""Evaluating a black box: the callable ``f(X (n, dim)) -> y (n,)`` of a catalog spec, a COCO problem for BBOB and
a (transformed) GO function otherwise, and each box's values at uniform random points (the regret's reference).

bbo-pile evaluates each GO function only as is. Here ``instance`` >= 1 applies a seeded random rotation and shift,
so one function gives several black boxes (a design choice of this reproduction). In unit coordinates
``u = (x - c) / h`` (c the domain centre, h the half-width), the function is evaluated at
``clip(c + h * (Q u + s), lo, hi)``. Q is a Haar-random orthogonal matrix, and each ``s_j`` is drawn from
U(-0.4, 0.4), that is, within 20% of the range. Instance 0 is the untransformed function. The minimiser of a
transformed instance can leave the domain, and clipping makes flat rims. Then the instance's minimum over the
domain is above the base f*. Regret therefore uses an empirical f* (:mod:`.regret`), not
:func:`.go_functions.go_optimum`.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
import pandas as pd

from neurips26.common.validation import check_int

from .catalog import BlackBoxSpec
from .go_functions import go_function

__all__ = ["SHIFT_FRACTION", "BlackBox", "instance_transform", "make_blackbox", "random_reference"]

SHIFT_FRACTION = 0.2  # |shift| <= 20% of each coordinate's range


def instance_transform(function: str, dim: int, instance: int) -> tuple[np.ndarray, np.ndarray]:
    """(Q (dim, dim) orthogonal, s (dim,)) of a GO instance in unit coordinates. Instance 0 gives (I, 0).
    The seed is built from (crc32(function), dim, instance), so it is stable across processes and platforms."""
    dim = int(check_int("dim", dim, 1))
    if int(check_int("instance", instance, 0)) == 0:
        return np.eye(dim), np.zeros(dim)
    rng = np.random.default_rng([zlib.crc32(function.encode()), dim, instance])
    q, r = np.linalg.qr(rng.standard_normal((dim, dim)))
    q = q * np.where(np.diag(r) < 0, -1.0, 1.0)  # sign fix: Haar-distributed (Mezzadri 2007)
    shift = rng.uniform(-2 * SHIFT_FRACTION, 2 * SHIFT_FRACTION, size=dim)  # unit range is 2
    return q, shift


def _cocoex():
    try:
        import cocoex
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError(
            "BBOB black boxes need the coco-experiment package (import name cocoex): "
            "pip install coco-experiment (2.8.2 is the newest wheel for Python 3.11)"
        ) from err
    return cocoex


class BlackBox:
    """A callable black box: ``f(X (n, dim)) -> y (n,)`` float64, where a 1-D X is one point.

    The COCO problem is created on first use and is not pickled, so a BlackBox can go to a worker process.
    """

    def __init__(self, spec: BlackBoxSpec):
        if not isinstance(spec, BlackBoxSpec):
            raise TypeError(f"spec must be a BlackBoxSpec, got {type(spec).__name__}")
        self.spec = spec
        self._problem = None
        self._suite = None
        if spec.family == "go":
            self._go = go_function(spec.function)
            lo, hi = np.asarray(spec.lo), np.asarray(spec.hi)
            self._centre, self._half = (lo + hi) / 2, (hi - lo) / 2
            self._q, self._shift = instance_transform(spec.function, spec.dim, spec.instance)

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_problem"] = state["_suite"] = None
        return state

    def __repr__(self) -> str:
        return f"BlackBox({self.spec.bb_id!r})"

    def base_inputs(self, X: np.ndarray) -> np.ndarray:
        """Where a GO instance evaluates its base function: the rotated, shifted and clipped X."""
        X = self._check(X)
        if self.spec.family != "go":
            raise ValueError(f"{self.spec.bb_id}: base_inputs is defined for the GO family only")
        if self.spec.instance == 0:
            return X
        unit = (X - self._centre) / self._half
        moved = self._centre + self._half * (unit @ self._q.T + self._shift)
        return np.clip(moved, self.spec.lo, self.spec.hi)

    def _check(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        if X.ndim == 1:
            X = X[None, :]
        if X.ndim != 2 or X.shape[1] != self.spec.dim:
            got = X.shape[1] if X.ndim == 2 else X.shape
            raise ValueError(f"{self.spec.bb_id}: X must have dim={self.spec.dim} columns, got {got}")
        return X

    def __call__(self, X) -> np.ndarray:
        X = self._check(X)
        if self.spec.family == "go":
            with np.errstate(over="ignore", invalid="ignore"):
                return np.asarray(self._go.evaluate(self.base_inputs(X)), dtype=float)
        problem = self._coco_problem()
        return np.fromiter((problem(row) for row in X), dtype=float, count=len(X))

    def _coco_problem(self):
        if self._problem is None:
            cocoex = _cocoex()
            f, d, i = int(self.spec.function[1:]), self.spec.dim, self.spec.instance
            self._suite = cocoex.Suite("bbob", f"instances: {i}", f"dimensions: {d} function_indices: {f}")
            self._problem = self._suite.get_problem_by_function_dimension_instance(f, d, i)
        return self._problem


def make_blackbox(spec: BlackBoxSpec) -> BlackBox:
    """The callable ``f(X (n, dim)) -> y (n,)`` of a spec (vectorised for GO; a loop over rows for COCO,
    about 1.5 us per point)."""
    return BlackBox(spec)


def random_reference(specs: Sequence[BlackBoxSpec], samples: int, seed: int) -> pd.DataFrame:
    """The best and the median of ``samples`` uniform random points on each box (box k seeded by ``[seed, k]``),
    with the number of samples and of non-finite values: one row per spec."""
    rows = []
    for k, spec in enumerate(specs):
        rng = np.random.default_rng([seed, k])
        lo, hi = np.asarray(spec.lo), np.asarray(spec.hi)
        y = make_blackbox(spec)(lo + (hi - lo) * rng.random((samples, spec.dim)))
        finite = y[np.isfinite(y)]
        rows.append(
            {
                "bb_id": spec.bb_id,
                "random_min": float(finite.min()) if finite.size else np.nan,
                "random_median": float(np.median(finite)) if finite.size else np.nan,
                "samples": int(y.size),
                "non_finite": int(y.size - finite.size),
            }
        )
    return pd.DataFrame(rows)
