"""The synthetic dataset in one job: the generated problems with their gold solutions (every answer certified by
sympy) and their VAIR items (gold, slips, one item per applicable flaw; split by problem, each verified again by the
step checker), counted beside the paper's counts."""

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.vair.artifacts import item_tables, problems_to_frame
from neurips26.vair.problems import generate_problems

generator, settings = dict(snakemake.params.problems), snakemake.params.settings
log = start_job(snakemake, seed=generator["seed"])
problems = generate_problems(generator.pop("n"), generator.pop("seed"), **generator)
items, table = item_tables(problems, settings, "synthetic")
log.info("%d items from %d problems, each verified by the checker:\n%s", len(items), len(problems), table.to_string())
prov = job_provenance(snakemake, settings["seed"])
write_parquet(problems_to_frame(problems), snakemake.output.problems, prov)
write_parquet(items, snakemake.output.item_table, prov)
write_parquet(table, snakemake.output.counts, prov)
