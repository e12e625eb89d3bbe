"""Claims: the paper's sentence, the measured number, the comparison the paper implies, the verdict."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np
import pandas as pd

KINDS = ("hard", "soft", "info")
COLUMNS = ["claim_id", "statement", "kind", "metric", "value", "threshold", "comparison", "holds", "paper_value", "note"]


@dataclass(frozen=True)
class Claim:
    """One check. `holds` is computed from value, comparison and threshold, never set by hand."""

    claim_id: str
    statement: str
    kind: Literal["hard", "soft", "info"]
    metric: str
    value: float
    threshold: float
    comparison: Literal["<", "<=", ">", ">="]
    paper_value: float | None = None
    note: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.claim_id}: kind must be one of {KINDS}, got {self.kind!r}")
        if self.comparison not in ("<", "<=", ">", ">="):
            raise ValueError(f"claim {self.claim_id}: unknown comparison {self.comparison!r}")

    @property
    def holds(self) -> bool:
        if self.value is None or not np.isfinite(self.value):
            return False
        return {
            "<": self.value < self.threshold,
            "<=": self.value <= self.threshold,
            ">": self.value > self.threshold,
            ">=": self.value >= self.threshold,
        }[self.comparison]


def claims_table(claims: list[Claim]) -> pd.DataFrame:
    ids = [c.claim_id for c in claims]
    if len(set(ids)) != len(ids):
        raise ValueError(f"duplicate claim ids: {ids}")
    rows = [{**asdict(c), "holds": c.holds} for c in claims]
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame["paper_value"] = frame["paper_value"].astype("float64")
    return frame
