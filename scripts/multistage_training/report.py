"""Write results/{scale}/multistage_training/report.md from workflow/report/multistage_training/report.md.j2: the
setup (the skill-chain model, our reconstruction), the claims, a section per phenomenon of the abstract with its
table and key numbers, theory against simulation, figures, runtimes and deviations."""

import pandas as pd

from neurips26.common.report import write_report
from neurips26.common.runtime import start_job
from neurips26.multistage_training.summary import claim_numbers, report_tables

log = start_job(snakemake)
claims = claim_numbers(pd.read_parquet(snakemake.input.claims))
write_report(snakemake, **report_tables(snakemake.input, snakemake.params), **claims)
log.info("report written")
