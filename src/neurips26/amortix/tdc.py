"""TDC's GSK3B and JNK3 oracles as plain arrays, scored in numpy exactly as scikit-learn's predict_proba does.

The paper's objective (Hash-hh/GRXForm objective_predictor/tdc/kinase_mpo.py) calls PyTDC's `Oracle('GSK3B')` and
`Oracle('JNK3')`: RationaleRL's random forests, which TDC re-pickled for scikit-learn 0.23-1.0 (the `*_current.pkl`
files of Harvard Dataverse, config/sources.yaml `amortix/tdc`). Those pickles cannot be unpickled by scikit-learn
>= 1.3 (their tree nodes lack `missing_go_to_left`), so one job in its own environment (envs/tdc_sklearn.yaml,
scikit-learn 1.2.2, as the paper's code pins it) unpickles each file once and writes its trees as arrays
(:func:`forest_arrays`, :func:`save_forest`); every later job scores them here (:class:`TreeForest`) with numpy only.

Layout of a converted forest (.npz): all trees' nodes in one table, tree t's nodes at rows
``tree_offsets[t]:tree_offsets[t + 1]`` with tree-local child indices as scikit-learn stores them:
``children_left``, ``children_right`` (-1 at leaves), ``feature``, ``threshold`` (float64), ``value`` (nodes x
classes: class counts or, from scikit-learn 1.4 on, class fractions; both give the same probabilities), plus
``n_features`` and ``classes``.

Featurization as TDC's (tdc/chem_utils/oracle/oracle.py, gsk3b and jnk3): Morgan fingerprint radius 2, 2048 bits
(``AllChem.GetMorganFingerprintAsBitVect(mol, 2, nBits=2048)``) as a float64 vector, then
``predict_proba(...)[:, 1]``. This module imports rdkit only inside :func:`tdc_fingerprints`, so that the
conversion job's environment needs nothing beyond numpy, scikit-learn and rdkit.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

N_BITS = 2048
RADIUS = 2
FIELDS = ("children_left", "children_right", "feature", "threshold", "value")
TARGETS = ("gsk3b", "jnk3")
PICKLES = {"gsk3b": "gsk3b_current.pkl", "jnk3": "jnk3_current.pkl"}
# Third-party measurements of the Dataverse files (bytes, sha256), not TDC's: DumanHaoqian/Molecule-LLM-Benchmarking
# resources/chemcotbench/oracle_sources.json at d8fb0bd69f095da42f0c2e265acc3effc248bd0e. Logged as a cross-check,
# never enforced (the lock in config/sources.lock.yaml is the pin).
THIRD_PARTY = {
    "gsk3b_current.pkl": (27791877, "d3a20701b80e5179c88c3ad4dc3483dd7ab35c50dc055c6773a7f5b63e89b6d5"),
    "jnk3_current.pkl": (10888961, "cde8576fb4fa3f60b9f258ff9cf1b9ff346eb50d196d5cbbe25965efc1864889"),
}
# Scores TDC publishes for these molecules, rounded to two decimals: the GSK3B example of TDC's documentation
# (quoted in mims-harvard/TDC issue 205: [0.03, 0.0, 0.0]) and JNK3 of the first molecule in TDC issue 306 (0.01).
SELFTEST_SMILES = (
    "CC(C)(C)[C@H]1CCc2c(sc(NC(=O)COc3ccc(Cl)cc3)c2C(N)=O)C1",
    "CCNC(=O)c1ccc(NC(=O)N2CC[C@H](C)[C@H](O)C2)c(C)c1",
    "C[C@@H]1CCN(C(=O)CCCc2ccccc2)C[C@@H]1O",
)
PUBLISHED = {"gsk3b": (0.03, 0.0, 0.0), "jnk3": (0.01, None, None)}
# A converted forest must reproduce every published score to within 0.01: twice the half-width (0.005) of the
# two-decimal rounding, leaving room for one rounding step of a value near a boundary, far below the 0.5 that
# decides success. A wrong file, a wrong featurization or a broken conversion moves scores far more than that.
TOLERANCE = 0.01


class ConversionError(ValueError):
    """A forest that cannot be converted, or a converted forest that fails its self-test."""


def forest_arrays(forest) -> dict[str, np.ndarray]:
    """The trees of a fitted single-output RandomForestClassifier (any scikit-learn version, read through the
    attributes every version has: estimators_, classes_, and each tree_'s node arrays) as the arrays described
    in the module docstring."""
    classes = np.asarray(forest.classes_)
    if classes.ndim != 1:
        raise ConversionError(f"only single-output forests can be converted (classes_ {forest.classes_!r})")
    trees = [estimator.tree_ for estimator in forest.estimators_]
    if not trees:
        raise ConversionError("the forest has no fitted trees")
    n_features = {int(tree.n_features) for tree in trees}
    if len(n_features) != 1:
        raise ConversionError(f"the trees disagree on the number of features: {sorted(n_features)}")
    values = [np.asarray(tree.value, dtype=np.float64) for tree in trees]
    if any(v.ndim != 3 or v.shape[1] != 1 or v.shape[2] != len(classes) for v in values):
        raise ConversionError(f"tree values are not (nodes, 1, {len(classes)}): {[v.shape for v in values[:3]]}")
    counts = [int(tree.node_count) for tree in trees]
    return {
        "tree_offsets": np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        "children_left": np.concatenate([np.asarray(t.children_left, dtype=np.int64) for t in trees]),
        "children_right": np.concatenate([np.asarray(t.children_right, dtype=np.int64) for t in trees]),
        "feature": np.concatenate([np.asarray(t.feature, dtype=np.int64) for t in trees]),
        "threshold": np.concatenate([np.asarray(t.threshold, dtype=np.float64) for t in trees]),
        "value": np.concatenate([v[:, 0, :] for v in values]),
        "n_features": np.array(n_features.pop(), dtype=np.int64),
        "classes": classes,
    }


def save_forest(path, arrays: dict[str, np.ndarray]) -> None:
    """Write converted arrays to `path` (.npz, no pickled objects), replacing it atomically."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp.npz")
    np.savez(tmp, **arrays)
    os.replace(tmp, path)


