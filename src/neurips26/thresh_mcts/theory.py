r"""Lower bound, optimal weights, GLR statistic for thresholding MCTS, and an LP check.

The paper (arXiv:2601.22600) was not available beyond its abstract: the recursion below is our derivation of
the Track-and-Stop lower bound of Garivier and Kaufmann (2016, Theorem 1) for the tree's answer, checked
against the brute-force linear program of step 2 (claim M7).

Derivation
==========
Setting. A MAX/MIN tree with leaves l = 0..K-1 of means mu_l, a threshold theta, the root value
V(mu). The answer is the side ``V(mu) >= theta`` (">=") or ``V(mu) < theta`` ("<"). Rewards are
Bernoulli (``d = kl``) or Gaussian with sigma 1 (``d(x, y) = (x - y)^2 / 2``);
``d_l = d(mu_l, theta)``.

1. The side of a node is a monotone Boolean function of the sides of the leaves:
   ``max(a, b) >= theta  <=>  a >= theta OR b >= theta`` and ``min(a, b) >= theta <=> AND``.
   So the root's side under any alternative lambda only depends on which leaves sit on which side
   of theta, and the tree is a read-once AND/OR formula of the leaf sides.

2. Alternatives.
   ``1 / T*(mu) = sup_w inf_{lambda: side(V(lambda)) != side(V(mu))} sum_l w_l d(mu_l, lambda_l)``.
   Moving a leaf within its own side changes nothing (step 1) and costs > 0, so an optimal
   alternative only moves a set S of leaves across theta, each to theta itself (the cheapest point
   of the other side, reached in the limit; a leaf moved *to* theta counts as flipped: "ties count
   as flipped"). Leaf l then costs ``w_l d_l``, the alternative ``sum_{l in S} w_l d_l``. Call S a
   *flip set* if flipping the sides of its leaves flips the root's side; since the costs are >= 0,
   only the *minimal* flip sets matter:

       z(w) = min_{S minimal flip set} sum_{l in S} w_l d_l,     T* = 1 / max_{w in simplex} z(w).

   This is what :func:`lp_characteristic_time` solves by linear programming (variables w and z).

3. Node roles. For a node n on side s(n): a MAX node on ">=" (or a MIN node on "<") is an
   *exists-node*: one child on its side certifies it, and to flip it *every* child on its side must
   flip (children on the other side already are). A MIN node on ">=" (or a MAX node on "<") is a
   *forall-node*: all its children are on its side, and flipping *one* child flips it. Because the
   subtrees have disjoint leaves, the cheapest flip of a node is

       C_w(leaf l) = w_l d_l,
       C_w(exists) = sum_{same-side c} C_w(c),     C_w(forall) = min_c C_w(c),

   and the minimal flip sets are: a leaf {l}; at a forall-node, the union of the children's lists;
   at an exists-node, one minimal flip set of every same-side child, joined (a Cartesian product).

4. Maximising over w. C_w of a subtree is positively homogeneous of degree 1 in the weights of its
   leaves, so with budget b the best value is ``b * v(n)``. A sum of children is maximised by
   putting the whole budget on the best child: ``v(exists) = max_{same-side c} v(c)``. A min of
   children is maximised by equalising ``b_c v(c)``, i.e. ``b_c ∝ 1 / v(c)``, which gives
   ``1 / v(forall) = sum_c 1 / v(c)``. With ``T*(n) = 1 / v(n)``:

       T*(leaf) = 1 / d(mu_l, theta)
       T*(exists-node) = min_{children c on the same side} T*(c)
       T*(forall-node) = sum_{children c} T*(c)
       w*_l = T*(l) / T*(root) for the leaves of the argmin certificate, 0 otherwise.

   The certificate is the subtree reached from the root by taking every child at forall-nodes and
   the argmin child at exists-nodes; ties in ``T*(c)`` (exact float equality) are broken by the
   smallest leaf index in ``c``'s subtree (deterministic, as the equivalence test of the tracking
   rules needs). The weights sum to one because ``T*(forall) = sum_c T*(c)``.

   Hand check: a MAX node over two leaves with means above theta. It is an exists-node on ">=";
   the only minimal flip set is {1, 2} (both must go below theta), ``z(w) = w_1 d_1 + w_2 d_2``,
   whose maximum over the simplex is ``max(d_1, d_2)``: **T* = min(1/d_1, 1/d_2)**, with all the
   weight on the leaf further from theta (certifying one leaf is enough). A MIN node over the same
   leaves is a forall-node with flip sets {1} and {2}: ``z(w) = min(w_1 d_1, w_2 d_2)``, maximised
   at ``w ∝ (1/d_1, 1/d_2)``: **T* = 1/d_1 + 1/d_2**.

5. GLR statistic. With empirical means mu_hat and counts N, the GLR against the empirical side is
   ``inf_{lambda in Alt(mu_hat)} sum_l N_l d(mu_hat_l, lambda_l) = C_N(root)`` evaluated at mu_hat,
   i.e. the same recursion with the roles of sum and min swapped relative to T*:

       Z(leaf) = N_l d(mu_hat_l, theta)
       Z(exists-node) = sum_{same-side children c} Z(c)
       Z(forall-node) = min_c Z(c)

   Stop when ``Z(root) > beta(t, delta)`` and answer the empirical side of the root. Consistency
   check: with ``N = t w*(mu)`` and ``mu_hat = mu``, ``Z(root) = t / T*(mu)``.

If ``V(mu) = theta`` the problem is not identifiable (:func:`check_problem` rejects it);
:func:`characteristic_time` itself accepts it (empirical means can sit exactly on theta) and returns
``t_star = inf`` with all-zero weights, computed without division-by-zero warnings.
"""

