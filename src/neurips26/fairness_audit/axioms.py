r"""The axiom table (the abstract: "an axiomatic framework that embeds a fairness
notion [...] into desired and undesired independence properties"; measures "(partially) satisfy" them in the
earlier version, OpenReview ZsqigefFO8): each measure is evaluated on purpose-built
structural causal models, each making one independence premise true, and each desired or undesired property of
its notion is judged from the measured value against a stated threshold.

Properties (``X`` is the feature block, all thresholds in nats):

========  =====  =========  ==============================  =================================================
notion    name   kind       premise                         satisfied when
========  =====  =========  ==============================  =================================================
SP        P1     desired    X ⟂ A                           value <= tol
SP        P2     desired    X ⟂ Y                           value <= tol
SP        U_SP   undesired  X ⟂ A | Y, X and A dependent    value > tol (X ⟂ A | Y must not force mu = 0)
SP        W      witness    X = Y, A dependent on Y         value > witness_sp (0.05)
EO        Q1     desired    X ⟂ A | Y                       value <= tol
EO        Q2     desired    X ⟂ Y                           value <= tol
EO        W      witness    X = Y, A dependent on Y         value < witness_eo (0.01)
========  =====  =========  ==============================  =================================================

``tol`` defaults to 0.01 nats. The witness is the Kleinberg-like conflict: X = Y makes X ⟂ A | Y (so an
EO-aligned measure must vanish) while ``I(X; A) = I(Y; A) > 0`` (so an SP-aligned one cannot), hence no measure
satisfies both notions' properties. Measures with notion ``"none"`` have no properties and are left out.

Instances (all built here with numpy; each premise holds by construction, in the population):

* ``indep_a``: X ~ N(0, I_2), A ~ Bern(0.4) independent of everything, ``Y = 1[X1 + X2/2 + eps/2 > 0]``.
* ``indep_a_collider``: X as above, A ~ Bern(0.5), ``Y = 1[X1 + X2/2 + 1.5 (A - 1/2) + eps/2 > 0]``; X ⟂ A still
  holds, but A also informs Y.
* ``indep_y``: A ~ Bern(0.5), ``X1 = 1.2 A + N``, ``X2 = N``, Y ~ Bern(0.4) independent of (X, A).
* ``indep_y_cancel``: A ~ Bern(0.5), ``P(Y=1|A) = 0.3 + 0.4 A``, a bit B with ``P(B=1|A,Y) = [[0.6, 0.1], [0.8,
  0.9]][A][Y]`` and ``X1 = B + 0.3 N``: ``P(B=1|Y=y) = 0.66`` for both y, so X ⟂ Y although both depend on A.
* ``eo_leak``: A ~ Bern(0.5), ``P(Y=1|A) = 0.3 + 0.4 A``, ``X1 = 1.5 Y + N``, ``X2 = -Y + N`` (the SCM's
  EO-type leakage: X depends on A only through Y).
* ``eo_leak_spread``: A ~ Bern(0.4), ``P(Y=1|A) = 0.2 + 0.5 A``, ``X1 = Y + (1 + Y) N``, ``X2 = (1/2 + Y) N'^2``:
  X ⟂ A | Y with a non-Gaussian X whose spread differs between the y strata.
* ``witness``: A ~ Bern(0.5), ``P(Y=1|A) = 0.25 + 0.5 A``, ``X1 = Y``.

Outcome of a (measure, property) over its instances (the Addendum's partial satisfaction): ``pass`` when every
instance satisfies it, ``fail`` when none does, ``holds_under_condition`` otherwise, with the conditions of the
instances that satisfy it in ``condition``. Every outcome comes from measured values; nothing is hard-coded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .estimators import NEG_TOL, Estimate, Estimator, get_estimator
from .measures import MEASURES, check_measure_names, measure_estimates

__all__ = [
    "INSTANCES",
    "OUTCOMES",
    "PROPERTIES",
    "AxiomInstance",
    "AxiomProperty",
    "axiom_summary",
    "axiom_table",
    "judge_axioms",
    "sample_instance",
]

OUTCOMES = ("pass", "fail", "holds_under_condition")
ZERO_TOL = 0.01
WITNESS_SP = 0.05
WITNESS_EO = 0.01


def _bern(rng: np.random.Generator, p) -> np.ndarray:
    p = np.asarray(p, dtype=np.float64)
    return (rng.random(p.shape) < p).astype(np.int64)


def _indep_a(n, rng):
    x = rng.normal(size=(n, 2))
    a = _bern(rng, np.full(n, 0.4))
    y = (x[:, 0] + 0.5 * x[:, 1] + 0.5 * rng.normal(size=n) > 0).astype(np.int64)
    return x, a, y


def _indep_a_collider(n, rng):
    x = rng.normal(size=(n, 2))
    a = _bern(rng, np.full(n, 0.5))
    y = (x[:, 0] + 0.5 * x[:, 1] + 1.5 * (a - 0.5) + 0.5 * rng.normal(size=n) > 0).astype(np.int64)
    return x, a, y


def _indep_y(n, rng):
    a = _bern(rng, np.full(n, 0.5))
    x = np.stack([1.2 * a + rng.normal(size=n), rng.normal(size=n)], axis=1)
    y = _bern(rng, np.full(n, 0.4))
    return x, a, y


def _indep_y_cancel(n, rng):
    a = _bern(rng, np.full(n, 0.5))
    y = _bern(rng, 0.3 + 0.4 * a)
    b = _bern(rng, np.array([[0.6, 0.1], [0.8, 0.9]])[a, y])
    return (b + 0.3 * rng.normal(size=n))[:, None], a, y


def _eo_leak(n, rng):
    a = _bern(rng, np.full(n, 0.5))
    y = _bern(rng, 0.3 + 0.4 * a)
    x = np.stack([1.5 * y + rng.normal(size=n), -y + rng.normal(size=n)], axis=1)
    return x, a, y


def _eo_leak_spread(n, rng):
    a = _bern(rng, np.full(n, 0.4))
    y = _bern(rng, 0.2 + 0.5 * a)
    x = np.stack([y + (1.0 + y) * rng.normal(size=n), (0.5 + y) * rng.normal(size=n) ** 2], axis=1)
    return x, a, y


def _witness(n, rng):
    a = _bern(rng, np.full(n, 0.5))
    y = _bern(rng, 0.25 + 0.5 * a)
    return y[:, None].astype(np.float64), a, y


@dataclass(frozen=True)
class AxiomInstance:
    """A purpose-built SCM: its premise (true by construction), the extra condition it represents, a sampler
    ``(n, rng) -> (x, a, y)``."""

    name: str
    premise: str
    condition: str
    sampler: Callable[[int, np.random.Generator], tuple[np.ndarray, np.ndarray, np.ndarray]]


INSTANCES: dict[str, AxiomInstance] = {
    inst.name: inst
    for inst in (
        AxiomInstance("indep_a", "X ⟂ A", "A ⟂ (X, Y)", _indep_a),
        AxiomInstance("indep_a_collider", "X ⟂ A", "A informs Y", _indep_a_collider),
        AxiomInstance("indep_y", "X ⟂ Y", "Y ⟂ (X, A)", _indep_y),
        AxiomInstance("indep_y_cancel", "X ⟂ Y", "Y depends on A", _indep_y_cancel),
        AxiomInstance("eo_leak", "X ⟂ A | Y, X and A dependent", "X linear-Gaussian given Y", _eo_leak),
        AxiomInstance(
            "eo_leak_spread", "X ⟂ A | Y, X and A dependent", "X non-Gaussian, spread differs by Y", _eo_leak_spread
        ),
        AxiomInstance("witness", "X = Y, A dependent on Y", "X = Y", _witness),
    )
}


@dataclass(frozen=True)
class AxiomProperty:
    """A property of a notion: ``kind`` desired / undesired / witness, the instances it is checked on, and the test
    ``rule`` (``"zero"``: value <= tol; ``"nonzero"``: value > tol; ``"above"``: value > witness_sp;
    ``"below"``: value < witness_eo)."""

    notion: str
    name: str
    kind: str
    premise: str
    instances: tuple[str, ...]
    rule: str


PROPERTIES: tuple[AxiomProperty, ...] = (
    AxiomProperty("SP", "P1", "desired", "X ⟂ A => mu = 0", ("indep_a", "indep_a_collider"), "zero"),
    AxiomProperty("SP", "P2", "desired", "X ⟂ Y => mu = 0", ("indep_y", "indep_y_cancel"), "zero"),
    AxiomProperty(
        "SP", "U_SP", "undesired", "X ⟂ A | Y must not force mu = 0", ("eo_leak", "eo_leak_spread"), "nonzero"
    ),
    AxiomProperty("SP", "W", "witness", "X = Y, A ~ Y => mu > witness_sp", ("witness",), "above"),
    AxiomProperty("EO", "Q1", "desired", "X ⟂ A | Y => mu = 0", ("eo_leak", "eo_leak_spread"), "zero"),
    AxiomProperty("EO", "Q2", "desired", "X ⟂ Y => mu = 0", ("indep_y", "indep_y_cancel"), "zero"),
    AxiomProperty("EO", "W", "witness", "X = Y, A ~ Y => mu < witness_eo", ("witness",), "below"),
)


def sample_instance(name: str, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(x, a, y)`` of ``n`` rows from the named instance (its own stream: ``seed`` and the instance's index)."""
    if name not in INSTANCES:
        raise ValueError(f"unknown axiom instance {name!r}; known: {list(INSTANCES)}")
    if n < 100:
        raise ValueError(f"axiom instances need n >= 100 rows, got {n}")
    rng = np.random.default_rng([seed, list(INSTANCES).index(name)])
    return INSTANCES[name].sampler(n, rng)


