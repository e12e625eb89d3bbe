"""One CoVal ranking block ({ranking}: world or personal) read as one preference profile per prompt (one voter per
(prompt, annotator), ties kept), with what was skipped logged."""

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.posttrain_voting.coval import profiles_table, read_rankings

log = start_job(snakemake)
ranking = snakemake.wildcards.ranking
rows, skipped = read_rankings(snakemake.input.records, ranking)
table = profiles_table(rows, snakemake.params.min_voters)
log.info("%s: %d voters, %d prompts kept, skipped %s", ranking, len(rows), len(table), skipped)
write_parquet(table, snakemake.output[0], job_provenance(snakemake))
