"""Write results/{scale}/noisy_divergence/report.md from workflow/report/noisy_divergence/report.md.j2: the setup,
the divergence table, the mechanism proxies, the classifier, the injection statistics, throughput against the
measured matmul rate, claims, figures, runtimes and deviations."""

from neurips26.common.report import write_report
from neurips26.common.runtime import start_job
from neurips26.noisy_divergence.summary import report_tables

log = start_job(snakemake)
write_report(snakemake, **report_tables(snakemake.input, snakemake.params))
log.info("report written")
