"""Write results/{scale}/softlabel_audit/report.md from workflow/report/softlabel_audit/report.md.j2: the item sets,
the accuracy/ECE/KL table with seed spread, seed disagreement, cartography's rank correlations, the paper's numbers
beside ours, claims, figures, runtimes and deviations."""

from neurips26.common.report import write_report
from neurips26.common.runtime import start_job
from neurips26.softlabel_audit.summary import report_tables

log = start_job(snakemake)
write_report(snakemake, **report_tables(snakemake.input, snakemake.params))
log.info("report written")
