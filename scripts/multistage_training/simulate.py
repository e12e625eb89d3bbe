"""One configuration and seed of paper 16's stochastic SFT -> RL pipeline (independent runs), beside the mean-field
solution after as many demonstrations and updates."""

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.multistage_training.experiment import model_params, simulation_table

p = snakemake.params
w = snakemake.wildcards
seed = int(w.seed)
log = start_job(snakemake, seed)
table = simulation_table(model_params(p.model), p.run, seed, **p.sampling)
gap = (table["success_sim"] - table["success_theory"]).abs().max()
log.info("%s seed %d: %d records, largest |simulation - theory| %.4f", w.config, seed, len(table), gap)
write_parquet(table.assign(config=w.config, seed=seed), snakemake.output[0], job_provenance(snakemake, seed))
