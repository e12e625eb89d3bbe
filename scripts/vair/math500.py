"""MATH-500's problems as gold-solution items certified by their final answer only (no steps to replay, no flaw),
the records skipped by reason, and the count beside the paper's."""

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.vair.artifacts import math_items_to_frame, read_records, skipped_frame, with_dataset
from neurips26.vair.dataset import counts
from neurips26.vair.math500 import read_math500

log = start_job(snakemake)
items, skipped = read_records(snakemake.input.records, read_math500, "MATH-500")
log.info("MATH-500: %d items certified by their final answer, skipped %s", len(items), skipped)
prov = job_provenance(snakemake)
write_parquet(math_items_to_frame(items), snakemake.output.item_table, prov)
write_parquet(skipped_frame(skipped, len(items)), snakemake.output.skipped, prov)
write_parquet(with_dataset(counts(items), "math"), snakemake.output.counts, prov)
