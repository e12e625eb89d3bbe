"""Global-optimization (GO) test functions: vectorised formulas ``X (n, d) -> y (n,)``, their standard domains
and known minima.

The family is syne-tune's ``blackbox_repository.global_optimization_problems``, which bbo-pile's
``benchmarks/global_optimization_problems`` re-exports, on the same domains (Rosenbrock on [-2, 2]^d, as in
bbo-pile's ``benchmarks_definitions.py``, not the textbook [-5, 10]^d). Formulas and known optima follow the
Virtual Library of Simulation Experiments (Surjanovic & Bingham, sfu.ca/~ssurjano). Levy is an addition: it is
not in the syne-tune/bbo-pile family.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["GO_FUNCTIONS", "GoFunction", "go_function", "go_optimum"]


def _branin(X):
    x0, x1 = X[:, 0], X[:, 1]
    b, c, t = 5.1 / (4 * np.pi**2), 5 / np.pi, 1 / (8 * np.pi)
    return (x1 - b * x0**2 + c * x0 - 6) ** 2 + 10 * (1 - t) * np.cos(x0) + 10


def _goldstein_price(X):
    x0, x1 = X[:, 0], X[:, 1]
    a = 1 + (x0 + x1 + 1) ** 2 * (19 - 14 * x0 + 3 * x0**2 - 14 * x1 + 6 * x0 * x1 + 3 * x1**2)
    b = 30 + (2 * x0 - 3 * x1) ** 2 * (18 - 32 * x0 + 12 * x0**2 + 48 * x1 - 36 * x0 * x1 + 27 * x1**2)
    return a * b


def _six_hump_camel(X):
    x0, x1 = X[:, 0], X[:, 1]
    return (4 - 2.1 * x0**2 + x0**4 / 3) * x0**2 + x0 * x1 + (4 * x1**2 - 4) * x1**2


def _eggholder(X):
    x0, x1 = X[:, 0], X[:, 1]
    return -(x1 + 47) * np.sin(np.sqrt(np.abs(x1 + x0 / 2 + 47))) - x0 * np.sin(np.sqrt(np.abs(x0 - (x1 + 47))))


def _forrester(X):
    x = X[:, 0]
    return (6 * x - 2) ** 2 * np.sin(12 * x - 4)


_HARTMANN_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
_HARTMANN3_A = np.array([[3.0, 10, 30], [0.1, 10, 35], [3.0, 10, 30], [0.1, 10, 35]])
_HARTMANN3_P = 1e-4 * np.array([[3689, 1170, 2673], [4699, 4387, 7470], [1091, 8732, 5547], [381.5, 5743, 8828]])
_HARTMANN6_A = np.array(
    [
        [10, 3, 17, 3.5, 1.7, 8],
        [0.05, 10, 17, 0.1, 8, 14],
        [3, 3.5, 1.7, 10, 17, 8],
        [17, 8, 0.05, 10, 0.1, 14],
    ]
)
_HARTMANN6_P = 1e-4 * np.array(
    [
        [1312, 1696, 5569, 124, 8283, 5886],
        [2329, 4135, 8307, 3736, 1004, 9991],
        [2348, 1451, 3522, 2883, 3047, 6650],
        [4047, 8828, 8732, 5743, 1091, 381],
    ]
)


def _hartmann(A, P):
    def evaluate(X):
        inner = np.einsum("kj,nkj->nk", A, (X[:, None, :] - P[None]) ** 2)  # (n, 4)
        return -np.exp(-inner) @ _HARTMANN_ALPHA

    return evaluate


def _rastrigin(X):
    return 10 * X.shape[1] + np.sum(X**2 - 10 * np.cos(2 * np.pi * X), axis=1)


def _rosenbrock(X):
    return np.sum(100 * (X[:, 1:] - X[:, :-1] ** 2) ** 2 + (X[:, :-1] - 1) ** 2, axis=1)


def _ackley(X):
    a, b, c = 20.0, 0.2, 2 * np.pi
    r = np.sqrt(np.mean(X**2, axis=1))
    return -a * np.exp(-b * r) - np.exp(np.mean(np.cos(c * X), axis=1)) + a + np.e


def _sphere(X):
    return np.sum(X**2, axis=1)


def _styblinski_tang(X):
    return 0.5 * np.sum(X**4 - 16 * X**2 + 5 * X, axis=1)


def _levy(X):
    w = 1 + (X - 1) / 4
    head = np.sin(np.pi * w[:, 0]) ** 2
    body = np.sum((w[:, :-1] - 1) ** 2 * (1 + 10 * np.sin(np.pi * w[:, :-1] + 1) ** 2), axis=1)
    tail = (w[:, -1] - 1) ** 2 * (1 + np.sin(2 * np.pi * w[:, -1]) ** 2)
    return head + body + tail


def _michalewicz(X, m: float = 10.0):
    i = np.arange(1, X.shape[1] + 1)
    return -np.sum(np.sin(X) * np.sin(i * X**2 / np.pi) ** (2 * m), axis=1)


def _sum_powers(X):
    return np.sum(np.abs(X) ** (np.arange(1, X.shape[1] + 1) + 1), axis=1)


# Michalewicz (m = 10): f* is known from the literature for d in {2, 5, 10}; minimisers polished with Nelder-Mead
_MICHALEWICZ_F_STAR = {2: -1.8013034100985, 5: -4.687658179088, 10: -9.66015}
_MICHALEWICZ_X_STAR = {
    2: (2.2029055201726, 1.5707963267949),
    5: (2.2029055175, 1.5707963305, 1.2849915686, 1.9230584698, 1.7204697733),
}
_ST_X, _ST_F = -2.9035340151190754, -39.16616570377142  # Styblinski-Tang, per coordinate


@dataclass(frozen=True)
class GoFunction:
    """A GO test function: vectorised ``evaluate(X (n, d)) -> (n,)``, the standard domain (``lo``/``hi`` are
    per coordinate for a fixed-dimension function, else one value for every coordinate), ``dim`` (None: any
    ``dim >= min_dim``), and the known minimum ``f_star(dim)`` with one minimiser ``x_star(dim)`` (None where
    unknown)."""

    name: str
    evaluate: Callable[[np.ndarray], np.ndarray]
    lo: tuple[float, ...]
    hi: tuple[float, ...]
    dim: int | None
    f_star: Callable[[int], float | None]
    x_star: Callable[[int], tuple[float, ...] | None]
    min_dim: int = 1

    def domain(self, dim: int) -> tuple[tuple[float, ...], tuple[float, ...]]:
        self.check_dim(dim)
        if self.dim is None:
            return (float(self.lo[0]),) * dim, (float(self.hi[0]),) * dim
        return tuple(map(float, self.lo)), tuple(map(float, self.hi))

    def check_dim(self, dim: int) -> None:
        if self.dim is not None and dim != self.dim:
            raise ValueError(f"dim: GO function {self.name!r} is {self.dim}-dimensional, got dim={dim}")
        if dim < self.min_dim:
            raise ValueError(f"dim: GO function {self.name!r} needs dim >= {self.min_dim}, got dim={dim}")


def _const(value):
    return lambda dim: value


def _fill(value: float):
    return lambda dim: (value,) * dim


GO_FUNCTIONS: dict[str, GoFunction] = {
    g.name: g
    for g in (
        # f* = 0.397887 at (-pi, 12.275), (pi, 2.275), (9.42478, 2.475)
        GoFunction("branin", _branin, (-5.0, 0.0), (10.0, 15.0), 2,
                   _const(5 / (4 * np.pi)), _const((np.pi, 2.275))),
        GoFunction("goldstein_price", _goldstein_price, (-2.0, -2.0), (2.0, 2.0), 2,
                   _const(3.0), _const((0.0, -1.0))),
        GoFunction("six_hump_camel", _six_hump_camel, (-3.0, -2.0), (3.0, 2.0), 2,
                   _const(-1.0316284534898774), _const((0.08984200893527233, -0.712656403019058))),
        GoFunction("eggholder", _eggholder, (-512.0, -512.0), (512.0, 512.0), 2,
                   _const(-959.6406627106155), _const((512.0, 404.2319))),
        GoFunction("forrester", _forrester, (0.0,), (1.0,), 1,
                   _const(-6.020740055767083), _const((0.7572487579605722,))),
        GoFunction("hartmann3", _hartmann(_HARTMANN3_A, _HARTMANN3_P), (0.0,) * 3, (1.0,) * 3, 3,
                   _const(-3.862782147820756),
                   _const((0.11461432718127863, 0.5556488497103955, 0.8525469528940783))),
        GoFunction("hartmann6", _hartmann(_HARTMANN6_A, _HARTMANN6_P), (0.0,) * 6, (1.0,) * 6, 6,
                   _const(-3.3223680114155147),
                   _const((0.20168950909365746, 0.15001069354111374, 0.4768739729250998,
                           0.2753324275220782, 0.3116516172395686, 0.6573005345536702))),
        GoFunction("rastrigin", _rastrigin, (-5.12,), (5.12,), None, _const(0.0), _fill(0.0)),
        GoFunction("rosenbrock", _rosenbrock, (-2.0,), (2.0,), None, _const(0.0), _fill(1.0), min_dim=2),
        GoFunction("ackley", _ackley, (-32.768,), (32.768,), None, _const(0.0), _fill(0.0)),
        GoFunction("sphere", _sphere, (-5.12,), (5.12,), None, _const(0.0), _fill(0.0)),
        GoFunction("styblinski_tang", _styblinski_tang, (-5.0,), (5.0,), None,
                   lambda dim: _ST_F * dim, _fill(_ST_X)),
        GoFunction("levy", _levy, (-10.0,), (10.0,), None, _const(0.0), _fill(1.0)),
        GoFunction("michalewicz", _michalewicz, (0.0,), (np.pi,), None,
                   _MICHALEWICZ_F_STAR.get, _MICHALEWICZ_X_STAR.get),
        GoFunction("sum_powers", _sum_powers, (-1.0,), (1.0,), None, _const(0.0), _fill(0.0)),
    )
}  # fmt: skip


def go_optimum(function: str, dim: int) -> tuple[float | None, np.ndarray | None]:
    """(f*, one minimiser) of the untransformed GO function (instance 0) in ``dim`` dimensions; None where
    the literature gives none (Michalewicz outside d in {2, 5, 10}, its minimiser for d = 10)."""
    go = go_function(function)
    go.check_dim(dim)
    x_star = go.x_star(dim)
    return go.f_star(dim), None if x_star is None else np.asarray(x_star, dtype=float)


def go_function(name: str) -> GoFunction:
    """The GO function named `name`, refused with the known names otherwise."""
    if name not in GO_FUNCTIONS:
        raise ValueError(f"function: unknown GO function {name!r}; known: {sorted(GO_FUNCTIONS)}")
    return GO_FUNCTIONS[name]
