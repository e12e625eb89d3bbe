"""The paper's kinase objective with TDC's real GSK3B and JNK3 oracles (paper scale, config `task: tdc_kinase`).

Reward (GSK3B + JNK3 + QED + (10 - SA)/9) / 4 and success GSK3B >= 0.5, JNK3 >= 0.5, QED >= 0.6, SA < 4, as the
paper's code computes them (Hash-hh/GRXForm objective_predictor/tdc/kinase_mpo.py, after RationaleRL). GSK3B and
JNK3 are TDC's random forests converted to arrays by rule amortix_tdc_convert (neurips26.amortix.tdc) and scored
in numpy on ECFP4 bits (radius 2, 2048 bits: TDC's featurization, bit for bit; tests/test_amortix_tdc.py).

It is a KinaseSurrogate for the jobs that score candidates (the same interface: components, score_components,
success), with TDC's targets in place of the surrogate's, and is stored as arrays with `kind` = "tdc_kinase"
(:func:`tdc_state`, :func:`tdc_from_state`; neurips26.amortix.artifacts.load_oracle reads either kind).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pandas as pd
from rdkit import Chem

from neurips26.amortix import tdc
from neurips26.amortix.oracles import ecfp4_bits, qed, sa_score
from neurips26.amortix.surrogate import KinaseSurrogate

KIND = "tdc_kinase"
SCORE_FORMULA = "(GSK3B + JNK3 + QED + (10 - SA) / 9) / 4"
SUCCESS_RULE = "GSK3B >= 0.5 and JNK3 >= 0.5 and QED >= 0.6 and SA < 4"
COLUMNS = ["qed", "sa", *(f"p_{t}" for t in tdc.TARGETS)]


class TDCKinase(KinaseSurrogate):
    """The kinase MPO with TDC's GSK3B and JNK3 forests (TreeForest). `sources` records, per target, the
    converted file's forest size, for the report."""

    name = KIND

    def __init__(self, forests: dict[str, tdc.TreeForest], sources: dict | None = None) -> None:
        missing = set(tdc.TARGETS) - set(forests)
        if missing:
            raise ValueError(f"the TDC kinase objective needs forests for {sorted(missing)}")
        super().__init__({})
        self.forests = {t: forests[t] for t in tdc.TARGETS}
        self.sources = dict(sources or {})

    def activity(self, bits: np.ndarray) -> np.ndarray:
        """(N, 2) P(active) for GSK3B and JNK3 from an (N, 2048) ECFP4 bit matrix."""
        return np.column_stack([self.forests[t].predict_active(bits) for t in tdc.TARGETS])

    def components(self, mols: Sequence[Chem.Mol | None]) -> pd.DataFrame:
        """Per molecule: qed, sa (1-10), p_gsk3b, p_jnk3; NaN rows for invalid (None) molecules."""
        mols = list(mols)
        is_valid = np.array([m is not None for m in mols], dtype=bool)
        valid = [m for m in mols if m is not None]
        values = np.full((len(mols), len(COLUMNS)), np.nan)
        if valid:
            values[is_valid] = np.column_stack(
                [[qed(m) for m in valid], [sa_score(m) for m in valid], self.activity(ecfp4_bits(valid))]
            )
        return pd.DataFrame(values, columns=COLUMNS)

    @staticmethod
    def score_components(components: pd.DataFrame) -> np.ndarray:
        """(GSK3B + JNK3 + QED + (10 - SA)/9) / 4; 0 for invalid rows."""
        terms = np.column_stack(
            [components["p_gsk3b"], components["p_jnk3"], components["qed"], (10.0 - components["sa"]) / 9.0]
        )
        return np.nan_to_num(terms.mean(axis=1), nan=0.0)

    def success(self, components: pd.DataFrame) -> np.ndarray:
        """GSK3B >= 0.5, JNK3 >= 0.5, QED >= 0.6 and SA < 4 (NaN rows fail)."""
        return (
            (components["p_gsk3b"] >= self.activity_threshold)
            & (components["p_jnk3"] >= self.activity_threshold)
            & (components["qed"] >= 0.6)
            & (components["sa"] < 4.0)
        ).to_numpy()


