"""The task's oracle: the kinase surrogate's two random forests (EGFR and CDK2 ligands shipped with RDKit against
the corpus as decoys, in the style of TDC's GSK3B/JNK3 oracles), their cross-validated ROC AUC, the self-test on
reference molecules, and the corpus's own scores (the base success rate) for the report."""

import json

import pandas as pd

from neurips26.amortix import surrogate
from neurips26.amortix.artifacts import save_oracle
from neurips26.amortix.selftest import selftest
from neurips26.common.io import atomic_path, write_parquet
from neurips26.common.runtime import job_provenance, start_job

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
smiles = pd.read_parquet(snakemake.input.corpus)["smiles"].tolist()
egfr, cdk2 = surrogate.kinase_ligand_smiles()
spec = params.oracle
oracle = surrogate.fit_kinase_surrogate(egfr, cdk2, smiles, spec["n_estimators"], params.seed, spec["folds"])
checks = selftest(oracle)  # raises, naming the failed checks, if the oracle misbehaves
scores = surrogate.corpus_scores(oracle, smiles)
definition = surrogate.definition(oracle, params.task, {"egfr": len(egfr), "cdk2": len(cdk2)}, scores)
log.info(
    "cross-validated ROC AUC %s; corpus mean score %.3f, success rate %.4f; self-test: %d checks passed",
    oracle.cv_auc,
    definition["corpus_mean_score"],
    definition["corpus_success_rate"],
    int(checks["passed"].sum()),
)
save_oracle(snakemake.output.model, oracle)
with atomic_path(snakemake.output.definition) as tmp:
    tmp.write_text(json.dumps(definition, indent=2))
prov = job_provenance(snakemake, params.seed)
write_parquet(checks, snakemake.output.selftest, prov)
write_parquet(scores, snakemake.output.corpus_scores, prov)
