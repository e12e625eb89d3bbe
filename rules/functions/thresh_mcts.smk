# Helpers of paper 12's rules (rules/thresh_mcts.smk): paths, input lists, and the checks of the config and of
# user-supplied trees that the schema cannot express (run when the workflow is parsed, before any job).
from neurips26.common.config import ConfigError
from neurips26.thresh_mcts import experiment as tm_experiment

TM = "results/{scale}/thresh_mcts"
TM_LOG = "results/{scale}/thresh_mcts/logs"
TM_BENCH = "results/{scale}/thresh_mcts/benchmarks"
TM_FIGURES = ["sample_complexity", "error_rates", "per_round_cost", "normalised_times"]

for _scale in checked_scales(PAPERS, "thresh_mcts"):
    try:
        tm_experiment.check_config(paper_config("thresh_mcts", _scale), ROOT)
    except ValueError as error:
        raise ConfigError(
            f"invalid config in config/thresh_mcts.yaml:\n  {_scale}: {error}"
        ) from None


def tm_config(wildcards):
    return paper_config("thresh_mcts", wildcards.scale)


def tm_user_file(wildcards):
    """The user's instance file (instances.user_file), if the config names one."""
    path = tm_config(wildcards)["instances"].get("user_file")
    return [path] if path else []


def tm_run_files(wildcards):
    return [
        f"{TM}/runs/{rule}.parquet".format(scale=wildcards.scale)
        for rule in tm_config(wildcards)["rules"]
    ]