def tdc_state(oracle: TDCKinase) -> dict[str, np.ndarray]:
    """The objective as arrays: 'kind', each converted forest's arrays ('gsk3b.value', ...) and 'settings'."""
    arrays = {"kind": np.array(KIND)}
    for target in tdc.TARGETS:
        for name, array in oracle.forests[target].arrays.items():
            arrays[f"{target}.{name}"] = array
    return {**arrays, "settings": np.array(json.dumps({"sources": oracle.sources}))}


def is_tdc_state(state: dict[str, np.ndarray]) -> bool:
    return "kind" in state and str(state["kind"]) == KIND


def tdc_from_state(state: dict[str, np.ndarray]) -> TDCKinase:
    """The objective stored by tdc_state."""
    if not is_tdc_state(state):
        raise ValueError(f"not a stored {KIND} objective (keys {sorted(state)[:5]}...)")
    forests = {}
    for target in tdc.TARGETS:
        prefix = f"{target}."
        forests[target] = tdc.TreeForest({k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)})
    return TDCKinase(forests, **json.loads(str(state["settings"])))


def selftest_table(oracle: TDCKinase) -> pd.DataFrame:
    """Checks run when the objective is built (the table the report shows): TDC's published scores of the
    self-test molecules (tdc.TOLERANCE), scores in [0, 1], determinism, invalid scores 0, QED of aspirin, and
    the success rule refusing benzene. Raises OracleError-like ValueError (tdc.ConversionError) on a failure."""
    mols = [Chem.MolFromSmiles(s) for s in tdc.SELFTEST_SMILES]
    parts = oracle.components(mols)
    rows = []
    for target in tdc.TARGETS:
        for smiles, value, expected, ok in tdc.published_check(target, parts[f"p_{target}"].to_numpy()):
            rows.append((f"{target}({smiles}) = TDC's published score", value, f"{expected} +- {tdc.TOLERANCE}", ok))
    first, second = oracle(mols), oracle(mols)
    aspirin = oracle.components([Chem.MolFromSmiles("CC(=O)Oc1ccccc1C(=O)O")]).iloc[0]
    benzene = oracle.components([Chem.MolFromSmiles("c1ccccc1")])
    rows += [
        ("scores in [0, 1]", float(first.min()), "[0, 1]", bool(0.0 <= first.min() and first.max() <= 1.0)),
        ("deterministic", float(np.abs(first - second).max()), "0", bool(np.array_equal(first, second))),
        ("invalid molecule scores 0", float(oracle([None])[0]), "0", bool(oracle([None])[0] == 0.0)),
        ("qed(aspirin) ~ 0.55", float(aspirin["qed"]), "0.55 +- 0.02", bool(abs(aspirin["qed"] - 0.55) <= 0.02)),
        ("benzene is no dual-kinase success", float(oracle.success(benzene)[0]), "0", not oracle.success(benzene)[0]),
    ]
    table = pd.DataFrame(rows, columns=["check", "value", "expected", "passed"])
    failed = table[~table["passed"]]
    if len(failed):
        raise tdc.ConversionError(
            f"oracle {oracle.name} failed its self-test: "
            + "; ".join(f"{r.check}: {r.value:.4g} (expected {r.expected})" for r in failed.itertuples())
        )
    return table


def definition(oracle: TDCKinase, task: str, scores: pd.DataFrame) -> dict:
    """What the report states of the objective (`scores` from surrogate.corpus_scores)."""
    return {
        "task": task,
        "surrogate": False,
        "targets": list(tdc.TARGETS),
        "sources": oracle.sources,
        "trees": {t: oracle.forests[t].n_trees for t in tdc.TARGETS},
        "corpus_mean_score": float(scores["score"].mean()),
        "corpus_success_rate": float(scores["success"].mean()),
        "score": SCORE_FORMULA,
        "success": SUCCESS_RULE,
    }
