"""MAX/MIN game trees for thresholding MCTS: construction, validation, values, serialisation.

A tree is given by per-node child lists (node 0 is the root) and per-node labels: ``"MAX"`` or
``"MIN"`` for internal nodes, ``"LEAF"`` for leaves. Leaves are indexed ``0..K-1`` in increasing
node-id order; ``mu[l]`` is the mean of leaf index ``l`` (node ``tree.leaves[l]``).

Bottom-up computations are vectorised level by level: for every depth (deepest first) the internal
nodes of that depth and their children, concatenated, are reduced with ``np.*.reduceat``. So a value
computation costs ``O(depth)`` numpy calls, and leading batch axes (many runs at once) come free.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from neurips26.common.validation import check_choice, check_int

__all__ = [
    "LABELS",
    "Level",
    "Tree",
    "complete_tree",
    "from_records",
    "make_tree",
    "node_values",
    "to_records",
    "value",
]

LABELS = ("MAX", "MIN", "LEAF")


@dataclass(frozen=True, eq=False)
class Level:
    """Internal nodes of one depth and their children, laid out for ``np.ufunc.reduceat``."""

    nodes: np.ndarray  # (m,) internal node ids at this depth, increasing
    children: np.ndarray  # (c,) their children concatenated in order
    offsets: np.ndarray  # (m,) start of each node's segment in ``children``
    segment: np.ndarray  # (c,) position in ``nodes`` of each child's parent
    is_max: np.ndarray  # (m,) bool, label of each node is MAX


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Tree:
    """A validated MAX/MIN tree. Build it with :func:`make_tree` or :func:`complete_tree`."""

    children: tuple[tuple[int, ...], ...]
    labels: tuple[str, ...]
    parent: np.ndarray
    leaves: np.ndarray
    leaf_of_node: np.ndarray
    depth_of_node: np.ndarray
    order: np.ndarray

    @property
    def n_leaves(self) -> int:
        return int(self.leaves.shape[0])

    @property
    def n_nodes(self) -> int:
        return len(self.children)

    @property
    def depth(self) -> int:
        return int(self.depth_of_node.max())

    @cached_property
    def is_leaf(self) -> np.ndarray:
        """(n_nodes,) bool."""
        return _readonly(self.leaf_of_node >= 0)

    @cached_property
    def is_max(self) -> np.ndarray:
        """(n_nodes,) bool, label is MAX (False for MIN nodes and leaves)."""
        return _readonly(np.array([lab == "MAX" for lab in self.labels], dtype=bool))

    @cached_property
    def min_leaf(self) -> np.ndarray:
        """(n_nodes,) smallest leaf index in each node's subtree (the tie-breaking key)."""
        out = np.full(self.n_nodes, np.iinfo(np.int64).max, dtype=np.int64)
        out[self.leaves] = np.arange(self.n_leaves)
        for node in self.order:
            kids = self.children[node]
            if kids:
                out[node] = min(out[c] for c in kids)
        return _readonly(out)

    @cached_property
    def levels(self) -> tuple[Level, ...]:
        """Internal nodes grouped by depth, deepest first (a bottom-up schedule)."""
        internal = np.flatnonzero(~self.is_leaf)
        out = []
        for d in sorted(set(self.depth_of_node[internal].tolist()), reverse=True):
            nodes = internal[self.depth_of_node[internal] == d]
            sizes = np.array([len(self.children[n]) for n in nodes], dtype=np.int64)
            kids = np.concatenate([np.asarray(self.children[n], dtype=np.int64) for n in nodes])
            offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
            segment = np.repeat(np.arange(len(nodes), dtype=np.int64), sizes)
            out.append(
                Level(
                    nodes=_readonly(nodes),
                    children=_readonly(kids),
                    offsets=_readonly(offsets),
                    segment=_readonly(segment),
                    is_max=_readonly(self.is_max[nodes].copy()),
                )
            )
        return tuple(out)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tree):
            return NotImplemented
        return self.children == other.children and self.labels == other.labels

    def __hash__(self) -> int:
        return hash((self.children, self.labels))

    def __repr__(self) -> str:
        return f"Tree(n_nodes={self.n_nodes}, n_leaves={self.n_leaves}, depth={self.depth})"


