"""The task's oracle: the kinase surrogate's two random forests (EGFR and CDK2 ligands shipped with RDKit against
the corpus as decoys, in the style of TDC's GSK3B/JNK3 oracles), their cross-validated ROC AUC, the self-test on
reference molecules, and the corpus's own scores (the base success rate) for the report."""

import json
import pickle

import pandas as pd
from rdkit import Chem

from neurips26.amortix import oracles
from neurips26.common.io import atomic_path, write_parquet
from neurips26.common.runtime import job_provenance, start_job

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
molecules = pd.read_parquet(snakemake.input.corpus)
egfr, cdk2 = oracles.kinase_ligand_smiles()
oracle = oracles.fit_kinase_surrogate(
    egfr,
    cdk2,
    molecules["smiles"].tolist(),
    n_estimators=params.oracle["n_estimators"],
    seed=params.seed,
    folds=params.oracle["folds"],
)
selftest = oracles.selftest(oracle)  # raises, naming the failed checks, if the oracle misbehaves
components = oracle.components([Chem.MolFromSmiles(s) for s in molecules["smiles"]])
scores = components.assign(
    smiles=molecules["smiles"].to_numpy(), score=oracle.score_components(components), success=oracle.success(components)
)
log.info(
    "cross-validated ROC AUC %s; corpus mean score %.3f, success rate %.4f; self-test: %d checks passed",
    oracle.cv_auc,
    scores["score"].mean(),
    scores["success"].mean(),
    int(selftest["passed"].sum()),
)
definition = {
    "task": params.task,
    "surrogate": True,
    "cv_auc": oracle.cv_auc,
    "ligands": {"egfr": len(egfr), "cdk2": len(cdk2)},
    "decoys": int(oracle.n_decoys),
    "corpus_mean_score": float(scores["score"].mean()),
    "corpus_success_rate": float(scores["success"].mean()),
    "score": "(P_EGFR + P_CDK2 + QED + (10 - SA) / 9) / 4",
    "success": "P_EGFR >= 0.5 and P_CDK2 >= 0.5 and QED >= 0.6 and SA < 4",
}
with atomic_path(snakemake.output.model) as tmp:
    tmp.write_bytes(pickle.dumps(oracle))
with atomic_path(snakemake.output.definition) as tmp:
    tmp.write_text(json.dumps(definition, indent=2))
prov = job_provenance(snakemake, params.seed)
write_parquet(selftest, snakemake.output.selftest, prov)
write_parquet(scores, snakemake.output.corpus_scores, prov)
