"""Write results/{scale}/analogtobi/report.md from workflow/report/analogtobi/report.md.j2: the data, the ablation
table, the per-type table, throughput, claims, figures, runtimes and deviations."""

from neurips26.analogtobi.report import report_tables
from neurips26.common.report import write_report
from neurips26.common.runtime import start_job

log = start_job(snakemake)
write_report(snakemake, **report_tables(snakemake.input, snakemake.params))
log.info("report written")
