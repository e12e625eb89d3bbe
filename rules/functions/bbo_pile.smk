# Helpers of paper 05's rules (rules/bbo_pile.smk): paths, input lists, and the checks of the config that the
# schema cannot express (run when the workflow is parsed, before any job).
from neurips26.common.config import ConfigError
from neurips26.bbo_pile import experiment as bp_experiment

BP = "results/{scale}/bbo_pile"
BP_LOG = "results/{scale}/bbo_pile/logs"
BP_BENCH = "results/{scale}/bbo_pile/benchmarks"
BP_FIGURES = ["scaling", "regret_curves", "imitation", "dataset"]
BP_CORPUS = {
    "vocab": "corpus/vocab.json",
    "train": "corpus/train.npy",
    "valid": "corpus/valid.npy",
    "stats": "corpus/stats.parquet",
}

for _scale in checked_scales(PAPERS, "bbo_pile"):
    try:
        bp_experiment.check_config(paper_config("bbo_pile", _scale))
    except ValueError as error:
        raise ConfigError(
            f"invalid config in config/bbo_pile.yaml:\n  {_scale}: {error}"
        ) from None


def bp_config(wildcards):
    return paper_config("bbo_pile", wildcards.scale)


def bp_corpus(wildcards):
    return {
        name: f"{BP}/{path}".format(scale=wildcards.scale)
        for name, path in BP_CORPUS.items()
    }


def bp_trajectories(wildcards):
    cfg = bp_config(wildcards)
    return expand(
        f"{BP}/trajectories/{{family}}/{{optimizer}}.parquet",
        scale=wildcards.scale,
        family=bp_experiment.families(cfg),
        optimizer=cfg["optimizers"],
    )


@reads("bbo_pile", ("pile",))
def bp_pile(wildcards):
    """The scale's BBO-Pile block (files, algorithms, max_malformed), or None where the scale reads none."""
    return bp_config(wildcards).get("pile")


def bp_pile_file(split):
    """An input function: BBO-Pile's `split` file (train or valid) under resources/bbo_pile/pile/, fetched by
    the download rule (config/sources.yaml); none where the scale reads no BBO-Pile."""

    def files(wildcards):
        pile = bp_config(wildcards).get("pile")
        return [f"resources/bbo_pile/pile/{pile[split]}"] if pile else []

    return files


def bp_serialize_mem(wildcards):
    """Memory of the corpus job: the generated corpus fits in 4 GB; BBO-Pile's lines are held as token ids
    (8 bytes each, packed once more) and its size could not be read offline, hence a large request.
    """
    return 64000 if bp_config(wildcards).get("pile") else 4000


def bp_serialize_runtime(wildcards):
    return 720 if bp_config(wildcards).get("pile") else 120


def bp_throughput(wildcards):
    return [
        p.replace(".parquet", "_throughput.parquet") for p in bp_trajectories(wildcards)
    ]


def bp_file(wildcards, run, seed, what):
    """Seed `seed` of run `run`: its model (`what` "model") or training log ("training"), in its seed group's
    files where a group trains it (experiment.run_file)."""
    cfg = bp_config(wildcards)
    return f"{BP}/{bp_experiment.run_file(cfg, run, seed, what)}".format(
        scale=wildcards.scale
    )


def bp_training_logs(wildcards):
    """Every run's training log of the scale's seed (a seed group's log holds its other seeds too)."""
    cfg = bp_config(wildcards)
    return [bp_file(wildcards, run, cfg["seed"], "training") for run in cfg["runs"]]


def bp_evaluation_model(wildcards):
    cfg = bp_config(wildcards)
    return bp_file(wildcards, cfg["evaluate"]["run"], cfg["seed"], "model")


def bp_optimized(wildcards):
    ev = bp_config(wildcards)["evaluate"]
    names = [f"{c}_constrained" for c in ev["conditions"]] + [
        f"{c}_free" for c in ev["free_conditions"]
    ]
    return expand(f"{BP}/optimize/{{name}}.parquet", scale=wildcards.scale, name=names)


