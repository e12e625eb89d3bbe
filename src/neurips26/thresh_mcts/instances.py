"""Problem instances, their characteristic times, and seeded reward tapes.

The paper's instances are unknown (only its abstract was available), so these are ours.

An instance is a JSON-able dict::

    {"id", "depth", "branching", "kind", "tree": to_records(tree), "mu": [...], "theta", "value",
     "t_star", "n_leaves", "gap", "seed", "source"}

- I1..I3 are fixed complete trees with alternating labels (root MAX) and the hand-picked Bernoulli
  means of :data:`FIXED_INSTANCES` (theta = 0.5); ``kind="gaussian"`` gives their sigma-1 variants
  (same means).
- R-type instances are random complete trees with ``mu ~ U(0.2, 0.8)`` and theta placed at distance
  ``gap`` from the root value, on a random side; draws with ``T* > t_star_max`` are redrawn.
- User trees (``instances.json``) go through :func:`validate_instance`.

:func:`theory_table` gives every instance's ``T*``, ``w*`` and lower bound ``T* kl(delta, 1 - delta)``.

A reward tape fixes the randomness of a run: ``tape[l, j]`` is the reward of the j-th pull of
leaf l, so that every algorithm (and both implementations of one) sees the same rewards.
"""

from __future__ import annotations

import json
import numbers
from typing import TYPE_CHECKING, Any

import numpy as np

from neurips26.common.validation import check_choice, check_int, check_number

from .theory import KINDS, characteristic_time, check_problem, kl_bernoulli
from .tree import Tree, complete_tree, from_records, to_records, value

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "DEFAULT_RANDOM_SPECS",
    "FIXED_INSTANCES",
    "fixed_instance",
    "instance_problem",
    "instances_frame",
    "make_instances",
    "random_instance",
    "reward_tape",
    "theory_table",
    "validate_instance",
]

FIXED_INSTANCES: dict[str, dict[str, Any]] = {
    # MAX -> 3 MIN -> 9 leaves; V = 0.6 (two MIN children above theta compete for the certificate)
    "I1": {
        "depth": 2,
        "branching": 3,
        "theta": 0.5,
        "mu": [0.70, 0.65, 0.60, 0.45, 0.80, 0.70, 0.58, 0.62, 0.75],
    },
    # MAX -> 2 MIN -> 4 MAX -> 8 leaves; V = 0.44 < theta
    "I2": {
        "depth": 3,
        "branching": 2,
        "theta": 0.5,
        "mu": [0.30, 0.42, 0.55, 0.65, 0.62, 0.70, 0.35, 0.44],
    },
    # MAX -> 3 MIN -> 9 MAX -> 27 leaves; V = 0.59
    "I3": {
        "depth": 3,
        "branching": 3,
        "theta": 0.5,
        "mu": [
            0.32, 0.52, 0.58, 0.27, 0.33, 0.76, 0.29, 0.32, 0.77,
            0.59, 0.45, 0.53, 0.61, 0.40, 0.33, 0.68, 0.62, 0.53,
            0.70, 0.55, 0.79, 0.36, 0.55, 0.52, 0.44, 0.58, 0.38,
        ],
    },
}  # fmt: skip

# random complete trees R1..R6: depth in {2, 3}, branching in {2, 3, 4}, gap in {0.05, 0.1}
DEFAULT_RANDOM_SPECS: tuple[dict[str, Any], ...] = (
    {"id": "R1", "depth": 2, "branching": 2, "gap": 0.1},
    {"id": "R2", "depth": 2, "branching": 3, "gap": 0.05},
    {"id": "R3", "depth": 2, "branching": 4, "gap": 0.1},
    {"id": "R4", "depth": 3, "branching": 2, "gap": 0.05},
    {"id": "R5", "depth": 3, "branching": 3, "gap": 0.1},
    {"id": "R6", "depth": 3, "branching": 4, "gap": 0.05},
)


def _int(x: Any, name: str, low: int) -> int:
    return int(check_int(name, x, low))


def _kind(kind: Any) -> str:
    return check_choice("kind", kind, KINDS)


def _record(inst_id, tree: Tree, mu, theta, kind, *, depth=None, branching=None, seed=None, source="user"):
    v = check_problem(tree, mu, theta, kind)
    cert = characteristic_time(tree, mu, theta, kind)
    return {
        "id": str(inst_id),
        "depth": int(tree.depth if depth is None else depth),
        "branching": int(max(len(c) for c in tree.children) if branching is None else branching),
        "kind": kind,
        "tree": to_records(tree),
        "mu": [float(m) for m in np.asarray(mu, dtype=float)],
        "theta": float(theta),
        "value": v,
        "t_star": float(cert.t_star),
        "n_leaves": tree.n_leaves,
        "gap": abs(v - float(theta)),
        "seed": None if seed is None else int(seed),
        "source": source,
    }


