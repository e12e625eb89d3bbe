# Helpers of paper 07's rules (rules/symm_optim.smk): paths, input lists, and the checks of the config that the
# schema cannot express (run when the workflow is parsed, before any job).
from neurips26.common.config import ConfigError
from neurips26.symm_optim import experiment as so_experiment
from neurips26.symm_optim import sources as so_sources

SO = "results/{scale}/symm_optim"
SO_LOG = "results/{scale}/symm_optim/logs"
SO_BENCH = "results/{scale}/symm_optim/benchmarks"
SO_FIGURES = ["val_loss_curves", "best_lr", "lr_sensitivity", "spectra"]
# one job trains the seeds of a cell (a seed group, e.g. s0-1-2) as one batched ensemble (experiment.jobs)
SO_JOB = "{arch}/{method}_lr{lr_index}_s{seeds}"

for _scale in checked_scales(PAPERS, "symm_optim"):
    try:
        so_experiment.check_config(paper_config("symm_optim", _scale))
    except ValueError as error:
        raise ConfigError(
            f"invalid config in config/symm_optim.yaml:\n  {_scale}: {error}"
        ) from None


def so_config(wildcards):
    return paper_config("symm_optim", wildcards.scale)


@reads("symm_optim", *so_experiment.JOB_KEYS)
def so_job_params(wildcards):
    """One job's params: its runs (the seeds of the group), optimizers, model sizes and training settings
    (experiment.job_params), so that a change to another method's entry leaves this job up to date.
    """
    return so_experiment.job_params(
        so_config(wildcards),
        wildcards.arch,
        wildcards.method,
        int(wildcards.lr_index),
        wildcards.seeds,
    )


@reads("symm_optim", *so_experiment.STEP_TIME_KEYS)
def so_step_time_params(wildcards):
    """The part of the block the step-time job reads (experiment.step_time_config)."""
    return so_experiment.step_time_config(so_config(wildcards))


def so_tokens(wildcards):
    """The token files of the scale's corpus: the shared corpus build, or the paper's FineWeb-Edu shards."""
    corpus = so_config(wildcards)["corpus"]
    if corpus["name"] in so_sources.CORPORA:
        files = so_sources.shard_files(corpus["name"], corpus["train_shards"])
        return {
            "train": [
                f"resources/symm_optim/{corpus['name']}/{f}" for f in files["train"]
            ],
            "val": [f"resources/symm_optim/{corpus['name']}/{f}" for f in files["val"]],
        }
    folder = (
        f"results/{wildcards.scale}/corpus/{corpus['name']}/bpe{corpus['vocab_size']}"
    )
    return {"train": [f"{folder}/train.bin"], "val": [f"{folder}/val.bin"]}


def so_train_mem(wildcards):
    """Host memory of a training job: the token streams it reads (np.concatenate of the shards: 400 MB a shard at
    paper scale) and the model's fp32 weights as built before they move to the GPU, plus 3 GB (interpreter,
    torch, CUDA); 4 GB where the corpus is the shared small one."""
    cfg = so_config(wildcards)
    corpus = cfg["corpus"]
    if corpus["name"] not in so_sources.CORPORA:
        return 4000
    tokens = (corpus["train_shards"] + 1) * so_sources.SHARD_BYTES
    weights = 4 * so_experiment.parameter_count(cfg, wildcards.arch)
    return (tokens + weights) // 10**6 + 3000


def so_step_time_mem(wildcards):
    """Host memory of the step-time job on the CPU (experiment.step_time_bytes: one model, its gradients and every
    method's optimizer state per arch), plus 1 GB; at least 4 GB."""
    return max(
        4000, so_experiment.step_time_bytes(so_config(wildcards)) // 10**6 + 1000
    )


def so_corpus_meta(wildcards):
    """The shared corpus's meta.json (sizes, hashes) for the report; none for downloaded shards."""
    corpus = so_config(wildcards)["corpus"]
    if corpus["name"] in so_sources.CORPORA:
        return []
    return f"results/{wildcards.scale}/corpus/{corpus['name']}/bpe{corpus['vocab_size']}/meta.json"


def so_runs(wildcards, suffix):
    """The tables of every training job (each holds the runs of its seed group)."""
    return [
        f"{SO}/runs/{job}_{suffix}.parquet".format(scale=wildcards.scale)
        for job in so_experiment.job_names(so_config(wildcards))
    ]


def so_run_summaries(wildcards):
    return so_runs(wildcards, "summary")


def so_run_steps(wildcards):
    return so_runs(wildcards, "steps")


def so_run_spectra(wildcards):
    return so_runs(wildcards, "spectra")


def so_plan_work(wildcards, scale):
    """The work of one training job for the plan of a scale: tokens x the weights a token passes through, times
    the seeds the job trains as one ensemble."""
    cfg = scale_block(PAPERS, "symm_optim", scale)
    model, train = cfg["model"][wildcards.arch], cfg["train"]
    members = len(wildcards.seeds.split("-"))
    return decoder_work(
        members * train["steps"] * train["batch_size"] * train["seq_len"],
        d_model=model["d_model"],
        n_layers=model["n_layers"],
        n_heads=model["n_heads"],
        n_kv_heads=model["n_kv_heads"],
        head_dim=model["head_dim"],
        d_ff=model["d_ff"],
        vocab=cfg["corpus"]["vocab_size"],
        active_experts=model.get("top_k", 1),
    )


PLAN_WORK["symm_optim_train"] = so_plan_work
