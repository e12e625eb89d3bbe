# Helpers of paper 08's rules (rules/vair.smk): paths, input lists, the external backends' names and options, and the
# checks of the config that the schema cannot express (run when the workflow is parsed, before any job).
from neurips26.vair import experiment as vair_experiment

VAIR = "results/{scale}/vair"
VAIR_LOG = "results/{scale}/vair/logs"
VAIR_BENCH = "results/{scale}/vair/benchmarks"
VAIR_PROMPTS = "config/vair/prompts.yaml"
# the sources of paper scale (config/sources.yaml), fetched by the download rule
VAIR_GSM8K = "resources/vair/gsm8k/test.jsonl"
VAIR_MATH500 = "resources/vair/math500/test.jsonl"

for _scale in checked_scales(PAPERS, "vair"):
    try:
        vair_experiment.check_config(paper_config("vair", _scale))
    except ValueError as error:
        raise ConfigError(
            f"invalid config in config/vair.yaml:\n  {_scale}: {error}"
        ) from None


def vair_external_pattern(kind):
    """The wildcard constraint of {backend} in the grading job of external `kind`, the names the config gives
    backends of that kind at any scale (none: a pattern no name matches)."""
    names = sorted(
        {
            name
            for scale in checked_scales(PAPERS, "vair")
            for name in vair_experiment.external_names(
                paper_config("vair", scale), kind
            )
        }
    )
    return "|".join(names) if names else "(?!)"


def vair_config(wildcards):
    return paper_config("vair", wildcards.scale)


@reads("vair", ("seeds",), ("regimes",))
def vair_members(wildcards):
    """The small model's members (regime, held-out flaw, seed) in training order (experiment.members)."""
    return vair_experiment.members(vair_config(wildcards))


@reads("vair", ("items",))
def vair_items_params(wildcards):
    """The item settings of the job's dataset."""
    return vair_config(wildcards)["items"][wildcards.dataset]


@reads("vair", ("external",))
def vair_external_options(wildcards):
    """The options of external backend {backend}; a stop before any job when it names an API key variable that is
    not set."""
    cfg = vair_config(wildcards)
    missing = vair_experiment.missing_api_key(cfg, wildcards.backend)
    if missing:
        raise ConfigError(f"config/vair.yaml {wildcards.scale}: {missing}")
    return vair_experiment.external_options(cfg, wildcards.backend)


def vair_graded_items(wildcards):
    """The items an external backend grades: the dataset's items table (MATH-500's own form for math)."""
    return f"{VAIR}/data/{wildcards.dataset}/items.parquet".format(
        scale=wildcards.scale
    )


def vair_grade_files(wildcards):
    """Every grade table of the scale (experiment.grade_tables): the model-free references per dataset with steps,
    the small model on the synthetic items, each external backend on every dataset."""
    return [
        f"{VAIR}/grades/{dataset}/{table}.parquet".format(scale=wildcards.scale)
        for dataset, table in vair_experiment.grade_tables(vair_config(wildcards))
    ]


def vair_counts_files(wildcards):
    """The item counts of every dataset of the scale, beside the paper's."""
    return [
        f"{VAIR}/data/{dataset}/counts.parquet".format(scale=wildcards.scale)
        for dataset in vair_config(wildcards)["datasets"]
    ]


def vair_skipped_files(wildcards):
    """The records GSM8K's and MATH-500's readers skipped, by reason (paper scale)."""
    return [
        f"{VAIR}/data/{dataset}/skipped.parquet".format(scale=wildcards.scale)
        for dataset in vair_config(wildcards)["datasets"]
        if dataset != "synthetic"
    ]


def vair_train_mem_mb(wildcards):
    """Host memory of the training job: the token pools and the ensemble's weights and AdamW state are small (25
    members of the base size: 30 MB); the interpreter, torch and CUDA: 4 GB, 8 at paper scale.
    """
    return 8000 if wildcards.scale == "paper" else 4000


def vair_plan_work(wildcards, scale):
    """The work of the training job for the plan of a scale: sequences through the ensemble (steps x batch x
    members)."""
    cfg = scale_block(PAPERS, "vair", scale)
    return (
        cfg["train"]["steps"]
        * cfg["train"]["batch_size"]
        * len(vair_experiment.members(cfg))
    )


PLAN_WORK["vair_train"] = vair_plan_work
