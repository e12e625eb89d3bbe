"""Train one run of a sweep ({arch}/{method}_lr{i}_s{seed}): per-step losses, the spectra of the vocabulary-indexed
matrices and router, and a one-row summary (final validation loss, divergence, spikes, optimizer time). Training
runs in the common loop on the job's device (a GPU at paper scale), checkpointing beside the summary so that a
killed or preempted job resumes where it stopped."""

from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.symm_optim import artifacts
from neurips26.symm_optim.model import LM, LMConfig, n_parameters
from neurips26.symm_optim.training import TrainSettings, train_lm

p = snakemake.params.run
run, assignment, seed = p["run"], p["assignment"], p["run"]["seed"]
log = start_job(snakemake, seed=seed)
train, val = artifacts.read_stream(snakemake.input.train), artifacts.read_stream(snakemake.input.val)
model = LM(LMConfig(**p["model"]))
log.info(
    "%s: %d training / %d validation tokens; parameters %s; optimizers %s",
    run["name"],
    len(train),
    len(val),
    n_parameters(model),
    assignment,
)
loop_settings = loop.LoopSettings(
    checkpoint=loop.checkpoint_path(snakemake.output.summary),
    fingerprint=fingerprint(dict(snakemake.params), list(snakemake.input)),
    name=f"train {run['name']}",
)
result = train_lm(
    model,
    assignment,
    train,
    val,
    TrainSettings(**p["train"]),
    spectrum_steps=tuple(p["spectrum_steps"]),
    log=log.info,
    loop_settings=loop_settings,
    device=loop.job_device(),
)
tables = artifacts.run_tables(run, result, assignment, n_parameters(model))
log.info(artifacts.outcome_line(run["name"], result, tables["summary"]))
prov = job_provenance(snakemake, seed)
for name, table in tables.items():
    write_parquet(table, snakemake.output[name], prov)
loop.finish(loop_settings)
