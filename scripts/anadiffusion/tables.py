"""Paper 03's report tables: the regional Frechet distances (seed and bootstrap intervals), Cohen's |d|, the editing
scores, memorization, and the project page's Tables 1, 2 and Fig. 4a beside ours.

snakemake.input: fd, cohen_d, edit, memorization, conditioning (evaluation/*.parquet; conditioning: the Seg. cLDM's
check, whose failure marks its rows untrained).
snakemake.params: dataset (the config's data.source), bootstrap (replicates of the editing table's subject-cluster
bootstrap: the config's evaluate.bootstrap).
snakemake.output: A/tables/<name>.parquet and/or A/tables/<name>.md for names of summary.TABLES (the file's stem
names the table, its suffix the format)."""

from pathlib import Path

import pandas as pd

from neurips26.anadiffusion.summary import TABLES, report_tables
from neurips26.common.io import write_parquet, write_text
from neurips26.common.report import markdown_table
from neurips26.common.runtime import job_provenance, start_job

inp, p = snakemake.input, snakemake.params
log = start_job(snakemake)
evaluation = {name: pd.read_parquet(inp[name]) for name in ("fd", "cohen_d", "edit", "memorization")}
tables = report_tables(
    *evaluation.values(),
    p.dataset,
    snakemake.wildcards.scale,
    int(p.bootstrap),
    conditioning=pd.read_parquet(inp.conditioning),
)
prov = job_provenance(snakemake)
for path in map(Path, snakemake.output):
    if path.stem not in TABLES:
        raise ValueError(f"{path}: no table named {path.stem!r}; the tables are {list(TABLES)}")
    if path.suffix == ".parquet":
        write_parquet(tables[path.stem], path, prov)
    else:
        write_text(path, markdown_table(tables[path.stem]) + "\n")
    log.info("%s: %d rows", path, len(tables[path.stem]))
