"""Train one configuration's generator ({config}_s{seed}) on its walks in the common loop (checkpoint beside the
model, resumed by a retry); the model's weights and the training curve."""

from dataclasses import asdict

import numpy as np
import pandas as pd
import torch

from neurips26.analogtobi import experiment
from neurips26.analogtobi.model import GPTConfig, n_parameters
from neurips26.analogtobi.tokens import END
from neurips26.analogtobi.training import TrainSettings, train_gpt
from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

p = snakemake.params.train
name, seed = snakemake.wildcards.config, int(snakemake.wildcards.seed)
spec = experiment.parse_config_name(name)
log = start_job(snakemake, seed)
walks = pd.read_parquet(snakemake.input.walks)
vocab = experiment.vocabulary(spec["rep"])
ids = {t: i for i, t in enumerate(vocab.tokens)}


def encode(sequences: list[list[str]]) -> np.ndarray:
    rows = np.full((len(sequences), p["context"] + 1), ids[END], dtype=np.int32)
    for i, s in enumerate(sequences):
        rows[i, : len(s)] = [ids[t] for t in s]
    return rows


train_walks = [w.split() for w in walks.loc[walks["split"] == "train", "tokens"]]
sequences = experiment.training_walks(train_walks, name, seed, p["rename_pool"])
held_out = experiment.training_walks([w.split() for w in walks.loc[walks["split"] == "test", "tokens"]],
                                     name, seed, p["rename_pool"])  # fmt: skip
config = GPTConfig(vocab_size=len(vocab), context=p["context"], seed=seed, **p["model"])
settings = TrainSettings(**p["train"], seed=seed)
loop_settings = loop.LoopSettings(
    checkpoint=loop.checkpoint_path(snakemake.output.model),
    fingerprint=fingerprint(dict(snakemake.params), list(snakemake.input)),
    name=f"train {name} seed {seed}",
)
log.info("%s seed %d: %d training walks, %d held out; vocabulary %d", name, seed, len(sequences), len(held_out),
         len(vocab))  # fmt: skip
model, logged, result = train_gpt(
    encode(sequences), encode(held_out), config, settings, end=ids[END], device=loop.job_device(),
    loop_settings=loop_settings, log=log.info,
)  # fmt: skip
curve = pd.DataFrame(logged).assign(config=name, seed=seed, seconds=result.seconds, parameters=n_parameters(model))
torch.save(
    {"config": asdict(config), "state": {k: v.cpu() for k, v in model.state_dict().items()}}, snakemake.output.model
)
write_parquet(curve, snakemake.output.curve, job_provenance(snakemake, seed))
loop.finish(loop_settings)
