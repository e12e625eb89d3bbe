"""Make one data set: an SCM scenario draw, or a real data set read from its raw files; stored as Parquet (A, Y,
features) with a JSON of its feature groups and how it was made."""

from neurips26.common.io import write_parquet, write_text
from neurips26.common.runtime import job_provenance, start_job
from neurips26.fairness_audit import experiment, real_data
from neurips26.fairness_audit.storage import audit_meta

cfg, name = snakemake.params.config, snakemake.wildcards.dataset
log = start_job(snakemake, seed=cfg["seed"])
if experiment.parse_dataset(name)["kind"] == "real":
    options = {"min_group": cfg["min_group"], "impute": cfg["impute"]}
    if name == "adult":
        options["missing"] = cfg["real"]["missing"]
    data = real_data.READERS[name](*snakemake.input, **options)
    params = {"source": cfg["real"]["source"], "files": list(snakemake.input)}
else:
    data, params = experiment.scm_dataset(cfg, name)
log.info("%s: n=%d, players %s, P(A=1)=%.3f, P(Y=1)=%.3f, %d values imputed", name, data.n, data.players,
         data.a.mean(), data.y.mean(), data.n_imputed)
write_parquet(data.to_frame()[0], snakemake.output.data, job_provenance(snakemake, cfg["seed"]))
write_text(snakemake.output.meta, audit_meta(data, params))
