"""Train one job of a sweep ({arch}/{method}_lr{i}_s{seeds}): the runs of a cell's seeds as one batched ensemble
(one seed per job at paper scale). Per run: per-step losses, the spectra of the vocabulary-indexed matrices and
router, and a summary row (final validation loss, divergence, spikes, optimizer time); each table holds the job's
runs one after the other. Training runs in the common loop on the job's device (a GPU at paper scale),
checkpointing beside the summary so that a killed or preempted job resumes where it stopped."""

from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.symm_optim import artifacts
from neurips26.symm_optim.model import LM, LMConfig, n_parameters
from neurips26.symm_optim.training import TrainSettings, train_ensemble

p = snakemake.params.job
runs, assignment = p["runs"], p["assignment"]
seeds = [run["seed"] for run in runs]
seed = seeds[0] if len(seeds) == 1 else None  # the global random state is not read; each member has its own seed
log = start_job(snakemake, seed=seed)
train, val = artifacts.read_stream(snakemake.input.train), artifacts.read_stream(snakemake.input.val)
models = [LM(LMConfig(**p["model"], seed=s)) for s in seeds]
counts = n_parameters(models[0])
log.info(
    "%s: seeds %s as one ensemble; %d training / %d validation tokens; parameters %s; optimizers %s",
    snakemake.wildcards.arch + "/" + snakemake.wildcards.method,
    seeds,
    len(train),
    len(val),
    counts,
    assignment,
)
loop_settings = loop.LoopSettings(
    checkpoint=loop.checkpoint_path(snakemake.output.summary),
    fingerprint=fingerprint(dict(snakemake.params), list(snakemake.input)),
    name=f"train {' '.join(run['name'] for run in runs)}",
)
results = train_ensemble(
    models,
    seeds,
    assignment,
    train,
    val,
    TrainSettings(**p["train"]),
    spectrum_steps=tuple(p["spectrum_steps"]),
    log=log.info,
    loop_settings=loop_settings,
    device=loop.job_device(),
)
tables = artifacts.job_tables(runs, results, assignment, counts)
for run, result in zip(runs, results):
    log.info(artifacts.outcome_line(run["name"], result))
prov = job_provenance(snakemake, seed)
for name, table in tables.items():
    write_parquet(table, snakemake.output[name], prov)
loop.finish(loop_settings)
