# Helpers of paper 11's rules (rules/ecfr.smk): paths, input lists, and the checks of the config that the schema
# cannot express (run when the workflow is parsed, before any job).
from neurips26.common.config import ConfigError
from neurips26.ecfr import experiment as ecfr_experiment
from neurips26.ecfr.names import EYECANDIES_CLASSES

EC = "results/{scale}/ecfr"
EC_LOG = "results/{scale}/ecfr/logs"
EC_BENCH = "results/{scale}/ecfr/benchmarks"
EC_FIGURES = ["anomaly_maps", "metrics", "complexity"]
EC_ARCHIVES = {
    "mvtec3d": {"archive": "resources/ecfr/mvtec_3d_anomaly_detection.tar.xz"},
    "eyecandies": {
        "archive": [f"resources/ecfr/eyecandies/{c}.tar" for c in EYECANDIES_CLASSES]
    },
}
EC_TEACHER_WEIGHTS = "resources/ecfr/resnet34-b627a593.pth"

for _scale in checked_scales(PAPERS, "ecfr"):
    try:
        ecfr_experiment.check_config(paper_config("ecfr", _scale))
    except ValueError as error:
        raise ConfigError(
            f"invalid config in config/ecfr.yaml:\n  {_scale}: {error}"
        ) from None


def ec_config(wildcards):
    return paper_config("ecfr", wildcards.scale)


def ec_dataset(wildcards):
    datasets = ec_config(wildcards)["datasets"]
    if wildcards.dataset not in datasets:
        raise ValueError(
            f"ecfr has no dataset {wildcards.dataset!r} at scale "
            f"{wildcards.scale}; known: {sorted(datasets)}"
        )
    return datasets[wildcards.dataset]


@reads("ecfr", ("datasets",))
def ec_dataset_params(wildcards):
    return ec_dataset(wildcards)


@reads("ecfr", ("datasets",))
def ec_tuning_dataset_params(wildcards):
    """The tuning draw's dataset block: the synthetic set only (a real set has one fixed draw, scored), without its
    `data_seed` (the draw's own seed, t<data seed>, is the tuning block's)."""
    dataset = ec_dataset(wildcards)
    if dataset["source"] != "synthetic":
        raise ValueError(
            f"ecfr's tuning pilot draws the synthetic set only; {wildcards.dataset!r} is {dataset['source']!r}"
        )
    return {key: value for key, value in dataset.items() if key != "data_seed"}


@reads("ecfr", ("train",))
def ec_tuning_train(wildcards):
    """The train block the tuning pilot reads: it fits unified models only, so not `per_class`."""
    train = ec_config(wildcards)["train"]
    return {key: value for key, value in train.items() if key != "per_class"}


def ec_data_inputs(wildcards):
    """The registered archive of a real dataset; nothing for the synthetic set."""
    return EC_ARCHIVES.get(ec_dataset(wildcards)["source"], {})


def ec_teacher_inputs(wildcards):
    """ImageNet ResNet-34 weights for the paper's teacher; nothing for the pretext teacher (its pictures ship)."""
    if ec_config(wildcards)["teacher"]["source"] == "resnet34":
        return {"weights": EC_TEACHER_WEIGHTS}
    return {}


def ec_draw(dataset: dict, seed) -> str:
    """Which draw of a dataset a seed's runs use: the synthetic set is drawn anew per seed (data_seed + seed), so
    that the seed spread covers the data; a real dataset is one fixed set. (The tuning pilot's draw is t<data seed>,
    ec_tuning_data.)"""
    return f"s{seed}" if dataset["source"] == "synthetic" else "fixed"


@reads("ecfr", ("tuning",))
def ec_tuning(wildcards):
    """The tuning pilot's block (quick, smoke); paper scale has none: it takes the reference's settings."""
    cfg = ec_config(wildcards)
    if "tuning" not in cfg:
        raise ValueError(
            f"ecfr has no tuning pilot at scale {wildcards.scale}: its settings are the reference's"
        )
    return cfg["tuning"]


@reads("ecfr", ("tuning",))
def ec_tuning_or_none(wildcards):
    """The tuning block for the report's text; None at paper scale (the reference's settings)."""
    return ec_config(wildcards).get("tuning")


def ec_tuning_data(wildcards):
    """The tuning draw of the primary synthetic set (draw t<data seed>), which no claim scores."""
    primary = ec_config(wildcards)["comparisons"]["primary"]
    draw = f"t{ec_tuning(wildcards)['data_seed']}"
    return {
        split: f"{EC}/tuning/data/{primary}/{draw}/{split}.npz".format(
            scale=wildcards.scale
        )
        for split in ("train", "test")
    }


def ec_data(wildcards):
    draw = ec_draw(ec_dataset(wildcards), wildcards.seed)
    return {
        split: f"{EC}/data/{wildcards.dataset}/{draw}/{split}.npz".format(
            scale=wildcards.scale
        )
        for split in ("train", "test")
    }


