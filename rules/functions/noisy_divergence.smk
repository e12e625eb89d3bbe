# Helpers of paper 09's rules (rules/noisy_divergence.smk): paths, input lists, and the checks of the config that the
# schema cannot express (run when the workflow is parsed, before any job).
from neurips26.common.config import ConfigError
from neurips26.noisy_divergence import experiment as nd_experiment
from neurips26.symm_optim import sources as so_sources

ND = "results/{scale}/noisy_divergence"
ND_LOG = "results/{scale}/noisy_divergence/logs"
ND_BENCH = "results/{scale}/noisy_divergence/benchmarks"
ND_FIGURES = [
    "divergence_rates",
    "max_logit_by_setting",
    "diagnostic_traces",
    "loss_curves",
]
ND_SETTING = r"(insert|overwrite)-(k\d+|full)-a[0-9.]+-d[0-9.]+"
ND_JOB_TABLES = ["steps", "diag", "summary", "throughput"]
# the inject step reads, noises and writes the stream 16M clean tokens at a time (scripts/noisy_divergence/inject.py)
ND_INJECT_CHUNK = 1 << 24

for _scale in checked_scales(PAPERS, "noisy_divergence"):
    try:
        nd_experiment.check_config(paper_config("noisy_divergence", _scale))
    except ValueError as error:
        raise ConfigError(
            f"invalid config in config/noisy_divergence.yaml:\n  {_scale}: {error}"
        ) from None


def nd_config(wildcards):
    return paper_config("noisy_divergence", wildcards.scale)


def nd_clean(wildcards):
    """The clean token files: the shared corpus build, or paper 07's FineWeb-Edu shards at paper scale."""
    corpus = nd_config(wildcards)["corpus"]
    if corpus["name"] in so_sources.CORPORA:
        files = so_sources.shard_files(corpus["name"], corpus["train_shards"])
        folder = f"resources/symm_optim/{corpus['name']}"
        return {
            "train": [f"{folder}/{f}" for f in files["train"]],
            "val": [f"{folder}/{f}" for f in files["val"]],
        }
    folder = (
        f"results/{wildcards.scale}/corpus/{corpus['name']}/bpe{corpus['vocab_size']}"
    )
    return {"train": [f"{folder}/train.bin"], "val": [f"{folder}/val.bin"]}


def nd_corpus_meta(wildcards):
    """The shared corpus's meta.json for the report; none for downloaded shards."""
    corpus = nd_config(wildcards)["corpus"]
    if corpus["name"] in so_sources.CORPORA:
        return []
    return f"results/{wildcards.scale}/corpus/{corpus['name']}/bpe{corpus['vocab_size']}/meta.json"


def nd_clean_train(wildcards):
    return nd_clean(wildcards)["train"]


def nd_train_inputs(wildcards):
    """The clean token files (every setting is noised from them as it is read) and the validation stream."""
    clean = nd_clean(wildcards)
    return {"train": clean["train"], "val": clean["val"]}


@reads("noisy_divergence", ("noise",), ("corpus",), ("seeds",), ("jobs",))
def nd_inject_params(wildcards):
    """The injection's seed, the training seeds of the setting (one placement each), its special ids and vocabulary
    size (the setting itself is the wildcard)."""
    cfg = nd_config(wildcards)
    return {
        "seed": cfg["noise"]["seed"],
        "seeds": nd_experiment.seeds_of(cfg, wildcards.setting),
        "allow_special": cfg["noise"]["allow_special"],
        "vocab_size": cfg["corpus"]["vocab_size"],
        "eot_id": cfg["corpus"]["eot_id"],
        "special_ids": nd_experiment.special_ids(cfg["corpus"]),
        "chunk_tokens": ND_INJECT_CHUNK,
    }


@reads("noisy_divergence", *nd_experiment.JOB_KEYS)
def nd_job_params(wildcards):
    """One job's runs, model, training settings and noise (each run noises the clean stream as it reads it)."""
    return nd_experiment.job_params(nd_config(wildcards), wildcards.job)


@reads(
    "noisy_divergence",
    ("pilot",),
    *nd_experiment.JOB_KEYS,
    ("comparisons",),
    ("divergence",),
)
def nd_pilot_params(wildcards):
    """The edge-of-stability pilot's grid, seeds, model, training settings, noise and detector."""
    return nd_experiment.pilot_params(nd_config(wildcards))


def nd_pilot(wildcards):
    """The pilot's table for the report, where the scale configures a pilot (smoke and quick)."""
    if "pilot" not in nd_config(wildcards):
        return []
    return f"{ND}/pilot.parquet".format(scale=wildcards.scale)


def nd_job_tables(wildcards, table):
    return [
        f"{ND}/runs/{job}_{table}.parquet".format(scale=wildcards.scale)
        for job in nd_experiment.job_names(nd_config(wildcards))
    ]


def nd_all_job_tables(wildcards):
    return {t: nd_job_tables(wildcards, t) for t in ND_JOB_TABLES}


def nd_stats(wildcards):
    """The injection statistics of every noise setting the jobs train on."""
    return [
        f"{ND}/data/{s.name}/stats.parquet".format(scale=wildcards.scale)
        for s in nd_experiment.settings_of(nd_config(wildcards))
    ]


def nd_plan_work(wildcards, scale):
    """The work of one training job for the plan of a scale: its runs' tokens x the weights a token passes through."""
    cfg = scale_block(PAPERS, "noisy_divergence", scale)
    job, runs = nd_experiment.job_members(cfg, wildcards.job)
    shape, train = cfg["shapes"][job["shape"]], cfg["train"]
    return decoder_work(
        len(runs) * train["steps"] * train["batch_size"] * train["seq_len"],
        d_model=shape["d_model"],
        n_layers=shape["n_layers"],
        n_heads=shape["n_heads"],
        n_kv_heads=shape["n_heads"],
        head_dim=shape["head_dim"],
        d_ff=shape["d_ff"],
        vocab=cfg["corpus"]["vocab_size"],
    )


PLAN_WORK["noisy_divergence_train"] = nd_plan_work


def nd_train_mem_mb(wildcards):
    """Host memory of a training job: at paper scale a resume loads weights and AdamW state onto the CPU (24 GB
    at B1p3w) beside the clean stream (3.6 GB): 40 GB (profiles/slurm's comment); 4 GB at the small scales.
    """
    return 40000 if wildcards.scale == "paper" else 4000
