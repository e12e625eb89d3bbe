# Helpers of paper 08's report rules (tables, claims, figures, report; the end of rules/vair.smk).
VAIR_FIGURES = ["gap", "probes", "patching"]
VAIR_TABLES = ["accuracy", "gap", "unparseable", "counts", "paper", "shortcuts"]


def vair_step_items(wildcards):
    """The items tables of the datasets with replayable steps (synthetic; paper: GSM8K), which check K1 reads;
    MATH-500's items have their own form (answer-certified gold solutions)."""
    return [
        f"{VAIR}/data/{dataset}/items.parquet".format(scale=wildcards.scale)
        for dataset in vair_config(wildcards)["datasets"]
        if dataset in vair_experiment.STEP_DATASETS
    ]
