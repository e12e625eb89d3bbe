"""Write results/{scale}/thresh_mcts/report.md: instances, the sample-complexity table, error rates, per-round
cost and its slopes, the equivalence and LP checks, claims, figures, runtimes and deviations."""

import pandas as pd

from neurips26.common.report import write_report
from neurips26.common.runtime import start_job
from neurips26.thresh_mcts.summary import report_tables

inp = snakemake.input
log = start_job(snakemake)
tables = report_tables(
    *(pd.read_parquet(p) for p in (inp.instances, inp.summary, inp.slopes, inp.cost, inp.equivalence, inp.lp_check))
)
write_report(snakemake, **tables)
log.info("report written")
