"""ChEMBL 35's SMILES for the pretraining corpus (paper scale, corpus.source chembl35): the chemreps file checked
against EBI's checksums.txt, its SMILES column read with the ChEMBL ids, and the counts logged. The corpus job
filters these SMILES as it filters any source."""

from neurips26.amortix import chembl
from neurips26.common.io import atomic_path
from neurips26.common.runtime import start_job

log = start_job(snakemake)
log.info(chembl.verify_against_checksums(snakemake.input.chemreps, snakemake.input.checksums))
table, counts = chembl.read_chemreps(snakemake.input.chemreps)
log.info(
    "%s: %d rows, %d without a SMILES, %d SMILES kept for the corpus filters",
    snakemake.input.chemreps,
    counts["rows"],
    counts["no_smiles"],
    counts["kept"],
)
with atomic_path(snakemake.output[0]) as tmp:
    table[["smiles", "chembl_id"]].to_csv(tmp, index=False)
