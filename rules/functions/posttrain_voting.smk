# Helpers of paper 14's rules (rules/posttrain_voting.smk): paths, input lists, and the checks of the config that the
# schema cannot express (run when the workflow is parsed, before any job).
from neurips26.posttrain_voting import experiment as pv_experiment

PV = "results/{scale}/posttrain_voting"
PV_LOG = "results/{scale}/posttrain_voting/logs"
PV_BENCH = "results/{scale}/posttrain_voting/benchmarks"
# the sources of paper scale (config/sources.yaml), fetched by the download rule: CoVal's rankings and texts, and
# the base model that scores the texts for the base_model reference
PV_COVAL = "resources/posttrain_voting/coval/merged_comparisons_annotators.jsonl"
PV_COVAL_TEXTS = "resources/posttrain_voting/coval/comparisons.jsonl"
PV_BASE_MODEL = [
    f"resources/posttrain_voting/qwen2_5_0_5b/{name}"
    for name in (
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        "tokenizer_config.json",
        "vocab.json",
        "merges.txt",
    )
]
PV_FIGURES = ["violations", "staged", "threshold"]
PV_TABLES = ["adversarial", "threshold", "equivalence"]

for _scale in checked_scales(PAPERS, "posttrain_voting"):
    try:
        pv_experiment.check_config(paper_config("posttrain_voting", _scale), _scale)
    except ValueError as error:
        raise ConfigError(
            f"invalid config in config/posttrain_voting.yaml:\n  {_scale}: {error}"
        ) from None


def pv_config(wildcards):
    return paper_config("posttrain_voting", wildcards.scale)


def pv_source_profiles(wildcards):
    """The profiles table of a CoVal ranking block, and the base model's scores where the references include
    base_model; none for synthetic profiles (drawn inside the job)."""
    if wildcards.source == "synthetic":
        return {}
    inputs = {"profiles": f"{PV}/profiles/{wildcards.source}.parquet"}
    if "base_model" in pv_config(wildcards)["references"]["kinds"]:
        inputs["base_model"] = f"{PV}/references/base_model.parquet"
    return inputs


@reads(
    "posttrain_voting",
    ("seeds",),
    ("rules",),
    ("betas",),
    ("axioms",),
    ("synthetic",),
    ("references",),
    ("coval", "prompts"),
)
def pv_sweep(wildcards):
    """What the axioms job reads: seeds, rules, betas, axioms, the synthetic profiles, the references."""
    cfg = pv_config(wildcards)
    keys = ("seeds", "rules", "betas", "axioms", "synthetic", "references")
    return {key: cfg[key] for key in keys} | {"prompts": cfg["coval"]["prompts"]}


def pv_axiom_tables(wildcards):
    return [
        f"{PV}/axioms/{source}.parquet".format(scale=wildcards.scale)
        for source in pv_config(wildcards)["sources"]
    ]


def pv_plan_work(rule):
    """PLAN_WORK: the rehearsal's work of a job (axiom checks, or hill-climbing steps and threshold checks)."""
    from neurips26.posttrain_voting import rehearsal as pv_rehearsal

    fn = pv_rehearsal.PLAN.work[rule]

    def work(wildcards, scale):
        return fn(paper_config("posttrain_voting", scale), dict(wildcards.items()))

    return work


PLAN_WORK["posttrain_voting_axioms"] = pv_plan_work("posttrain_voting_axioms")
PLAN_WORK["posttrain_voting_adversarial"] = pv_plan_work("posttrain_voting_adversarial")
