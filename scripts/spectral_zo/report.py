"""Write results/{scale}/spectral_zo/report.md from workflow/report/spectral_zo/report.md.j2."""

from neurips26.common.report import write_report
from neurips26.common.runtime import start_job
from neurips26.spectral_zo.summary import report_tables

log = start_job(snakemake)
write_report(snakemake, **report_tables(snakemake.input, snakemake.params))
log.info("report written")
