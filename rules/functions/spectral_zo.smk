# Helpers of paper 13's rules (rules/spectral_zo.smk): paths, inputs, params, and the checks of the config that the
# schema cannot express (run when the workflow is parsed, before any job).
from neurips26.common.config import ConfigError
from neurips26.spectral_zo import settings as spectral_zo_settings

SZ = "results/{scale}/spectral_zo"
SZ_LOG = "results/{scale}/spectral_zo/logs"
SZ_BENCH = "results/{scale}/spectral_zo/benchmarks"
SZ_FIGURES = ["alignment_probes", "alignment_dimension", "accuracy"]
SZ_MEASUREMENTS = ["alignment", "bias_variance", "dimension"]
SZ_IDX = {
    "train_images": "train-images-idx3-ubyte.gz",
    "train_labels": "train-labels-idx1-ubyte.gz",
    "test_images": "t10k-images-idx3-ubyte.gz",
    "test_labels": "t10k-labels-idx1-ubyte.gz",
}

for _scale in checked_scales(PAPERS, "spectral_zo"):
    try:
        spectral_zo_settings.check_config(paper_config("spectral_zo", _scale), _scale)
    except ValueError as error:
        raise ConfigError(
            f"invalid config in config/spectral_zo.yaml:\n  {_scale}: {error}"
        ) from None


def sz_config(wildcards):
    return paper_config("spectral_zo", wildcards.scale)


def sz_dataset(wildcards):
    datasets = sz_config(wildcards)["datasets"]
    if wildcards.dataset not in datasets:
        raise ValueError(
            f"spectral_zo has no dataset {wildcards.dataset!r} at scale "
            f"{wildcards.scale}; known: {sorted(datasets)}"
        )
    return datasets[wildcards.dataset]


@reads("spectral_zo", ("datasets",))
def sz_dataset_params(wildcards):
    return sz_dataset(wildcards)


def sz_data_inputs(wildcards):
    """The registered files of a downloaded dataset (paper scale); nothing for the offline wheels."""
    source = sz_dataset(wildcards)["source"]
    if source in ("mnist", "fashion_mnist"):
        return {key: f"resources/{source}/{name}" for key, name in SZ_IDX.items()}
    if source == "cifar10":
        return {"archive": "resources/cifar10/cifar-10-python.tar.gz"}
    return {}


def sz_section_data(section):
    """Input function: the data file of the dataset a measurement section names."""

    def data(wildcards):
        return f"{SZ}/data/{sz_config(wildcards)[section]['dataset']}.npz".format(
            scale=wildcards.scale
        )

    return data


def sz_methods(section):
    """A params function: the definitions of the methods a section runs (name -> estimator and options)."""

    @reads("spectral_zo", ("methods",), (section, "methods"))
    def methods(wildcards):
        cfg = sz_config(wildcards)
        return {name: cfg["methods"][name] for name in cfg[section]["methods"]}

    return methods


@reads("spectral_zo", ("methods",))
def sz_train_method(wildcards):
    return sz_config(wildcards)["methods"][wildcards.method]


@reads("spectral_zo", ("alignment", "hidden"))
def sz_check_hidden(wildcards):
    return sz_config(wildcards)["alignment"]["hidden"]


def sz_runs(wildcards):
    cfg = sz_config(wildcards)
    return [
        f"{SZ}/runs/{dataset}/{method}_{kind}.parquet".format(scale=wildcards.scale)
        for dataset in cfg["train"]["datasets"]
        for method in cfg["train"]["methods"]
        for kind in ("curves",)
    ]


def sz_tables_inputs(wildcards):
    curves = sz_runs(wildcards)
    return {
        "curves": curves,
        "tuning": [c.replace("_curves.parquet", "_tuning.parquet") for c in curves],
        "spectral": expand(
            f"{SZ}/spectral/a{{alpha}}.parquet",
            scale=wildcards.scale,
            alpha=sz_config(wildcards)["spectral"]["alphas"],
        ),
    }


@reads("spectral_zo", ("train", "methods"), ("methods",))
def sz_comparisons(wildcards):
    """The names the claims compare: fixed by the method registry, with Z5's SZO variants those trained."""
    cfg = sz_config(wildcards)
    trained = cfg["train"]["methods"]
    return {
        "probes": (
            16 if 16 in cfg["alignment"]["probes"] else max(cfg["alignment"]["probes"])
        ),
        "szo": (
            ["szo_k1", "szo_k2"]
            if "szo_k2" in cfg["alignment"]["methods"]
            else ["szo_k1"]
        ),
        "null": "szo_k0",
        "wp": "wp_global",
        "spsa": "spsa",
        "orth": "szo_k1_orth",
        "iid": "szo_k1",
        "corrected": [
            [raw, f"{raw}_bc"]
            for raw in ("szo_k1", "szo_k2")
            if f"{raw}_bc" in cfg["bias_variance"]["methods"]
        ],
        "corrected_null": ["szo_k0", "szo_k0_bc"],
        "szo_train": [m for m in trained if m.startswith("szo_") and m != "szo_k0"],
        "backprop": "backprop",
        "node_perturbation": "node_perturbation",
        "spectral_szo": "szo_k1",
        "spectral_layer": "layer0",
    }


SZ_INPUTS = {
    "digits": 64,
    "mnist5k": 784,
    "mnist": 784,
    "fashion_mnist": 784,
    "cifar10": 3072,
}


def sz_plan_train(wildcards, scale):
    """The work of one training job for the plan of a scale: forward passes (tuning runs and seeded runs) x batch x
    the network's weights."""
    cfg = scale_block(PAPERS, "spectral_zo", scale)
    t, data = cfg["train"], cfg["datasets"][wildcards.dataset]
    widths = [SZ_INPUTS[data["source"]] + 1, *data["hidden"], 10]
    weights = sum(a * b for a, b in zip(widths[:-1], widths[1:]))
    return t["budget"] * (len(t["lr_grid"]) + len(t["seeds"])) * t["batch"] * weights


def sz_plan_alignment(wildcards, scale):
    """Estimator calls x probes x batch x weights of the alignment job."""
    a = scale_block(PAPERS, "spectral_zo", scale)["alignment"]
    widths = [SZ_INPUTS["mnist"] + 1, *a["hidden"], 10]
    weights = sum(x * y for x, y in zip(widths[:-1], widths[1:]))
    calls = len(a["seeds"]) * len(a["steps"]) * a["repeats"] * len(a["methods"])
    return calls * sum(a["probes"]) * a["batch"] * weights


PLAN_WORK["spectral_zo_train"] = sz_plan_train
PLAN_WORK["spectral_zo_alignment"] = sz_plan_alignment
