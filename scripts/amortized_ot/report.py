"""Write results/{scale}/amortized_ot/report.md: what ran, tables, figures, claims, runtimes, deviations."""

from neurips26.amortized_ot.summary import report_tables
from neurips26.common.report import write_report
from neurips26.common.runtime import start_job

log = start_job(snakemake)
write_report(snakemake, provenance_from=snakemake.input.metrics, **report_tables(snakemake.input, snakemake.params))
log.info("report written")
