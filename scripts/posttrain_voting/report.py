"""Write results/{scale}/posttrain_voting/report.md from workflow/report/posttrain_voting/report.md.j2: the rules
(our reconstruction), the claims, the axiom table per rule with witnesses, violation frequency and magnitude
against beta, the NLHF threshold against its bound, staged against joint, figures, runtimes and deviations."""

import pandas as pd

from neurips26.common.report import write_report
from neurips26.common.runtime import start_job
from neurips26.posttrain_voting.summary import report_tables

log = start_job(snakemake)
inp = snakemake.input
tables = {name: pd.read_parquet(inp[name]) for name in ("adversarial", "threshold", "equivalence")}
tables["axioms"] = pd.concat([pd.read_parquet(path) for path in inp.axioms], ignore_index=True)
write_report(snakemake, **report_tables(tables))
log.info("report written")
