"""The pretraining corpus: molecules filtered to the decoration vocabulary, with Bemis-Murcko scaffolds and the
count of molecules dropped for each reason. Quick/smoke: NCI's first 5K inside the rdkit wheel; paper: ZINC250k."""

import pandas as pd

from neurips26.amortix import corpus
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
spec = params.corpus
source = snakemake.input.source  # the downloaded file (paper scale) or none (NCI's molecules in the rdkit wheel)
source = [source] if isinstance(source, str) else list(source)
path = source[0] if source else corpus.rdkit_data_path(*corpus.NCI_FIRST_5K)
smiles = corpus.read_smiles_file(path)[: spec.get("limit")]
log.info("read %d SMILES from %s", len(smiles), path)
table, counts = corpus.prepare_corpus(
    smiles,
    decoration_vocab=tuple(params.decoration_vocab),
    max_heavy=spec["max_heavy"],
    min_rings=spec["min_rings"],
    scaffold_heavy=tuple(spec["scaffold_heavy"]),
)
log.info(
    "kept %d molecules on %d scaffolds; dropped: %s",
    len(table),
    table["scaffold"].nunique(),
    {k: v for k, v in counts.items() if k not in ("input", "kept") and v},
)
prov = job_provenance(snakemake, params.seed)
write_parquet(table, snakemake.output.corpus, prov)
write_parquet(pd.DataFrame({"reason": list(counts), "molecules": list(counts.values())}), snakemake.output.counts, prov)
