"""Black boxes for the generated BBO-Pile (notes 5.4a): BBOB problems from coco-experiment and a numpy family of
global-optimization (GO) test functions, with the catalog and its train/eval split.

Sources
- BBOB: the 24 noiseless functions of the COCO ``bbob`` suite (``cocoex``), domain [-5, 5]^d. ``instance`` is the
  COCO instance id, the number in the problem id ``bbob_f003_i02_d05``. For ids 1-5 this is the problem that the
  notes' ``"dimensions: 2,3,5 function_indices: 1-24 instance_indices: 1-3"`` selects. The suite is built with
  ``"instances: {i}"`` so that any id is reachable: with the default suite, indices 6-15 map to ids 71-80.
- GO: the functions of syne-tune's ``blackbox_repository.global_optimization_problems``, which bbo-pile's
  ``benchmarks/global_optimization_problems`` re-exports, on the same domains (Rosenbrock on [-2, 2]^d, as in
  bbo-pile's definitions, not the textbook [-5, 10]^d). Formulas and known optima follow the Virtual Library
  of Simulation Experiments (Surjanovic & Bingham, sfu.ca/~ssurjano).

Deliberate differences
- Levy is an addition: it is not in the syne-tune/bbo-pile family.
- bbo-pile evaluates each GO function only as is. Here ``instance`` >= 1 applies a seeded random rotation and
  shift, so one function gives several black boxes (notes 5.4a(ii), [assumed]). In unit coordinates
  ``u = (x - c) / h`` (c the domain centre, h the half-width), the function is evaluated at
  ``clip(c + h * (Q u + s), lo, hi)``. Q is a Haar-random orthogonal matrix, and each ``s_j`` is drawn from
  U(-0.4, 0.4), that is, within 20% of the range. Instance 0 is the untransformed function.
  The minimiser of a transformed instance can leave the domain, and clipping makes flat rims. Then the
  instance's minimum over the domain is above the base f*. Regret therefore uses an empirical f* (notes 5.5),
  not :func:`go_optimum`.
"""

from __future__ import annotations

import numbers
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pandas is imported where a frame is built: config checks at parse time need none
    import pandas as pd

__all__ = [
    "BBOB_DOMAIN",
    "BBOB_FUNCTIONS",
    "BlackBox",
    "BlackBoxSpec",
    "CATALOG_COLUMNS",
    "DEFAULT_EVAL_FUNCTIONS",
    "FAMILIES",
    "GO_FUNCTIONS",
    "GoFunction",
    "SPLITS",
    "bbob_spec",
    "catalog",
    "check_split",
    "go_optimum",
    "go_spec",
    "instance_transform",
    "make_blackbox",
    "specs_from_catalog",
]

FAMILIES = ("bbob", "go")
SPLITS = ("train", "eval")
BBOB_FUNCTIONS = tuple(range(1, 25))
BBOB_DOMAIN = (-5.0, 5.0)
DEFAULT_EVAL_FUNCTIONS = tuple(range(19, 25))  # f19-f24 (multimodal, weak global structure): held out
SHIFT_FRACTION = 0.2  # |shift| <= 20% of each coordinate's range
CATALOG_COLUMNS = ("bb_id", "family", "function", "dim", "instance", "lo", "hi", "split")


# ---------------------------------------------------------------------------------------------------------------------
# GO functions: X (n, d) -> y (n,)


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
    go = _go_function(function)
    go.check_dim(dim)
    x_star = go.x_star(dim)
    return go.f_star(dim), None if x_star is None else np.asarray(x_star, dtype=float)


def _go_function(name: str) -> GoFunction:
    if name not in GO_FUNCTIONS:
        raise ValueError(f"function: unknown GO function {name!r}; known: {sorted(GO_FUNCTIONS)}")
    return GO_FUNCTIONS[name]


# ---------------------------------------------------------------------------------------------------------------------
# Specs


