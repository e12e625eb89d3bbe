"""Behaviour-cloning demonstrations: for each corpus molecule, the environment's action sequence that builds it
from its scaffold (breadth-first decoration), replayed and checked to give back the same molecule."""

import json

import pandas as pd

from neurips26.amortix import environment as env
from neurips26.amortix import experiment
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
config = experiment.env_config(params.env, params.max_heavy)
molecules = pd.read_parquet(snakemake.input.corpus)
scaffolds = {s: env.make_scaffold(s, config) for s in molecules["scaffold"].unique()}
actions = [env.demonstration(m, scaffolds[s], config) for m, s in zip(molecules["smiles"], molecules["scaffold"])]
built = [a is not None for a in actions]
table = molecules.loc[built, ["smiles", "scaffold"]].assign(
    actions=[json.dumps(a) for a in actions if a is not None], n_actions=[len(a) for a in actions if a is not None]
)
log.info(
    "%d of %d molecules have a demonstration within %d new atoms and %d actions (%d actions in all)",
    len(table),
    len(molecules),
    config.max_new_atoms,
    config.max_actions,
    int(table["n_actions"].sum()),
)
write_parquet(table, snakemake.output[0], job_provenance(snakemake, params.seed))