def load_forest(path) -> TreeForest:
    """The forest written by save_forest (loaded without pickle)."""
    with np.load(path, allow_pickle=False) as data:
        return TreeForest({name: data[name] for name in data.files})


class TreeForest:
    """A converted random forest, scored in numpy: each tree routes a row left when x[feature] <= threshold
    (x as float32, as scikit-learn casts its input, compared in float64), its leaf's class values are normalised
    to fractions, and the forest's probability is the sum over trees in tree order divided by the number of
    trees, which is what RandomForestClassifier.predict_proba computes."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        missing = {"tree_offsets", "n_features", "classes", *FIELDS} - set(arrays)
        if missing:
            raise ConversionError(f"converted forest lacks {sorted(missing)}")
        self.arrays = dict(arrays)  # as converted (tdc_kinase stores these)
        offsets = np.asarray(arrays["tree_offsets"], dtype=np.int64)
        n_nodes = int(offsets[-1])
        self.classes = np.asarray(arrays["classes"])
        self.n_features = int(arrays["n_features"])
        value = np.asarray(arrays["value"], dtype=np.float64)
        fields = [np.asarray(arrays[name]) for name in FIELDS[:4]]
        if any(len(a) != n_nodes for a in fields) or value.shape != (n_nodes, len(self.classes)):
            raise ConversionError("converted forest: node arrays of different lengths")
        left, right, feature, threshold = fields
        tree_of_node = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
        leaf = left < 0
        self.roots = offsets[:-1]
        self.left = np.where(leaf, -1, left + offsets[tree_of_node])
        self.right = np.where(leaf, -1, right + offsets[tree_of_node])
        self.feature = np.where(leaf, 0, feature)
        self.threshold = threshold.astype(np.float64)
        normaliser = value.sum(axis=1, keepdims=True)
        normaliser[normaliser == 0.0] = 1.0
        self.fractions = value / normaliser
        if not leaf.any() or (~leaf & ((self.left < 0) | (self.right < 0))).any():
            raise ConversionError("converted forest: an inner node without two children")
        if (self.feature[~leaf] >= self.n_features).any() or (self.feature[~leaf] < 0).any():
            raise ConversionError("converted forest: a split on a feature outside [0, n_features)")

    @property
    def n_trees(self) -> int:
        return len(self.roots)

    def leaves(self, x: np.ndarray) -> np.ndarray:
        """(N, trees) the leaf each row reaches in each tree (global node indices)."""
        x = np.asarray(x, dtype=np.float32)
        if x.ndim != 2 or x.shape[1] != self.n_features:
            raise ValueError(f"expected rows of {self.n_features} features, got shape {x.shape}")
        node = np.broadcast_to(self.roots, (len(x), self.n_trees)).copy()
        rows = np.arange(len(x))[:, None]
        inner = self.left[node] >= 0
        while inner.any():
            goes_left = x[rows, self.feature[node]].astype(np.float64) <= self.threshold[node]
            node = np.where(inner, np.where(goes_left, self.left[node], self.right[node]), node)
            inner = self.left[node] >= 0
        return node

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        """(N, classes) class probabilities, as RandomForestClassifier.predict_proba."""
        leaves = self.leaves(x)
        total = np.zeros((len(leaves), len(self.classes)))
        for t in range(self.n_trees):  # in tree order, as scikit-learn accumulates
            total += self.fractions[leaves[:, t]]
        total /= self.n_trees
        return total

    def predict_active(self, x: np.ndarray) -> np.ndarray:
        """P(active): the probability of class 1 (TDC's predict_proba(...)[:, 1])."""
        column = np.flatnonzero(self.classes == 1)
        if len(column) != 1:
            raise ConversionError(f"the forest has no class 1 (classes {self.classes.tolist()})")
        return self.predict_proba(x)[:, column[0]]


def tdc_fingerprints(smiles) -> np.ndarray:
    """(N, 2048) float64 Morgan bits (radius 2) computed as TDC's GSK3B/JNK3 oracles do; ConversionError naming
    a SMILES RDKit cannot parse and sanitise."""
    from rdkit import Chem, DataStructs
    from rdkit.Chem import AllChem

    rows = []
    for text in smiles:
        mol = Chem.MolFromSmiles(text)
        if mol is None:
            raise ConversionError(f"cannot parse SMILES {text!r}")
        Chem.SanitizeMol(mol)
        features = np.zeros((1,))
        DataStructs.ConvertToNumpyArray(AllChem.GetMorganFingerprintAsBitVect(mol, RADIUS, nBits=N_BITS), features)
        rows.append(features)
    return np.stack(rows)


def published_check(target: str, scores) -> list[tuple[str, float, float, bool]]:
    """(smiles, our score, published score, within TOLERANCE) for each published score of `target`."""
    rows = []
    for i, expected in enumerate(PUBLISHED[target]):
        if expected is not None:
            value = float(scores[i])
            rows.append((SELFTEST_SMILES[i], value, expected, abs(value - expected) <= TOLERANCE))
    return rows


def check_published(target: str, scores) -> list[tuple[str, float, float, bool]]:
    """published_check, raising ConversionError that names every score off by more than TOLERANCE."""
    rows = published_check(target, scores)
    bad = [r for r in rows if not r[3]]
    if bad:
        raise ConversionError(
            f"{target}: the converted forest does not reproduce TDC's published scores (tolerance {TOLERANCE}): "
            + "; ".join(f"{s}: ours {v:.4f}, published {e}" for s, v, e, _ in bad)
            + ". The downloaded file is not TDC's oracle, or the featurization differs from TDC's"
        )
    return rows


def file_digest(path) -> tuple[int, str]:
    """(bytes, sha256) of a file."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return Path(path).stat().st_size, digest.hexdigest()


def third_party_agreement(name: str, size: int, sha256: str) -> str:
    """A sentence saying whether (size, sha256) of `name` agree with the third-party measurement."""
    stated = THIRD_PARTY.get(name)
    if stated is None:
        return f"{name}: no third-party measurement to compare"
    if stated == (size, sha256):
        return f"{name}: {size} bytes, sha256 {sha256}, as the third-party measurement states"
    return (
        f"{name}: {size} bytes, sha256 {sha256}; the third-party measurement states {stated[0]} bytes, sha256 "
        f"{stated[1]} (not enforced: the lock is the pin; the self-test decides)"
    )
