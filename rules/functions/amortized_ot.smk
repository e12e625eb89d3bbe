# Helpers of paper 18's rules (rules/amortized_ot.smk): paths, config lookups, input lists.
from pathlib import Path

from neurips26.amortized_ot import experiment as aot_experiment
from neurips26.common.config import ConfigError

for _scale in checked_scales(PAPERS, "amortized_ot"):
    try:
        aot_experiment.check_config(paper_config("amortized_ot", _scale))
    except ValueError as error:
        raise ConfigError(
            f"invalid config in config/amortized_ot.yaml:\n  {_scale}: {error}"
        ) from None

AOT = "results/{scale}/amortized_ot"
AOT_LOG = "results/{scale}/amortized_ot/logs"
AOT_BENCH = "results/{scale}/amortized_ot/benchmarks"
AOT_FIGURES = [
    "interpolation",
    "colour_transfer",
    "sphere",
    "error_vs_projections",
    "speed",
    "cfm",
]


def aot_config(wildcards):
    return paper_config("amortized_ot", wildcards.scale)


AOT_TASKS = ("digits", "colour", "sphere", "cfm")
# what pairs.py reads of each task's block, besides its resolutions (aot_train_res, aot_test_groups)
AOT_PAIRS_KEYS = {
    "digits": ("source", "train_pairs", "test_pairs"),
    "colour": ("train_pairs", "test_pairs", "crop"),
    "sphere": ("source", "train_pairs", "test_pairs", "kappa"),
    "cfm": ("train_pairs",),  # no test groups: the flows are evaluated on fresh samples
}
# the atom-count parameter of each task (experiment.task_res)
AOT_RES_KEYS = (
    ("digits", "train_res"),
    ("colour", "colours"),
    ("sphere", "points"),
    ("cfm", "batch_size"),
)
AOT_CFM_TRAIN_KEYS = ("steps", "batch_size", "lr", "width")
AOT_CFM_EVALUATE_KEYS = ("eval_samples", "ode_steps", "batch_size")


@reads(
    "amortized_ot",
    *((task, key) for task, keys in AOT_PAIRS_KEYS.items() for key in keys),
)
def aot_pairs_task(wildcards):
    """What pairs.py reads of the job's task block: source, pair counts, crop or kappa."""
    block = aot_config(wildcards)[wildcards.task]
    return {key: block[key] for key in AOT_PAIRS_KEYS[wildcards.task]}


def aot_eps(tasks):
    """A params function: the entropic regularisation of the job's task, one of `tasks` (those its rule runs).

    (RA-OT reads no eps, but its ground truth does: an eps change reruns it anyway, so it carries eps too.)
    """

    @reads("amortized_ot", *((task, "eps") for task in tasks))
    def eps(wildcards):
        return aot_config(wildcards)[wildcards.task]["eps"]

    return eps


@reads("amortized_ot", ("oa",))
def aot_fit_oa(wildcards):
    """OA-OT's solver settings; None for RA-OT, which has no iterations (a change reruns OA fits only)."""
    return aot_config(wildcards)["oa"] if wildcards.fitted == "oa" else None


@reads("amortized_ot", *AOT_RES_KEYS[:3])
def aot_res_by_task(wildcards):
    """The training resolution of every potential task (experiment.res_by_task)."""
    return aot_experiment.res_by_task(aot_config(wildcards))


@reads("amortized_ot", *(("cfm", key) for key in (*AOT_CFM_TRAIN_KEYS, "eps")))
def aot_cfm_train_params(wildcards):
    """What cfm_train.py reads of `cfm`: the optimisation, and eps for the RA/OA plans only."""
    cfm = aot_config(wildcards)["cfm"]
    keys = AOT_CFM_TRAIN_KEYS + (("eps",) if wildcards.plan in ("ra", "oa") else ())
    return {key: cfm[key] for key in keys}