def _satisfied(rule: str, value: float, tol: float, witness_sp: float, witness_eo: float) -> tuple[bool, str]:
    if rule == "zero":
        return value <= tol, f"value <= {tol:g}"
    if rule == "nonzero":
        return value > tol, f"value > {tol:g}"
    if rule == "above":
        return value > witness_sp, f"value > {witness_sp:g}"
    return value < witness_eo, f"value < {witness_eo:g}"


def axiom_table(
    measures: Sequence[str] | None = None,
    estimator: str | Estimator = "ce",
    n: int = 20_000,
    seed: int = 0,
    tol: float = ZERO_TOL,
    witness_sp: float = WITNESS_SP,
    witness_eo: float = WITNESS_EO,
    clip_tol: float = NEG_TOL,
) -> pd.DataFrame:
    """One row per (measure, property, instance): ``measure, notion, family, property, kind, premise, instance,
    condition, value, raw, clipped, negative, criterion, satisfied, outcome`` and ``estimator, n, seed``.

    ``outcome`` (one of :data:`OUTCOMES`) aggregates ``satisfied`` over the property's instances, and is repeated
    on each of its rows. Measures of notion ``"none"`` are skipped; ``measures`` None means all others. The
    instances are sampled and estimated here; :func:`judge_axioms` turns the estimates into the table."""
    names = [m for m in check_measure_names(measures) if MEASURES[m].notion != "none"]
    est = get_estimator(estimator)
    needed: dict[str, list[str]] = {}
    for prop in PROPERTIES:
        for inst in prop.instances:
            needed.setdefault(inst, [])
            needed[inst] += [m for m in names if MEASURES[m].notion == prop.notion and m not in needed[inst]]
    estimates = {}
    for inst, inst_measures in needed.items():
        if inst_measures:
            x, a, y = sample_instance(inst, n, seed)
            estimates[inst] = measure_estimates(x, a, y, inst_measures, est, seed, clip_tol)
    return judge_axioms(estimates, names, tol, witness_sp, witness_eo).assign(estimator=est.name, n=n, seed=seed)


