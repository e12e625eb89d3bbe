"""Gather paper 06's results: coalition values, Shapley attributions, true bias, the validation table (Spearman of
each measure with the true gaps), the DPI check, the (data set, feature set) pairs of measure and true bias, the
feature-selection experiment and a summary of the data sets."""

import json

import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.fairness_audit import experiment, validation
from neurips26.fairness_audit.attribution import attribution_table

inp, out, params = snakemake.input, snakemake.output, snakemake.params
seed, shapley_cfg = params.seed, params.shapley
log = start_job(snakemake, seed=seed)
PROV = ["git_commit", "config_hash"]
coalitions = pd.concat([pd.read_parquet(p).drop(columns=PROV) for p in inp.coalitions], ignore_index=True)
true_bias = pd.concat([pd.read_parquet(p).drop(columns=PROV) for p in inp.true_bias], ignore_index=True)
metas = [json.loads(open(p).read()) for p in inp.meta]
players = {m["audit"]["name"]: list(m["audit"]["groups"]) for m in metas}
shapley = pd.concat(
    [
        attribution_table(group, players[dataset], shapley_cfg["method"], shapley_cfg["permutations"], seed).assign(
            dataset=dataset, estimator=estimator
        )
        for (dataset, estimator), group in coalitions.groupby(["dataset", "estimator"], sort=False)
    ],
    ignore_index=True,
)
n_boot = params.n_boot
table = validation.validation_table(coalitions, true_bias, n_boot=n_boot, seed=seed)
nonpredictive = [d for d in players if experiment.scenario_of(d) == "nonpredictive_proxy"]
table_np = validation.validation_table(coalitions, true_bias, n_boot=n_boot, seed=seed, datasets=nonpredictive)
dpi = validation.dpi_table(coalitions, true_bias, "ce")
pairs = validation.pairs_table(coalitions, true_bias)
rankings = {}
for path in inp.rankings:
    dataset = path.rsplit("/", 1)[1].removesuffix("_rankings.json")
    rankings[dataset] = json.loads(open(path).read())
selection = validation.selection_from_true_bias(true_bias, rankings, params.k_max)
random_removal = pd.DataFrame([{"dataset": d, **validation.expected_random_removal(true_bias, d, 1)} for d in players])
rate = coalitions.groupby(["dataset", "estimator"])[["coalitions_per_second", "seconds"]].first().reset_index()
datasets = pd.DataFrame(
    [
        {
            "dataset": m["audit"]["name"],
            "scenario": experiment.scenario_of(m["audit"]["name"]),
            "players": len(m["audit"]["groups"]),
            "n_imputed": m["audit"].get("n_imputed", 0),
            "roles": ", ".join(m["params"].get("roles", [])) if isinstance(m["params"], dict) else "",
        }
        for m in metas
    ]
)
datasets = datasets.merge(
    rate.pivot(index="dataset", columns="estimator", values="coalitions_per_second")
    .add_prefix("coalitions_per_s_")
    .reset_index(),
    on="dataset",
)
log.info(
    "validation (CE, aligned):\n%s",
    table[(table["estimator"] == "ce") & table["aligned"]][["measure", "gap", "spearman", "n_pairs"]].to_string(),
)
prov = job_provenance(snakemake, seed)
for name, frame in (
    ("shapley", shapley),
    ("validation", table),
    ("validation_nonpredictive", table_np),
    ("dpi", dpi),
    ("pairs", pairs),
    ("selection", selection),
    ("random_removal", random_removal),
    ("datasets", datasets),
    ("true_bias", true_bias),
    ("coalitions", coalitions),
):
    write_parquet(frame, out[name], prov)
