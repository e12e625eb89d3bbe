"""Paper 09's config at one scale, read as the rules need it: the noise settings, the training jobs and their
members, one job's params, and the checks the schema cannot express (run when the workflow is parsed).

A job trains runs of one (shape, QK-norm, learning-rate multiplier) as one batched ensemble: every setting of the
config's job entries of that triple x each entry's seeds (its own ``seeds``, or the config's), entry by entry and
setting-major, cut into groups of ``members_per_job`` (one run per job at paper scale). Its name is
``{shape}_{qk|noqk}_lr{multiplier}_g{group}``. An entry with its own seeds adds seeds to a comparison without
retraining the others (quick: 12 seeds of insert-k5 and insert-full for D3 and D10).
"""

from __future__ import annotations

from .noise import CLEAN, NoiseSetting, noise_vocabulary, parse_setting
from .paths import ATTENTIONS, PRECISION_NAMES
from .pilot import VARIANTS

__all__ = [
    "JOB_KEYS",
    "check_config",
    "job_members",
    "job_name",
    "job_names",
    "job_params",
    "pilot_params",
    "seeds_of",
    "settings_of",
    "special_ids",
]

# the config keys a training job reads (its params), for the rerun test
JOB_KEYS = (
    ("shapes",),
    ("train",),
    ("jobs",),
    ("seeds",),
    ("members_per_job",),
    ("corpus",),
    ("noise",),
    ("comparisons", "reference_setting"),
)


def special_ids(corpus: dict) -> list[int]:
    """The ids noise may not use: the end-of-text id and every id from ``special_from`` up (Qwen3's specials)."""
    start = corpus.get("special_from", corpus["vocab_size"])
    return sorted({corpus["eot_id"], *range(start, corpus["vocab_size"])})


def settings_of(cfg: dict) -> list[NoiseSetting]:
    """Every noise setting the jobs train on (the clean stream left out), in order of first use."""
    names: list[str] = []
    for job in cfg["jobs"]:
        names += [n for n in job["settings"] if n != CLEAN and n not in names]
    return [parse_setting(n) for n in names]


def job_name(job: dict, group: int) -> str:
    return f"{job['shape']}_{'qk' if job['qk_norm'] else 'noqk'}_lr{job['lr_multiplier']:g}_g{group}"


def _key(job: dict) -> tuple:
    return (job["shape"], job["qk_norm"], job["lr_multiplier"])


def _jobs(cfg: dict) -> list[tuple[str, dict, list[dict]]]:
    """(name, the first entry of its triple, runs) of every job: the runs of each (shape, QK-norm, multiplier) in
    groups of ``members_per_job``."""
    by_key: dict[tuple, tuple[dict, list[dict]]] = {}
    for job in cfg["jobs"]:
        runs = [{"setting": s, "seed": seed} for s in job["settings"] for seed in job.get("seeds", cfg["seeds"])]
        by_key.setdefault(_key(job), (job, []))[1].extend(runs)
    size = cfg["members_per_job"]
    return [
        (job_name(job, g), job, runs[i : i + size])
        for job, runs in by_key.values()
        for g, i in enumerate(range(0, len(runs), size))
    ]


def job_names(cfg: dict) -> list[str]:
    return [name for name, _, _ in _jobs(cfg)]


def seeds_of(cfg: dict, setting: str) -> list[int]:
    """Every training seed that reads ``setting`` (one placement each), in order of first use."""
    seeds = [seed for job in cfg["jobs"] if setting in job["settings"] for seed in job.get("seeds", cfg["seeds"])]
    return list(dict.fromkeys(seeds))


def job_members(cfg: dict, name: str) -> tuple[dict, list[dict]]:
    """(the job's entry, its runs ``{setting, seed}``) for a job name; KeyError naming the known jobs."""
    for job_name_, job, runs in _jobs(cfg):
        if job_name_ == name:
            return job, runs
    raise KeyError(f"no training job {name!r}; the config's jobs are {job_names(cfg)}")


def job_params(cfg: dict, name: str) -> dict:
    """What one training job reads: its runs, the model's shape (with QK-norm and the vocabulary), the training
    settings with the peak learning rate multiplied, the shape's name and multiplier for its tables, and the noise
    (each run noises the clean stream as it reads it: ``streams.run_stream``)."""
    job, runs = job_members(cfg, name)
    shape = cfg["shapes"][job["shape"]]
    train = dict(cfg["train"])
    init_std = train.pop("init_std")
    train["lr"] = train["lr"] * job["lr_multiplier"]
    return {
        "runs": runs,
        "shape": job["shape"],
        "qk_norm": job["qk_norm"],
        "lr_multiplier": job["lr_multiplier"],
        "model": {**shape, "vocab_size": cfg["corpus"]["vocab_size"], "qk_norm": job["qk_norm"], "init_std": init_std},
        "train": train,
        "noise": {
            "seed": cfg["noise"]["seed"],
            "allow_special": cfg["noise"]["allow_special"],
            "special_ids": special_ids(cfg["corpus"]),
            "eot_id": cfg["corpus"]["eot_id"],
            "reference_setting": cfg["comparisons"]["reference_setting"],
        },
    }


