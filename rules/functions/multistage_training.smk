# Helpers of paper 16's rules (rules/multistage_training.smk): paths, input lists, and the checks of the config that
# the schema cannot express (run when the workflow is parsed, before any job).
from neurips26.common.config import ConfigError
from neurips26.multistage_training import experiment as mt_experiment

MT = "results/{scale}/multistage_training"
MT_LOG = "results/{scale}/multistage_training/logs"
MT_BENCH = "results/{scale}/multistage_training/benchmarks"
MT_PHENOMENA = list(mt_experiment.PHENOMENA)
MT_FIGURES = ["complementarity", "ceiling", "allocation", "amplification", "agreement"]


def _mt_thresholds(cfg):
    """The comparisons block must state the claims file's thresholds (the claims file decides)."""
    from neurips26.common.claims import load_definitions
    from neurips26.multistage_training.thresholds import threshold_mismatches

    definitions = load_definitions(ROOT / claims_definitions("multistage_training"))
    mismatches = threshold_mismatches(definitions, cfg["comparisons"])
    if mismatches:
        raise ValueError(
            "comparisons disagree with config/claims/multistage_training.yaml: "
            + "; ".join(mismatches)
        )


for _scale in checked_scales(PAPERS, "multistage_training"):
    try:
        mt_experiment.check_config(paper_config("multistage_training", _scale))
        _mt_thresholds(paper_config("multistage_training", _scale))
    except ValueError as error:
        raise ConfigError(
            f"invalid config in config/multistage_training.yaml:\n  {_scale}: {error}"
        ) from None


def mt_config(wildcards):
    return paper_config("multistage_training", wildcards.scale)


@reads(
    "multistage_training",
    ("complementarity",),
    ("plateau",),
    ("ceiling",),
    ("allocation",),
    ("amplification",),
    ("pretraining",),
)
def mt_block(wildcards):
    """The config block of the job's phenomenon."""
    return mt_config(wildcards)[wildcards.phenomenon]


@reads("multistage_training", ("simulation", "configs"))
def mt_run(wildcards):
    runs = mt_config(wildcards)["simulation"]["configs"]
    if wildcards.config not in runs:
        raise ValueError(
            f"multistage_training has no simulation config {wildcards.config!r} at scale "
            f"{wildcards.scale}; known: {sorted(runs)}"
        )
    return runs[wildcards.config]


@reads(
    "multistage_training",
    ("simulation", "runs"),
    ("simulation", "batch"),
    ("simulation", "record_every"),
)
def mt_sampling(wildcards):
    sim = mt_config(wildcards)["simulation"]
    return {k: sim[k] for k in ("runs", "batch", "record_every")}


def mt_simulations(wildcards):
    sim = mt_config(wildcards)["simulation"]
    return [
        f"{MT}/simulation/{name}_s{seed}.parquet".format(scale=wildcards.scale)
        for name in sim["configs"]
        for seed in sim["seeds"]
    ]


@reads("multistage_training", ("model", "demo_quality"), ("model", "chain_length"))
def mt_comparisons(wildcards):
    """What the claims job reads besides its tables: the model's rho and L (K1's fixed point rho^L); the thresholds
    are the claims file's, checked at parse time against the comparisons block."""
    model = mt_config(wildcards)["model"]
    return {
        "demo_quality": model["demo_quality"],
        "chain_length": model["chain_length"],
    }
