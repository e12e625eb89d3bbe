# Helpers of paper 01's rules (rules/pred_loss_space.smk): paths, config lookups, input lists, and the
# checks of the config that the schema cannot express (run when the workflow is parsed, before any job).
from neurips26.common.config import ConfigError
from neurips26.pred_loss_space import experiment as pls_experiment

PLS = "results/{scale}/pred_loss_space"
PLS_LOG = "results/{scale}/pred_loss_space/logs"
PLS_BENCH = "results/{scale}/pred_loss_space/benchmarks"
PLS_RUN = (
    "{dataset}/{arch}/{pred}x{loss}/s{seeds}"  # seeds: the job's seed group, 0 or 0-1-2
)
PLS_INCEPTION = f"resources/{pls_experiment.INCEPTION}"
PLS_FIGURES = [
    "mse_heatmaps",
    "fd_heatmaps",
    "amplification",
    "loss_weights",
    "samples",
]

for _scale in checked_scales(PAPERS, "pred_loss_space"):
    try:
        pls_experiment.check_config(paper_config("pred_loss_space", _scale))
    except ValueError as error:
        raise ConfigError(
            f"invalid config in config/pred_loss_space.yaml:\n  {_scale}: {error}"
        ) from None


def pls_config(wildcards):
    return paper_config("pred_loss_space", wildcards.scale)


@reads("pred_loss_space", ("datasets",))
def pls_dataset(wildcards):
    return pls_config(wildcards)["datasets"][wildcards.dataset]


def pls_feature_inputs(wildcards):
    """Image datasets are scored on the features of a classifier the pipeline trains; toys need none."""
    if pls_dataset(wildcards)["kind"] == "toy":
        return []
    return [f"{PLS}/features/{wildcards.dataset}.pt".format(scale=wildcards.scale)]


def pls_fid_inputs(wildcards):
    """Inception weights and the training set's Inception statistics, where true FID is configured."""
    if not pls_experiment.uses_inception(pls_config(wildcards), wildcards.dataset):
        return []
    return [
        PLS_INCEPTION,
        f"{PLS}/fid_reference/{wildcards.dataset}.npz".format(scale=wildcards.scale),
    ]


def pls_run_dirs(wildcards):
    return [
        f"{PLS}/runs/{job}".format(scale=wildcards.scale)
        for job in pls_experiment.job_ids(pls_config(wildcards))
    ]


def pls_run_metrics(wildcards):
    return [f"{d}/metrics.parquet" for d in pls_run_dirs(wildcards)]


def pls_run_samples(wildcards):
    return [f"{d}/samples.npz" for d in pls_run_dirs(wildcards)]


@reads(
    "pred_loss_space",
    ("regimes",),
    ("preds",),
    ("losses",),
    ("seeds",),
    ("seeds_per_job",),
)
def pls_run_ids(wildcards):
    """One id per job: '{dataset}/{arch}/{pred}x{loss}/s{seed group}'."""
    return pls_experiment.job_ids(pls_config(wildcards))


@reads("pred_loss_space", ("archs",), ("datasets",))
def pls_model_spec(wildcards):
    return pls_experiment.model_spec(
        pls_config(wildcards), wildcards.dataset, wildcards.arch
    )


@reads("pred_loss_space", ("regimes",), ("archs",), ("datasets",))
def pls_output_ranks(wildcards):
    """'dataset/arch' -> [token dimension, width] of every bottleneck regime (the claims' rank-floor check)."""
    return pls_experiment.output_ranks(pls_config(wildcards))


@reads("pred_loss_space", ("regimes",))
def pls_bottleneck(wildcards):
    return pls_experiment.regime_of(
        pls_config(wildcards), wildcards.dataset, wildcards.arch
    )["bottleneck"]


def pls_data_files(wildcards):
    """The data of every regime (the figures read the toy's projection from it)."""
    datasets = sorted({r["dataset"] for r in pls_config(wildcards)["regimes"]})
    return [f"{PLS}/data/{d}.npz".format(scale=wildcards.scale) for d in datasets]


def pls_archive_inputs(wildcards):
    """The downloaded archive a dataset is read from (paper scale), none for data that ships offline."""
    path = pls_experiment.archive(pls_dataset(wildcards))
    return [] if path is None else [f"resources/{path}"]


@reads("pred_loss_space", ("train",), ("regimes",))
def pls_train(wildcards):
    """The training settings, with the regime's own step count where it sets one."""
    return pls_experiment.train_settings(
        pls_config(wildcards), wildcards.dataset, wildcards.arch
    )
