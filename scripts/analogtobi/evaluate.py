"""Per-sample metrics of one sample set: validity (ERC and the designer rule), novelty against the training circuits
(ports verbatim and by class), the 10-gram test against the walks its configuration trained on (verbatim and
index-free), the classifiers' types (ports verbatim and by class), ngspice on the first valid circuits, and the
realism features; ngspice simulations per second."""

import pickle

import pandas as pd

from neurips26.analogtobi import experiment
from neurips26.analogtobi.evaluation import evaluate_samples
from neurips26.analogtobi.metrics import NoveltyIndex
from neurips26.analogtobi.netlist import parse
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

p = snakemake.params.evaluate
name, seed = snakemake.wildcards.config, int(snakemake.wildcards.seed)
log = start_job(snakemake, seed)
samples = pd.read_parquet(snakemake.input.samples)
circuits = pd.read_parquet(snakemake.input.circuits)
train = circuits[circuits["split"] == "train"]
train_circuits = [parse(c.netlist, c.path, duplicate_names="renumber") for c in train.itertuples()]
novelty = NoveltyIndex(train_circuits)
novelty_canonical = NoveltyIndex(train_circuits, canonical_ports=True)
walks = pd.read_parquet(snakemake.input.walks)
train_walks = [w.split() for w in walks.loc[walks["split"] == "train", "tokens"]]
# what the configuration trained on (the random baseline is compared with the typed bipartite walks)
trained_as = "bipart-type-norename" if name == experiment.RANDOM else name
training = experiment.training_walks(train_walks, trained_as, seed, p["rename_pool"])
with open(snakemake.input.classifier, "rb") as f:
    classifiers = pickle.load(f)
rep = "bipart" if name == experiment.RANDOM else experiment.parse_config_name(name)["rep"]
records = [{**r, "tokens": r["tokens"].split()} for r in samples.to_dict("records")]
rows, sims = evaluate_samples(
    records, rep, novelty, training, classifiers["verbatim"].predict, ngram=p["ngram"],
    spice_per_type=p["spice_per_type"], spice_timeout_s=p["spice_timeout_s"], novelty_canonical=novelty_canonical,
    classify_canonical=classifiers["canonical"].predict, log=log.info,
)  # fmt: skip
metrics = pd.concat([samples.drop(columns=["tokens"]), pd.DataFrame(rows)], axis=1)
for decoding, group in metrics.groupby("decoding"):
    log.info("%s %s: valid %.3f, novel %.3f, memorised %.3f, spice %s", name, decoding, group["valid"].mean(),
             group["novel"].mean(), group["memorised"].mean(), group["spice"].value_counts().to_dict())  # fmt: skip
spice_rate = sims["simulations"] / sims["seconds"] if sims["seconds"] > 0 else float("nan")
timing = pd.DataFrame([{"config": name, "seed": seed, "simulations": sims["simulations"],
                        "spice_seconds": sims["seconds"], "simulations_per_s": spice_rate}])  # fmt: skip
prov = job_provenance(snakemake, seed)
write_parquet(metrics, snakemake.output.metrics, prov)
write_parquet(timing, snakemake.output.timing, prov)
