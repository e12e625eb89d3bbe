"""Claims and checks with three verdicts: holds, fails, inconclusive.

A paper's claim definitions (the paper's sentence, kind, metric, comparison, threshold, minimum evidence,
paper value, the result files read) are data in `config/claims/<slug>.yaml`, validated by
`workflow/schemas/claims.schema.yaml`. The paper's library measures only the values (`Measured`), and
`decide` turns definitions and measurements into the `claims.parquet` table:

- `kind` is hard (expected to hold at quick scale), soft (expected, reported), info (cannot be decided at
  this scale) or check (a property our own code guarantees or verifies: an identity, a solver equal to a
  brute force). Checks are counted apart from the paper's claims.
- The verdict is `inconclusive`, with the reason in `note`, when the value is missing, NaN or infinite,
  when it rests on fewer runs than the definition's `min_runs`, when its interval (over seeds) contains the
  threshold, or when its margin to the threshold is within the measured `noise`. Otherwise the comparison
  decides holds or fails; an interval entirely on the failing side fails.
- A claim measured beside its null (`Measured.null`: the same measurement without the paper's mechanism) holds
  only if the null does not also pass: a null that passes, or that is missing, turns holds into inconclusive.
- A claims file with `reconstruction: true` belongs to a paper that was not found: its model is our
  reconstruction, so its claims test our model, not the paper's; the column `reconstruction` carries the mark to
  the report and the scoreboard, which counts those claims apart from the reproduced claims of found papers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

KINDS = ("hard", "soft", "info", "check")
CLAIM_KINDS = ("hard", "soft", "info")
COMPARISONS = ("<", "<=", ">", ">=")
VERDICTS = ("holds", "fails", "inconclusive")
COLUMNS = [
    "claim_id",
    "kind",
    "statement",
    "metric",
    "value",
    "comparison",
    "threshold",
    "verdict",
    "holds",
    "runs",
    "min_runs",
    "low",
    "high",
    "noise",
    "null_value",
    "evidence",
    "paper_value",
    "source",
    "note",
    "reconstruction",
]


@dataclass(frozen=True)
class Definition:
    """One claim or check as the paper's claims file states it (see the module docstring)."""

    claim_id: str
    statement: str
    kind: str
    metric: str
    comparison: str
    threshold: float
    evidence: tuple[str, ...]
    source: str = ""
    min_runs: int = 1
    paper_value: float | None = None
    reconstruction: bool = False  # the claims file's mark: the paper was not found, the model is ours

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.claim_id}: kind must be one of {KINDS}, got {self.kind!r}")
        if self.comparison not in COMPARISONS:
            raise ValueError(f"claim {self.claim_id}: comparison must be one of {COMPARISONS}, got {self.comparison!r}")
        if self.min_runs < 1:
            raise ValueError(f"claim {self.claim_id}: min_runs must be >= 1, got {self.min_runs}")
        if self.kind != "check" and not self.source.strip():
            raise ValueError(f"claim {self.claim_id}: a {self.kind} claim needs the paper's sentence in `source`")
        if not self.evidence:
            raise ValueError(f"claim {self.claim_id}: `evidence` must name at least one result file")


@dataclass(frozen=True)
class Measured:
    """What the library measured for one claim.

    `value` is compared with the threshold; `runs` is how many seeds or runs (or cells) it rests on; `low` and
    `high`, where given, bound the value over seeds (a t or bootstrap interval, say how in `note`); `noise`,
    where given, is the seed spread measured elsewhere in the pipeline: a margin within it decides nothing.
    `null`, where given, is the same measurement without the paper's mechanism (the claim's named null): a
    claim whose null also passes is not a holds.
    """

    claim_id: str
    value: float
    runs: int
    note: str = ""
    low: float | None = None
    high: float | None = None
    noise: float | None = None
    null: float | None = None

    def __post_init__(self) -> None:
        if (self.low is None) != (self.high is None):
            raise ValueError(f"claim {self.claim_id}: give both ends of the interval or neither")
        if self.low is not None and self.noise is not None:
            raise ValueError(f"claim {self.claim_id}: give an interval or a noise level, not both")
        if self.noise is not None and _finite(self.noise) and self.noise < 0:
            raise ValueError(f"claim {self.claim_id}: noise must be >= 0, got {self.noise}")
        if self.low is not None and _finite(self.low) and _finite(self.high) and self.low > self.high:
            raise ValueError(f"claim {self.claim_id}: interval [{self.low}, {self.high}] has low > high")


