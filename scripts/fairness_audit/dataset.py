"""Make one data set: an SCM scenario draw, or a real data set read from its raw files; stored as Parquet (A, Y,
features) with a JSON of its feature groups and how it was made."""

from neurips26.common.io import write_parquet, write_text
from neurips26.common.runtime import job_provenance, start_job
from neurips26.fairness_audit.artifacts import audit_meta
from neurips26.fairness_audit.experiment import make_dataset

settings, name = snakemake.params, snakemake.wildcards.dataset
seed = settings.seed
log = start_job(snakemake, seed=seed)
data, params = make_dataset(name, settings, list(snakemake.input.raw))  # raw: none for an SCM draw
log.info(
    "%s: n=%d, players %s, P(A=1)=%.3f, P(Y=1)=%.3f, %d values imputed",
    name,
    data.n,
    data.players,
    data.a.mean(),
    data.y.mean(),
    data.n_imputed,
)
write_parquet(data.to_frame()[0], snakemake.output.data, job_provenance(snakemake, seed))
write_text(snakemake.output.meta, audit_meta(data, params))
