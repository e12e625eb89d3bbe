"""Generate the synthetic problems with their gold solutions (every answer certified by sympy)."""

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.vair.artifacts import problems_to_frame
from neurips26.vair.problems import generate_problems

p = dict(snakemake.params.problems)
log = start_job(snakemake, seed=p["seed"])
problems = generate_problems(p.pop("n"), p.pop("seed"), **p)
log.info(
    "%d problems, %d-%d steps", len(problems), min(len(s.steps) for s in problems), max(len(s.steps) for s in problems)
)
write_parquet(
    problems_to_frame(problems), snakemake.output.problems, job_provenance(snakemake, snakemake.params.problems["seed"])
)
