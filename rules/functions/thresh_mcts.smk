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


def tm_cost_runtime(wildcards):
    """Minutes the per-round cost job may take: 30 up to quick scale; 480 at paper scale, where the rehearsal
    measured about 1 s per round of d_tracking and of ratio at depth 10 (59,049 leaves) on a loaded CPU core, so
    1,000 rounds x 5 repeats x 2 rules take about 3 h at depth 10 and 1 h more at depths 8 and 9. Host memory:
    the tape of depth 10 is 59,049 x 1,001 rewards (0.5 GB, twice while it is drawn), hence mem_mb 2500.
    """
    return 480 if wildcards.scale == "paper" else 30


def tm_user_file(wildcards):
    """The user's instance file (instances.user_file), if the config names one."""
    path = tm_config(wildcards)["instances"].get("user_file")
    return [path] if path else []


def tm_run_files(wildcards):
    return [
        f"{TM}/runs/{rule}.parquet".format(scale=wildcards.scale)
        for rule in tm_config(wildcards)["rules"]
    ]