from __future__ import annotations

import itertools
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from neurips26.common.validation import check_choice, check_int, check_number

from .tree import Tree, node_values

__all__ = [
    "KINDS",
    "Certificate",
    "beta_threshold",
    "characteristic_time",
    "characteristic_time_batch",
    "check_problem",
    "divergence",
    "glr_statistic",
    "glr_statistic_batch",
    "kl_bernoulli",
    "lp_characteristic_time",
    "minimal_flip_sets",
    "node_roles",
]

KINDS = ("bernoulli", "gaussian")
_EPS = 1e-12
_IDENTIFIABILITY_TOL = 1e-9


def _check_kind(kind: Any) -> str:
    return check_choice("kind", kind, KINDS)


def divergence(x: Any, y: Any, kind: str) -> np.ndarray:
    """Elementwise ``d(x, y)``: Bernoulli KL (both clipped to [1e-12, 1-1e-12]) or (x - y)^2 / 2."""
    _check_kind(kind)
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if kind == "gaussian":
        return 0.5 * (x - y) ** 2
    x = np.clip(x, _EPS, 1.0 - _EPS)
    y = np.clip(y, _EPS, 1.0 - _EPS)
    out = x * np.log(x / y) + (1.0 - x) * np.log((1.0 - x) / (1.0 - y))
    return np.maximum(out, 0.0)  # rounding can give -1e-17 at x == y


def _check_theta(theta: Any, kind: str) -> float:
    if isinstance(theta, bool) or not isinstance(theta, numbers.Real):
        raise ValueError(f"theta must be a real scalar, got {theta!r}")
    theta = float(theta)
    if not np.isfinite(theta):
        raise ValueError(f"theta must be finite, got {theta}")
    if kind == "bernoulli" and not 0.0 < theta < 1.0:
        raise ValueError(f"theta must lie in (0, 1) for Bernoulli rewards, got {theta}")
    return theta


