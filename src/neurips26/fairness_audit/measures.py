r"""The measure family ``mu(S) >= 0`` over a feature block ``x_S`` (the abstract's "baseline measures" and the measures
built on them; PID measures because the earlier version, OpenReview ZsqigefFO8, names partial information decomposition
among its keywords), each aligned with a fairness notion, in the registry :data:`MEASURES`.

=========  ======  ============  ==========================================================================
name       notion  family        definition (nats)
=========  ======  ============  ==========================================================================
B_SP       SP      baseline      ``I(X_S; A)``: bounds ``I(Yhat; A)`` of any ``Yhat = f(X_S, noise)`` (DPI)
B_EO       EO      baseline      ``I(X_S; A | Y)``: bounds ``I(Yhat; A | Y)`` likewise
bayes_SP   SP      ours-assumed  ``I(s(X_S); A)``, ``s`` the cross-fitted ``P(Y=1|X_S)``
bayes_EO   EO      ours-assumed  ``I(s(X_S); A | Y)``
rbayes_SP  SP      ours-assumed  ``I(Yhat_s; A)``, ``Yhat_s ~ Bern(s(X_S))`` the randomised Bayes predictor
rbayes_EO  EO      ours-assumed  ``I(Yhat_s; A | Y)``
prod_SP    SP      ours-assumed  ``I(X_S; A) I(X_S; Y) / H(A)``
prod_EO    EO      ours-assumed  ``I(X_S; A | Y) I(X_S; Y) / H(A)``
red_SP     SP      pid           ``Red(Y: X_S, A)``, the Y-information X_S and A share (Dutta et al. 2022)
redA_SP    SP      pid           ``Red(A: X_S, Y)``, the A-information X_S and Y share
uniA_EO    EO      pid           ``Uni(A: X_S \ Y)``, A-information in X_S that Y does not carry
uniY       none    pid           ``Uni(Y: X_S \ A)``, Y-information in X_S that A does not carry (diagnostic)
synY       none    pid           ``Syn(Y: X_S, A)``, Y-information only X_S and A together carry (diagnostic)
=========  ======  ============  ==========================================================================

Notion alignment of the PID measures (our reading; the paper's mapping is not recovered). ``redA_SP``: zero when
``X_S`` is independent of A (every specific information ``I(A=a; X_S)`` is 0) and equal to ``I(X_S; A)`` when A,
Y, X_S form a Markov chain (``I(A=a; X_S) <= I(A=a; Y)`` by data processing), so X ⟂ A | Y does not force it to 0:
SP. ``uniA_EO``: by the same chain argument it is 0 under X ⟂ A | Y: EO. ``uniY`` and ``synY`` describe how the
label information splits and measure no bias under either notion; they are computed (the addendum asks for them)
but carry notion ``"none"`` and no axiom applies to them.

Why ``rbayes``: ``I(s; A)`` does not depend on the scale of ``s``, so it is discontinuous at the P2 premise: a
feature that is a strong proxy of A and predicts Y ever so slightly has ``bayes_SP = I(X_S; A)`` in full, and 0
only once it predicts nothing. The randomised predictor that outputs 1 with probability ``s(X)`` has
``P(Yhat=1 | A=a) = E[s | A=a]``, so ``I(Yhat_s; A)`` is computed in closed form from the group means of the score
(binary entropies, no estimator): it grows with the spread of the score, is still 0 under X ⟂ A, X ⟂ Y (constant
score) and, for EO, X ⟂ A | Y, and is bounded by ``I(X_S; A)`` (data processing). It is our addition.

Estimation. The MI terms come from the chosen estimator (:mod:`.estimators`, ``"ce"`` or ``"plugin"``); the
Bayes-score measures estimate the MI of the one-dimensional score with the same estimator. The PID measures always
use the plug-in discretisation of ``X_S`` (8 quantile bins per column, k-means code of 32 cells above two
columns; the estimator's own settings when it is a plug-in estimator) and the plug-in joint distribution, whatever
the estimator: I_min needs a discrete table. Khodadadian et al.'s coefficient is not implemented (Addendum, item
4: its exact form could not be checked). :class:`SharedQuantities` computes each intermediate quantity (one fit
for ``I(X;A)``, one for ``I(X;Y)``, one Bayes score, one PID per target...) once for all measures of a block.

Flags: every measure returns an :class:`~.estimators.Estimate`; a product is ``clipped`` or ``negative`` when one
of its factors is, and a Bayes-score measure when its MI is. PID atoms are non-negative by construction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .catalog import MEASURE_NOTIONS
from .cross_entropy import bayes_scores_from_features, spline_features
from .entropies import entropy
from .estimators import ESTIMATORS, NEG_TOL, Estimate, Estimator, clip_estimate, get_estimator, validate_inputs
from .pid import PID, pid_from_samples
from .plugin import quantile_bins

__all__ = [
    "FAMILIES",
    "MEASURES",
    "NOTIONS",
    "MeasureSpec",
    "SharedQuantities",
    "check_measure_names",
    "measure_estimates",
    "measure_values",
    "measures_for_notion",
]

NOTIONS = ("SP", "EO", "none")
FAMILIES = ("baseline", "ours-assumed", "pid")


class SharedQuantities:
    """The intermediate quantities of one feature block, each computed on first use and cached.

    Build it from ``x`` (validated by the caller), or hand it representations prepared elsewhere (for one
    coalition, the concatenation of its players' per-block encodings): ``rep`` the estimator's ``encode(x)``,
    ``splines`` the CE spline features (for the Bayes score), ``bins`` the plug-in quantile bins (for the PID
    code). ``a`` and ``y`` are int 0/1 arrays."""

    def __init__(
        self,
        x: np.ndarray | None,
        a: np.ndarray,
        y: np.ndarray,
        estimator: Estimator,
        seed: int = 0,
        tol: float = NEG_TOL,
        rep: np.ndarray | None = None,
        splines: np.ndarray | None = None,
        bins: np.ndarray | None = None,
    ):
        self.x, self.a, self.y, self.estimator, self.seed, self.tol = x, a, y, estimator, seed, tol
        self._given = {"rep": rep, "splines": splines, "bins": bins}

    def _representation(self, kind: str, encode: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        if self._given[kind] is not None:
            return self._given[kind]
        if self.x is None:
            raise ValueError(f"SharedQuantities was given neither x nor the {kind!r} representation")
        return encode(self.x)

    def _mi(self, prepared: np.ndarray, t: np.ndarray) -> Estimate:
        return clip_estimate(self.estimator.mi(prepared, t, self.seed), self.tol)

    def _cmi(self, prepared: np.ndarray) -> Estimate:
        return clip_estimate(self.estimator.cmi(prepared, self.a, self.y, self.seed), self.tol)

    @cached_property
    def prepared(self) -> np.ndarray:
        return self.estimator.prepare(self._representation("rep", self.estimator.encode), self.seed)

    @cached_property
    def i_xa(self) -> Estimate:
        return self._mi(self.prepared, self.a)

    @cached_property
    def i_xy(self) -> Estimate:
        return self._mi(self.prepared, self.y)

    @cached_property
    def i_xa_y(self) -> Estimate:
        return self._cmi(self.prepared)

    @cached_property
    def h_a(self) -> float:
        return entropy(np.bincount(self.a, minlength=2))

    @cached_property
    def score(self) -> np.ndarray:
        return bayes_scores_from_features(self._representation("splines", spline_features), self.y, self.seed)

    @cached_property
    def score_prepared(self) -> np.ndarray:
        return self.estimator.prepare(self.estimator.encode(self.score[:, None]), self.seed)

    @cached_property
    def i_sa(self) -> Estimate:
        return self._mi(self.score_prepared, self.a)

    @cached_property
    def i_sa_y(self) -> Estimate:
        return self._cmi(self.score_prepared)

    @cached_property
    def i_rand_a(self) -> Estimate:
        """``I(Yhat_s; A)`` of the randomised Bayes predictor, from the score's means per A group."""
        return _exact(_randomised_mi(self.score, self.a))

    @cached_property
    def i_rand_a_y(self) -> Estimate:
        """``I(Yhat_s; A | Y) = sum_y p(y) I(Yhat_s; A | Y=y)``."""
        return _exact(
            sum(np.mean(self.y == v) * _randomised_mi(self.score[self.y == v], self.a[self.y == v]) for v in (0, 1))
        )

    @cached_property
    def code(self) -> np.ndarray:
        """The discrete code of ``X_S`` the PID measures use."""
        if self.estimator.name == "plugin":
            return self.prepared
        return ESTIMATORS["plugin"].prepare(self._representation("bins", quantile_bins), self.seed)

    @cached_property
    def pid_y(self) -> PID:
        """PID of ``I(Y; X_S, A)``: source 1 is ``X_S``, source 2 is A."""
        return pid_from_samples(self.y, self.code, self.a)

    @cached_property
    def pid_a(self) -> PID:
        """PID of ``I(A; X_S, Y)``: source 1 is ``X_S``, source 2 is Y."""
        return pid_from_samples(self.a, self.code, self.y)


def _binary_entropy(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-300, 1.0)
    q = np.clip(1.0 - p, 1e-300, 1.0)
    return -(p * np.log(p) + q * np.log(q))


def _randomised_mi(score: np.ndarray, a: np.ndarray) -> float:
    """``I(Yhat; A)`` for ``Yhat | X ~ Bern(score)``: ``h(E s) - sum_a p(a) h(E[s | A=a])`` (exactly 0 for an
    empty stratum or a constant score); non-negative by the concavity of ``h``."""
    if len(score) == 0 or np.ptp(score) == 0:
        return 0.0
    weights = np.bincount(a, minlength=2) / len(a)
    means = np.bincount(a, weights=score, minlength=2) / np.maximum(np.bincount(a, minlength=2), 1)
    value = float(_binary_entropy(score.mean()) - weights @ _binary_entropy(means))
    return max(value, 0.0) if value > -1e-12 else value


def _product(first: Estimate, second: Estimate, scale: float) -> Estimate:
    value = first.value * second.value / scale
    return Estimate(value, value, first.clipped or second.clipped, first.negative or second.negative)


def _exact(value: float) -> Estimate:
    return Estimate(float(value), float(value))


@dataclass(frozen=True)
class MeasureSpec:
    """A named measure: its notion (``SP``, ``EO`` or ``none``), family (``baseline``, ``ours-assumed``,
    ``pid``), formula, the representations it uses (``"estimator"``, ``"splines"``, ``"bins"``) and its
    function of the shared quantities."""

    name: str
    notion: str
    family: str
    formula: str
    uses: tuple[str, ...]
    function: Callable[[SharedQuantities], Estimate]


MEASURES: dict[str, MeasureSpec] = {
    spec.name: spec
    for spec in (
        MeasureSpec("B_SP", "SP", "baseline", "I(X_S; A)", ("estimator",), lambda q: q.i_xa),
        MeasureSpec("B_EO", "EO", "baseline", "I(X_S; A | Y)", ("estimator",), lambda q: q.i_xa_y),
        MeasureSpec(
            "bayes_SP",
            "SP",
            "ours-assumed",
            "I(s(X_S); A), s = cross-fitted P(Y=1 | X_S)",
            ("estimator", "splines"),
            lambda q: q.i_sa,
        ),
        MeasureSpec(
            "bayes_EO",
            "EO",
            "ours-assumed",
            "I(s(X_S); A | Y), s = cross-fitted P(Y=1 | X_S)",
            ("estimator", "splines"),
            lambda q: q.i_sa_y,
        ),
        MeasureSpec(
            "rbayes_SP", "SP", "ours-assumed", "I(Yhat; A), Yhat ~ Bern(s(X_S))", ("splines",), lambda q: q.i_rand_a
        ),
        MeasureSpec(
            "rbayes_EO",
            "EO",
            "ours-assumed",
            "I(Yhat; A | Y), Yhat ~ Bern(s(X_S))",
            ("splines",),
            lambda q: q.i_rand_a_y,
        ),
        MeasureSpec(
            "prod_SP",
            "SP",
            "ours-assumed",
            "I(X_S; A) I(X_S; Y) / H(A)",
            ("estimator",),
            lambda q: _product(q.i_xa, q.i_xy, q.h_a),
        ),
        MeasureSpec(
            "prod_EO",
            "EO",
            "ours-assumed",
            "I(X_S; A | Y) I(X_S; Y) / H(A)",
            ("estimator",),
            lambda q: _product(q.i_xa_y, q.i_xy, q.h_a),
        ),
        MeasureSpec("red_SP", "SP", "pid", "Red_Imin(Y: X_S, A)", ("bins",), lambda q: _exact(q.pid_y.redundancy)),
        MeasureSpec("redA_SP", "SP", "pid", "Red_Imin(A: X_S, Y)", ("bins",), lambda q: _exact(q.pid_a.redundancy)),
        MeasureSpec("uniA_EO", "EO", "pid", "Uni_Imin(A: X_S \\ Y)", ("bins",), lambda q: _exact(q.pid_a.unique_1)),
        MeasureSpec("uniY", "none", "pid", "Uni_Imin(Y: X_S \\ A)", ("bins",), lambda q: _exact(q.pid_y.unique_1)),
        MeasureSpec("synY", "none", "pid", "Syn_Imin(Y: X_S, A)", ("bins",), lambda q: _exact(q.pid_y.synergy)),
    )
}


assert {name: spec.notion for name, spec in MEASURES.items()} == MEASURE_NOTIONS, (
    "catalog.MEASURE_NOTIONS must list every measure with its notion"
)


def measures_for_notion(notion: str) -> list[str]:
    """Names of the registered measures aligned with ``notion`` (``SP``, ``EO`` or ``none``)."""
    if notion not in NOTIONS:
        raise ValueError(f"unknown notion {notion!r}; known: {list(NOTIONS)}")
    return [name for name, spec in MEASURES.items() if spec.notion == notion]


def check_measure_names(names: Sequence[str] | None) -> list[str]:
    """The requested measure names (all registered ones for None), checked against :data:`MEASURES`."""
    if names is None:
        return list(MEASURES)
    names = [names] if isinstance(names, str) else list(names)
    unknown = [name for name in names if name not in MEASURES]
    if unknown:
        raise ValueError(f"unknown measure(s) {unknown}; known: {list(MEASURES)}")
    return names


def measure_estimates(
    x, a, y, names: Sequence[str] | None = None, estimator: str | Estimator = "ce", seed: int = 0, tol: float = NEG_TOL
) -> dict[str, Estimate]:
    """Every named measure of the block ``x (n, k)`` as an :class:`~.estimators.Estimate`, sharing the
    intermediate quantities (``names`` None: all of :data:`MEASURES`)."""
    names = check_measure_names(names)
    x, a, y = validate_inputs(x, a, y)
    quantities = SharedQuantities(x, a, y, get_estimator(estimator), seed, tol)
    return {name: MEASURES[name].function(quantities) for name in names}


def measure_values(
    x, a, y, names: Sequence[str] | None = None, estimator: str | Estimator = "ce", seed: int = 0, tol: float = NEG_TOL
) -> dict[str, float]:
    """``{name: mu(x)}`` in nats for the named measures (see :func:`measure_estimates` for the flags)."""
    return {name: est.value for name, est in measure_estimates(x, a, y, names, estimator, seed, tol).items()}
