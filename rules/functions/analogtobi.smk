# Helpers of paper 02's rules (rules/analogtobi.smk): paths, input lists, and the checks of the config that the
# schema cannot express (run when the workflow is parsed, before any job).
from neurips26.common.config import ConfigError
from neurips26.analogtobi import experiment as atb_experiment

ATB = "results/{scale}/analogtobi"
ATB_LOG = "results/{scale}/analogtobi/logs"
ATB_BENCH = "results/{scale}/analogtobi/benchmarks"
ATB_FIGURES = ["ablation", "examples", "training_curves"]
ATB_CONFIG = r"(bipart|devpin)-(type|notype)-(rename|norename)"

for _scale in checked_scales(PAPERS, "analogtobi"):
    try:
        atb_experiment.check_config(paper_config("analogtobi", _scale))
    except ValueError as error:
        raise ConfigError(
            f"invalid config in config/analogtobi.yaml:\n  {_scale}: {error}"
        ) from None


def atb_config(wildcards):
    return paper_config("analogtobi", wildcards.scale)


def atb_data_inputs(wildcards):
    """The locked archive, its manifest (data.manifest) and the type ranges at paper scale; nothing for the
    generator."""
    data = atb_config(wildcards)["data"]
    if data["source"] == "generator":
        return {}
    return {
        "archive": "resources/analogtobi/AnalogGenie-efc2535.tar.gz",
        "manifest": data["manifest"],
        "types": "config/analogtobi/circuit_types.yaml",
    }


def atb_rep(name):
    return (
        "bipart"
        if name == atb_experiment.RANDOM
        else atb_experiment.parse_config_name(name)["rep"]
    )


@reads("analogtobi", ("walks",), ("context",))
def atb_walks_params(wildcards):
    cfg = atb_config(wildcards)
    return {**cfg["walks"], "context": cfg["context"][wildcards.rep]}


@reads("analogtobi", ("model",), ("train",), ("rename_pool",), ("context",))
def atb_train_params(wildcards):
    cfg = atb_config(wildcards)
    rep = atb_rep(wildcards.config)
    return {
        "model": cfg["model"],
        "train": cfg["train"],
        "rename_pool": cfg["rename_pool"],
        "context": cfg["context"][rep],
    }


def atb_sample_inputs(wildcards):
    inputs = {"circuits": f"{ATB}/data/circuits.parquet".format(scale=wildcards.scale)}
    if wildcards.config != atb_experiment.RANDOM:
        inputs["model"] = (
            f"{ATB}/models/{wildcards.config}_s{wildcards.seed}.pt".format(
                scale=wildcards.scale
            )
        )
    # the random baseline draws its device counts from the training circuits (circuits.parquet)
    return inputs


def atb_walks_of(wildcards):
    return f"{ATB}/data/walks_{atb_rep(wildcards.config)}.parquet".format(
        scale=wildcards.scale
    )


def atb_sets(wildcards):
    return atb_experiment.sample_sets(atb_config(wildcards))


def atb_set_files(wildcards, folder, suffix=".parquet"):
    return [
        f"{ATB}/{folder}/{name}{suffix}".format(scale=wildcards.scale)
        for name in atb_sets(wildcards)
    ]


def atb_metrics(wildcards):
    return atb_set_files(wildcards, "metrics")


def atb_timings(wildcards):
    return atb_set_files(wildcards, "samples", "_timing.parquet") + atb_set_files(
        wildcards, "metrics", "_timing.parquet"
    )


def atb_curves(wildcards):
    cfg = atb_config(wildcards)
    return [
        f"{ATB}/models/{c}_s{seed}_curve.parquet".format(scale=wildcards.scale)
        for c in cfg["configs"]
        for seed in cfg["seeds"]
    ]


def atb_plan_work(wildcards, scale):
    """The work of one training job for the plan of a scale: tokens x the weights a token passes through."""
    cfg = scale_block(PAPERS, "analogtobi", scale)
    m, t = cfg["model"], cfg["train"]
    rep = atb_rep(wildcards.config)
    return decoder_work(
        t["steps"] * t["batch_size"] * cfg["context"][rep] // 2,
        d_model=m["d_model"],
        n_layers=m["n_layers"],
        n_heads=m["n_heads"],
        n_kv_heads=m["n_heads"],
        head_dim=m["d_model"] // m["n_heads"],
        d_ff=m["mlp_hidden"],
        vocab=len(atb_experiment.vocabulary(rep)),
    )


PLAN_WORK["analogtobi_train"] = atb_plan_work


def atb_samples(wildcards):
    return atb_set_files(wildcards, "samples")


@reads("analogtobi", ("classifier",), ("evaluate", "spice_timeout_s"))
def atb_reference_params(wildcards):
    cfg = atb_config(wildcards)
    return {
        "classifier": cfg["classifier"],
        "spice_timeout_s": cfg["evaluate"]["spice_timeout_s"],
    }


@reads("analogtobi", ("evaluate",), ("rename_pool",))
def atb_evaluate_params(wildcards):
    cfg = atb_config(wildcards)
    return {
        **cfg["evaluate"],
        "rename_pool": cfg["rename_pool"],
    }
