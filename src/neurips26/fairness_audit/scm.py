"""The parametric linear SCM generator (the abstract: "a parametric linear structural causal model that enables
controlled generation of diverse correlation structures and bias types"; the idea is the paper's, the
parameterisation is ours), its named scenario families and random draws from a prior over its knobs.

Model (d features; all noises independent standard normals scaled as shown)
    A ~ Bern(p_A),  U ~ N(0, 1)  (latent qualification)
    X_j = alpha_j A + beta_j U + sum_{k<j} gamma_jk X_k + eta_j Y + sigma_j eps_j
    Y*  = w . X + c A + delta U + sigma_Y eps_Y,   Y = 1[Y* > tau]

Generation order (why it is a valid SCM)
- A feature with eta_j != 0 is a child of Y ("post-label", the EO-leakage knob: X_j = eta Y + eps depends on A only
  through Y). So is every feature that depends on a post-label feature through gamma. A post-label feature must
  have w_j = 0 (a child of Y cannot also be its parent); `SCMParams` refuses anything else.
- Sampling draws A, U and every noise first, then the pre-label features in index order (their parents have
  smaller indices and are pre-label too), then Y* and Y, then the post-label features in index order (their
  parents have smaller indices and are either pre-label or post-label and already drawn). The graph is acyclic.

The threshold tau is the population (1 - base_rate) quantile of Y*, not a sample quantile, so samples are i.i.d.
and E[Y] = base_rate exactly. Y* given A is Gaussian because the pre-label features are linear in (A, U, eps):
Y* | A ~ N(a_tot A, s^2), with a_tot and s from the total effects (I - Gamma)^-1; tau solves
p_A P(Y* > tau | A=1) + (1 - p_A) P(Y* > tau | A=0) = base_rate.

Knobs (ours): direct label bias c; proxy strength alpha_j on predictive features (w_j != 0); proxies on
non-predictive features (alpha_j != 0, w_j = 0, beta_j = 0); redundancy (a copy X_k = X_j + small noise: gamma_kj = 1,
small sigma_k); EO-type leakage (eta_j). `roles` labels each feature's part for reports; it does not enter sampling.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import optimize, stats

from neurips26.common.validation import number, validate

from .catalog import SCENARIO_NAMES
from .data import MIN_GROUP, AuditData, make_audit_data

__all__ = [
    "FEATURE_PREFIX",
    "ROLES",
    "SCENARIOS",
    "SCENARIO_DESCRIPTIONS",
    "SCMParams",
    "SCMPrior",
    "feature_names",
    "label_threshold",
    "post_label_features",
    "random_draw",
    "sample_scm",
    "scenario",
]

FEATURE_PREFIX = "X"
ROLES = ("predictive", "predictive_proxy", "proxy", "copy", "leak")
_VECTORS = ("alpha", "beta", "eta", "sigma", "w")
_SCALARS = ("p_a", "c", "delta", "sigma_y", "base_rate")


def _open_unit(value: float, what: str) -> float:
    value = float(value)
    if not 0.0 < value < 1.0:
        raise ValueError(f"{what} must lie in (0, 1), got {value}")
    return value


def _post_label(eta: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    post = eta != 0
    for j in range(len(eta)):  # parents have smaller indices, so one ascending pass closes the set
        post[j] |= bool(np.any(gamma[j, :j][post[:j]] != 0))
    return post


@dataclass(frozen=True, eq=False)
class SCMParams:
    """Coefficients of the linear SCM (module docstring). Vectors have length d, `gamma` is (d, d) strictly lower
    triangular (gamma[j, k] is the effect of X_k on X_j). JSON round trip: `from_dict(to_dict())`."""

    p_a: float
    alpha: np.ndarray
    beta: np.ndarray
    gamma: np.ndarray
    eta: np.ndarray
    sigma: np.ndarray
    w: np.ndarray
    c: float = 0.0
    delta: float = 0.0
    sigma_y: float = 1.0
    base_rate: float = 0.4
    roles: tuple[str, ...] = field(default=())

    def __post_init__(self):
        alpha = np.array(self.alpha, dtype=np.float64)
        if alpha.ndim != 1 or len(alpha) == 0:
            raise ValueError(f"alpha must be a non-empty vector, got shape {alpha.shape}")
        d = len(alpha)
        vectors = {}
        for name in _VECTORS:
            value = np.array(getattr(self, name), dtype=np.float64)
            if value.shape != (d,):
                raise ValueError(f"{name} must have shape ({d},) like alpha, got {value.shape}")
            if not np.all(np.isfinite(value)):
                raise ValueError(f"{name} has non-finite entries: {value.tolist()}")
            vectors[name] = value
        gamma = np.array(self.gamma, dtype=np.float64)
        if gamma.shape != (d, d):
            raise ValueError(f"gamma must have shape ({d}, {d}), got {gamma.shape}")
        if not np.all(np.isfinite(gamma)):
            raise ValueError("gamma has non-finite entries")
        upper = np.argwhere(np.triu(gamma) != 0)
        if len(upper):
            raise ValueError(
                f"gamma must be strictly lower triangular (X_j depends on X_k for k < j only); "
                f"non-zero at (j, k) = {[tuple(map(int, jk)) for jk in upper[:5]]}"
            )
        if np.any(vectors["sigma"] <= 0):
            raise ValueError(f"feature noise sigma must be > 0, got {vectors['sigma'].tolist()}")
        scalars = {name: float(getattr(self, name)) for name in _SCALARS}
        bad = [name for name, value in scalars.items() if not math.isfinite(value)]
        if bad:
            raise ValueError(f"non-finite scalar(s) {bad}: {[scalars[b] for b in bad]}")
        _open_unit(scalars["p_a"], "p_a (P(A=1))")
        _open_unit(scalars["base_rate"], "base_rate (P(Y=1))")
        if scalars["sigma_y"] <= 0:
            raise ValueError(f"label noise sigma_y must be > 0, got {scalars['sigma_y']}")
        post = _post_label(vectors["eta"], gamma)
        cyclic = [f"{FEATURE_PREFIX}{j + 1}" for j in np.flatnonzero(post & (vectors["w"] != 0))]
        if cyclic:
            raise ValueError(
                f"feature(s) {cyclic} depend on Y (eta, directly or through gamma) and also enter Y* "
                "(w != 0): that is a cycle; set their w to 0"
            )
        roles = tuple(self.roles) if self.roles else ("feature",) * d
        if len(roles) != d or not all(isinstance(r, str) for r in roles):
            raise ValueError(f"roles must be {d} strings, got {list(roles)}")
        for name, value in {**vectors, "gamma": gamma}.items():
            value.setflags(write=False)
            object.__setattr__(self, name, value)
        for name, value in scalars.items():
            object.__setattr__(self, name, value)
        object.__setattr__(self, "roles", roles)

    @property
    def d(self) -> int:
        return len(self.alpha)

    def to_dict(self) -> dict:
        """JSON-able dict (lists and floats)."""
        out = {name: getattr(self, name) for name in _SCALARS}
        out.update({name: getattr(self, name).tolist() for name in (*_VECTORS, "gamma")})
        out["roles"] = list(self.roles)
        return out

    @classmethod
    def from_dict(cls, values: Mapping) -> SCMParams:
        known = {*_SCALARS, *_VECTORS, "gamma", "roles"}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown SCM parameter(s) {unknown}; known: {sorted(known)}")
        return cls(**{k: (tuple(v) if k == "roles" else v) for k, v in values.items()})


def feature_names(d: int) -> list[str]:
    return [f"{FEATURE_PREFIX}{j + 1}" for j in range(d)]


def post_label_features(params: SCMParams) -> np.ndarray:
    """Boolean mask of the features that are descendants of Y (eta != 0, closed under gamma)."""
    return _post_label(params.eta, params.gamma)


def _label_effects(params: SCMParams) -> tuple[float, float]:
    """Total effect of A on Y*, and the standard deviation of Y* given A."""
    total = np.linalg.inv(np.eye(params.d) - params.gamma)  # X_pre = total @ (alpha A + beta U + sigma eps)
    reach = params.w @ total  # w is 0 on post-label features, whose eta term therefore never reaches Y*
    a_tot = float(reach @ params.alpha + params.c)
    u_tot = float(reach @ params.beta + params.delta)
    var = u_tot**2 + float(np.sum((reach * params.sigma) ** 2)) + params.sigma_y**2
    return a_tot, math.sqrt(var)


def label_threshold(params: SCMParams) -> float:
    """tau with P(Y* > tau) = base_rate under the model (the population quantile; module docstring)."""
    a_tot, scale = _label_effects(params)

    def excess(tau: float) -> float:
        tail = params.p_a * stats.norm.sf((tau - a_tot) / scale) + (1 - params.p_a) * stats.norm.sf(tau / scale)
        return tail - params.base_rate

    lo, hi = min(0.0, a_tot) - 40 * scale, max(0.0, a_tot) + 40 * scale
    return float(optimize.brentq(excess, lo, hi, xtol=1e-12))


def sample_scm(params: SCMParams, n: int, seed: int, *, name: str = "scm", min_group: int = MIN_GROUP) -> AuditData:
    """n i.i.d. samples of (X, A, Y); features X1..Xd, each its own player. Same seed, same data."""
    if int(n) != n or n < 1:
        raise ValueError(f"n must be a positive integer, got {n}")
    n = int(n)
    rng = np.random.default_rng(seed)
    a = (rng.random(n) < params.p_a).astype(np.float64)
    u = rng.standard_normal(n)
    noise = rng.standard_normal((n, params.d)) * params.sigma
    noise_y = rng.standard_normal(n) * params.sigma_y
    x = np.zeros((n, params.d))
    post = post_label_features(params)

    def draw(j: int, label: np.ndarray | float) -> None:
        x[:, j] = (
            params.alpha[j] * a
            + params.beta[j] * u
            + x[:, :j] @ params.gamma[j, :j]
            + params.eta[j] * label
            + noise[:, j]
        )

    for j in np.flatnonzero(~post):
        draw(j, 0.0)
    y_star = x @ params.w + params.c * a + params.delta * u + noise_y
    y = (y_star > label_threshold(params)).astype(np.float64)
    for j in np.flatnonzero(post):
        draw(j, y)
    features = pd.DataFrame(x, columns=feature_names(params.d))
    return make_audit_data(features, a, y, name=name, min_group=min_group)


# ---------------------------------------------------------------------------------------------------------------------
# Scenario families (d >= 3; the quick scale uses d = 6)


def _base(d: int, rng: np.random.Generator) -> dict:
    """A fair backbone: every feature loads on U (beta in [0.5, 1.5]) and enters Y* (w in [0.3, 1]: all features are
    positive signs of qualification, so none cancels its own U path), with a sparse random chain gamma (each pair
    with probability 0.3, N(0, 0.3^2)); no A anywhere."""
    gamma = np.tril(rng.normal(0.0, 0.3, (d, d)) * (rng.random((d, d)) < 0.3), k=-1)
    return {
        "p_a": float(rng.uniform(0.3, 0.6)),
        "alpha": np.zeros(d),
        "beta": rng.uniform(0.5, 1.5, d),
        "gamma": gamma,
        "eta": np.zeros(d),
        "sigma": np.ones(d),
        "w": rng.uniform(0.3, 1.0, d),
        "c": 0.0,
        "delta": float(rng.uniform(0.0, 0.5)),
        "sigma_y": 1.0,
        "base_rate": float(rng.uniform(0.3, 0.5)),
        "roles": ["predictive"] * d,
    }


def _isolate(p: dict, j: int) -> None:
    """Feature j gets no gamma parents and no gamma children, and does not enter Y*."""
    p["gamma"][j, :] = 0.0
    p["gamma"][:, j] = 0.0
    p["w"][j] = 0.0
    p["beta"][j] = 0.0


def _magnitude(rng: np.random.Generator) -> float:
    return float(rng.uniform(0.8, 1.5))


def _strength(rng: np.random.Generator) -> float:
    return _magnitude(rng) * float(rng.choice([-1.0, 1.0]))


def _fair(d, rng):
    return _base(d, rng)


def _label_scale(p: dict) -> float:
    """Standard deviation of Y* given A, so that c can be set in units of it."""
    return _label_effects(SCMParams(**{**p, "c": 0.0}))[1]


def _direct_label_bias(d, rng):
    p = _base(d, rng)
    p["c"] = _magnitude(rng) * _label_scale(p)
    return p


def _predictive_proxy(d, rng):
    p = _base(d, rng)
    for j in range(max(1, d // 3)):
        p["alpha"][j] = _magnitude(rng)  # positive like w, so the proxies' effects on Y add up
        p["roles"][j] = "predictive_proxy"
    return p


def _nonpredictive_proxy(d, rng):
    p = _base(d, rng)
    for j in range(d - max(1, d // 3), d):
        _isolate(p, j)
        p["alpha"][j] = _strength(rng)
        p["roles"][j] = "proxy"
    return p


def _redundant_proxy(d, rng):
    p = _base(d, rng)
    p["alpha"][0] = _magnitude(rng)
    p["w"][0] = float(rng.uniform(0.5, 1.0))
    p["roles"][0] = "predictive_proxy"
    copy = d - 1
    _isolate(p, copy)
    p["gamma"][copy, 0] = 1.0
    p["sigma"][copy] = 0.05
    p["roles"][copy] = "copy"
    return p


def _eo_leakage(d, rng):
    p = _base(d, rng)
    leak = d - 1
    _isolate(p, leak)
    p["c"] = _magnitude(rng) * _label_scale(p)
    p["eta"][leak] = float(rng.uniform(1.0, 2.0))
    p["roles"][leak] = "leak"
    return p


SCENARIOS: dict[str, Callable[[int, np.random.Generator], dict]] = {
    "fair": _fair,
    "direct_label_bias": _direct_label_bias,
    "predictive_proxy": _predictive_proxy,
    "nonpredictive_proxy": _nonpredictive_proxy,
    "redundant_proxy": _redundant_proxy,
    "eo_leakage": _eo_leakage,
}
assert tuple(SCENARIOS) == SCENARIO_NAMES, "catalog.SCENARIO_NAMES must name the scenarios"
SCENARIO_DESCRIPTIONS = {
    "fair": "A independent of (X, Y): every measure and every true gap should be ~0 (null calibration).",
    "direct_label_bias": "c = 0.8-1.5 sd(Y*|A), alpha = 0: X independent of A but Y depends on A. SP measures ~0 "
    "(P1), while X and A are dependent given Y (collider), so EO measures and the EO gap are "
    "> 0.",
    "predictive_proxy": "alpha > 0 on the first d//3 features, which also predict Y: bias a tuned "
    "model uses; SP and EO measures > 0, attributed to those features.",
    "nonpredictive_proxy": "the last d//3 features are pure proxies (alpha != 0, beta = 0, w = 0, no gamma) and "
    "independent of Y: B_SP > 0 but relevance-aware measures ~0 (P2); the model ignores them.",
    "redundant_proxy": "X1 is a predictive proxy and X_d = X1 + N(0, 0.05^2) a near copy (w = 0): Shapley should "
    "split X1's attribution between the two (redundancy, claim C3).",
    "eo_leakage": "c = 0.8-1.5 sd(Y*|A) and X_d = eta Y + eps (a child of Y, w = 0): X_d is independent of A "
    "given Y, so EO measures give it ~0 (Q1) while SP measures do not (the SP/EO conflict).",
}


def scenario(name: str, d: int = 6, seed: int = 0) -> SCMParams:
    """The named scenario family with its free coefficients drawn from `seed` (SCENARIO_DESCRIPTIONS)."""
    if name not in SCENARIOS:
        raise ValueError(f"unknown scenario {name!r}; known: {list(SCENARIOS)}")
    if int(d) != d or d < 3:
        raise ValueError(f"scenario {name!r} needs d >= 3 features, got d={d}")
    rng = np.random.default_rng([int(seed), list(SCENARIOS).index(name)])
    p = SCENARIOS[name](int(d), rng)
    return SCMParams(**{**p, "roles": tuple(p["roles"])})


# ---------------------------------------------------------------------------------------------------------------------
# Random draws from a prior over the knobs


@dataclass(frozen=True)
class SCMPrior:
    """Prior over the knobs. Role shares pi ~ Dirichlet(role_concentration); feature 1 is "predictive", every other
    feature's role ~ Categorical(pi). Then, by role:
      predictive        beta ~ N(0, beta_sd^2), w ~ N(0, w_sd^2), gamma from earlier (proxy-)predictive features with
                        probability gamma_prob, each N(0, gamma_sd^2)
      predictive_proxy  as predictive, plus alpha ~ N(0, alpha_sd^2)
      proxy             alpha ~ N(0, alpha_sd^2) only (beta = w = 0, no gamma)
      copy              X_k = X_j + N(0, copy_noise^2) of a uniformly chosen earlier feature j, w = 0
      leak              X_k = eta Y + eps with eta ~ N(0, eta_sd^2), w = 0
    and c ~ N(0, c_sd^2), delta ~ N(0, delta_sd^2), p_A ~ U(p_a_range), base rate ~ U(base_rate_range)."""

    role_concentration: tuple[tuple[str, float], ...] = (
        ("predictive", 4.0),
        ("predictive_proxy", 1.0),
        ("proxy", 1.0),
        ("copy", 0.5),
        ("leak", 0.5),
    )
    alpha_sd: float = number(0.0, default=1.0)
    beta_sd: float = number(0.0, default=1.0)
    w_sd: float = number(0.0, default=0.7)
    gamma_prob: float = number(0.0, 1.0, default=0.3)
    gamma_sd: float = number(0.0, default=0.3)
    c_sd: float = number(0.0, default=0.7)
    delta_sd: float = number(0.0, default=0.3)
    eta_sd: float = number(0.0, default=1.0)
    copy_noise: float = number(0.0, low_open=True, default=0.05)
    p_a_range: tuple[float, float] = (0.2, 0.6)
    base_rate_range: tuple[float, float] = (0.2, 0.5)

    def __post_init__(self):
        validate(self)
        concentration = dict(self.role_concentration)
        unknown = sorted(set(concentration) - set(ROLES))
        if unknown:
            raise ValueError(f"unknown role(s) {unknown} in role_concentration; roles are {list(ROLES)}")
        bad = {k: v for k, v in concentration.items() if not (math.isfinite(v) and v > 0)}
        if bad:
            raise ValueError(f"role_concentration values must be finite and > 0, got {bad}")
        for name in ("p_a_range", "base_rate_range"):
            lo, hi = getattr(self, name)
            if not 0 < lo <= hi < 1:
                raise ValueError(f"{name} must satisfy 0 < lo <= hi < 1, got {(lo, hi)}")


def random_draw(d: int, seed: int, prior: SCMPrior | None = None) -> SCMParams:
    """One SCM drawn from `prior` (SCMPrior's docstring); same (d, seed, prior), same parameters."""
    prior = SCMPrior() if prior is None else prior
    if int(d) != d or d < 1:
        raise ValueError(f"d must be a positive integer, got {d}")
    d = int(d)
    rng = np.random.default_rng(seed)
    concentration = dict(prior.role_concentration)
    roles_available = [r for r in ROLES if r in concentration]
    shares = rng.dirichlet([concentration[r] for r in roles_available])
    roles = ["predictive"] + [roles_available[i] for i in rng.choice(len(roles_available), d - 1, p=shares)]
    p = {
        "alpha": np.zeros(d),
        "beta": np.zeros(d),
        "gamma": np.zeros((d, d)),
        "eta": np.zeros(d),
        "sigma": np.ones(d),
        "w": np.zeros(d),
    }
    for j, role in enumerate(roles):
        if role in ("predictive", "predictive_proxy"):
            p["beta"][j] = rng.normal(0.0, prior.beta_sd)
            p["w"][j] = rng.normal(0.0, prior.w_sd)
            parents = [k for k in range(j) if roles[k] in ("predictive", "predictive_proxy")]
            for k in parents:
                if rng.random() < prior.gamma_prob:
                    p["gamma"][j, k] = rng.normal(0.0, prior.gamma_sd)
        if role in ("predictive_proxy", "proxy"):
            p["alpha"][j] = rng.normal(0.0, prior.alpha_sd)
        if role == "copy":
            p["gamma"][j, rng.integers(j)] = 1.0
            p["sigma"][j] = prior.copy_noise
        if role == "leak":
            p["eta"][j] = rng.normal(0.0, prior.eta_sd)
    return SCMParams(
        p_a=float(rng.uniform(*prior.p_a_range)),
        c=float(rng.normal(0.0, prior.c_sd)),
        delta=float(rng.normal(0.0, prior.delta_sd)),
        sigma_y=1.0,
        base_rate=float(rng.uniform(*prior.base_rate_range)),
        roles=tuple(roles),
        **p,
    )
