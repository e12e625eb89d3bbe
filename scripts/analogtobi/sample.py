"""Sample one set ({config}_s{seed}, or random_s{seed}): ``per_type`` walks per circuit type of the training data with
every decoding of the configuration (grammar-guided and free for bipartite walks), timed; the random-logits baseline
samples under the grammar without a model, each walk closing once it holds as many devices as a training circuit of
its type drawn at random (the data's size distribution); the log gives the device counts its walks reached."""

import numpy as np
import pandas as pd
import torch

from neurips26.analogtobi import experiment
from neurips26.analogtobi.model import GPT, GPTConfig
from neurips26.analogtobi.sampling import sample_walks
from neurips26.analogtobi.tokens import split_device
from neurips26.common import loop
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

p = snakemake.params.sample
name, seed = snakemake.wildcards.config, int(snakemake.wildcards.seed)
log = start_job(snakemake, seed)
rep = "bipart" if name == experiment.RANDOM else experiment.parse_config_name(name)["rep"]
typed = name == experiment.RANDOM or experiment.parse_config_name(name)["typed"]
vocab = experiment.vocabulary(rep)
model = None
if snakemake.input.get("model"):
    saved = torch.load(snakemake.input.model, map_location="cpu", weights_only=True)
    model = GPT(GPTConfig(**saved["config"]))
    model.load_state_dict(saved["state"])
    model.to(loop.job_device()).eval()
circuits = pd.read_parquet(snakemake.input.circuits)
types = sorted(circuits.loc[circuits["split"] == "train", "type"].unique())
requests = experiment.prompts(p["per_type"], name, types)
targets = None
if model is None:
    counts = circuits[circuits["split"] == "train"].groupby("type")["n_devices"].apply(list)
    rng = np.random.default_rng([seed, 3])
    targets = [int(rng.choice(counts[t])) for t, _ in requests]
rows, timing = [], []
for k, decoding in enumerate(experiment.decodings(name)):
    walks, seconds = sample_walks(
        model, vocab, [prompt for _, prompt in requests], max_len=p["max_len"][rep], temperature=p["temperature"],
        grammar=decoding == "grammar", typed=typed, seed=seed * 1000 + k, batch_size=p["batch_size"],
        target_devices=targets,
    )  # fmt: skip
    done = sum(w.terminated for w in walks)
    log.info("%s %s: %d walks in %.1f s (%.1f per s), %d terminated", name, decoding, len(walks), seconds,
             len(walks) / seconds, done)  # fmt: skip
    if targets is not None:
        reached = [len({t for t in w.tokens if split_device(t)}) for w in walks]
        log.info("random baseline device counts: target median %d (range %d-%d), reached median %d (range %d-%d), "
                 "terminated walks reached their target: %d/%d", np.median(targets), min(targets), max(targets),
                 np.median(reached), min(reached), max(reached),
                 sum(r >= t for r, t, w in zip(reached, targets, walks) if w.terminated), done)  # fmt: skip
    timing.append({"config": name, "seed": seed, "decoding": decoding, "samples": len(walks), "seconds": seconds,
                   "circuits_per_s": len(walks) / seconds})  # fmt: skip
    rows += [{"config": name, "seed": seed, "decoding": decoding, "typed": typed, "type": t, "index": i,
              "tokens": " ".join(w.tokens), "terminated": w.terminated, "length": len(w.tokens)}
             for i, ((t, _), w) in enumerate(zip(requests, walks))]  # fmt: skip
prov = job_provenance(snakemake, seed)
write_parquet(pd.DataFrame(rows), snakemake.output.samples, prov)
write_parquet(pd.DataFrame(timing), snakemake.output.timing, prov)
