"""A fitted random forest as plain arrays, evaluated in numpy: the surrogate oracle is fitted once with
scikit-learn and then scored by every job without importing scikit-learn (about 1.2 s per job)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ForestArrays:
    """All trees' nodes in one table (tree t's nodes start at roots[t]); leaves have left = right = -1.
    `positive` is each node's class-1 fraction, which is what a tree's predict_proba returns at its leaf."""

    roots: np.ndarray
    left: np.ndarray
    right: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    positive: np.ndarray

    @classmethod
    def from_sklearn(cls, forest) -> ForestArrays:
        """From a fitted binary RandomForestClassifier (classes 0 and 1)."""
        roots, left, right, feature, threshold, positive = [], [], [], [], [], []
        offset = 0
        for estimator in forest.estimators_:
            tree = estimator.tree_
            roots.append(offset)
            leaf = tree.children_left < 0
            left.append(np.where(leaf, -1, tree.children_left + offset))
            right.append(np.where(leaf, -1, tree.children_right + offset))
            feature.append(np.where(leaf, 0, tree.feature))
            threshold.append(tree.threshold)
            value = tree.value[:, 0, :]
            positive.append(value[:, 1] / value.sum(axis=1))
            offset += tree.node_count
        return cls(
            *(
                np.asarray(a)
                for a in (
                    roots,
                    np.concatenate(left),
                    np.concatenate(right),
                    np.concatenate(feature),
                    np.concatenate(threshold),
                    np.concatenate(positive),
                )
            )
        )

    def predict_positive(self, x: np.ndarray) -> np.ndarray:
        """P(class 1) for each row of `x`: the mean over trees of the leaf's class-1 fraction. All trees descend
        together, one level per step (vectorised over samples and trees)."""
        x = np.asarray(x, dtype=np.float32)
        node = np.broadcast_to(self.roots, (len(x), len(self.roots))).copy()
        rows = np.arange(len(x))[:, None]
        active = self.left[node] >= 0
        while active.any():
            goes_left = x[rows, self.feature[node]] <= self.threshold[node]
            child = np.where(goes_left, self.left[node], self.right[node])
            node = np.where(active, child, node)
            active = self.left[node] >= 0
        return self.positive[node].mean(axis=1)
