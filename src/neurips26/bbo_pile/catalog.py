"""The black-box catalog: one spec per black box (BBOB problems and GO functions with their instances and search
boxes), the catalog of a scale and its split by black box into training and held-out evaluation boxes.

- BBOB: the 24 noiseless functions of the COCO ``bbob`` suite (``cocoex``), domain [-5, 5]^d. ``instance`` is the
  COCO instance id, the number in the problem id ``bbob_f003_i02_d05``; for ids 1-5 this is the problem that
  ``cocoex.Suite("bbob", "", "dimensions: 2,3,5 function_indices: 1-24 instance_indices: 1-3")`` selects.
- GO: the functions of :mod:`.go_functions` on their standard domains; ``instance`` 0 is the function as bbo-pile
  evaluates it, ``instance`` >= 1 a randomly rotated and shifted copy (:func:`.blackboxes.instance_transform`).
- The split is by black box: the held-out BBOB functions (f19-f24 by default) never reach training; they serve
  for the validation loss, imitation and optimization (a design choice of this reproduction).

Importing this module does not import pandas: the parse-time config check builds the catalog as rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from neurips26.common.validation import check_int

from .go_functions import GO_FUNCTIONS, go_function

if TYPE_CHECKING:  # pandas is imported where a frame is built: config checks at parse time need none
    import pandas as pd

__all__ = [
    "BBOB_DOMAIN",
    "BBOB_FUNCTIONS",
    "BlackBoxSpec",
    "CATALOG_COLUMNS",
    "DEFAULT_EVAL_FUNCTIONS",
    "FAMILIES",
    "SPLITS",
    "bbob_spec",
    "catalog",
    "check_split",
    "go_spec",
    "specs_from_catalog",
]

FAMILIES = ("bbob", "go")
SPLITS = ("train", "eval")
BBOB_FUNCTIONS = tuple(range(1, 25))
BBOB_DOMAIN = (-5.0, 5.0)
DEFAULT_EVAL_FUNCTIONS = tuple(range(19, 25))  # f19-f24 (multimodal, weak global structure): held out
CATALOG_COLUMNS = ("bb_id", "family", "function", "dim", "instance", "lo", "hi", "split")


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
        dim = int(check_int("dim", self.dim, 1))
        object.__setattr__(self, "dim", dim)
        if self.family == "bbob":
            object.__setattr__(self, "function", f"f{_bbob_index(self.function):02d}")
            object.__setattr__(self, "instance", int(check_int("instance", self.instance, 1)))
        else:
            go_function(self.function).check_dim(dim)
            object.__setattr__(self, "instance", int(check_int("instance", self.instance, 0)))
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
    d = int(check_int("dim", dim, 1))
    i = int(check_int("instance", instance, 1))
    return BlackBoxSpec(f"bbob_f{f:02d}_d{d}_i{i}", "bbob", f"f{f:02d}", d, i,
                        (BBOB_DOMAIN[0],) * d, (BBOB_DOMAIN[1],) * d)  # fmt: skip


def go_spec(function: str, dim: int, instance: int) -> BlackBoxSpec:
    """The GO function on its standard domain; ``instance`` 0 as is, >= 1 randomly rotated and shifted."""
    d = int(check_int("dim", dim, 1))
    lo, hi = go_function(function).domain(d)
    i = int(check_int("instance", instance, 0))
    return BlackBoxSpec(f"go_{function}_d{d}_i{i}", "go", function, d, i, lo, hi)


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
    and the whole GO family) to "train". A fixed-dimension GO function (Branin, Hartmann 6, ...)
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
        go = go_function(name)
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
    (evaluation is on black boxes never trained on). Takes the catalog frame or its rows."""
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
