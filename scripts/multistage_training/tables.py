"""Paper 16's tables in one place: each phenomenon's table, and the simulations of every configuration and seed."""

from pathlib import Path

import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

inp, out = snakemake.input, snakemake.output
log = start_job(snakemake)
prov = job_provenance(snakemake)
for path in inp.phenomena:
    write_parquet(pd.read_parquet(path), out[Path(path).stem], prov)
simulation = pd.concat([pd.read_parquet(f) for f in inp.simulations], ignore_index=True)
write_parquet(simulation, out.simulation, prov)
log.info("%d phenomena; simulation: %d rows from %d runs", len(inp.phenomena), len(simulation), len(inp.simulations))
