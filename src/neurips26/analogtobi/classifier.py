r"""The circuit-type classifier behind the paper's type accuracy (AnalogToBi, Kim et al. 2026, arXiv 2603.08720,
Sec. 4.1: a GAT trained on the real circuits predicts the type of each generated circuit). At smoke and quick scale
ours is a Weisfeiler-Lehman subtree classifier (Shervashidze et al. 2011): each circuit's labelled bipartite graph
(:func:`.generate.graph_of`) becomes the counts of its WL node labels after 0..``iterations`` refinements
(networkx's ``weisfeiler_lehman_subgraph_hashes``), hashed into ``n_features`` columns
(scikit-learn's ``FeatureHasher``), then log(1 + count) per label, L2-normalised, and a multinomial logistic regression.
Ports are read verbatim (``VIN1``, ``IOUT2``) or, with ``canonical_ports``, by class (``VIN``, ``IOUT``); both are
reported, since port names alone can give a circuit's type away. It is trained on the training split and its
accuracy on the held-out split is reported beside the type accuracy it
scores, since a generated circuit's type is only as good as the classifier's.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from .generate import graph_of
from .netlist import Circuit

__all__ = ["TypeClassifier", "wl_counts"]


def wl_counts(circuit: Circuit, iterations: int, canonical_ports: bool = False) -> Counter:
    """The multiset of WL labels of the circuit's nodes over iterations 0..``iterations`` (ports by name, or by class
    with ``canonical_ports``)."""
    import networkx as nx

    g = graph_of(circuit, canonical_ports)
    counts = Counter(f"0:{data['label']}" for _, data in g.nodes(data=True))
    if iterations:
        hashes = nx.weisfeiler_lehman_subgraph_hashes(g, node_attr="label", edge_attr="label", iterations=iterations)
        for labels in hashes.values():
            counts.update(f"{k + 1}:{h}" for k, h in enumerate(labels))
    return counts


@dataclass
class TypeClassifier:
    iterations: int = 3
    n_features: int = 4096
    C: float = 1.0
    seed: int = 0
    canonical_ports: bool = False  # ports by class (VIN1 and VIN2 alike), so port names cannot give the type away

    def _matrix(self, circuits: list[Circuit]):
        from sklearn.feature_extraction import FeatureHasher
        from sklearn.preprocessing import normalize

        hasher = FeatureHasher(n_features=self.n_features, input_type="dict", alternate_sign=False)
        x = hasher.transform(
            {k: float(np.log1p(v)) for k, v in wl_counts(c, self.iterations, self.canonical_ports).items()}
            for c in circuits
        )
        return normalize(x)

    def fit(self, circuits: list[Circuit], types: list[str]) -> TypeClassifier:
        from sklearn.linear_model import LogisticRegression

        if len(set(types)) < 2:
            raise ValueError(f"the type classifier needs at least two types, got {sorted(set(types))}")
        self.model_ = LogisticRegression(C=self.C, max_iter=2000, random_state=self.seed)
        self.model_.fit(self._matrix(circuits), types)
        return self

    def predict(self, circuits: list[Circuit]) -> list[str]:
        if not circuits:
            return []
        return [str(t) for t in self.model_.predict(self._matrix(circuits))]
