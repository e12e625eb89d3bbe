"""Write results/{scale}/anadiffusion/report.md from workflow/report/anadiffusion/report.md.j2: what was run, the
regional, morphometry, editing and memorization tables, the project page's numbers beside ours, claims, figures,
runtimes and deviations.

snakemake.input: claims, tables (list: A/tables/<name>.parquet, every name of summary.TABLES), figures (list),
captions (list), deviations, template (and paper_scale, where the rule gives one).
snakemake.params: benchmarks (the benchmark folder), and the config blocks the template reads: data, autoencoder,
denoiser, schedule, sampling, methods, injections, seeds, edit, evaluate, seg_cldm (and paper_scale with
paper_scale)."""

from pathlib import Path

import pandas as pd

from neurips26.anadiffusion.summary import TABLES
from neurips26.common.report import write_report
from neurips26.common.runtime import start_job

log = start_job(snakemake)
tables = {Path(path).stem: pd.read_parquet(path) for path in snakemake.input.tables}
missing = [name for name in TABLES if name not in tables]
if missing:
    raise ValueError(f"the report needs the tables {missing}; give A/tables/<name>.parquet for each")
write_report(snakemake, **{name: tables[name].drop(columns=["git_commit", "config_hash"], errors="ignore")
                           for name in TABLES})  # fmt: skip
log.info("report written")