def _compare(value: float, comparison: str, threshold: float) -> bool:
    return {"<": value < threshold, "<=": value <= threshold, ">": value > threshold, ">=": value >= threshold}[
        comparison
    ]


def _finite(x) -> bool:
    return x is not None and isinstance(x, (int, float, np.integer, np.floating)) and math.isfinite(float(x))


def verdict(definition: Definition, measured: Measured) -> tuple[str, str]:
    """(verdict, reason); the reason is empty when the comparison alone decided. A holds whose null (where
    measured) also passes, or is not finite, becomes inconclusive."""
    outcome, reason = _verdict(definition, measured)
    null = measured.null
    if outcome != "holds" or null is None:
        return outcome, reason
    if not _finite(null):
        return "inconclusive", f"the null's value is {null}: nothing to beat"
    if _compare(float(null), definition.comparison, definition.threshold):
        return "inconclusive", (
            f"the null without the mechanism passes too ({float(null):.4g} {definition.comparison} "
            f"{definition.threshold:g}): the test does not tell the mechanism from its absence"
        )
    return outcome, reason


def _verdict(definition: Definition, measured: Measured) -> tuple[str, str]:
    d, m = definition, measured
    if not _finite(m.value):
        return "inconclusive", f"no evidence: the value is {m.value}"
    if m.runs < d.min_runs:
        return "inconclusive", f"rests on {m.runs} run(s), needs at least {d.min_runs}"
    if m.low is not None:
        if not (_finite(m.low) and _finite(m.high)):
            return "inconclusive", f"the interval [{m.low}, {m.high}] is not finite"
        slack = 1e-9 * max(1.0, abs(float(m.value)))
        if not m.low - slack <= m.value <= m.high + slack:  # e.g. a skewed bootstrap: the point decides nothing
            return "inconclusive", f"the value {m.value:.4g} lies outside its interval [{m.low:.4g}, {m.high:.4g}]"
        low_side, high_side = _compare(m.low, d.comparison, d.threshold), _compare(m.high, d.comparison, d.threshold)
        if low_side and high_side:
            return "holds", ""
        if not low_side and not high_side:
            return "fails", ""
        return "inconclusive", f"the interval [{m.low:.4g}, {m.high:.4g}] contains the threshold {d.threshold:g}"
    if m.noise is not None:
        if not _finite(m.noise):
            return "inconclusive", f"the seed noise is {m.noise}"
        if abs(m.value - d.threshold) <= m.noise:
            return "inconclusive", (
                f"margin {m.value - d.threshold:+.4g} to the threshold is within the seed noise {m.noise:.4g}"
            )
    return ("holds" if _compare(m.value, d.comparison, d.threshold) else "fails"), ""


def load_definitions(path: str | Path, schema: str | Path | None = None) -> list[Definition]:
    """The definitions of a paper's claims file, validated against the claims schema (errors name the key)."""
    from neurips26.common.config import ConfigError, load_yaml, validate

    path = Path(path)
    data = load_yaml(path)
    schema = Path(schema) if schema else Path(__file__).resolve().parents[3] / "workflow/schemas/claims.schema.yaml"
    validate(data, load_yaml(schema), str(path))
    reconstruction = bool(data.get("reconstruction", False))
    definitions = []
    for item in data["claims"]:
        try:
            definitions.append(
                Definition(
                    claim_id=item["id"],
                    statement=item["statement"],
                    kind=item["kind"],
                    metric=item["metric"],
                    comparison=item["comparison"],
                    threshold=float(item["threshold"]),
                    evidence=tuple(item["evidence"]),
                    source=item.get("source", ""),
                    min_runs=int(item.get("min_runs", 1)),
                    paper_value=item.get("paper_value"),
                    reconstruction=reconstruction,
                )
            )
        except ValueError as error:
            raise ConfigError(f"{path}: {error}") from None
    ids = [d.claim_id for d in definitions]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"{path}: duplicate claim ids {sorted({i for i in ids if ids.count(i) > 1})}")
    return definitions


