"""Write results/{scale}/fairness_audit/report.md from workflow/report/fairness_audit/report.md.j2: data sets,
claims, the validation table (each measure against the tuned MLP's true bias), the axiom table, the DPI bound,
redundancy, feature selection, coalition throughput, figures, runtimes and deviations."""

from neurips26.common.report import write_report
from neurips26.common.runtime import start_job
from neurips26.fairness_audit.summary import report_tables

log = start_job(snakemake)
write_report(snakemake, **report_tables(snakemake.input, snakemake.params))
log.info("report written")
