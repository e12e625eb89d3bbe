"""Write results/{scale}/seqrec_audit/report.md from workflow/report/seqrec_audit/report.md.j2: the NDCG@10 table
across datasets and methods with TGH's relative gain, all metrics under the stated protocol, the shortcut
diagnostics beside the gains, TGH's cost beside the trained models', the preprocessing counts, claims, figures,
runtimes and deviations."""

from neurips26.common.report import write_report
from neurips26.common.runtime import start_job
from neurips26.seqrec_audit.summary import report_tables

log = start_job(snakemake)
write_report(snakemake, **report_tables(snakemake.input, snakemake.params))
log.info("report written")
