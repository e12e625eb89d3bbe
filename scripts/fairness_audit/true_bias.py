"""The "true bias" of one data set: a validation-tuned MLP trained on every feature set of the grid (full set,
leave-one-out sets, singletons) and on the removal sets of the feature-selection rankings (Shapley of the aligned
measures, the marginal ranking, random orders), with its SP and EO gaps and information quantities on a test split."""

import json

import pandas as pd

from neurips26.common.io import write_parquet, write_text
from neurips26.common.runtime import job_provenance, start_job
from neurips26.fairness_audit import experiment
from neurips26.fairness_audit.artifacts import load_audit_data
from neurips26.fairness_audit.attribution import attribution_table, selection_rankings
from neurips26.fairness_audit.true_bias import true_bias_table

params, name = snakemake.params, snakemake.wildcards.dataset
tb, sel, seed = params.true_bias, params.selection, params.seed
log = start_job(snakemake, seed=tb["seed"])
data, _ = load_audit_data(snakemake.input.data, snakemake.input.meta)
players = list(data.players)
coalitions = pd.read_parquet(snakemake.input.coalitions)
attributions = attribution_table(coalitions, players, params.shapley["method"], params.shapley["permutations"], seed)
rankings = selection_rankings(attributions, players, sel, params.measures, seed)
sets = experiment.true_bias_coalitions(players, rankings, sel["k_max"])
log.info("%s: %d feature sets, rankings %s", name, len(sets), rankings)
table = true_bias_table(data, sets, tb["split"], tb["grid"], tb["seed"], tb["max_iter"])
for r in table.itertuples():
    log.info("%-30s acc %.3f SP %.3f EO %.3f", r.coalition, r.accuracy, r.sp_gap, r.eo_gap)
write_parquet(table, snakemake.output.table, job_provenance(snakemake, tb["seed"]))
write_text(snakemake.output.rankings, json.dumps(rankings, indent=1))
