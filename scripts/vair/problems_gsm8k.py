"""GSM8K's test split as problems: each record whose calculator annotations the checker replays, with its gold steps;
the records skipped, counted by reason."""

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.vair.artifacts import problems_to_frame, read_records, skipped_frame
from neurips26.vair.gsm8k import read_gsm8k

log = start_job(snakemake)
problems, skipped = read_records(snakemake.input.records, read_gsm8k, "GSM8K")
log.info("GSM8K: %d problems replayed, skipped %s", len(problems), skipped)
prov = job_provenance(snakemake)
write_parquet(problems_to_frame(problems), snakemake.output.problems, prov)
write_parquet(skipped_frame(skipped, len(problems)), snakemake.output.skipped, prov)