def _int(value: Any, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if int(value) < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    return int(value)


def _bbob_index(function: Any, name: str = "function") -> int:
    """1..24 from 3, "3", "f3" or "f03"."""
    text = str(function).strip().lower().removeprefix("f")
    if isinstance(function, bool) or not text.isdigit() or int(text) not in BBOB_FUNCTIONS:
        raise ValueError(f"{name}: BBOB functions are f01..f24 (or 1..24), got {function!r}")
    return int(text)


def _bounds(values: Any, name: str) -> tuple[float, ...]:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1:
        raise ValueError(f"{name} must be a flat sequence of floats, got shape {array.shape}")
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        raise ValueError(f"{name}[{bad[0]}] must be finite, got {array[bad[0]]}")
    return tuple(float(v) for v in array)


@dataclass(frozen=True)
class BlackBoxSpec:
    """One black box: ``family`` "bbob" (``function`` "f01".."f24", COCO instance id >= 1) or "go" (``function``
    a key of :data:`GO_FUNCTIONS`, instance >= 0, 0 = untransformed), and the search box ``[lo, hi]``."""

    bb_id: str
    family: str
    function: str
    dim: int
    instance: int
    lo: tuple[float, ...]
    hi: tuple[float, ...]

    def __post_init__(self):
        if not isinstance(self.bb_id, str) or not self.bb_id:
            raise ValueError(f"bb_id must be a non-empty string, got {self.bb_id!r}")
        if self.family not in FAMILIES:
            raise ValueError(f"family must be one of {FAMILIES}, got {self.family!r}")
        dim = _int(self.dim, "dim", 1)
        object.__setattr__(self, "dim", dim)
        if self.family == "bbob":
            object.__setattr__(self, "function", f"f{_bbob_index(self.function):02d}")
            object.__setattr__(self, "instance", _int(self.instance, "instance", 1))
        else:
            _go_function(self.function).check_dim(dim)
            object.__setattr__(self, "instance", _int(self.instance, "instance", 0))
        lo, hi = _bounds(self.lo, "lo"), _bounds(self.hi, "hi")
        if len(lo) != dim or len(hi) != dim:
            raise ValueError(f"lo and hi must have dim={dim} entries, got {len(lo)} and {len(hi)}")
        for j, (a, b) in enumerate(zip(lo, hi)):
            if not a < b:
                raise ValueError(f"{self.bb_id}: lo[{j}]={a} must be < hi[{j}]={b} (coordinate {j})")
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> BlackBoxSpec:
        """From a catalog row (extra keys such as ``split`` are ignored)."""
        missing = [k for k in ("bb_id", "family", "function", "dim", "instance", "lo", "hi") if k not in record]
        if missing:
            raise ValueError(f"black-box record lacks {missing}")
        return cls(
            bb_id=str(record["bb_id"]),
            family=str(record["family"]),
            function=str(record["function"]),
            dim=int(record["dim"]),
            instance=int(record["instance"]),
            lo=tuple(record["lo"]),
            hi=tuple(record["hi"]),
        )


def bbob_spec(function: int | str, dim: int, instance: int) -> BlackBoxSpec:
    """The BBOB problem ``f{function}``, ``dim``, COCO instance id ``instance``, on [-5, 5]^dim."""
    f = _bbob_index(function)
    d = _int(dim, "dim", 1)
    i = _int(instance, "instance", 1)
    return BlackBoxSpec(f"bbob_f{f:02d}_d{d}_i{i}", "bbob", f"f{f:02d}", d, i,
                        (BBOB_DOMAIN[0],) * d, (BBOB_DOMAIN[1],) * d)  # fmt: skip


def go_spec(function: str, dim: int, instance: int) -> BlackBoxSpec:
    """The GO function on its standard domain; ``instance`` 0 as is, >= 1 randomly rotated and shifted."""
    d = _int(dim, "dim", 1)
    lo, hi = _go_function(function).domain(d)
    i = _int(instance, "instance", 0)
    return BlackBoxSpec(f"go_{function}_d{d}_i{i}", "go", function, d, i, lo, hi)


# ---------------------------------------------------------------------------------------------------------------------
# Catalog and split


def catalog(
    bbob_functions: Iterable[int | str] = BBOB_FUNCTIONS,
    bbob_dims: Iterable[int] = (2, 3, 5),
    bbob_instances: Iterable[int] = (1, 2, 3),
    go_functions: Iterable[str] = tuple(GO_FUNCTIONS),
    go_dims: Iterable[int] = (2, 5, 10),
    go_instances: Iterable[int] = (0, 1, 2),
    eval_functions: Iterable[int | str] = DEFAULT_EVAL_FUNCTIONS,
    as_frame: bool = True,
) -> pd.DataFrame | list[dict]:
    """One row per black box, with the columns :data:`CATALOG_COLUMNS`. ``lo``/``hi`` are lists of floats.
    With ``as_frame=False``, the rows as dicts (what the parse-time config check reads, without pandas).

    BBOB functions in ``eval_functions`` go to the "eval" split, everything else (the other BBOB functions
    and the whole GO family) to "train" (notes 5.4a). A fixed-dimension GO function (Branin, Hartmann 6, ...)
    appears once per instance at its own dimension, whatever ``go_dims`` holds. A function defined for any
    dimension appears once per entry of ``go_dims``. The result passes :func:`check_split`.
    """
    held_out = {_bbob_index(f, "eval_functions") for f in eval_functions}
    specs: list[tuple[BlackBoxSpec, str]] = []
    for f in sorted({_bbob_index(f, "bbob_functions") for f in bbob_functions}):
        split = "eval" if f in held_out else "train"
        for d in sorted(set(bbob_dims)):
            for i in sorted(set(bbob_instances)):
                specs.append((bbob_spec(f, d, i), split))
    go_dims = sorted(set(go_dims))
    for name in dict.fromkeys(go_functions):
        go = _go_function(name)
        for d in [go.dim] if go.dim is not None else [d for d in go_dims if d >= go.min_dim]:
            for i in sorted(set(go_instances)):
                specs.append((go_spec(name, d, i), "train"))
    rows = [
        {
            "bb_id": s.bb_id,
            "family": s.family,
            "function": s.function,
            "dim": s.dim,
            "instance": s.instance,
            "lo": list(s.lo),
            "hi": list(s.hi),
            "split": split,
        }
        for s, split in specs
    ]
    check_split(rows)
    if not as_frame:
        return rows
    import pandas as pd

    return pd.DataFrame(rows, columns=list(CATALOG_COLUMNS)).astype({"dim": "int64", "instance": "int64"})


def check_split(frame: pd.DataFrame | list[dict]) -> None:
    """Raise ValueError if a bb_id is in both splits, an id repeats, a split is unknown or either split is empty
    (notes 5.9: no black-box overlap between train and evaluation). Takes the catalog frame or its rows."""
    if hasattr(frame, "columns"):
        missing = [c for c in ("bb_id", "split") if c not in frame.columns]
        if missing:
            raise ValueError(f"black-box catalog lacks column(s) {missing}; has {list(frame.columns)}")
        frame = frame[["bb_id", "split"]].to_dict("records")
    unknown = sorted({row["split"] for row in frame} - set(SPLITS))
    if unknown:
        raise ValueError(f"split: unknown value(s) {unknown}; allowed {SPLITS}")
    train = {row["bb_id"] for row in frame if row["split"] == "train"}
    evaluation = {row["bb_id"] for row in frame if row["split"] == "eval"}
    overlap = sorted(train & evaluation)
    if overlap:
        raise ValueError(f"bb_id(s) in both train and eval splits: {overlap[:10]} ({len(overlap)} in all)")
    counts = Counter(row["bb_id"] for row in frame)
    repeated = [bb_id for bb_id, count in counts.items() if count > 1]
    if repeated:
        raise ValueError(f"bb_id(s) repeated in the catalog: {repeated[:10]} ({len(repeated)} in all)")
    for name, ids in (("train", train), ("eval", evaluation)):
        if not ids:
            raise ValueError(f"the {name} split is empty")


def specs_from_catalog(frame: pd.DataFrame, split: str | None = None) -> list[BlackBoxSpec]:
    """The catalog's rows as specs, optionally only those of one split."""
    if split is not None:
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        frame = frame[frame["split"] == split]
    return [BlackBoxSpec.from_record(row) for row in frame.to_dict("records")]


# ---------------------------------------------------------------------------------------------------------------------
# Evaluation


def instance_transform(function: str, dim: int, instance: int) -> tuple[np.ndarray, np.ndarray]:
    """(Q (dim, dim) orthogonal, s (dim,)) of a GO instance in unit coordinates. Instance 0 gives (I, 0).
    The seed is built from (crc32(function), dim, instance), so it is stable across processes and platforms."""
    dim = _int(dim, "dim", 1)
    if _int(instance, "instance", 0) == 0:
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
            self._go = _go_function(spec.function)
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