def _check_means(tree: Tree, mu: Any, kind: str, name: str = "mu", ndim: int | None = None) -> np.ndarray:
    if not isinstance(tree, Tree):
        raise ValueError(f"tree must be a Tree, got {type(tree).__name__}")
    arr = np.asarray(mu, dtype=float)
    if arr.ndim == 0 or arr.shape[-1] != tree.n_leaves:
        raise ValueError(f"{name} must have last dimension n_leaves={tree.n_leaves}, got shape {arr.shape}")
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        bad = np.argwhere(~np.isfinite(arr))[0].tolist()
        raise ValueError(f"{name} must be finite; entry {bad} is {arr[tuple(bad)]}")
    if kind == "bernoulli" and ((arr < 0.0) | (arr > 1.0)).any():
        bad = np.argwhere((arr < 0.0) | (arr > 1.0))[0].tolist()
        raise ValueError(f"Bernoulli {name} must lie in [0, 1]; entry {bad} is {arr[tuple(bad)]}")
    return arr


def check_problem(tree: Tree, mu: Any, theta: float, kind: str) -> float:
    """Validate a problem instance; returns the root value ``V(mu)``.

    Errors: unknown kind, mu of the wrong shape or non-finite, Bernoulli mu outside [0, 1], theta
    not finite or (Bernoulli) outside (0, 1), and ``|V(mu) - theta| < 1e-9`` (not identifiable).
    """
    kind = _check_kind(kind)
    mu = _check_means(tree, mu, kind, ndim=1)
    theta = _check_theta(theta, kind)
    v = float(node_values(tree, mu)[0])
    if abs(v - theta) < _IDENTIFIABILITY_TOL:
        raise ValueError(
            "not identifiable: the root value equals the threshold "
            f"(V(mu)={v!r}, theta={theta!r}); the sample complexity is infinite"
        )
    return v


def node_roles(tree: Tree, mu: Any, theta: float) -> tuple[np.ndarray, np.ndarray]:
    """``(side, exists)``, both ``(..., n_nodes)`` bool: side is value >= theta, exists the role.

    exists is True for MAX nodes on ">=" and MIN nodes on "<" (meaningless but defined for leaves).
    """
    side = node_values(tree, mu) >= theta
    exists = np.where(tree.is_max, side, ~side)
    return side, exists


def _same_side(side: np.ndarray, lvl) -> np.ndarray:
    return side[..., lvl.children] == side[..., lvl.nodes][..., lvl.segment]


def _t_star_dp(tree: Tree, d_leaf: np.ndarray, side: np.ndarray, exists: np.ndarray) -> np.ndarray:
    node_t = np.empty(side.shape, dtype=float)
    with np.errstate(divide="ignore"):
        node_t[..., tree.leaves] = 1.0 / d_leaf
    for lvl in tree.levels:
        ct = node_t[..., lvl.children]
        ex = np.minimum.reduceat(np.where(_same_side(side, lvl), ct, np.inf), lvl.offsets, axis=-1)
        fa = np.add.reduceat(ct, lvl.offsets, axis=-1)
        node_t[..., lvl.nodes] = np.where(exists[..., lvl.nodes], ex, fa)
    return node_t


def _certificate_mask(tree: Tree, node_t: np.ndarray, side: np.ndarray, exists: np.ndarray) -> np.ndarray:
    """(..., n_nodes) bool: nodes of the argmin certificate (ties -> smallest leaf index)."""
    in_cert = np.zeros(side.shape, dtype=bool)
    in_cert[..., 0] = True
    big = np.iinfo(np.int64).max
    for lvl in reversed(tree.levels):
        ct = node_t[..., lvl.children]
        cand = _same_side(side, lvl) & (ct == node_t[..., lvl.nodes][..., lvl.segment])
        key = np.where(cand, tree.min_leaf[lvl.children], big)
        best = np.minimum.reduceat(key, lvl.offsets, axis=-1)
        chosen = cand & (key == best[..., lvl.segment])
        take = np.where(exists[..., lvl.nodes][..., lvl.segment], chosen, True)
        in_cert[..., lvl.children] = in_cert[..., lvl.nodes][..., lvl.segment] & take
    return in_cert


