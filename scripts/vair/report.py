"""Write results/{scale}/vair/report.md from workflow/report/vair/report.md.j2: the setup, the dataset counts beside
the paper's, accuracy and the production-evaluation gap per backend and flaw type, the paper's numbers beside ours,
unparseable replies, probes, patching, the findings not reproducible offline, claims, figures, runtimes and
deviations."""

from neurips26.common.report import write_report
from neurips26.common.runtime import start_job
from neurips26.vair.summary import report_tables

log = start_job(snakemake)
write_report(snakemake, **report_tables(snakemake.input, snakemake.params))
log.info("report written")
