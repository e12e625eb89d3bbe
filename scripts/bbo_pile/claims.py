"""Paper 05's claims: measured by the library, decided against config/claims/bbo_pile.yaml."""

import pandas as pd

from neurips26.bbo_pile.claims import measure_claims
from neurips26.bbo_pile.summary import model_seed_losses
from neurips26.common.claims import decide, load_definitions, log_verdicts
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

inp, params = snakemake.input, snakemake.params
log = start_job(snakemake)
# the final validation loss of B3's run for each model seed (B5's seed noise)
seed_losses = model_seed_losses(pd.read_parquet(inp.runs), params.run, params.seed, inp.seed_training)
measured = measure_claims(
    pd.read_parquet(inp.scaling),
    pd.read_parquet(inp.imitation_trajectories),
    pd.read_parquet(inp.regret),
    pd.read_parquet(inp.validity),
    list(seed_losses.values()),
    condition=params.condition,
)
table = decide(load_definitions(inp.definitions), measured)
log_verdicts(table, log)
write_parquet(table, snakemake.output[0], job_provenance(snakemake))