def judge_axioms(
    estimates: Mapping[str, Mapping[str, Estimate]],
    measures: Sequence[str],
    tol: float = ZERO_TOL,
    witness_sp: float = WITNESS_SP,
    witness_eo: float = WITNESS_EO,
) -> pd.DataFrame:
    """The rows of :func:`axiom_table` (without ``estimator, n, seed``) from ``{instance: {measure: Estimate}}``:
    each (measure, property, instance) judged by the property's rule, and the outcome over the instances."""
    rows = []
    for prop in PROPERTIES:
        for name in (m for m in measures if MEASURES[m].notion == prop.notion):
            spec = MEASURES[name]
            for inst in prop.instances:
                est_value = estimates[inst][name]
                ok, criterion = _satisfied(prop.rule, est_value.value, tol, witness_sp, witness_eo)
                rows.append(
                    dict(
                        measure=name,
                        notion=spec.notion,
                        family=spec.family,
                        property=prop.name,
                        kind=prop.kind,
                        premise=prop.premise,
                        instance=inst,
                        condition=INSTANCES[inst].condition,
                        value=est_value.value,
                        raw=est_value.raw,
                        clipped=est_value.clipped,
                        negative=est_value.negative,
                        criterion=criterion,
                        satisfied=bool(ok),
                    )
                )
    columns = [
        "measure",
        "notion",
        "family",
        "property",
        "kind",
        "premise",
        "instance",
        "condition",
        "value",
        "raw",
        "clipped",
        "negative",
        "criterion",
        "satisfied",
    ]
    table = pd.DataFrame(rows, columns=columns)
    share = table.groupby(["measure", "property"])["satisfied"].transform("mean")
    table["outcome"] = np.where(share == 1.0, "pass", np.where(share == 0.0, "fail", "holds_under_condition"))
    return table


def axiom_summary(table: pd.DataFrame) -> pd.DataFrame:
    """One row per (measure, property) of an :func:`axiom_table`: ``outcome``, ``satisfied`` as ``k/m``
    instances, the conditions under which it held (``condition``) and the instance values."""
    rows = []
    for (measure, prop), group in table.groupby(["measure", "property"], sort=False):
        held = group[group["satisfied"]]
        rows.append(
            dict(
                measure=measure,
                notion=group["notion"].iat[0],
                family=group["family"].iat[0],
                property=prop,
                kind=group["kind"].iat[0],
                premise=group["premise"].iat[0],
                criterion=group["criterion"].iat[0],
                outcome=group["outcome"].iat[0],
                satisfied=f"{len(held)}/{len(group)}",
                condition="; ".join(held["condition"]) if group["outcome"].iat[0] != "fail" else "",
                values=", ".join(f"{i}={v:.4f}" for i, v in zip(group["instance"], group["value"])),
            )
        )
    return pd.DataFrame(rows)