def decide(definitions: Sequence[Definition], measured: Iterable[Measured]) -> pd.DataFrame:
    """The claims table: one row per definition, in the file's order, with its verdict.

    Every defined claim must be measured exactly once, and nothing else: a mismatch is an error naming the ids.
    """
    by_id: dict[str, Measured] = {}
    for m in measured:
        if m.claim_id in by_id:
            raise ValueError(f"claim {m.claim_id} measured twice")
        by_id[m.claim_id] = m
    defined = [d.claim_id for d in definitions]
    missing, extra = sorted(set(defined) - set(by_id)), sorted(set(by_id) - set(defined))
    if missing or extra:
        raise ValueError(f"claims defined but not measured: {missing}; measured but not defined: {extra}")
    if len({d.reconstruction for d in definitions}) > 1:
        raise ValueError("the definitions mix reconstruction and found-paper claims; one claims file is one paper")
    rows = []
    for d in definitions:
        m = by_id[d.claim_id]
        outcome, reason = verdict(d, m)
        value = float(m.value) if _finite(m.value) else float("nan")
        rows.append(
            {
                "claim_id": d.claim_id,
                "kind": d.kind,
                "statement": d.statement,
                "metric": d.metric,
                "value": value,
                "comparison": d.comparison,
                "threshold": d.threshold,
                "verdict": outcome,
                "holds": outcome == "holds",
                "runs": int(m.runs),
                "min_runs": d.min_runs,
                "low": float(m.low) if m.low is not None else float("nan"),
                "high": float(m.high) if m.high is not None else float("nan"),
                "noise": float(m.noise) if m.noise is not None else float("nan"),
                "null_value": float(m.null) if _finite(m.null) else float("nan"),
                "evidence": ", ".join(d.evidence),
                "paper_value": d.paper_value,
                "source": d.source,
                "note": "; ".join(p for p in (reason, m.note) if p),
                "reconstruction": bool(d.reconstruction),
            }
        )
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame["paper_value"] = frame["paper_value"].astype("float64")
    return frame


@dataclass(frozen=True)
class Spread:
    """A mean over seeds (or runs) with an interval: `method` says how the interval was computed."""

    mean: float
    low: float
    high: float
    runs: int
    method: str = field(default="")

    def text(self) -> str:
        if self.runs == 0:
            return "no runs"
        if self.runs == 1:
            return f"{self.mean:+.4g} (1 run: no interval)"
        return f"{self.mean:+.4g} [{self.low:+.4g}, {self.high:+.4g}] ({self.method}, {self.runs} runs)"


def t_interval(values: Sequence[float], confidence: float = 0.95) -> Spread:
    """Mean of `values` (e.g. paired differences over seeds) with Student's t interval; NaNs are dropped.

    One value gives an interval of NaN width (nothing about the spread is known), zero values a NaN mean.
    """
    from scipy import stats

    x = np.asarray([v for v in values if _finite(v)], dtype=float)
    n = len(x)
    if n == 0:
        return Spread(float("nan"), float("nan"), float("nan"), 0, "t interval")
    mean = float(x.mean())
    if n == 1:
        return Spread(mean, float("nan"), float("nan"), 1, "t interval")
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1) * x.std(ddof=1) / math.sqrt(n))
    return Spread(mean, mean - half, mean + half, n, f"{confidence:.0%} t interval")