@reads("bbo_pile", ("runs",))
def bp_run(wildcards):
    """The entry of `runs` the job trains ({model, tokens})."""
    return bp_config(wildcards)["runs"][wildcards.run]


@reads("bbo_pile", ("runs",), ("models",))
def bp_run_model(wildcards):
    """The sizes of the model the job's run trains (its entry of `models`)."""
    cfg = bp_config(wildcards)
    return cfg["models"][cfg["runs"][wildcards.run]["model"]]


@reads("bbo_pile", ("seed",), ("model_seeds", "seeds"))
def bp_model_seed(wildcards):
    """The seed of one copy of claim B3's run (the scale's seed or one of model_seeds.seeds): it replaces `seed`
    in the seed copies' training and optimize jobs; its value does not change when other seeds are added.
    """
    return bp_experiment.model_seed(bp_config(wildcards), wildcards.model_seed)


@reads("bbo_pile", ("seed",), ("model_seeds", "seeds"), ("model_seeds", "batch"))
def bp_seed_group(wildcards):
    """The seeds one train_seed job trains (its group `seed{a-b-c}`: every model seed where model_seeds.batch
    holds, one further seed otherwise)."""
    return bp_experiment.seed_group(
        bp_config(wildcards), wildcards.run, wildcards.seed_group
    )


@reads("bbo_pile", ("seed",))
def bp_scale_seed(wildcards):
    """The seeds a scaling run's job trains: the scale's seed alone."""
    return [bp_config(wildcards)["seed"]]


def bp_seed_model(wildcards):
    """The checkpoint of one model seed: its seed group's file, or the scaling run's own for the scale's seed
    where no group trains it."""
    return bp_file(wildcards, wildcards.run, int(wildcards.model_seed), "model")


@reads("bbo_pile", ("seed",), ("model_seeds", "seeds"))
def bp_model_seed_list(wildcards):
    """The model seeds of `model_seeds.run` (the scale's seed first), in the order of bp_seed_models."""
    return bp_experiment.model_seeds(bp_config(wildcards))


def bp_seed_models(wildcards):
    """Claim B2's checkpoints: one per model seed of `model_seeds.run` (a batched group's file once per seed)."""
    cfg = bp_config(wildcards)
    run = cfg["model_seeds"]["run"]
    return [bp_file(wildcards, run, k, "model") for k in bp_experiment.model_seeds(cfg)]


def bp_seed_optimized(wildcards):
    """Claim B3's model seeds (the scale's seed and the further ones) as optimizers, constrained decoding."""
    cfg = bp_config(wildcards)
    return expand(
        f"{BP}/seeds/{{run}}/seed{{model_seed}}/optimize/{{condition}}_constrained.parquet",
        scale=wildcards.scale,
        run=cfg["model_seeds"]["run"],
        model_seed=bp_experiment.model_seeds(cfg),
        condition=cfg["model_seeds"]["condition"],
    )


def bp_seed_training_logs(wildcards):
    """Training logs of the further model seeds: their seed groups' (one file per group; a batched group's holds
    the scale's seed too, the first copy's log otherwise among the scaling runs')."""
    cfg = bp_config(wildcards)
    run = cfg["model_seeds"]["run"]
    files = [
        bp_file(wildcards, run, k, "training") for k in cfg["model_seeds"]["seeds"]
    ]
    return list(dict.fromkeys(files))


def bp_plan_work(wildcards, scale):
    """The work of one training run for the plan of a scale: tokens x the weights a token passes through
    (experiment.token_weights).
    """
    cfg = scale_block(PAPERS, "bbo_pile", scale)
    run = cfg["runs"][wildcards.run]
    return float(run["tokens"]) * bp_experiment.token_weights(cfg, run["model"])


def bp_plan_work_seeds(wildcards, scale):
    """The work of a seed group's job: one run's work per seed it trains."""
    return len(wildcards.seed_group.split("-")) * bp_plan_work(wildcards, scale)


PLAN_WORK["bbo_pile_train"] = bp_plan_work
PLAN_WORK["bbo_pile_train_seed"] = bp_plan_work_seeds