def fixed_instance(name: str, kind: str = "bernoulli", mu: list[float] | None = None, theta: float | None = None):
    """The fixed instance ``I1``/``I2``/``I3``; ``mu`` and ``theta`` override the built-in values.

    The id is ``name`` for Bernoulli rewards and ``name + "_gauss"`` for the Gaussian variant.
    """
    if name not in FIXED_INSTANCES:
        raise ValueError(f"unknown fixed instance {name!r}; expected one of {sorted(FIXED_INSTANCES)}")
    kind = _kind(kind)
    spec = FIXED_INSTANCES[name]
    tree = complete_tree(spec["depth"], spec["branching"], "MAX")
    mu = spec["mu"] if mu is None else mu
    theta = spec["theta"] if theta is None else theta
    inst_id = name if kind == "bernoulli" else f"{name}_gauss"
    return _record(
        inst_id,
        tree,
        mu,
        theta,
        kind,
        depth=spec["depth"],
        branching=spec["branching"],
        source="fixed",
    )


def random_instance(
    inst_id: str,
    depth: int,
    branching: int,
    gap: float,
    seed: int,
    kind: str = "bernoulli",
    root_label: str = "MAX",
    t_star_max: float = 5e4,
    mu_low: float = 0.2,
    mu_high: float = 0.8,
    max_tries: int = 1000,
) -> dict[str, Any]:
    """Random complete tree: ``mu ~ U(mu_low, mu_high)``, ``theta = V(mu) ± gap`` (random sign).

    Draws are repeated (same generator) until ``T* <= t_star_max`` and, for Bernoulli, theta lies
    in (0, 1).
    """
    depth = _int(depth, "depth", 1)
    branching = _int(branching, "branching", 1)
    seed = _int(seed, "seed", 0)
    kind = _kind(kind)
    check_number("gap", gap, 1e-9, 1.0, high_open=True)
    if not isinstance(t_star_max, numbers.Real) or not t_star_max > 0:
        raise ValueError(f"t_star_max must be positive, got {t_star_max!r}")
    if not mu_low < mu_high:
        raise ValueError(f"need mu_low < mu_high, got {mu_low}, {mu_high}")
    if kind == "bernoulli" and not 0.0 <= mu_low < mu_high <= 1.0:
        raise ValueError(f"Bernoulli means need 0 <= mu_low < mu_high <= 1, got {mu_low}, {mu_high}")
    tree = complete_tree(depth, branching, root_label)
    rng = np.random.default_rng(seed)
    for _ in range(max_tries):
        mu = rng.uniform(mu_low, mu_high, tree.n_leaves)
        v = value(tree, mu)
        theta = v + float(gap) * (1.0 if rng.random() < 0.5 else -1.0)
        if kind == "bernoulli" and not 0.0 < theta < 1.0:
            continue
        if characteristic_time(tree, mu, theta, kind).t_star > t_star_max:
            continue
        return _record(
            inst_id,
            tree,
            mu,
            theta,
            kind,
            depth=depth,
            branching=branching,
            seed=seed,
            source="random",
        )
    raise ValueError(
        f"no instance {inst_id!r} with T* <= {t_star_max} in {max_tries} draws "
        f"(depth={depth}, branching={branching}, gap={gap}, kind={kind}); raise t_star_max or gap"
    )


def validate_instance(inst: dict[str, Any] | pd.Series) -> dict[str, Any]:
    """Check a user-supplied instance (id, tree, mu, theta, kind); recompute its value and T*."""
    inst = dict(inst)
    missing = [k for k in ("id", "tree", "mu", "theta", "kind") if k not in inst]
    if missing:
        raise ValueError(f"instance {inst.get('id', '?')!r} misses keys {missing}")
    tree = from_records(inst["tree"])
    mu = json.loads(inst["mu"]) if isinstance(inst["mu"], str) else inst["mu"]
    try:
        kind = _kind(inst["kind"])
        seed = inst.get("seed")
        import pandas as pd  # here: the workflow's parse-time config check imports this module

        seed = None if seed is None or pd.isna(seed) else int(seed)
        source = inst.get("source", "user")
        return _record(inst["id"], tree, mu, inst["theta"], kind, seed=seed, source=source)
    except ValueError as err:
        raise ValueError(f"instance {inst['id']!r}: {err}") from err


def instance_problem(inst: dict[str, Any] | pd.Series) -> tuple[Tree, np.ndarray, float, str]:
    """``(tree, mu, theta, kind)`` from an instance dict or a row of :func:`instances_frame`."""
    tree = from_records(inst["tree"])
    mu = json.loads(inst["mu"]) if isinstance(inst["mu"], str) else inst["mu"]
    return tree, np.asarray(mu, dtype=float), float(inst["theta"]), str(inst["kind"])


def _seed_for(seed: int, index: int) -> int:
    return int(np.random.SeedSequence([seed, index]).generate_state(1)[0])


