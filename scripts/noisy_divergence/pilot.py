"""The edge-of-stability pilot (neurips26.noisy_divergence.pilot): each grid entry (an optimizer variant, a learning
rate multiplier, the settings it trains) as one batched ensemble of the pilot seeds on the deep shape without
QK-norm, then each run's outcome: the detector's verdict, the largest rise of the smoothed loss, a failure to learn."""

import time

import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.loop import job_device
from neurips26.common.runtime import job_provenance, start_job
from neurips26.common.token_files import read_tokens
from neurips26.noisy_divergence.model import LM, LMConfig
from neurips26.noisy_divergence.pilot import VARIANTS, outcome, unigram_entropy_of_files
from neurips26.noisy_divergence.streams import run_stream
from neurips26.noisy_divergence.training import TrainSettings, train_ensemble

p = snakemake.params.pilot
log = start_job(snakemake)
clean, val = read_tokens(snakemake.input.train[0]), read_tokens(snakemake.input.val[0])
# the unigram level of the stream the pilot trains on (its first training file), counted as the tables job counts it
unigram = unigram_entropy_of_files(list(snakemake.input.train)[:1], p["model"]["vocab_size"])
rows = []
for entry in p["grid"]:
    runs = [(setting, seed) for setting in entry["settings"] for seed in p["seeds"]]
    train = {**p["train"], "betas": tuple(p["train"]["betas"]), "lr": p["train"]["lr"] * entry["lr_multiplier"]}
    settings = TrainSettings(**{**train, **VARIANTS[entry["variant"]]})
    streams = [run_stream(clean, s, p["noise"], p["model"]["vocab_size"], seed).tokens for s, seed in runs]
    started = time.perf_counter()
    results, _ = train_ensemble(
        [LM(LMConfig(**p["model"], seed=seed)) for _, seed in runs],
        [seed for _, seed in runs],
        streams,
        val,
        settings,
        log=lambda _: None,
        device=job_device(),
    )
    for (setting, seed), r in zip(runs, results):
        losses = [row["train_loss"] for row in r.steps]
        rows.append(
            {
                "variant": entry["variant"],
                "lr_multiplier": entry["lr_multiplier"],
                "setting": setting,
                "seed": seed,
                **outcome(losses, unigram, **p["divergence"], non_finite_step=r.non_finite_step),
                "unigram_entropy": unigram,
            }
        )
    done = pd.DataFrame(rows[-len(runs) :])
    log.info(
        "%s x%g (%.0f s): diverged %d/%d, failed to learn %d/%d, largest rise %.3g",
        entry["variant"],
        entry["lr_multiplier"],
        time.perf_counter() - started,
        done["diverged"].sum(),
        len(done),
        done["failed_to_learn"].sum(),
        len(done),
        done["largest_rise"].max(),
    )
write_parquet(pd.DataFrame(rows), snakemake.output.pilot, job_provenance(snakemake))
