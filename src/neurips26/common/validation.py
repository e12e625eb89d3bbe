"""Checks of settings and arguments, shared by every paper: one wording for every refusal.

Dataclass settings declare their checks on the fields and call `validate(self)` in `__post_init__`:

    @dataclass(frozen=True)
    class TrainSettings:
        steps: int = integer(1, default=100)
        lr: float = number(0.0, low_open=True, default=1e-3)
        dropout: float = number(0.0, 1.0, high_open=True, default=0.0)
        kind: str = choice(("mse", "ce"), default="mse")

        def __post_init__(self):
            validate(self)  # then the checks that relate several fields

Functions check their arguments with `check_int`, `check_number` and `check_choice`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection
from dataclasses import MISSING
from numbers import Integral, Real

_CHECK = "neurips26.check"


def is_int(value, low: int | None = None) -> bool:
    """An integer (numpy integers too, booleans not), at least `low` when given."""
    return isinstance(value, Integral) and not isinstance(value, bool) and (low is None or value >= low)


def is_number(
    value, low: float = -math.inf, high: float = math.inf, low_open: bool = False, high_open: bool = False
) -> bool:
    """A finite real number (not a boolean) in the interval given by `low`, `high` and their openness."""
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
        return False
    above = value > low if low_open else value >= low
    below = value < high if high_open else value <= high
    return above and below


def _interval(low: float, high: float, low_open: bool, high_open: bool) -> str:
    if high == math.inf:
        return f"> {low:g}" if low_open else f">= {low:g}"
    if low == -math.inf:
        return f"< {high:g}" if high_open else f"<= {high:g}"
    return f"in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"


def check_int(name: str, value, low: int | None = None, who: str = "") -> int:
    """`value` when it is an integer >= `low`; ValueError naming `who.name` otherwise."""
    if not is_int(value, low):
        bound = "" if low is None else f" >= {low}"
        raise ValueError(f"{_name(who, name)} must be an integer{bound}, got {value!r}")
    return value


def check_number(
    name: str,
    value,
    low: float = -math.inf,
    high: float = math.inf,
    low_open: bool = False,
    high_open: bool = False,
    who: str = "",
) -> float:
    """`value` when it is a finite number in the interval; ValueError naming `who.name` otherwise."""
    if not is_number(value, low, high, low_open, high_open):
        bound = "" if (low, high) == (-math.inf, math.inf) else " " + _interval(low, high, low_open, high_open)
        raise ValueError(f"{_name(who, name)} must be a finite number{bound}, got {value!r}")
    return value


def check_choice(name: str, value, allowed: Collection, who: str = ""):
    """`value` when it is one of `allowed`; ValueError naming `who.name` and the allowed values otherwise."""
    if value not in allowed:
        raise ValueError(f"{_name(who, name)} must be one of {list(allowed)}, got {value!r}")
    return value


def _name(who: str, name: str) -> str:
    return f"{who}.{name}" if who else name


def integer(low: int | None = None, *, default=MISSING):
    """A dataclass field holding an integer >= `low`, checked by `validate`."""
    return dataclasses.field(default=default, metadata={_CHECK: ("int", (low,))})


def number(
    low: float = -math.inf, high: float = math.inf, *, low_open: bool = False, high_open: bool = False, default=MISSING
):
    """A dataclass field holding a finite number in an interval, checked by `validate`."""
    return dataclasses.field(default=default, metadata={_CHECK: ("number", (low, high, low_open, high_open))})


def choice(allowed: Collection, *, default=MISSING):
    """A dataclass field holding one of `allowed`, checked by `validate`."""
    return dataclasses.field(default=default, metadata={_CHECK: ("choice", (tuple(allowed),))})


def validate(obj) -> None:
    """Check every field of dataclass `obj` declared with `integer`, `number` or `choice`."""
    who = type(obj).__name__
    for field in dataclasses.fields(obj):
        if _CHECK not in field.metadata:
            continue
        kind, args = field.metadata[_CHECK]
        value = getattr(obj, field.name)
        if kind == "int":
            check_int(field.name, value, *args, who=who)
        elif kind == "number":
            check_number(field.name, value, *args, who=who)
        else:
            check_choice(field.name, value, *args, who=who)