def bootstrap_interval(
    values: Sequence[float], confidence: float = 0.95, resamples: int = 2000, seed: int = 0, statistic=np.mean
) -> Spread:
    """`statistic` of `values` with a percentile bootstrap interval (fixed seed: same numbers every time)."""
    x = np.asarray([v for v in values if _finite(v)], dtype=float)
    n = len(x)
    if n == 0:
        return Spread(float("nan"), float("nan"), float("nan"), 0, "bootstrap")
    point = float(statistic(x))
    if n == 1:
        return Spread(point, float("nan"), float("nan"), 1, "bootstrap")
    rng = np.random.default_rng(seed)
    draws = statistic(x[rng.integers(0, n, size=(resamples, n))], axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(draws, [tail, 1 - tail])
    return Spread(point, float(low), float(high), n, f"{confidence:.0%} percentile bootstrap, {resamples} resamples")


def clopper_pearson(events: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Exact two-sided interval of a binomial rate (`events` out of `n` runs: errors, divergences); (NaN, NaN)
    without runs."""
    from scipy.stats import beta

    if n <= 0:
        return float("nan"), float("nan")
    if not 0 <= events <= n:
        raise ValueError(f"a binomial rate needs 0 <= events <= n, got {events} of {n}")
    alpha = 1 - level
    low = 0.0 if events == 0 else float(beta.ppf(alpha / 2, events, n - events + 1))
    high = 1.0 if events == n else float(beta.ppf(1 - alpha / 2, events + 1, n - events))
    return low, high


def wilson(events: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a binomial rate (Wilson 1927); (NaN, NaN) without runs."""
    from scipy.stats import norm

    if n <= 0:
        return float("nan"), float("nan")
    if not 0 <= events <= n:
        raise ValueError(f"a binomial rate needs 0 <= events <= n, got {events} of {n}")
    z = float(norm.ppf(1 - (1 - level) / 2))
    p = events / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def rate_difference(events_a: int, n_a: int, events_b: int, n_b: int, level: float = 0.95) -> Spread:
    """The difference of two binomial rates ``p_a - p_b`` with Newcombe's hybrid score interval (Newcombe 1998,
    method 10: built from each rate's Wilson interval); NaN bounds when either arm has no runs. ``runs`` is the
    smaller arm."""
    if n_a <= 0 or n_b <= 0:
        return Spread(float("nan"), float("nan"), float("nan"), min(n_a, n_b), "Newcombe interval: an arm has no runs")
    p_a, p_b = events_a / n_a, events_b / n_b
    (l_a, u_a), (l_b, u_b) = wilson(events_a, n_a, level), wilson(events_b, n_b, level)
    d = p_a - p_b
    low = d - math.sqrt((p_a - l_a) ** 2 + (u_b - p_b) ** 2)
    high = d + math.sqrt((u_a - p_a) ** 2 + (p_b - l_b) ** 2)
    return Spread(d, low, high, min(n_a, n_b), f"{level:.0%} Newcombe (Wilson) interval")


def beyond_null(values: dict, null: dict, threshold: float = 0.0) -> dict:
    """Per run key (a seed), a claim's value (higher is better) minus the harder of its null's value on the same key
    and the threshold: value - max(null, threshold), over the keys measured on both sides (finite values only).
    Where the null passes the threshold this is the paired difference from the null (what the paper's mechanism
    adds beyond it); where it does not, the value's own margin to the threshold, so a claim cannot hold because its
    null is poor. Used where a claim's null also passes (issue 41): the claim is then stated as this difference."""
    return {
        k: values[k] - max(null[k], threshold)
        for k in sorted(set(values) & set(null))
        if _finite(values[k]) and _finite(null[k])
    }


def measured_from_spread(claim_id: str, spread: Spread, note: str = "") -> Measured:
    """A claim measured as a mean over seeds, decided by its interval (a single run has no interval: its
    verdict then needs `min_runs` 1 and is decided on the point value)."""
    interval = {} if spread.runs < 2 else {"low": spread.low, "high": spread.high}
    text = spread.text() if spread.runs else ""
    return Measured(claim_id, spread.mean, spread.runs, note="; ".join(p for p in (text, note) if p), **interval)


def count_verdicts(claims: pd.DataFrame) -> dict[str, int]:
    """holds / fails / inconclusive counts of a claims table (any kinds)."""
    counts = claims["verdict"].value_counts()
    return {v: int(counts.get(v, 0)) for v in VERDICTS}


def log_verdicts(claims: pd.DataFrame, log) -> None:
    """One log line per claim: id, kind, value against threshold, runs, verdict and why."""
    for row in claims.itertuples():
        log.info(
            "%s [%s] %s: %.4g %s %g on %d run(s) -> %s%s",
            row.claim_id,
            row.kind,
            row.metric,
            row.value,
            row.comparison,
            row.threshold,
            row.runs,
            row.verdict,
            f" ({row.note})" if row.note else "",
        )
