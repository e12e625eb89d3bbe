# Helpers of paper 13's rules (rules/spectral_zo.smk): paths, inputs, params, and the checks of the config that the
# schema cannot express (run when the workflow is parsed, before any job).
from neurips26.common.config import ConfigError
from neurips26.spectral_zo import settings as spectral_zo_settings

SZ = "results/{scale}/spectral_zo"
SZ_LOG = "results/{scale}/spectral_zo/logs"
SZ_BENCH = "results/{scale}/spectral_zo/benchmarks"
SZ_FIGURES = ["alignment_probes", "alignment_dimension", "accuracy"]
# the sections measured on a dataset; the tables of the geometry job; the keys of train a training job reads
SZ_MEASUREMENTS = ["alignment", "bias_variance", "dimension"]
SZ_GEOMETRY = [*SZ_MEASUREMENTS, "spectral", "checks", "cost"]
SZ_TRAIN_RUN = [
    "budget",
    "probes",
    "eps",
    "batch",
    "evals",
    "lr_grid",
    "tune_seed",
    "seeds",
]
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


# memory requests (MB) of the geometry and training jobs at paper scale and below; a quarter bounds the probe tensors
# of one batched pass (estimators.set_probe_bound: chunks of probes past it), the rest holds the directions, the data
# and the interpreter
SZ_MEM_MB = {"geometry": (32000, 2000), "train": (16000, 1000)}
SZ_PROBE_SHARE = 4


def sz_mem_mb(job):
    """The memory request (MB) of a geometry or training job: its paper value at paper scale, else the small one."""
    paper, small = SZ_MEM_MB[job]
    return lambda wildcards: paper if wildcards.scale == "paper" else small


def sz_probe_bytes(job):
    """The bound of one batched pass's probe tensors: a quarter of the job's memory request, in bytes."""
    mem = sz_mem_mb(job)
    return lambda wildcards: mem(wildcards) * 2**20 // SZ_PROBE_SHARE


def sz_train_runtime(wildcards):
    """Minutes a training job requests: at paper scale the cost model of its group's runs on its GPU
    (settings.train_minutes: every run's steps x probes x batch x weights, margin 3); 20 below.
    """
    if wildcards.scale != "paper":
        return 20
    cfg = sz_config(wildcards)
    source = cfg["datasets"][wildcards.dataset]["source"]
    return spectral_zo_settings.train_minutes(
        cfg, wildcards.dataset, wildcards.group, SZ_INPUTS[source]
    )


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


def sz_geometry_data(wildcards):
    """The data file of the dataset each measured section names (the checks use the alignment section's)."""
    cfg = sz_config(wildcards)
    return {
        section: f"{SZ}/data/{cfg[section]['dataset']}.npz".format(
            scale=wildcards.scale
        )
        for section in SZ_MEASUREMENTS
    }


@reads(
    "spectral_zo",
    ("methods",),
    *[(section, "methods") for section in (*SZ_MEASUREMENTS, "spectral")],
)
def sz_geometry_methods(wildcards):
    """Per measured section, the definitions of the methods it runs (name -> estimator and options)."""
    cfg = sz_config(wildcards)
    return {
        section: {name: cfg["methods"][name] for name in cfg[section]["methods"]}
        for section in (*SZ_MEASUREMENTS, "spectral")
    }


@reads("spectral_zo", ("methods",), ("train", "groups"))
def sz_group_methods(wildcards):
    """The methods of one training group (train.groups), name -> definition, in the group's order."""
    cfg = sz_config(wildcards)
    groups = cfg["train"]["groups"]
    if wildcards.group not in groups:
        raise ValueError(
            f"spectral_zo has no training group {wildcards.group!r} at scale "
            f"{wildcards.scale}; known: {sorted(groups)}"
        )
    return {name: cfg["methods"][name] for name in groups[wildcards.group]}


@reads("spectral_zo", *[("train", key) for key in SZ_TRAIN_RUN])
def sz_train_settings(wildcards):
    """What a training job reads of the train block: the run settings, not the lists of datasets and groups."""
    train = sz_config(wildcards)["train"]
    return {key: train[key] for key in SZ_TRAIN_RUN}


def sz_runs(wildcards):
    """The training and tuning tables of every (dataset, group) job."""
    cfg = sz_config(wildcards)
    runs = [
        f"{SZ}/runs/{dataset}/{group}".format(scale=wildcards.scale)
        for dataset in cfg["train"]["datasets"]
        for group in cfg["train"]["groups"]
    ]
    return {
        "runs_curves": [f"{run}_curves.parquet" for run in runs],
        "runs_tuning": [f"{run}_tuning.parquet" for run in runs],
    }


@reads("spectral_zo", ("train", "methods"), ("methods",))
def sz_comparisons(wildcards):
    """The names the claims compare: fixed by the method registry, with Z5's SZO variants those trained.

    Z1, Z2 and Z6's nulls carry activation information without the spectral shaping (the mean activation
    direction alone, AGZO's subspace); Z4's is a correction by a mismatched (centred) C; Z5's AGZO trained alike.
    """
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
        "nulls": ["szo_k1_mean", "agzo_r8"],
        "centred": "szo_k1_centred",
        "wp": "wp_global",
        "spsa": "spsa",
        "orth": "szo_k1_orth",
        "iid": "szo_k1",
        "corrected": [
            [raw, f"{raw}_bc"]
            for raw in ("szo_k1", "szo_k2")
            if f"{raw}_bc" in cfg["bias_variance"]["methods"]
        ],
        "corrected_null": ["szo_k1", "szo_k1_bcx"],
        "szo_train": [m for m in trained if m.startswith("szo_") and m != "szo_k0"],
        "train_null": "agzo_r8",
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
    """The work of one training job for the plan of a scale: its group's methods x forward passes (tuning runs and
    seeded runs) x batch x the network's weights."""
    cfg = scale_block(PAPERS, "spectral_zo", scale)
    t, data = cfg["train"], cfg["datasets"][wildcards.dataset]
    widths = [SZ_INPUTS[data["source"]] + 1, *data["hidden"], 10]
    weights = sum(a * b for a, b in zip(widths[:-1], widths[1:]))
    methods = len(t["groups"][wildcards.group])
    return (
        methods
        * t["budget"]
        * (len(t["lr_grid"]) + len(t["seeds"]))
        * t["batch"]
        * weights
    )


def sz_plan_geometry(wildcards, scale):
    """Estimator calls x probes x batch x weights of the geometry job's alignment section (its largest)."""
    a = scale_block(PAPERS, "spectral_zo", scale)["alignment"]
    widths = [SZ_INPUTS["mnist"] + 1, *a["hidden"], 10]
    weights = sum(x * y for x, y in zip(widths[:-1], widths[1:]))
    calls = len(a["seeds"]) * len(a["steps"]) * a["repeats"] * len(a["methods"])
    return calls * sum(a["probes"]) * a["batch"] * weights


PLAN_WORK["spectral_zo_train"] = sz_plan_train
PLAN_WORK["spectral_zo_geometry"] = sz_plan_geometry
