# Helpers of paper 04's rules (rules/bird.smk): paths, config lookups, input lists, and the checks of the
# config that the schema cannot express (run when the workflow is parsed, before any job).
from neurips26.common.config import ConfigError
from neurips26.bird import experiment as bird_experiment

BIRD = "results/{scale}/bird"
BIRD_LOG = "results/{scale}/bird/logs"
BIRD_BENCH = "results/{scale}/bird/benchmarks"
BIRD_NET = "{dataset}/{arch}/N{n}/s{seeds}"  # seeds: a seed group, "0" or "0-1-2"
BIRD_FIGURES = [
    "phase_diagram",
    "information_curves",
    "kcal_vs_kmem",
    "similarity",
    "memorization",
    "step_cost",
    "samples",
]

for _scale in checked_scales(PAPERS, "bird"):
    try:
        bird_experiment.check_config(paper_config("bird", _scale))
    except ValueError as error:
        raise ConfigError(
            f"invalid config in config/bird.yaml:\n  {_scale}: {error}"
        ) from None


def bird_config(wildcards):
    return paper_config("bird", wildcards.scale)


def bird_dataset(wildcards):
    return bird_config(wildcards)["datasets"][wildcards.dataset]


@reads("bird", ("datasets",))
def bird_data_settings(wildcards):
    """What bird_data reads of its dataset's entry: everything but the N values (used downstream)."""
    return {k: v for k, v in bird_dataset(wildcards).items() if k != "n_values"}


@reads("bird", ("datasets",))
def bird_theory_settings(wildcards):
    """What bird_theory reads of its dataset's entry: the kind, the field's alpha (Toeplitz), the N values."""
    return {
        k: v
        for k, v in bird_dataset(wildcards).items()
        if k in ("kind", "alpha", "n_values")
    }


@reads("bird", ("datasets",))
def bird_report_datasets(wildcards):
    """Each dataset's kind and N values (the report's list of data)."""
    return {
        name: {"kind": d["kind"], "n_values": d["n_values"]}
        for name, d in bird_config(wildcards)["datasets"].items()
    }


@reads("bird", ("networks", "archs"))
def bird_arch_names(wildcards):
    return list(bird_config(wildcards)["networks"]["archs"])


def bird_archive_inputs(wildcards):
    """The downloaded files a dataset is read from (paper scale), none for data that ships offline."""
    return bird_experiment.DOWNLOADS.get(bird_dataset(wildcards)["kind"], [])


def bird_information_files(wildcards):
    return [
        f"{BIRD}/information/{run}.parquet".format(scale=wildcards.scale)
        for run in bird_experiment.information_runs(bird_config(wildcards))
    ]


def bird_theory_files(wildcards):
    return [
        f"{BIRD}/theory/{name}.parquet".format(scale=wildcards.scale)
        for name in bird_config(wildcards)["datasets"]
    ]


def bird_memorization_files(wildcards):
    return [
        f"{BIRD}/samples/{run}.parquet".format(scale=wildcards.scale)
        for run in bird_experiment.information_runs(bird_config(wildcards))
    ]


def bird_sample_files(wildcards):
    return [
        f"{BIRD}/samples/{run}.npz".format(scale=wildcards.scale)
        for run in bird_experiment.information_runs(bird_config(wildcards))
    ]


def bird_calibration_files(wildcards):
    return [
        f"{BIRD}/networks/{run}/calibration.parquet".format(scale=wildcards.scale)
        for run in bird_experiment.network_runs(bird_config(wildcards))
    ]


def bird_cost_files(wildcards):
    return [
        f"{BIRD}/cost/{name}.parquet".format(scale=wildcards.scale)
        for name in bird_config(wildcards)["datasets"]
    ]


def bird_group_size(wildcards):
    """The number of seeds a network job trains or calibrates (its time request scales with it)."""
    return len(bird_experiment.parse_seeds(wildcards.seeds))


@reads("bird", ("networks", "archs"))
def bird_arch_spec(wildcards):
    return bird_config(wildcards)["networks"]["archs"][wildcards.arch]
