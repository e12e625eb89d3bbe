"""The VAIR items of GSM8K's problems: per problem its gold solution (VAVR), arithmetic slips (IAIR) and one item per
applicable answer-preserving flaw (VAIR); every item verified again by the step checker (the job fails naming the
first item whose labels the checker does not confirm) and counted beside the paper's counts."""

import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.vair.artifacts import item_tables, problems_from_frame

settings = snakemake.params.settings
log = start_job(snakemake, seed=settings["seed"])
problems = problems_from_frame(pd.read_parquet(snakemake.input.problems))
items, table = item_tables(problems, settings, snakemake.wildcards.dataset)
log.info("%d items from %d problems, each verified by the checker:\n%s", len(items), len(problems), table.to_string())
prov = job_provenance(snakemake, settings["seed"])
write_parquet(items, snakemake.output.item_table, prov)
write_parquet(table, snakemake.output.counts, prov)