@dataclass(frozen=True, eq=False)
class Certificate:
    """Result of :func:`characteristic_time`."""

    t_star: float  # T*(mu); inf when not identifiable
    weights: np.ndarray  # (K,) optimal w*, sums to 1 on the certificate, 0 elsewhere; all 0 if t_star is inf
    side: np.ndarray  # (n_nodes,) bool, node value >= theta
    node_t: np.ndarray  # (n_nodes,) T* of every subtree

    @property
    def support(self) -> np.ndarray:
        """Leaf indices with positive weight."""
        return np.flatnonzero(self.weights > 0)


def _characteristic(tree: Tree, mu: np.ndarray, theta: float, kind: str):
    side, exists = node_roles(tree, mu, theta)
    d_leaf = divergence(mu, theta, kind)
    node_t = _t_star_dp(tree, d_leaf, side, exists)
    in_cert = _certificate_mask(tree, node_t, side, exists)
    root_t = node_t[..., 0]
    finite = np.isfinite(root_t)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(
            in_cert[..., tree.leaves] & finite[..., None],
            node_t[..., tree.leaves] / root_t[..., None],
            0.0,
        )
    return root_t, w, side, node_t


def characteristic_time(tree: Tree, mu: Any, theta: float, kind: str) -> Certificate:
    """``T*(mu)``, the optimal weights ``w*`` and the per-node ``T*`` (the DP of the docstring).

    Validates shapes and ranges (kind, Bernoulli mu in [0, 1], theta) but not identifiability:
    ``V(mu) == theta`` gives ``t_star = inf`` and zero weights.
    """
    kind = _check_kind(kind)
    mu = _check_means(tree, mu, kind, ndim=1)
    theta = _check_theta(theta, kind)
    root_t, w, side, node_t = _characteristic(tree, mu, theta, kind)
    return Certificate(t_star=float(root_t), weights=w, side=side, node_t=node_t)


