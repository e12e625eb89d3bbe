"""Oracles: molecules to scores in [0, 1]. Descriptors (QED, SA, ECFP4 fingerprints and Tanimoto similarity),
GuacaMol's score modifiers, and the PMO-lite oracles (QED, Osimertinib MPO, Celecoxib rediscovery; Gao et al. 2022
after GuacaMol, Brown et al. 2019).

Every oracle maps a list of RDKit molecules to scores in [0, 1] (None, an invalid molecule, scores 0 as in
mol_opt) and checks its own output, so a broken descriptor raises instead of silently shaping a reward. The
kinase surrogate is in surrogate.py, budgets and the PMO AUC in budget.py, the self-test in selftest.py.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Sequence

import numpy as np
import pandas as pd
from rdkit import Chem, DataStructs, rdBase
from rdkit.Chem import QED, Crippen, rdFingerprintGenerator, rdMolDescriptors

from neurips26.amortix.corpus import rdkit_contrib_path

N_BITS = 2048
_ECFP4_BITS = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=N_BITS)
# GuacaMol's ECFP4/ECFP6/FCFP4 are unfolded Morgan count vectors (AllChem.GetMorganFingerprint), reproduced here
_ECFP4_COUNTS = rdFingerprintGenerator.GetMorganGenerator(radius=2)
_ECFP6_COUNTS = rdFingerprintGenerator.GetMorganGenerator(radius=3)
_FCFP4_COUNTS = rdFingerprintGenerator.GetMorganGenerator(
    radius=2, atomInvariantsGenerator=rdFingerprintGenerator.GetMorganFeatureAtomInvGen()
)

OSIMERTINIB = "COc1cc(N(C)CCN(C)C)c(NC(=O)C=C)cc1Nc2nccc(n2)c3cn(C)c4ccccc34"
CELECOXIB = "CC1=CC=C(C=C1)C1=CC(=NN1C1=CC=C(C=C1)S(N)(=O)=O)C(F)(F)F"


class OracleError(ValueError):
    """An oracle produced a score that is not a finite number in [0, 1]."""


# ---------------------------------------------------------------- descriptors


@functools.cache
def _sascorer():
    """RDKit Contrib's sascorer module (Ertl & Schuffenhauer 2009), imported once on first use."""
    folder = str(rdkit_contrib_path("SA_Score", "sascorer.py").parent)
    if folder not in sys.path:
        sys.path.append(folder)
    return importlib.import_module("sascorer")


def qed(mol: Chem.Mol) -> float:
    """Quantitative estimate of drug-likeness (Bickerton et al. 2012), in [0, 1]."""
    return float(QED.qed(mol))


def sa_score(mol: Chem.Mol) -> float:
    """Synthetic accessibility score, 1 (easy) to 10 (hard)."""
    return float(_sascorer().calculateScore(mol))


def ecfp4_bits(mols: Sequence[Chem.Mol]) -> np.ndarray:
    """ECFP4 bits (Morgan radius 2, 2048 bits) as a (N, 2048) uint8 matrix."""
    if not len(mols):
        return np.zeros((0, N_BITS), dtype=np.uint8)
    return np.stack([_ECFP4_BITS.GetFingerprintAsNumPy(m).astype(np.uint8) for m in mols])


def reference_fingerprints(smiles_list: Sequence[str]) -> np.ndarray:
    """ECFP4 bit matrix (R, 2048) of reference ligands; raises ValueError naming an unparseable SMILES."""
    with rdBase.BlockLogs():
        mols = [Chem.MolFromSmiles(s) for s in smiles_list]
    bad = [s for s, m in zip(smiles_list, mols) if m is None]
    if bad:
        raise ValueError(f"reference SMILES cannot be parsed: {bad[:3]}")
    return ecfp4_bits(mols)


