# Helpers of paper 10's rules (rules/seqrec_audit.smk): paths, input lists, downloads, and the checks of the
# config that the schema cannot express (run when the workflow is parsed, before any job).
from neurips26.common.config import ConfigError
from neurips26.seqrec_audit import experiment as sa_experiment
from neurips26.seqrec_audit.catalog import movielens100k_files

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

for _scale in checked_scales(PAPERS, "seqrec_audit"):
    try:
        sa_experiment.check_config(paper_config("seqrec_audit", _scale))
    except ValueError as error:
        raise ConfigError(
            f"invalid config in config/seqrec_audit.yaml:\n  {_scale}: {error}"
        ) from None


def sa_config(wildcards):
    return paper_config("seqrec_audit", wildcards.scale)


def _sa_kind(wildcards):
    return sa_experiment.dataset_kind(wildcards.dataset)


@reads("seqrec_audit", ("synthetic",))
def sa_synthetic(wildcards):
    """The generator's size, for a synthetic regime (None for real data, which does not read it)."""
    if _sa_kind(wildcards) != "synthetic":
        return None
    return sa_config(wildcards)["synthetic"]


@reads("seqrec_audit", ("k_core",))
def sa_k_core(wildcards):
    """The k-core of real data (None for a synthetic regime, which does not read it)."""
    return (
        None if _sa_kind(wildcards) == "synthetic" else sa_config(wildcards)["k_core"]
    )


@reads("seqrec_audit", ("text_dim",))
def sa_text_dim(wildcards):
    """The width of the hashed text features, read by the Amazon datasets only."""
    if _sa_kind(wildcards) != "amazon2014":
        return None
    return sa_config(wildcards)["text_dim"]


@reads("seqrec_audit", ("embeddings",))
def sa_embeddings(wildcards):
    """This dataset's precomputed item embeddings (optional `embeddings` block), or None."""
    return sa_config(wildcards).get("embeddings", {}).get(wildcards.dataset)


@reads("seqrec_audit", ("sasrec",), ("bert4rec",), ("tiger",))
def sa_model_settings(wildcards):
    """The settings block of the job's model (TIGER's without its `rqvae`, read by the semantic-ID step)."""
    block = sa_config(wildcards)[wildcards.model]
    return {key: value for key, value in block.items() if key != "rqvae"}


@reads(
    "seqrec_audit",
    *(
        (model, key)
        for model in ("sasrec", "bert4rec", "tiger")
        for key in ("d_model", "n_blocks", "n_layers", "epochs", "lr")
    ),
)
def sa_report_models(wildcards):
    """What the report says of each trained model: depth, width, epochs and learning rate."""
    cfg = sa_config(wildcards)
    keys = ("d_model", "n_blocks", "n_layers", "epochs", "lr")
    return {
        name: {key: cfg[name][key] for key in keys if key in cfg[name]}
        for name in cfg["trained"]["models"]
    }


@reads("seqrec_audit", ("replicates",))
def sa_replicate_block(wildcards):
    """The optional `replicates` block (empty lists when the scale has none)."""
    return sa_config(wildcards).get("replicates", {"datasets": [], "seeds": []})


@reads("seqrec_audit", ("bound",))
def sa_bound_block(wildcards):
    """The optional `bound` block (C1's training-free bound: regime, first_seed, n_seeds), or None."""
    return sa_config(wildcards).get("bound")


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
    """`pattern` of every train job of the datasets: one per (dataset, model, seed group)."""
    cfg = sa_config(wildcards)
    return [
        pattern.format(scale=wildcards.scale, dataset=dataset, model=model, seeds=seeds)
        for dataset in (sa_datasets(wildcards) if datasets is None else datasets)
        for model, seeds in sa_experiment.trained_jobs(cfg)
    ]


def sa_trained_metrics(wildcards):
    return _sa_trained(
        wildcards, f"{SA}/metrics/{{dataset}}/{{model}}_s{{seeds}}.parquet"
    )


def sa_trained_training(wildcards):
    return _sa_trained(
        wildcards, f"{SA}/training/{{dataset}}/{{model}}_s{{seeds}}.parquet"
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
        f"{SA}/metrics/{{dataset}}/{{model}}_s{{seeds}}.parquet",
        sa_replicates(wildcards),
    )


def sa_replicate_diagnostics(wildcards):
    return expand(
        f"{SA}/diagnostics/{{dataset}}.parquet",
        scale=wildcards.scale,
        dataset=sa_replicates(wildcards),
    )
