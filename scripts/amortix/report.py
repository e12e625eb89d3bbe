"""Write results/{scale}/amortix/report.md: data and split, the oracle and its self-test, pretraining, the
scaffold-decoration table, training per advantage variant, best-of-K, PMO-lite, throughput, claims, figures,
runtimes and deviations."""

from neurips26.amortix.summary import report_tables
from neurips26.common.report import write_report
from neurips26.common.runtime import start_job

log = start_job(snakemake)
write_report(snakemake, **report_tables(snakemake.input, snakemake.params))
log.info("report written")