@reads("amortized_ot", *(("cfm", key) for key in AOT_CFM_EVALUATE_KEYS))
def aot_cfm_evaluate_params(wildcards):
    """What cfm_evaluate.py reads of `cfm`: sample count, ODE steps, and the batch size its rows name."""
    cfm = aot_config(wildcards)["cfm"]
    return {key: cfm[key] for key in AOT_CFM_EVALUATE_KEYS}


GPW_HELP = (
    "GPW v4 population density (adjusted to 2015 UN WPP, rev11, 2020, 15 arc-minute GeoTIFF) needs a "
    "free NASA Earthdata login: download it from SEDAC "
    "(https://sedac.ciesin.columbia.edu/data/set/gpw-v4-population-density-adjusted-to-2015-unwpp-country-totals-rev11) "
    "and set sphere.gpw_path in config/amortized_ot.yaml to the .tif file"
)


def aot_source_files(wildcards):
    """Downloaded or user-supplied data a task's pairs are made from (none for the offline stand-ins)."""
    cfg = aot_config(wildcards)
    if wildcards.task == "digits" and cfg["digits"]["source"] == "mnist":
        return expand("resources/mnist/{name}", name=source_registry.files("mnist"))
    if wildcards.task == "sphere" and cfg["sphere"]["source"] == "gpw":
        path = cfg["sphere"].get("gpw_path", "")
        if not path or not Path(path).is_file():
            raise ConfigError(f"sphere.gpw_path is '{path}', not a file. {GPW_HELP}")
        return [path]
    return []


def aot_task_models(wildcards):
    """Every model fitted for the job's task (RA/OA per L, Meta-OT where defined)."""
    names = aot_experiment.fitted_models(aot_config(wildcards), wildcards.task)
    return [
        f"{AOT}/models/{{task}}/{name}.{'pt' if name.startswith('metaot') else 'npz'}".format(
            scale=wildcards.scale, task=wildcards.task
        )
        for name in names
    ]


def aot_profile_model(wildcards):
    """RA-OT at the main number of projections and the base seed on colour: the model the speed profile times
    (claim C5's predictor)."""
    L = aot_config(wildcards)["main_projections"]
    return f"{AOT}/models/colour/ra_L{L}.npz".format(scale=wildcards.scale)


def aot_fit_seed(wildcards):
    """The seed of a refit (the fit_seed wildcard of models/{task}/..._s{fit_seed})."""
    return int(wildcards.fit_seed)


@reads(
    "amortized_ot",
    ("projections",),
    ("main_projections",),
    ("seeded_models",),
    ("fit_seeds",),
    ("seed",),
    ("digits", "test_res"),
    ("digits", "train_res"),
)
def aot_predictions_params(wildcards):
    """(predictor, test group) runs of the job's task (experiment.predictions); the groups' names depend on
    the digit resolutions only."""
    return aot_experiment.predictions(aot_config(wildcards), wildcards.task)


@reads("amortized_ot", ("digits", "test_res"), *AOT_RES_KEYS[:3])
def aot_test_groups(wildcards):
    """Test groups of the task and their resolutions (none for the CFM minibatches)."""
    if wildcards.task == "cfm":
        return {}
    return aot_experiment.test_groups(aot_config(wildcards), wildcards.task)


@reads("amortized_ot", *AOT_RES_KEYS)
def aot_train_res(wildcards):
    return aot_experiment.task_res(aot_config(wildcards), wildcards.task)


def aot_cfm_plan_model(wildcards):
    if wildcards.plan not in ("ra", "oa"):
        return []
    L = aot_config(wildcards)["main_projections"]
    return f"{AOT}/models/cfm/{wildcards.plan}_L{L}.npz".format(scale=wildcards.scale)


def aot_cfm_flows(wildcards):
    """The flow of every plan at the base seed, and at every extra CFM training seed (cfm_seeds)."""
    cfg = aot_config(wildcards)
    extra = [s for s in cfg.get("cfm_seeds", []) if s != cfg["seed"]]
    names = ["flow"] + [f"flow_s{s}" for s in extra]
    return expand(
        f"{AOT}/cfm/{{plan}}/{{name}}.pt",
        plan=cfg["cfm"]["plans"],
        name=names,
        scale=wildcards.scale,
    )
