"""Write results/{scale}/gplvm_assvi/report.md from workflow/report/gplvm_assvi/report.md.j2: the setup, the metric
table with the seed spread, training, the uncertainty correlation, the cross-check, claims, figures, runtimes and
deviations."""

from neurips26.common.report import write_report
from neurips26.common.runtime import start_job
from neurips26.gplvm_assvi.summary import report_tables

log = start_job(snakemake)
write_report(snakemake, **report_tables(snakemake.input, snakemake.params))
log.info("report written")
