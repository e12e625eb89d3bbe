"""Paper 05's claims: measured by the library, decided against config/claims/bbo_pile.yaml."""

import pandas as pd

from neurips26.bbo_pile.claims import measure_claims
from neurips26.common.claims import decide, load_definitions, log_verdicts
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

inp, params = snakemake.input, snakemake.params
log = start_job(snakemake)
runs = pd.read_parquet(inp.runs)
# the final validation loss of B3's run for each model seed: the first copy's from the runs table, the further
# copies' from their training logs (B5's seed noise)
seed_losses = runs.loc[runs["run"] == params.run, "val_loss"].tolist() + [
    float(pd.read_parquet(p).sort_values("flops")["val_loss"].iloc[-1]) for p in inp.seed_training
]
measured = measure_claims(
    pd.read_parquet(inp.scaling),
    pd.read_parquet(inp.imitation_trajectories),
    pd.read_parquet(inp.regret),
    pd.read_parquet(inp.validity),
    seed_losses,
    condition=params.condition,
)
table = decide(load_definitions(inp.definitions), measured)
log_verdicts(table, log)
write_parquet(table, snakemake.output[0], job_provenance(snakemake))
