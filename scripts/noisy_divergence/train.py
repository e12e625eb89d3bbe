"""Train one job ({job} = shape, QK-norm, LR multiplier, group): every noise setting and seed of it as one batched
ensemble in the common loop (divergence recorded as an outcome, checkpoint beside the summary); then measure the
machine's matmul rate with the job's threads, for the report's tokens/s against GEMM FLOP/s."""

import numpy as np

from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.common.token_files import read_tokens
from neurips26.noisy_divergence import artifacts
from neurips26.noisy_divergence.model import LM, LMConfig, n_parameters
from neurips26.noisy_divergence.training import TrainSettings, train_ensemble

p = snakemake.params.job
runs = p["runs"]
log = start_job(snakemake)


def stream(files):
    """One token file stays memory-mapped (a noised stream: 8.9 GB at paper scale); shards are joined in memory."""
    return read_tokens(files[0]) if len(files) == 1 else np.concatenate([read_tokens(f) for f in files])


streams = {s: stream(files) for s, files in p["streams"].items()}
val = stream(list(snakemake.input.val))
models = [LM(LMConfig(**p["model"], seed=run["seed"])) for run in runs]
labels = [f"{run['setting']} seed {run['seed']}" for run in runs]
log.info(
    "%s: %d runs as one ensemble (%s); parameters %s; streams %s",
    snakemake.wildcards.job,
    len(runs),
    ", ".join(labels),
    n_parameters(models[0]),
    {s: len(t) for s, t in streams.items()},
)
settings = TrainSettings(**{**p["train"], "betas": tuple(p["train"]["betas"])})
loop_settings = loop.LoopSettings(
    checkpoint=loop.checkpoint_path(snakemake.output.summary),
    fingerprint=fingerprint(dict(snakemake.params), list(snakemake.input)),
    name=f"train {snakemake.wildcards.job}",
)
device = loop.job_device()
results, outcome = train_ensemble(
    models,
    [run["seed"] for run in runs],
    [streams[run["setting"]] for run in runs],
    val,
    settings,
    log=log.info,
    loop_settings=loop_settings,
    device=device,
    labels=labels,
)
if outcome.diverged is not None:
    log.info("every run of the job diverged; the loop recorded: %s", outcome.diverged)
seconds = artifacts.training_seconds(results)
m, batch_tokens = p["model"], settings.batch_size * settings.seq_len
where = "cpu" if device.type == "meta" else device.type
gemm = {
    "model": artifacts.matmul_rate(batch_tokens, m["d_model"], m["d_ff"], snakemake.params.matmul_repeats, where),
    "512": artifacts.matmul_rate(512, 512, 512, snakemake.params.matmul_repeats, where),
}
tables = artifacts.job_tables(p, snakemake.wildcards.job, results, seconds, gemm)
log.info("throughput: %s", tables["throughput"].to_dict("records")[0])
prov = job_provenance(snakemake)
for name, table in tables.items():
    write_parquet(table, snakemake.output[name], prov)
loop.finish(loop_settings)
