# Helpers of paper 15's rules (rules/softlabel_audit.smk): paths, input lists, and the checks of the config that the
# schema cannot express (run when the workflow is parsed, before any job).
from neurips26.common.config import ConfigError
from neurips26.softlabel_audit import experiment as softlabel_experiment

SL = "results/{scale}/softlabel_audit"
SL_LOG = "results/{scale}/softlabel_audit/logs"
SL_BENCH = "results/{scale}/softlabel_audit/benchmarks"
SL_FIGURES = ["reliability", "cartography", "metrics"]
# the registered files each source reads (config/sources.yaml); the wheel's digits need none
SL_SOURCE_FILES = {
    "mnist5k": {},
    "mnist": {
        "images": "resources/mnist/train-images-idx3-ubyte.gz",
        "labels": "resources/mnist/train-labels-idx1-ubyte.gz",
    },
    "cifar10h": {
        "votes": "resources/cifar10h/cifar10h-raw.zip",
        "probs": "resources/cifar10h/cifar10h-probs.npy",
        "images": "resources/cifar10/cifar-10-python.tar.gz",
    },
}

for _scale in checked_scales(PAPERS, "softlabel_audit"):
    try:
        softlabel_experiment.check_config(paper_config("softlabel_audit", _scale))
    except ValueError as error:
        raise ConfigError(
            f"invalid config in config/softlabel_audit.yaml:\n  {_scale}: {error}"
        ) from None


def sl_config(wildcards):
    return paper_config("softlabel_audit", wildcards.scale)


def sl_dataset_spec(wildcards):
    datasets = sl_config(wildcards)["datasets"]
    if wildcards.dataset not in datasets:
        raise ValueError(
            f"softlabel_audit has no dataset {wildcards.dataset!r} at scale "
            f"{wildcards.scale}; known: {sorted(datasets)}"
        )
    return datasets[wildcards.dataset]


@reads("softlabel_audit", ("datasets",))
def sl_dataset(wildcards):
    return sl_dataset_spec(wildcards)


@reads("softlabel_audit", ("panel",))
def sl_panel(wildcards):
    """The simulated panel's settings; none for real human votes."""
    if sl_dataset_spec(wildcards)["source"] == "cifar10h":
        return {}
    return sl_config(wildcards)["panel"]


def sl_data_inputs(wildcards):
    return SL_SOURCE_FILES[sl_dataset_spec(wildcards)["source"]]


def sl_per_dataset(name):
    """An input function: file `name` of every dataset of the scale."""

    def files(wildcards):
        return [
            f"{SL}/{name}".format(scale=wildcards.scale, dataset=d)
            for d in sl_config(wildcards)["datasets"]
        ]

    return files


def sl_primary(name):
    """An input function: file `name` of the primary dataset (comparisons.primary)."""

    def file(wildcards):
        primary = sl_config(wildcards)["comparisons"]["primary"]
        return f"{SL}/{name}".format(scale=wildcards.scale, dataset=primary)

    return file