def _find_cycle(kids: list[list[int]]) -> list[int] | None:
    """A directed cycle of the child graph as a node list, or None (iterative DFS colouring)."""
    n = len(kids)
    colour = [0] * n  # 0 new, 1 on stack, 2 done
    for start in range(n):
        if colour[start]:
            continue
        stack = [(start, 0)]
        path = [start]
        colour[start] = 1
        while stack:
            node, i = stack[-1]
            if i < len(kids[node]):
                stack[-1] = (node, i + 1)
                c = kids[node][i]
                if colour[c] == 1:
                    return path[path.index(c) :] + [c]
                if colour[c] == 0:
                    colour[c] = 1
                    stack.append((c, 0))
                    path.append(c)
            else:
                colour[node] = 2
                stack.pop()
                path.pop()
    return None


def make_tree(children: list[list[int]], labels: list[str]) -> Tree:
    """Validate ``children``/``labels`` and build a :class:`Tree`.

    Raises ValueError naming the node for: a bad child id, a cycle, a shared child (a node with two
    parents, or listed twice), a root that has a parent, an unreachable node, an unknown label, an
    internal (MAX/MIN) node without children, or a LEAF with children.
    """
    if isinstance(children, (str, bytes)) or not hasattr(children, "__len__"):
        raise ValueError(f"children must be a list of child-id lists, got {type(children).__name__}")
    if isinstance(labels, (str, bytes)) or not hasattr(labels, "__len__"):
        raise ValueError(f"labels must be a list of strings, got {type(labels).__name__}")
    n = len(children)
    if n == 0:
        raise ValueError("children is empty: a tree needs at least the root node 0")
    if len(labels) != n:
        raise ValueError(f"labels has {len(labels)} entries but children has {n} nodes")
    kids: list[list[int]] = []
    for i, ch in enumerate(children):
        if isinstance(ch, (str, bytes)) or not hasattr(ch, "__iter__"):
            raise ValueError(f"children of node {i} must be a list of node ids, got {ch!r}")
        row = [int(check_int(f"child id of node {i}", c)) for c in ch]
        for c in row:
            if not 0 <= c < n:
                raise ValueError(f"node {i} has child id {c}, outside 0..{n - 1}")
        kids.append(row)
    labs = []
    for i, lab in enumerate(labels):
        if not isinstance(lab, str) or lab not in LABELS:
            raise ValueError(f"node {i} has unknown label {lab!r}; expected one of {LABELS}")
        labs.append(lab)

    cycle = _find_cycle(kids)
    if cycle is not None:
        raise ValueError("not a tree: cycle through nodes " + " -> ".join(map(str, cycle)))
    parent = np.full(n, -1, dtype=np.int64)
    for i, row in enumerate(kids):
        for c in row:
            if parent[c] >= 0:
                raise ValueError(f"not a tree: node {c} is a shared child (listed under node {parent[c]} and node {i})")
            parent[c] = i
    if parent[0] >= 0:
        raise ValueError(f"node 0 must be the root but it is a child of node {parent[0]}")
    # reachability from the root (BFS gives the depths and a top-down order)
    depth = np.full(n, -1, dtype=np.int64)
    depth[0] = 0
    bfs = [0]
    for node in bfs:
        for c in kids[node]:
            depth[c] = depth[node] + 1
            bfs.append(c)
    if len(bfs) != n:
        missing = [i for i in range(n) if depth[i] < 0]
        raise ValueError(f"node {missing[0]} is not reachable from the root (unreachable nodes: {missing})")
    for i in range(n):
        if labs[i] == "LEAF" and kids[i]:
            raise ValueError(f"node {i} is labelled LEAF but has children {kids[i]}")
        if labs[i] != "LEAF" and not kids[i]:
            raise ValueError(f"internal node {i} ({labs[i]}) has no children")

    leaves = np.array([i for i in range(n) if not kids[i]], dtype=np.int64)
    leaf_of_node = np.full(n, -1, dtype=np.int64)
    leaf_of_node[leaves] = np.arange(len(leaves))
    order = np.array(bfs[::-1], dtype=np.int64)
    return Tree(
        children=tuple(tuple(r) for r in kids),
        labels=tuple(labs),
        parent=_readonly(parent),
        leaves=_readonly(leaves),
        leaf_of_node=_readonly(leaf_of_node),
        depth_of_node=_readonly(depth),
        order=_readonly(order),
    )


