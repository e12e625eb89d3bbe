"""Write results/{scale}/bbo_pile/report.md from workflow/report/bbo_pile/report.md.j2: the dataset (black boxes,
trajectories, tokens, throughput), the training runs and the scaling fit, imitation (pooled and per optimizer with
its margin's interval), the model as an optimizer on held-out boxes (and claim B3's model seeds), claims, figures,
runtimes and deviations."""

from neurips26.bbo_pile.summary import report_tables
from neurips26.common.report import write_report
from neurips26.common.runtime import start_job

log = start_job(snakemake)
write_report(snakemake, **report_tables(snakemake.input, snakemake.params))
log.info("report written")