def ec_test_sets(wildcards):
    """The test set of each run of a dataset, in the order of the models' input."""
    dataset = ec_dataset(wildcards)
    return [
        f"{EC}/data/{wildcards.dataset}/{ec_draw(dataset, s)}/test.npz".format(
            scale=wildcards.scale
        )
        for _, _, s in ec_runs_of(wildcards)
    ]


@reads("ecfr", ("datasets",))
def ec_dataset_sources(wildcards):
    """Each dataset's source (synthetic, mvtec3d, eyecandies): the claims set the published accuracy of a source
    beside the runs of the dataset of that source."""
    return {name: d["source"] for name, d in ec_config(wildcards)["datasets"].items()}


@reads("ecfr", ("datasets",))
def ec_size(wildcards):
    return ec_dataset(wildcards)["size"]


@reads(
    "ecfr",
    ("methods",),
    ("per_class_methods",),
    ("seeds",),
    ("per_class_seeds",),
    ("comparisons", "same_modal_null"),
)
def ec_runs_of(wildcards):
    """The runs of one dataset, as [method, setting, seed] in the order of the models' input."""
    cfg = ec_config(wildcards)
    return [
        [m, setting, s]
        for d, m, setting, s in ecfr_experiment.runs(cfg)
        if d == wildcards.dataset
    ]


@reads("ecfr", ("seeds",), ("per_class_seeds",))
def ec_per_class_seeds(wildcards):
    """The seeds whose per-class models are fitted (per_class_seeds; default every seed), for the report's text."""
    return ecfr_experiment.per_class_seeds(ec_config(wildcards))


def ec_models(wildcards):
    return [
        f"{EC}/runs/{wildcards.dataset}/{m}_{setting}_s{s}.pt".format(
            scale=wildcards.scale
        )
        for m, setting, s in ec_runs_of(wildcards)
    ]


def ec_all_tables(wildcards):
    cfg = ec_config(wildcards)
    return {
        "evaluations": [
            f"{EC}/runs/{d}/evaluation.parquet".format(scale=wildcards.scale)
            for d in cfg["datasets"]
        ],
        "traces": [
            f"{EC}/runs/{d}/{m}_{setting}_s{s}_trace.parquet".format(
                scale=wildcards.scale
            )
            for d, m, setting, s in ecfr_experiment.runs(cfg)
        ],
        "data_summaries": sorted(
            {
                f"{EC}/data/{d}/{ec_draw(spec, s)}/summary.parquet".format(
                    scale=wildcards.scale
                )
                for d, spec in cfg["datasets"].items()
                for s in cfg["seeds"]
            }
        ),
    }


def ec_examples(wildcards):
    cfg = ec_config(wildcards)
    return [
        f"{EC}/runs/{d}/examples.npz".format(scale=wildcards.scale)
        for d in cfg["datasets"]
    ]


@reads("ecfr", ("teacher", "widths"), ("teacher", "blocks"))
def ec_teacher_shape(wildcards):
    """What the student jobs read of the teacher block: its architecture (its weights come as a file)."""
    teacher = ec_config(wildcards)["teacher"]
    return {"widths": teacher["widths"], "blocks": teacher["blocks"]}


@reads("ecfr", ("model",))
def ec_run_model(wildcards):
    """The reconstruction network's block, for an ecfr or same_modal run; nothing for a CFM run."""
    return {} if wildcards.method == "cfm" else ec_config(wildcards)["model"]


@reads("ecfr", ("cfm",))
def ec_run_cfm(wildcards):
    """The CFM block, for a CFM run only."""
    return ec_config(wildcards)["cfm"] if wildcards.method == "cfm" else {}


@reads("ecfr", ("train",))
def ec_run_train(wildcards):
    """The train block; a CFM run reads its steps and batch only (its optimiser is CFM's Adam, cfm.lr)."""
    train = ec_config(wildcards)["train"]
    if wildcards.method == "cfm":
        return {"steps": train["steps"], "batch": train["batch"]}
    return train


@reads("ecfr", ("datasets",))
def ec_largest_size(wildcards):
    """The image size the complexity job measures this scale's networks at: the largest of the datasets'."""
    return max(d["size"] for d in ec_config(wildcards)["datasets"].values())


@reads("ecfr", ("complexity", "paper_configuration"))
def ec_paper_configuration(wildcards):
    """The paper-scale teacher, model and CFM blocks at 256 px, which the complexity job measures (Table 2's numbers)
    at every scale that asks for it (complexity.paper_configuration); None where it does not (smoke, for time).
    """
    if not ec_config(wildcards)["complexity"]["paper_configuration"]:
        return None
    cfg = paper_config("ecfr", "paper")
    return {
        "teacher": cfg["teacher"],
        "model": cfg["model"],
        "cfm": cfg["cfm"],
        "size": 256,
    }
