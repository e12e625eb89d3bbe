"""Make one data set: an SCM scenario draw, or a real data set read from its raw files; stored as Parquet (A, Y,
features) with a JSON of its feature groups and how it was made."""

from neurips26.common.io import write_parquet, write_text
from neurips26.common.runtime import job_provenance, start_job
from neurips26.fairness_audit import experiment, real_data
from neurips26.fairness_audit.artifacts import audit_meta

settings, name = snakemake.params, snakemake.wildcards.dataset
seed = settings.seed
log = start_job(snakemake, seed=seed)
raw = list(snakemake.input.raw)  # a real data set's raw files (none for an SCM draw)
if experiment.parse_dataset(name)["kind"] == "real":
    real = settings.real
    options = {"min_group": settings.min_group, "impute": real["impute"]}
    if name == "adult":
        options["missing"] = real["missing"]
    data = real_data.READERS[name](*raw, **options)
    params = {"source": real["source"], "files": raw}
else:
    data, params = experiment.scm_dataset({"seed": seed, "min_group": settings.min_group, "scm": settings.scm}, name)
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
