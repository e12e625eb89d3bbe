"""Write results/{scale}/symm_optim/report.md from workflow/report/symm_optim/report.md.j2: the setup (corpus, models,
optimizers per role), the symmetry checks, the best-LR table of both sweeps with seed spreads and deltas, divergences,
step times, claims, figures, runtimes and deviations."""

from neurips26.common.report import write_report
from neurips26.common.runtime import start_job
from neurips26.symm_optim.summary import report_tables

log = start_job(snakemake)
write_report(snakemake, **report_tables(snakemake.input, snakemake.params))
log.info("report written")