def characteristic_time_batch(tree: Tree, mu: Any, theta: float, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised over runs: ``mu`` of shape ``(R, K)`` -> ``(t_star (R,), weights (R, K))``."""
    kind = _check_kind(kind)
    mu = _check_means(tree, mu, kind, ndim=2)
    theta = _check_theta(theta, kind)
    root_t, w, _, _ = _characteristic(tree, mu, theta, kind)
    return root_t, w


def _check_counts(tree: Tree, counts: Any, shape: tuple[int, ...]) -> np.ndarray:
    n = np.asarray(counts, dtype=float)
    if n.shape != shape:
        raise ValueError(f"counts must have the shape of mu_hat {shape}, got {n.shape}")
    if not np.isfinite(n).all() or (n < 0).any():
        raise ValueError("counts must be finite and non-negative")
    return n


def _glr(tree: Tree, mu_hat: np.ndarray, counts: np.ndarray, theta: float, kind: str):
    side, exists = node_roles(tree, mu_hat, theta)
    z = np.empty(side.shape, dtype=float)
    z[..., tree.leaves] = counts * divergence(mu_hat, theta, kind)
    for lvl in tree.levels:
        cz = z[..., lvl.children]
        ex = np.add.reduceat(np.where(_same_side(side, lvl), cz, 0.0), lvl.offsets, axis=-1)
        fa = np.minimum.reduceat(cz, lvl.offsets, axis=-1)
        z[..., lvl.nodes] = np.where(exists[..., lvl.nodes], ex, fa)
    return z[..., 0], side[..., 0]


def glr_statistic(tree: Tree, mu_hat: Any, counts: Any, theta: float, kind: str) -> tuple[float, bool]:
    """``(Z(root), empirical side of the root)``; ``Z`` is the swapped DP of the module docstring.

    ``counts`` may be fractional (e.g. ``t * w``). Leaves with ``mu_hat == theta`` or zero counts
    contribute 0.
    """
    kind = _check_kind(kind)
    mu_hat = _check_means(tree, mu_hat, kind, name="mu_hat", ndim=1)
    counts = _check_counts(tree, counts, mu_hat.shape)
    theta = _check_theta(theta, kind)
    z, side = _glr(tree, mu_hat, counts, theta, kind)
    return float(z), bool(side)


def glr_statistic_batch(tree: Tree, mu_hat: Any, counts: Any, theta: float, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised over runs: ``(R, K)`` means and counts -> ``(Z (R,), side (R,) bool)``."""
    kind = _check_kind(kind)
    mu_hat = _check_means(tree, mu_hat, kind, name="mu_hat", ndim=2)
    counts = _check_counts(tree, counts, mu_hat.shape)
    theta = _check_theta(theta, kind)
    return _glr(tree, mu_hat, counts, theta, kind)


def beta_threshold(t: Any, delta: float, n_leaves: int | None = None, conservative: bool = False):
    """Stopping threshold ``ln((1 + ln t) / delta)``; ``ln(K (1 + ln t) / delta)`` if conservative.

    ``t >= 1`` (scalar -> float, array -> array); ``delta`` in (0, 0.5); ``n_leaves`` is required
    (and only used) when ``conservative`` is True.
    """
    check_number("delta", delta, 0.0, 0.5, low_open=True, high_open=True)
    t_arr = np.asarray(t, dtype=float)
    if not np.isfinite(t_arr).all() or (t_arr < 1).any():
        raise ValueError(f"t must be finite and >= 1, got {t!r}")
    scale = 1.0
    if conservative:
        scale = float(check_int("n_leaves", n_leaves, 1))
    out = np.log(scale * (1.0 + np.log(t_arr)) / float(delta))
    return float(out) if out.ndim == 0 else out


def null_threshold(t: Any, n_leaves: int | None = None, conservative: bool = False):
    """The stopping threshold without its confidence term: ``beta(t, delta) + ln(delta)``, i.e. ``ln(1 + ln t)``
    (``ln(K (1 + ln t))`` if conservative). A GLR rule stopped here ignores delta: claim M1's null, the same runs
    stopped without the calibration that makes them delta-correct."""
    t_arr = np.asarray(t, dtype=float)
    if not np.isfinite(t_arr).all() or (t_arr < 1).any():
        raise ValueError(f"t must be finite and >= 1, got {t!r}")
    scale = float(check_int("n_leaves", n_leaves, 1)) if conservative else 1.0
    out = np.log(scale * (1.0 + np.log(t_arr)))
    return float(out) if out.ndim == 0 else out


def kl_bernoulli(p: float, q: float) -> float:
    """``kl(p, q)`` of Bernoulli means; ``T* kl(delta, 1 - delta)`` is the lower bound on the expected stopping
    time of a delta-correct rule (Garivier and Kaufmann 2016, Theorem 1)."""
    return float(p * np.log(p / q) + (1 - p) * np.log((1 - p) / (1 - q)))


# ------------------------------------------------------------------------------------------------
# brute force: minimal flip sets and the LP  z = max_w min_S sum_{l in S} w_l d_l


def _flip_sets_bruteforce(tree: Tree, leaf_side: np.ndarray) -> list[tuple[int, ...]]:
    """All 2^K leaf subsets: flip their sides, evaluate the AND/OR tree, keep minimal flippers."""
    k = tree.n_leaves
    masks = np.arange(2**k, dtype=np.int64)
    bits = ((masks[:, None] >> np.arange(k)) & 1).astype(bool)  # (2^K, K)
    flipped_sides = (leaf_side[None, :] ^ bits).astype(float)  # 1.0 = ">=", MAX = OR, MIN = AND
    root_side = node_values(tree, flipped_sides)[:, 0] >= 0.5
    base = bool(node_values(tree, leaf_side.astype(float))[0] >= 0.5)
    flips = root_side != base
    minimal = flips.copy()
    for ell in range(k):
        has = bits[:, ell]
        minimal &= ~has | ~flips[masks ^ (1 << ell)]
    return [tuple(np.flatnonzero(bits[m]).tolist()) for m in np.flatnonzero(minimal)]


def _flip_sets_structural(tree: Tree, side: np.ndarray, exists: np.ndarray) -> list[tuple[int, ...]]:
    """Minimal flip sets by the recursion of the docstring (forall: union; exists: product)."""
    sets: dict[int, list[tuple[int, ...]]] = {}
    for node in tree.order:
        node = int(node)
        kids = tree.children[node]
        if not kids:
            sets[node] = [(int(tree.leaf_of_node[node]),)]
        elif exists[node]:
            parts = [sets[c] for c in kids if side[c] == side[node]]
            sets[node] = [tuple(sorted(itertools.chain(*combo))) for combo in itertools.product(*parts)]
        else:
            sets[node] = [s for c in kids for s in sets[c]]
    return sorted(sets[0])


def minimal_flip_sets(
    tree: Tree, mu: Any, theta: float, method: str = "auto", max_bruteforce_leaves: int = 14
) -> list[tuple[int, ...]]:
    """Minimal sets of leaves whose moving to theta flips the root's side (ties count as flipped).

    ``method``: "bruteforce" (all 2^K subsets, independent of the DP's reasoning), "structural" (the
    recursion), or "auto" (bruteforce when K <= max_bruteforce_leaves).
    """
    mu = np.asarray(mu, dtype=float)
    if not isinstance(tree, Tree) or mu.shape != (tree.n_leaves,):
        raise ValueError(f"mu must have shape (n_leaves,), got {mu.shape}")
    if method == "auto":
        method = "bruteforce" if tree.n_leaves <= max_bruteforce_leaves else "structural"
    if method == "bruteforce":
        if tree.n_leaves > 20:
            raise ValueError(f"bruteforce enumeration needs n_leaves <= 20, got {tree.n_leaves}")
        return _flip_sets_bruteforce(tree, mu >= theta)
    if method == "structural":
        side, exists = node_roles(tree, mu, theta)
        return _flip_sets_structural(tree, side, exists)
    raise ValueError(f"method must be 'auto', 'bruteforce' or 'structural', got {method!r}")


def lp_characteristic_time(tree: Tree, mu: Any, theta: float, kind: str, method: str = "auto") -> float:
    """``1/z``, ``z = max_{w in simplex} min_S sum_{l in S} w_l d_l`` over minimal flip sets S.

    Solved with ``scipy.optimize.linprog`` (HiGHS).

    For small trees (the flip sets are enumerated). Returns inf when some flip set costs 0.
    """
    kind = _check_kind(kind)
    mu = _check_means(tree, mu, kind, ndim=1)
    theta = _check_theta(theta, kind)
    d = divergence(mu, theta, kind)
    sets = minimal_flip_sets(tree, mu, theta, method=method)
    k = tree.n_leaves
    a = np.zeros((len(sets), k))
    for i, s in enumerate(sets):
        a[i, list(s)] = d[list(s)]
    if (a.sum(axis=1) <= 0).any():
        return float("inf")
    scale = a.max()
    a = a / scale  # conditioning: d can span orders of magnitude
    # variables x = (w_0..w_{K-1}, z); maximise z  s.t.  z - a_S . w <= 0,  sum w = 1,  w >= 0
    c = np.zeros(k + 1)
    c[-1] = -1.0
    a_ub = np.hstack([-a, np.ones((len(sets), 1))])
    a_eq = np.concatenate([np.ones(k), [0.0]])[None, :]
    from scipy.optimize import linprog  # here: the parse-time config check reaches this module

    res = linprog(
        c,
        A_ub=a_ub,
        b_ub=np.zeros(len(sets)),
        A_eq=a_eq,
        b_eq=[1.0],
        bounds=[(0, None)] * k + [(0, None)],
        method="highs",
        options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
    )
    if res.status != 0:
        raise RuntimeError(f"linprog failed: {res.message}")
    z = -res.fun * scale
    return float("inf") if z <= 0 else 1.0 / z