def max_tanimoto_matrix(fingerprints: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Max Tanimoto similarity of each row of `fingerprints` (N, B) to the rows of `reference` (R, B)."""
    a = fingerprints.astype(np.float32)
    b = reference.astype(np.float32)
    common = a @ b.T
    union = a.sum(1)[:, None] + b.sum(1)[None, :] - common
    similarity = np.divide(common, union, out=np.zeros_like(common), where=union > 0)
    return similarity.max(axis=1) if similarity.shape[1] else np.zeros(len(a), dtype=np.float32)


def max_tanimoto(mol: Chem.Mol, reference_fps: np.ndarray) -> float:
    """Max ECFP4 Tanimoto similarity of one molecule to a reference set (from reference_fingerprints)."""
    return float(max_tanimoto_matrix(ecfp4_bits([mol]), reference_fps)[0])


# ---------------------------------------------------------------- checks


def _name(item) -> str:
    if isinstance(item, str):
        return item
    return Chem.MolToSmiles(item) if item is not None else "<invalid molecule>"


def check_scores(scores: np.ndarray, names_or_smiles: Sequence, oracle_name: str) -> np.ndarray:
    """`scores` as float64, or OracleError naming the first molecule whose score is NaN/inf or outside [0, 1]."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.shape != (len(names_or_smiles),):
        raise OracleError(f"oracle {oracle_name} returned {scores.shape} scores for {len(names_or_smiles)} molecules")
    bad = ~np.isfinite(scores) | (scores < 0.0) | (scores > 1.0)
    if bad.any():
        i = int(np.argmax(bad))
        raise OracleError(
            f"oracle {oracle_name} scored {_name(names_or_smiles[i])!r} {float(scores[i])}, "
            f"outside [0, 1] ({int(bad.sum())} bad score(s) in {len(scores)})"
        )
    return scores


# ---------------------------------------------------------------- score modifiers (GuacaMol's score_modifier.py)


def clipped(x: np.ndarray, upper_x: float, lower_x: float = 0.0) -> np.ndarray:
    """Linear from 0 at lower_x to 1 at upper_x, clipped to [0, 1] (GuacaMol ClippedScoreModifier)."""
    return np.clip((np.asarray(x, dtype=np.float64) - lower_x) / (upper_x - lower_x), 0.0, 1.0)


def min_gaussian(x: np.ndarray, mu: float, sigma: float) -> np.ndarray:
    """1 for x <= mu, Gaussian decay above (GuacaMol MinGaussianModifier: 'at most mu')."""
    return np.exp(-0.5 * ((np.maximum(np.asarray(x, dtype=np.float64), mu) - mu) / sigma) ** 2)


def max_gaussian(x: np.ndarray, mu: float, sigma: float) -> np.ndarray:
    """1 for x >= mu, Gaussian decay below (GuacaMol MaxGaussianModifier: 'at least mu')."""
    return np.exp(-0.5 * ((np.minimum(np.asarray(x, dtype=np.float64), mu) - mu) / sigma) ** 2)


def _count_similarity(mols: Sequence[Chem.Mol], generator, target: Chem.Mol) -> np.ndarray:
    """Tanimoto on unfolded Morgan count vectors, the similarity of GuacaMol's TanimotoScoringFunction."""
    reference = generator.GetSparseCountFingerprint(target)
    fingerprints = [generator.GetSparseCountFingerprint(m) for m in mols]
    return np.array(DataStructs.BulkTanimotoSimilarity(reference, fingerprints))


# ---------------------------------------------------------------- oracles


class Oracle:
    """Base: subclasses score valid molecules in `_score`; None (invalid) scores 0 and the output is checked."""

    name = "oracle"

    def _score(self, mols: list[Chem.Mol]) -> np.ndarray:
        raise NotImplementedError

    def __call__(self, mols: Sequence[Chem.Mol | None]) -> np.ndarray:
        mols = list(mols)
        valid = np.array([m is not None for m in mols], dtype=bool)
        scores = np.zeros(len(mols))
        if valid.any():
            scores[valid] = self._score([m for m in mols if m is not None])
        return check_scores(scores, mols, self.name)


class QEDOracle(Oracle):
    """PMO/GuacaMol 'QED' objective: RDKit's QED, used unmodified (GuacaMol qed_benchmark)."""

    name = "qed"

    def _score(self, mols: list[Chem.Mol]) -> np.ndarray:
        return np.array([qed(m) for m in mols])


class OsimertinibMPO(Oracle):
    """PMO/GuacaMol 'Osimertinib MPO' (hard_osimertinib): geometric mean of four modified terms.

    FCFP4 count similarity to osimertinib clipped at 0.8; ECFP6 count similarity kept at most 0.85 (sigma 0.1);
    TPSA at least 100 (sigma 10); Crippen logP at most 1 (sigma 1). Osimertinib itself scores only ~0.13
    (its logP is ~4.5): the task is a more polar analogue, not the drug.
    """

    name = "osimertinib_mpo"

    def __init__(self) -> None:
        self.target = Chem.MolFromSmiles(OSIMERTINIB)

    def terms(self, mols: list[Chem.Mol]) -> pd.DataFrame:
        """The four modified terms per molecule, each in [0, 1]."""
        tpsa = np.array([rdMolDescriptors.CalcTPSA(m) for m in mols])
        logp = np.array([Crippen.MolLogP(m) for m in mols])
        return pd.DataFrame(
            {
                "similar_fcfp4": clipped(_count_similarity(mols, _FCFP4_COUNTS, self.target), upper_x=0.8),
                "not_too_similar_ecfp6": min_gaussian(_count_similarity(mols, _ECFP6_COUNTS, self.target), 0.85, 0.1),
                "tpsa_over_100": max_gaussian(tpsa, 100.0, 10.0),
                "logp_under_1": min_gaussian(logp, 1.0, 1.0),
            }
        )

    def _score(self, mols: list[Chem.Mol]) -> np.ndarray:
        terms = self.terms(mols).to_numpy()
        return np.prod(terms, axis=1) ** (1.0 / terms.shape[1])


class CelecoxibRediscovery(Oracle):
    """PMO/GuacaMol 'Celecoxib rediscovery': ECFP4 count Tanimoto to celecoxib (clipped at 1, i.e. unmodified)."""

    name = "celecoxib_rediscovery"

    def __init__(self) -> None:
        self.target = Chem.MolFromSmiles(CELECOXIB)

    def _score(self, mols: list[Chem.Mol]) -> np.ndarray:
        return clipped(_count_similarity(mols, _ECFP4_COUNTS, self.target), upper_x=1.0)


PMO_ORACLES = {"qed": QEDOracle, "osimertinib_mpo": OsimertinibMPO, "celecoxib_rediscovery": CelecoxibRediscovery}
