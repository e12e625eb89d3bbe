"""The paper's kinase objective with TDC's GSK3B and JNK3 forests (paper scale, task tdc_kinase): the converted
forests (rule amortix_tdc_convert) loaded, the self-test with TDC's published scores, and the corpus's own scores
(the base success rate) for the report. Written as arrays with kind tdc_kinase (artifacts.load_oracle)."""

import json

import numpy as np
import pandas as pd
from rdkit import Chem

from neurips26.amortix import surrogate, tdc, tdc_kinase
from neurips26.amortix.artifacts import load_oracle
from neurips26.common.io import atomic_path, save_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job

CHUNK = 20_000  # molecules scored at a time (fingerprints of a whole ChEMBL corpus would not fit in memory)

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
smiles = pd.read_parquet(snakemake.input.corpus)["smiles"].tolist()
forests = {target: tdc.load_forest(snakemake.input[target]) for target in tdc.TARGETS}
oracle = tdc_kinase.TDCKinase(
    forests, sources={t: {"converted": snakemake.input[t], "trees": forests[t].n_trees} for t in tdc.TARGETS}
)
checks = tdc_kinase.selftest_table(oracle)  # raises, naming the failed checks
scores = pd.concat(
    [surrogate.corpus_scores(oracle, smiles[i : i + CHUNK]) for i in range(0, len(smiles), CHUNK)], ignore_index=True
)
definition = tdc_kinase.definition(oracle, params.task, scores)
log.info(
    "TDC GSK3B and JNK3 (%s trees); corpus mean score %.3f, success rate %.4f; self-test: %d checks passed",
    definition["trees"],
    definition["corpus_mean_score"],
    definition["corpus_success_rate"],
    int(checks["passed"].sum()),
)
save_npz(snakemake.output.model, **tdc_kinase.tdc_state(oracle))
# the jobs that score candidates (rl, sample, graph_ga, per_instance, tables) read the oracle with load_oracle
panel = [Chem.MolFromSmiles(s) for s in tdc.SELFTEST_SMILES]
try:
    reloaded = load_oracle(snakemake.output.model)
except (KeyError, ValueError) as error:
    raise RuntimeError(
        f"neurips26.amortix.artifacts.load_oracle cannot read the {tdc_kinase.KIND} objective back ({error!r}): it"
        " must return tdc_kinase.tdc_from_state(state) when tdc_kinase.is_tdc_state(state)"
    ) from None
if not isinstance(reloaded, tdc_kinase.TDCKinase) or not np.array_equal(reloaded(panel), oracle(panel)):
    raise RuntimeError("artifacts.load_oracle does not rebuild the tdc_kinase objective with identical scores")
with atomic_path(snakemake.output.definition) as tmp:
    tmp.write_text(json.dumps(definition, indent=2))
prov = job_provenance(snakemake, params.seed)
write_parquet(checks, snakemake.output.selftest, prov)
write_parquet(scores, snakemake.output.corpus_scores, prov)
