"""Write results/{scale}/pred_loss_space/report.md from its template: the 3x3 tables per regime, variance shares,
per-cell runs, claims, figures, runtimes and deviations."""

from neurips26.common.report import write_report
from neurips26.common.runtime import start_job
from neurips26.pred_loss_space.summary import report_tables

log = start_job(snakemake)
write_report(snakemake, provenance_from=snakemake.input.metrics, **report_tables(snakemake.input, snakemake.params))
log.info("report written")