def make_instances(
    fixed: tuple[str, ...] | list[str] = ("I1", "I2", "I3"),
    random_specs: tuple[dict[str, Any], ...] | list[dict[str, Any]] = DEFAULT_RANDOM_SPECS,
    kinds: tuple[str, ...] | list[str] = ("bernoulli",),
    gaussian_fixed: bool = False,
    seed: int = 0,
    t_star_max: float = 5e4,
    user: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """The instance list (defaults: I1..I3 and R1..R6, Bernoulli, 9 instances).

    ``random_specs`` entries need ``id, depth, branching, gap`` and may set ``kind``,
    ``root_label``, ``seed`` and ``t_star_max``; without ``seed`` the i-th spec gets a seed derived
    from ``(seed, i)``. ``kinds`` applies to the fixed instances; ``gaussian_fixed=True`` adds the
    Gaussian variants ``I*_gauss``. ``user`` instances are validated and appended. Ids must be
    unique.
    """
    seed = _int(seed, "seed", 0)
    out = []
    for k in kinds:
        out += [fixed_instance(name, k) for name in fixed]
    if gaussian_fixed and "gaussian" not in kinds:
        out += [fixed_instance(name, "gaussian") for name in fixed]
    for i, spec in enumerate(random_specs):
        missing = [k for k in ("id", "depth", "branching", "gap") if k not in spec]
        if missing:
            raise ValueError(f"random instance spec {i} ({spec.get('id', '?')!r}) misses keys {missing}")
        out.append(
            random_instance(
                spec["id"],
                spec["depth"],
                spec["branching"],
                spec["gap"],
                seed=spec.get("seed", _seed_for(seed, i)),
                kind=spec.get("kind", "bernoulli"),
                root_label=spec.get("root_label", "MAX"),
                t_star_max=spec.get("t_star_max", t_star_max),
            )
        )
    out += [validate_instance(u) for u in (user or [])]
    ids = [inst["id"] for inst in out]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ValueError(f"duplicate instance ids: {dup}")
    return out


_COLUMNS = ["id", "depth", "branching", "kind", "n_leaves", "theta", "value", "gap", "t_star",
            "seed", "source", "mu", "tree"]  # fmt: skip


def instances_frame(instances: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per instance; ``mu`` and ``tree`` as JSON strings (Parquet-friendly)."""
    import pandas as pd

    rows = []
    for inst in instances:
        row = {k: inst.get(k) for k in _COLUMNS}
        row["mu"] = json.dumps([float(m) for m in inst["mu"]])
        row["tree"] = json.dumps(inst["tree"] if isinstance(inst["tree"], dict) else to_records(inst["tree"]))
        rows.append(row)
    df = pd.DataFrame(rows, columns=_COLUMNS)
    df["seed"] = df["seed"].astype("Int64")
    return df


def reward_tape(mu: Any, kind: str, length: int, seed: int) -> np.ndarray:
    """Seeded ``(K, length)`` float rewards, Bernoulli 0/1 or Gaussian ``N(mu_l, 1)``.

    ``tape[l, j]`` is the reward of the j-th pull (0-based) of leaf l.
    """
    kind = _kind(kind)
    length = _int(length, "length", 0)
    mu = np.asarray(mu, dtype=float)
    if mu.ndim != 1 or mu.size == 0:
        raise ValueError(f"mu must be a non-empty 1-d array of leaf means, got shape {mu.shape}")
    if not np.isfinite(mu).all():
        raise ValueError("mu must be finite")
    if kind == "bernoulli" and ((mu < 0) | (mu > 1)).any():
        raise ValueError(f"Bernoulli mu must lie in [0, 1], got {mu[(mu < 0) | (mu > 1)][0]}")
    return reward_draws(mu, kind, length, seed).astype(float)


def reward_draws(mu: np.ndarray, kind: str, length: int, seed: int) -> np.ndarray:
    """The draws of :func:`reward_tape` (checked arguments) before the cast to float: Bernoulli rewards as a
    boolean array, which fills a byte tape without a float64 copy."""
    rng = np.random.default_rng(seed)
    if kind == "bernoulli":
        return rng.random((mu.size, length)) < mu[:, None]
    return mu[:, None] + rng.standard_normal((mu.size, length))


def theory_table(instances: pd.DataFrame, deltas) -> pd.DataFrame:
    """One row per (instance, delta): ``T*`` and the optimal weights ``w*`` (a JSON list, rounded to 12 decimals)
    by the tree DP (:func:`theory.characteristic_time`), and the lower bound ``T* kl(delta, 1 - delta)``."""
    import pandas as pd

    rows = []
    for record in instances.to_dict("records"):
        tree, mu, theta, kind = instance_problem(record)
        cert = characteristic_time(tree, mu, theta, kind)
        rows += [
            {
                "instance": record["id"],
                "kind": kind,
                "n_leaves": tree.n_leaves,
                "t_star": cert.t_star,
                "weights": json.dumps(np.round(cert.weights, 12).tolist()),
                "delta": delta,
                "lower_bound": cert.t_star * kl_bernoulli(delta, 1 - delta),
            }
            for delta in deltas
        ]
    return pd.DataFrame(rows)
