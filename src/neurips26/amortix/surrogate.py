"""The kinase surrogate oracle: fitted once with scikit-learn, stored as arrays and rebuilt from them.

It stands in for the paper's GSK3B+JNK3 objective. Like TDC's GSK3B/JNK3 oracles (RationaleRL's random forests on
ECFP4 bits giving P(active)), it scores P(active) with two random-forest classifiers, fitted here on data shipped
in the RDKit wheel: EGFR ligands (Contrib/PBF egfr.sdf) and CDK2 ligands (Contrib/Fastcluster cdk2.sdf), both DUD
actives, against NCI molecules taken as inactive decoys. They are surrogate classifiers in the style of TDC's
oracles, not models of real EGFR or CDK2 activity. Jobs: fitting (fit_kinase_surrogate), scoring
(KinaseSurrogate) and its stored state (surrogate_state / surrogate_from_state: the forests' arrays and a JSON
of settings, no pickled object).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pandas as pd
from rdkit import Chem, rdBase
from scipy import sparse

from neurips26.amortix.corpus import rdkit_contrib_path
from neurips26.amortix.forest import ForestArrays
from neurips26.amortix.oracles import Oracle, check_scores, ecfp4_bits, qed, reference_fingerprints, sa_score

EGFR_SDF = ("PBF", "testData", "egfr.sdf")
CDK2_SDF = ("Fastcluster", "testdata", "cdk2.sdf")
TARGETS = ("egfr", "cdk2")


def sdf_smiles(path) -> tuple[list[str], int]:
    """Canonical SMILES of the readable molecules of an SDF (deduplicated, file order) and the number skipped."""
    with rdBase.BlockLogs():
        mols = list(Chem.SDMolSupplier(str(path)))
    smiles = list(dict.fromkeys(Chem.MolToSmiles(m) for m in mols if m is not None))
    return smiles, sum(m is None for m in mols)


def kinase_ligand_smiles() -> tuple[list[str], list[str]]:
    """EGFR and CDK2 ligand SMILES shipped in RDKit's Contrib (the quick surrogate's two 'targets')."""
    egfr, _ = sdf_smiles(rdkit_contrib_path(*EGFR_SDF))
    cdk2, _ = sdf_smiles(rdkit_contrib_path(*CDK2_SDF))
    return egfr, cdk2


def kinase_success(
    components: pd.DataFrame, activity_threshold: float = 0.5, qed_threshold: float = 0.6, sa_threshold: float = 4.0
) -> np.ndarray:
    """RationaleRL's dual-target success on the surrogate's components: both activity probabilities
    >= activity_threshold, QED >= qed_threshold and SA < sa_threshold (NaN rows, invalid molecules, fail)."""
    return (
        (components["p_egfr"] >= activity_threshold)
        & (components["p_cdk2"] >= activity_threshold)
        & (components["qed"] >= qed_threshold)
        & (components["sa"] < sa_threshold)
    ).to_numpy()


def _structure_key(smiles: str) -> str | None:
    """Canonical SMILES without stereochemistry, to recognise a ligand among the decoys; None if unparseable."""
    with rdBase.BlockLogs():
        mol = Chem.MolFromSmiles(smiles)
    return Chem.MolToSmiles(mol, isomericSmiles=False) if mol is not None else None


def _new_forest(n_estimators: int, seed: int):
    from sklearn.ensemble import (
        RandomForestClassifier,  # imported here: only the fitting step pays for sklearn
    )

    return RandomForestClassifier(n_estimators=n_estimators, class_weight="balanced", random_state=seed, n_jobs=1)


def _cv_auc(x: sparse.csr_matrix, y: np.ndarray, n_estimators: int, seed: int, folds: int) -> float:
    """Mean ROC AUC over stratified, shuffled `folds`-fold cross-validation (a fresh forest per fold)."""
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold

    aucs = []
    for train, test in StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed).split(x, y):
        forest = _new_forest(n_estimators, seed).fit(x[train], y[train])
        aucs.append(roc_auc_score(y[test], forest.predict_proba(x[test])[:, 1]))
    return float(np.mean(aucs))


class KinaseSurrogate(Oracle):
    """RDKit-only stand-in for the paper's GSK3B+JNK3 objective (RationaleRL's dual-kinase task):
    r = mean(p_EGFR, p_CDK2, QED, (10 - SA)/9), success = p_EGFR >= 0.5, p_CDK2 >= 0.5, QED >= 0.6, SA < 4.

    p_T is a random-forest classifier's P(active) on ECFP4 bits, built the way TDC's GSK3B/JNK3 oracles are
    (RationaleRL's ligand-vs-decoy forests), here from EGFR/CDK2 ligands against NCI decoys (see
    fit_kinase_surrogate). They are surrogate classifiers that give the reward the same shape, not models of real
    activity. Stored as arrays (surrogate_state): fit once, write to a file, rebuild it wherever it is needed.
    """

    name = "kinase_surrogate"
    activity_threshold = 0.5

    def __init__(
        self,
        forests: dict[str, ForestArrays],
        cv_auc: dict[str, float] | None = None,
        n_positives: dict[str, int] | None = None,
        n_decoys: int | None = None,
        seed: int | None = None,
    ) -> None:
        self.forests = dict(forests)
        self.cv_auc = dict(cv_auc or {})
        self.n_positives = dict(n_positives or {})
        self.n_decoys = n_decoys
        self.seed = seed

    @classmethod
    def from_classifiers(cls, egfr_classifier, cdk2_classifier, **settings) -> KinaseSurrogate:
        """From two fitted scikit-learn forests (labels 0 decoy, 1 ligand), kept as arrays: scoring needs numpy
        only, so the stored oracle does not drag scikit-learn into every job."""
        for target, classifier in (("egfr", egfr_classifier), ("cdk2", cdk2_classifier)):
            if list(getattr(classifier, "classes_", [])) != [0, 1]:
                raise ValueError(f"the {target} classifier must be fitted on labels 0 (decoy) and 1 (ligand)")
        forests = {
            "egfr": ForestArrays.from_sklearn(egfr_classifier),
            "cdk2": ForestArrays.from_sklearn(cdk2_classifier),
        }
        return cls(forests, **settings)

    def activity(self, bits: np.ndarray) -> np.ndarray:
        """(N, 2) P(active) for EGFR and CDK2 from an (N, 2048) ECFP4 bit matrix."""
        return np.column_stack([self.forests[t].predict_positive(bits) for t in ("egfr", "cdk2")])

    def components(self, mols: Sequence[Chem.Mol | None]) -> pd.DataFrame:
        """Per molecule: qed, sa (1-10), p_egfr, p_cdk2; NaN rows for invalid (None) molecules."""
        mols = list(mols)
        is_valid = np.array([m is not None for m in mols], dtype=bool)
        valid = [m for m in mols if m is not None]
        values = np.full((len(mols), 4), np.nan)
        if valid:
            values[is_valid] = np.column_stack(
                [[qed(m) for m in valid], [sa_score(m) for m in valid], self.activity(ecfp4_bits(valid))]
            )
        return pd.DataFrame(values, columns=["qed", "sa", "p_egfr", "p_cdk2"])

    @staticmethod
    def score_components(components: pd.DataFrame) -> np.ndarray:
        """The reward from components: mean of p_egfr, p_cdk2, QED and (10 - SA)/9; 0 for invalid rows."""
        terms = np.column_stack(
            [components["p_egfr"], components["p_cdk2"], components["qed"], (10.0 - components["sa"]) / 9.0]
        )
        return np.nan_to_num(terms.mean(axis=1), nan=0.0)

    def success(self, components: pd.DataFrame) -> np.ndarray:
        return kinase_success(components, self.activity_threshold)

    def __call__(self, mols: Sequence[Chem.Mol | None]) -> np.ndarray:
        mols = list(mols)
        return check_scores(self.score_components(self.components(mols)), mols, self.name)


def fit_kinase_surrogate(
    egfr_smiles: Sequence[str],
    cdk2_smiles: Sequence[str],
    decoy_smiles: Sequence[str],
    n_estimators: int = 100,
    seed: int = 0,
    folds: int = 5,
) -> KinaseSurrogate:
    """Fit the two surrogate activity classifiers: for each target a class-balanced random forest on ECFP4 bits
    (2048), its ligands against the shared decoys, with its stratified `folds`-fold cross-validated ROC AUC.

    Decoys whose structure (canonical SMILES, stereo ignored) is a ligand of either target are dropped first.
    Raises ValueError naming an unparseable SMILES, or if a set is too small for `folds`-fold CV.
    """
    ligands = {"egfr": reference_fingerprints(egfr_smiles), "cdk2": reference_fingerprints(cdk2_smiles)}
    ligand_keys = {_structure_key(s) for s in [*egfr_smiles, *cdk2_smiles]}
    decoys = reference_fingerprints([s for s in decoy_smiles if _structure_key(s) not in ligand_keys])
    classifiers, cv_auc, n_positives = {}, {}, {}
    for target, positives in ligands.items():
        if min(len(positives), len(decoys)) < folds:
            raise ValueError(
                f"{target}: {len(positives)} ligands and {len(decoys)} decoys are too few "
                f"for {folds}-fold cross-validation"
            )
        # sparse input grows the same trees as the dense bits, about twice as fast (fingerprints are ~1% ones)
        x = sparse.csr_matrix(np.concatenate([positives, decoys]), dtype=np.float32)
        y = np.concatenate([np.ones(len(positives), dtype=int), np.zeros(len(decoys), dtype=int)])
        cv_auc[target] = _cv_auc(x, y, n_estimators, seed, folds)
        classifiers[target] = _new_forest(n_estimators, seed).fit(x, y)
        n_positives[target] = len(positives)
    return KinaseSurrogate.from_classifiers(
        classifiers["egfr"],
        classifiers["cdk2"],
        cv_auc=cv_auc,
        n_positives=n_positives,
        n_decoys=len(decoys),
        seed=seed,
    )


def surrogate_state(oracle: KinaseSurrogate) -> dict[str, np.ndarray]:
    """The oracle as arrays: each forest's node table ('egfr.left', ...) and 'settings', a JSON string of the
    rest (cv_auc, n_positives, n_decoys, seed). surrogate_from_state rebuilds an oracle with identical scores."""
    arrays = {
        f"{target}.{field}": getattr(oracle.forests[target], field)
        for target in TARGETS
        for field in ForestArrays.__dataclass_fields__
    }
    settings = {
        "cv_auc": oracle.cv_auc,
        "n_positives": oracle.n_positives,
        "n_decoys": oracle.n_decoys,
        "seed": oracle.seed,
    }
    return {**arrays, "settings": np.array(json.dumps(settings))}


def surrogate_from_state(state: dict[str, np.ndarray]) -> KinaseSurrogate:
    """The oracle stored by surrogate_state."""
    forests = {
        target: ForestArrays(**{field: state[f"{target}.{field}"] for field in ForestArrays.__dataclass_fields__})
        for target in TARGETS
    }
    return KinaseSurrogate(forests, **json.loads(str(state["settings"])))


SCORE_FORMULA = "(P_EGFR + P_CDK2 + QED + (10 - SA) / 9) / 4"
SUCCESS_RULE = "P_EGFR >= 0.5 and P_CDK2 >= 0.5 and QED >= 0.6 and SA < 4"


def corpus_scores(oracle: KinaseSurrogate, smiles: Sequence[str]) -> pd.DataFrame:
    """The oracle's components, score and success of every corpus molecule (the base success rate)."""
    components = oracle.components([Chem.MolFromSmiles(s) for s in smiles])
    return components.assign(
        smiles=np.asarray(smiles, dtype=object),
        score=oracle.score_components(components),
        success=oracle.success(components),
    )


def definition(oracle: KinaseSurrogate, task: str, n_ligands: dict[str, int], scores: pd.DataFrame) -> dict:
    """What the report states of the oracle: its formula, success rule, classifiers' CV ROC AUC, ligand and
    decoy counts, and the corpus's mean score and success rate (`scores` from corpus_scores)."""
    return {
        "task": task,
        "surrogate": True,
        "cv_auc": oracle.cv_auc,
        "ligands": dict(n_ligands),
        "decoys": int(oracle.n_decoys),
        "corpus_mean_score": float(scores["score"].mean()),
        "corpus_success_rate": float(scores["success"].mean()),
        "score": SCORE_FORMULA,
        "success": SUCCESS_RULE,
    }