def pilot_params(cfg: dict) -> dict:
    """What the edge-of-stability pilot reads (``pilot.py``): its grid and seeds, the deep shape without QK-norm, the
    scale's training settings at the pilot's steps (the variants override them), the noise and the detector."""
    pilot, shape = cfg["pilot"], cfg["shapes"][cfg["comparisons"]["deep_shape"]]
    train = dict(cfg["train"])
    init_std = train.pop("init_std")
    return {
        "grid": pilot["grid"],
        "seeds": pilot["seeds"],
        "model": {**shape, "vocab_size": cfg["corpus"]["vocab_size"], "qk_norm": False, "init_std": init_std},
        "train": {**train, "steps": pilot["steps"], "eval_every": pilot["steps"]},
        "noise": job_params(cfg, job_names(cfg)[0])["noise"],
        "divergence": cfg["divergence"],
    }


def check_config(cfg: dict) -> None:
    """What the schema cannot say; ValueError naming the key."""
    vocab = cfg["corpus"]["vocab_size"]
    if not 0 <= cfg["corpus"]["eot_id"] < vocab:
        raise ValueError(f"corpus.eot_id {cfg['corpus']['eot_id']} lies outside the vocabulary of {vocab}")
    for setting in settings_of(cfg):
        try:
            noise_vocabulary(vocab, setting.vocab, tuple(special_ids(cfg["corpus"])), cfg["noise"]["allow_special"])
        except ValueError as error:
            raise ValueError(f"noise setting {setting.name}: {error}") from None
    seq = cfg["train"]["seq_len"]
    for name, shape in cfg["shapes"].items():
        if seq > shape["context"]:
            raise ValueError(f"train.seq_len {seq} exceeds shapes.{name}.context {shape['context']}")
        if shape["head_dim"] % 2:
            raise ValueError(f"shapes.{name}.head_dim must be even (rotary embeddings), got {shape['head_dim']}")
    train = cfg["train"]
    micro = train.get("micro_batch", train["batch_size"])
    if not 1 <= micro <= train["batch_size"] or train["batch_size"] % micro:
        raise ValueError(f"train.micro_batch {micro} must divide train.batch_size {train['batch_size']}")
    if train.get("precision", "fp32") not in PRECISION_NAMES:
        raise ValueError(f"train.precision must be one of {PRECISION_NAMES}, got {train['precision']!r}")
    if train.get("attention", "explicit") not in ATTENTIONS:
        raise ValueError(f"train.attention must be one of {ATTENTIONS}, got {train['attention']!r}")
    if cfg["train"]["warmup"] >= cfg["train"]["steps"]:
        raise ValueError(f"train.warmup {cfg['train']['warmup']} must be below train.steps {cfg['train']['steps']}")
    seen = set()
    for i, job in enumerate(cfg["jobs"]):
        if job["shape"] not in cfg["shapes"]:
            raise ValueError(f"jobs[{i}].shape {job['shape']!r} is not among shapes {sorted(cfg['shapes'])}")
        for s in job["settings"]:
            if s != CLEAN:
                try:
                    parse_setting(s)
                except ValueError as error:
                    raise ValueError(f"jobs[{i}].settings: {error}") from None
        for s in job["settings"]:
            for seed in job.get("seeds", cfg["seeds"]):
                run = (*_key(job), s, seed)
                if run in seen:
                    raise ValueError(
                        f"jobs[{i}] repeats the run of shape {run[0]}, qk_norm {run[1]}, lr_multiplier {run[2]}, "
                        f"setting {s}, seed {seed}"
                    )
                seen.add(run)
    for entry in cfg.get("pilot", {}).get("grid", []):
        if entry["variant"] not in VARIANTS:
            raise ValueError(f"pilot.grid variant {entry['variant']!r} is not among {sorted(VARIANTS)}")
    if set(cfg.get("pilot", {}).get("seeds", [])) & set(cfg["seeds"]):
        raise ValueError("pilot.seeds must be apart from the scored seeds")
    comparisons = cfg["comparisons"]
    for key in ("deep_shape", "wide_shape"):
        if comparisons[key] not in cfg["shapes"]:
            raise ValueError(f"comparisons.{key} {comparisons[key]!r} is not among shapes {sorted(cfg['shapes'])}")
    parse_setting(comparisons["reference_setting"])
    sizes = []
    for name in comparisons["scale_shapes"]:
        if name not in cfg["shapes"]:
            raise ValueError(f"comparisons.scale_shapes names {name!r}, not among shapes {sorted(cfg['shapes'])}")
        shape = cfg["shapes"][name]
        inner = shape["n_heads"] * shape["head_dim"]
        sizes.append(shape["n_layers"] * (4 * shape["d_model"] * inner + 3 * shape["d_model"] * shape["d_ff"]))
    if sizes != sorted(set(sizes)):
        raise ValueError(
            f"comparisons.scale_shapes must go from the smallest model to the largest (block weights {sizes})"
        )
