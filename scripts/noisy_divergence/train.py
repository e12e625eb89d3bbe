"""Train one job ({job} = shape, QK-norm, LR multiplier, group): every noise setting and seed of it as one batched
ensemble in the common loop (divergence recorded as an outcome, checkpoint beside the summary), each run reading the
clean stream noised with its own seed's placement, every run measured on the same noisy probe; then measure the
machine's matmul rate with the job's threads, for the report's tokens/s against GEMM FLOP/s."""

import numpy as np

from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.common.token_files import read_tokens
from neurips26.noisy_divergence import artifacts
from neurips26.noisy_divergence.model import LM, LMConfig, n_parameters
from neurips26.noisy_divergence.streams import probe_stream, run_stream
from neurips26.noisy_divergence.training import TrainSettings, train_ensemble

p = snakemake.params.job
runs = p["runs"]
log = start_job(snakemake)


def stream(files):
    """One token file stays memory-mapped; shards are joined in memory (the clean stream: 3.6 GB at paper scale)."""
    return read_tokens(files[0]) if len(files) == 1 else np.concatenate([read_tokens(f) for f in files])


clean = stream(list(snakemake.input.train))
val = stream(list(snakemake.input.val))
vocab_size = p["model"]["vocab_size"]
streams = [run_stream(clean, run["setting"], p["noise"], vocab_size, run["seed"]) for run in runs]
settings = TrainSettings(**{**p["train"], "betas": tuple(p["train"]["betas"])})
# the noisy probe, the same for every run: micro_batch fixed windows of the validation stream noised by the reference
# setting, with their noise mask and the reference's noise ids
probe = probe_stream(val, p["noise"], vocab_size)
probe_tokens, probe_mask = probe.probe(settings.micro, settings.seq_len, p["noise"]["seed"])
models = [LM(LMConfig(**p["model"], seed=run["seed"])) for run in runs]
labels = [f"{run['setting']} seed {run['seed']}" for run in runs]
log.info(
    "%s: %d runs as one ensemble (%s); parameters %s; streams %s",
    snakemake.wildcards.job,
    len(runs),
    ", ".join(labels),
    n_parameters(models[0]),
    {f"{run['setting']} seed {run['seed']}": len(s.tokens) for s, run in zip(streams, runs)},
)
loop_settings = loop.LoopSettings(
    checkpoint=loop.checkpoint_path(snakemake.output.summary),
    fingerprint=fingerprint(dict(snakemake.params), list(snakemake.input)),
    name=f"train {snakemake.wildcards.job}",
)
device = loop.job_device()
results, outcome = train_ensemble(
    models,
    [run["seed"] for run in runs],
    [s.tokens for s in streams],
    val,
    settings,
    log=log.info,
    loop_settings=loop_settings,
    device=device,
    labels=labels,
    noisy_probes=(np.stack([probe_tokens] * len(runs)), np.stack([probe_mask] * len(runs))),
    noise_ids=[probe.noise_ids] * len(runs),
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
