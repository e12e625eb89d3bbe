# Helpers of paper 17's rules (rules/gplvm_assvi.smk): paths, input lists, and the checks of the config that the
# schema cannot express (run when the workflow is parsed, before any job).
from neurips26.common.config import ConfigError
from neurips26.gplvm_assvi import experiment as gp_experiment

GP = "results/{scale}/gplvm_assvi"
GP_LOG = "results/{scale}/gplvm_assvi/logs"
GP_BENCH = "results/{scale}/gplvm_assvi/benchmarks"
GP_FIGURES = ["latent_spaces", "uncertainty_maps", "metrics"]
GP_RUN_TABLES = ["metrics", "latents", "grid"]

for _scale in checked_scales(PAPERS, "gplvm_assvi"):
    try:
        gp_experiment.check_config(paper_config("gplvm_assvi", _scale))
    except ValueError as error:
        raise ConfigError(
            f"invalid config in config/gplvm_assvi.yaml:\n  {_scale}: {error}"
        ) from None


def gp_config(wildcards):
    return paper_config("gplvm_assvi", wildcards.scale)


def gp_dataset(wildcards):
    datasets = gp_config(wildcards)["datasets"]
    if wildcards.dataset not in datasets:
        raise ValueError(
            f"gplvm_assvi has no dataset {wildcards.dataset!r} at scale "
            f"{wildcards.scale}; known: {sorted(datasets)}"
        )
    return datasets[wildcards.dataset]


def gp_data_inputs(wildcards):
    """The locked oil-flow archive for the oil dataset; nothing for a generated manifold."""
    if gp_dataset(wildcards)["source"] == "oil_flow":
        return {"archive": "resources/oil_flow/3PhData.tar.gz"}
    return {}


GP_SHAPE_KEYS = ("latent_dim", "inducing")


@reads("gplvm_assvi", ("datasets",))
def gp_dataset_params(wildcards):
    """What the data job reads: the dataset block without the model's sizes."""
    return {k: v for k, v in gp_dataset(wildcards).items() if k not in GP_SHAPE_KEYS}


@reads("gplvm_assvi", ("datasets",))
def gp_shape_params(wildcards):
    """What the model jobs read of a dataset: the latent dimension and the inducing points."""
    return {k: gp_dataset(wildcards)[k] for k in GP_SHAPE_KEYS}


def gp_data(wildcards):
    return {
        "data": f"{GP}/data/{wildcards.dataset}.npz".format(scale=wildcards.scale),
        "surface": f"{GP}/data/{wildcards.dataset}_surface.npy".format(
            scale=wildcards.scale
        ),
    }


@reads("gplvm_assvi", ("methods",), ("seeds",), ("dataset_seeds",), ("ablation",))
def gp_runs_of(wildcards):
    """The runs of one dataset, as [method, seed] pairs in the order of the models' input."""
    cfg = gp_config(wildcards)
    return [
        [m, s]
        for m in gp_experiment.methods_of(cfg, wildcards.dataset)
        for s in gp_experiment.seeds_of(cfg, wildcards.dataset)
    ]


def gp_models(wildcards):
    return [
        f"{GP}/runs/{wildcards.dataset}/{m}_s{s}.pt".format(scale=wildcards.scale)
        for m, s in gp_runs_of(wildcards)
    ]


def gp_all_tables(wildcards):
    cfg = gp_config(wildcards)
    per_dataset = lambda pattern: [
        pattern.format(scale=wildcards.scale, dataset=d) for d in cfg["datasets"]
    ]
    return {
        "metrics": per_dataset(f"{GP}/runs/{{dataset}}/evaluation_metrics.parquet")
        + per_dataset(f"{GP}/runs/{{dataset}}/pca_metrics.parquet"),
        "latents": per_dataset(f"{GP}/runs/{{dataset}}/evaluation_latents.parquet"),
        "grids": per_dataset(f"{GP}/runs/{{dataset}}/evaluation_grid.parquet"),
        "traces": [
            f"{GP}/runs/{d}/{m}_s{s}_trace.parquet".format(scale=wildcards.scale)
            for d, m, s in gp_experiment.runs(cfg)
        ],
    }


@reads("gplvm_assvi", ("comparisons",), ("methods",))
def gp_comparisons(wildcards):
    cfg = gp_config(wildcards)
    return {**cfg["comparisons"], "gplvms": cfg["methods"]}
