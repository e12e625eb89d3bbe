"""Write results/{scale}/ecfr/report.md from workflow/report/ecfr/report.md.j2: the setup, the published accuracy
beside ours, the main metric table with the seed spread, per-class and per-defect tables, complexity, training, data,
claims, figures, runtimes and deviations."""

from neurips26.common.report import write_report
from neurips26.common.runtime import start_job
from neurips26.ecfr.summary import report_tables

log = start_job(snakemake)
write_report(snakemake, **report_tables(snakemake.input, snakemake.params, snakemake.wildcards.scale))
log.info("report written")
