"""Write results/{scale}/bird/report.md from its template: the phase diagram's agreement with theory, the critical
SNRs, k_mem vs k*, memorization, calibration against networks, step cost, claims, figures, runtimes, deviations."""

from neurips26.bird.summary import report_tables
from neurips26.common.report import write_report
from neurips26.common.runtime import start_job

log = start_job(snakemake)
write_report(snakemake, **report_tables(snakemake.input, snakemake.params))
log.info("report written")