def complete_tree(depth: int, branching: int, root_label: str = "MAX") -> Tree:
    """Complete ``branching``-ary tree of the given depth; labels alternate MAX/MIN by depth.

    Node ids are breadth-first: the leaves (depth ``depth``) are the last ``branching**depth`` ids.
    ``depth=0`` gives a single leaf.
    """
    depth = int(check_int("depth", depth, 0))
    branching = int(check_int("branching", branching, 1))
    check_choice("root_label", root_label, ("MAX", "MIN"))
    other = "MIN" if root_label == "MAX" else "MAX"
    children: list[list[int]] = []
    labels: list[str] = []
    next_id = 1
    for d in range(depth + 1):
        for _ in range(branching**d):
            if d == depth:
                children.append([])
                labels.append("LEAF")
            else:
                children.append(list(range(next_id, next_id + branching)))
                next_id += branching
                labels.append(root_label if d % 2 == 0 else other)
    return make_tree(children, labels)


def _leaf_array(tree: Tree, mu: Any, name: str = "mu") -> np.ndarray:
    if not isinstance(tree, Tree):
        raise ValueError(f"tree must be a Tree, got {type(tree).__name__}")
    arr = np.asarray(mu, dtype=float)
    if arr.ndim == 0 or arr.shape[-1] != tree.n_leaves:
        raise ValueError(f"{name} must have last dimension n_leaves={tree.n_leaves}, got shape {arr.shape}")
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN")
    return arr


def node_values(tree: Tree, mu: Any) -> np.ndarray:
    """Bottom-up MAX/MIN values of every node: ``(..., K)`` leaf means -> ``(..., n_nodes)``."""
    mu = _leaf_array(tree, mu)
    vals = np.empty(mu.shape[:-1] + (tree.n_nodes,), dtype=float)
    vals[..., tree.leaves] = mu
    for lvl in tree.levels:
        cv = vals[..., lvl.children]
        if lvl.is_max.all():
            vals[..., lvl.nodes] = np.maximum.reduceat(cv, lvl.offsets, axis=-1)
        elif not lvl.is_max.any():
            vals[..., lvl.nodes] = np.minimum.reduceat(cv, lvl.offsets, axis=-1)
        else:
            mx = np.maximum.reduceat(cv, lvl.offsets, axis=-1)
            mn = np.minimum.reduceat(cv, lvl.offsets, axis=-1)
            vals[..., lvl.nodes] = np.where(lvl.is_max, mx, mn)
    return vals


def value(tree: Tree, mu: Any) -> float:
    """Root value ``V(mu)`` of a single mean vector ``mu`` of shape (K,)."""
    mu = _leaf_array(tree, mu)
    if mu.ndim != 1:
        raise ValueError(f"mu must be one-dimensional (K,), got shape {mu.shape}; use node_values for batches")
    return float(node_values(tree, mu)[0])


def to_records(tree: Tree) -> dict[str, list]:
    """JSON-able dict ``{"children": [[...], ...], "labels": [...]}``."""
    if not isinstance(tree, Tree):
        raise ValueError(f"tree must be a Tree, got {type(tree).__name__}")
    return {"children": [list(c) for c in tree.children], "labels": list(tree.labels)}


def from_records(records: dict[str, Any] | str) -> Tree:
    """Inverse of :func:`to_records`; also accepts the JSON string of such a dict."""
    if isinstance(records, str):
        try:
            records = json.loads(records)
        except json.JSONDecodeError as err:
            raise ValueError(f"tree records string is not valid JSON: {err}") from err
    if not isinstance(records, dict) or "children" not in records or "labels" not in records:
        raise ValueError("tree records must be a dict with keys 'children' and 'labels'")
    return make_tree(records["children"], records["labels"])
