# Helpers of paper 10's rules (rules/seqrec_audit.smk): paths, input lists, downloads, and the checks of the
# config that the schema cannot express (run when the workflow is parsed, before any job).
from neurips26.common.config import ConfigError
from neurips26.seqrec_audit import experiment as sa_experiment
from neurips26.seqrec_audit.data import movielens100k_files
from neurips26.seqrec_audit.sources import DOWNLOADS as SA_DOWNLOADS

SA = "results/{scale}/seqrec_audit"
SA_LOG = "results/{scale}/seqrec_audit/logs"
SA_BENCH = "results/{scale}/seqrec_audit/benchmarks"
SA_DATA = f"{SA}/data/{{dataset}}"
SA_FIGURES = ["ndcg_table", "gain_vs_diagnostics", "training_curves"]
SA_PREPARED = {
    "sequences": "sequences.parquet",
    "item_table": "items.parquet",
    "counts": "counts.parquet",
    "features": "features.npy",
}

for _scale in ("smoke", "quick", "paper"):
    try:
        sa_experiment.check_config(paper_config("seqrec_audit", _scale))
    except ValueError as error:
        raise ConfigError(
            f"invalid config in config/seqrec_audit.yaml:\n  {_scale}: {error}"
        ) from None


def sa_config(wildcards):
    return paper_config("seqrec_audit", wildcards.scale)


def sa_job_config(wildcards):
    """A dataset job's settings: the scale's block without the replicate list (see experiment.job_config)."""
    return sa_experiment.job_config(sa_config(wildcards))


def sa_prepared(wildcards):
    """The prepared dataset's files, as named inputs."""
    base = SA_DATA.format(scale=wildcards.scale, dataset=wildcards.dataset)
    return {name: f"{base}/{file}" for name, file in SA_PREPARED.items()}


def sa_source(wildcards):
    """What the prepare step reads: nothing for a synthetic regime, ML-100k's atomic files inside the recbole
    wheel, or the downloaded files of a paper-scale dataset."""
    kind = sa_experiment.dataset_kind(wildcards.dataset)
    if kind == "synthetic":
        return {}
    if kind == "movielens100k":
        return {key: str(path) for key, path in movielens100k_files().items()}
    return {
        role: f"resources/seqrec_audit/{file}"
        for role, file in sa_experiment.source_files(wildcards.dataset).items()
    }


def sa_download_url(wildcards):
    return SA_DOWNLOADS[wildcards.file][0]


def sa_download_hash(wildcards):
    return SA_DOWNLOADS[wildcards.file][1]


def sa_datasets(wildcards):
    return sa_config(wildcards)["datasets"]


def sa_train_inputs(wildcards):
    """The prepared dataset, and for TIGER the items' semantic IDs."""
    inputs = sa_prepared(wildcards)
    if wildcards.model == "tiger":
        inputs["semantic_ids"] = f"{SA_DATA}/semantic_ids.parquet".format(
            scale=wildcards.scale, dataset=wildcards.dataset
        )
    return inputs


def sa_training_free(wildcards):
    return expand(
        f"{SA}/metrics/{{dataset}}/training_free.parquet",
        scale=wildcards.scale,
        dataset=sa_datasets(wildcards),
    )


def sa_replicates(wildcards):
    """The replicate datasets (synthetic regimes regenerated with other data seeds) of this scale."""
    return sa_experiment.replicate_datasets(sa_config(wildcards))


def _sa_trained(wildcards, pattern, datasets=None):
    trained = sa_config(wildcards)["trained"]
    return expand(
        pattern,
        scale=wildcards.scale,
        dataset=sa_datasets(wildcards) if datasets is None else datasets,
        model=trained["models"],
        seed=trained["seeds"],
    )


def sa_trained_metrics(wildcards):
    return _sa_trained(
        wildcards, f"{SA}/metrics/{{dataset}}/{{model}}_s{{seed}}.parquet"
    )


def sa_trained_training(wildcards):
    return _sa_trained(
        wildcards, f"{SA}/training/{{dataset}}/{{model}}_s{{seed}}.parquet"
    )


def sa_diagnostics(wildcards):
    return expand(
        f"{SA}/diagnostics/{{dataset}}.parquet",
        scale=wildcards.scale,
        dataset=sa_datasets(wildcards),
    )


def sa_counts(wildcards):
    return expand(
        f"{SA}/data/{{dataset}}/counts.parquet",
        scale=wildcards.scale,
        dataset=sa_datasets(wildcards),
    )


def sa_replicate_training_free(wildcards):
    return expand(
        f"{SA}/metrics/{{dataset}}/training_free.parquet",
        scale=wildcards.scale,
        dataset=sa_replicates(wildcards),
    )


def sa_replicate_trained(wildcards):
    return _sa_trained(
        wildcards,
        f"{SA}/metrics/{{dataset}}/{{model}}_s{{seed}}.parquet",
        sa_replicates(wildcards),
    )


def sa_replicate_diagnostics(wildcards):
    return expand(
        f"{SA}/diagnostics/{{dataset}}.parquet",
        scale=wildcards.scale,
        dataset=sa_replicates(wildcards),
    )
