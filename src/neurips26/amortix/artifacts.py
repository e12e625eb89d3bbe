"""Reading and writing the steps' outputs: the stored kinase surrogate (arrays and a JSON of settings in one .npz,
loaded without pickle), scaffold lists of a split and scored candidate tables. Policies are saved and loaded by
policy.py (policy_state, load_policy_state)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from rdkit import Chem

from neurips26.amortix import oracles, tdc_kinase
from neurips26.amortix.surrogate import KinaseSurrogate, surrogate_from_state, surrogate_state
from neurips26.common.io import load_npz, save_npz


def save_oracle(path, oracle: KinaseSurrogate) -> None:
    """Write the kinase surrogate as arrays (surrogate.surrogate_state)."""
    save_npz(path, **surrogate_state(oracle))


def load_oracle(path) -> KinaseSurrogate:
    """The kinase objective stored by the oracle job, rebuilt with identical scores: the surrogate written by
    save_oracle, or the objective with TDC's forests (task tdc_kinase, tdc_kinase.tdc_state)."""
    state = load_npz(path)
    if tdc_kinase.is_tdc_state(state):
        return tdc_kinase.tdc_from_state(state)
    return surrogate_from_state(state)


def split_scaffolds(split_frame: pd.DataFrame, split: str, limit: int | None = None, seed: int = 0) -> list[str]:
    """The scaffolds of one split, in a seeded random order (so a prefix is a random subset, not the
    alphabetically first), truncated to `limit`."""
    names = sorted(split_frame.loc[split_frame["split"] == split, "scaffold"])
    if not names:
        raise ValueError(f"the {split} split has no scaffolds")
    order = np.random.default_rng(seed).permutation(len(names))
    chosen = [names[i] for i in order]
    return chosen[:limit] if limit else chosen


def baseline_scaffolds(split_frame: pd.DataFrame, n: int) -> list[str]:
    """The test scaffolds the instance optimisers run on: the first `n` (baselines.scaffolds) of the evaluation
    order."""
    return split_scaffolds(split_frame, "test", n)


def score_candidates(candidates: pd.DataFrame, oracle: oracles.Oracle) -> pd.DataFrame:
    """Add `score` (0 for invalid or scaffold-losing candidates) and, for the kinase surrogate, `success` and the
    components. These are evaluation calls, counted apart from any optimiser's oracle calls."""
    usable = candidates["valid"] & candidates["retained"]
    mols = [Chem.MolFromSmiles(s) if ok else None for s, ok in zip(candidates["smiles"], usable)]
    out = candidates.copy()
    if isinstance(oracle, KinaseSurrogate):
        components = oracle.components(mols)
        out["score"] = oracles.check_scores(oracle.score_components(components), mols, oracle.name)
        out["success"] = oracle.success(components) & usable.to_numpy()
        for column in components:
            out[column] = components[column].to_numpy()
    else:
        out["score"] = oracle(mols)
        out["success"] = False
    return out
