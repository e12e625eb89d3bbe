r"""The experiment of one scale of ``config/symm_optim.yaml``: which runs exist, and the optimizer of every
parameter role in each (the repo's README runs, scaled down).

Two sweeps:

* ``dense``: the optimizer of the embedding and LM head (``methods``: AdamW, row norm, one-sided right
  spectral, hybrid...) x ``lr_multipliers`` x ``seeds``; the multiplier scales both matrices' learning rates,
  keeping the method's embedding/head ratio (the repo's pairs, e.g. row norm 0.5 / 5e-3);
* ``moe``: the router's optimizer (``routers``: AdamW, centered row norm, centered left polar) x
  ``lr_multipliers`` x ``moe_seeds``, with the embedding and head on ``base``.

Every other role (attention matrices, SwiGLU gate/up and down, vectors) uses ``base`` in every run, as in the
README runs (Muon on attention, the hybrid on the MLP, AdamW on vectors). A run is named
``{arch}/{method}_lr{index}_s{seed}``.

Jobs: one job trains the seeds of one (arch, method, learning rate) cell as a batched ensemble, in groups of
``seeds_per_job`` consecutive seeds of the sweep's list (``training.train_ensemble``); a job is named
``{arch}/{method}_lr{index}_s{seeds}``, the seeds joined by ``-`` (``dense/hybrid_lr1_s0-1-2``; one seed per job
gives the run's name). The learning-rate multipliers stay in separate jobs: nine members of the quick dense model
cost more per member than three (their logits leave the cache), and every optimizer would need a learning rate
per member.

:func:`check_config` refuses, before any job runs, what the schema cannot: unknown optimizers, roles and
arguments (by building each optimizer on a parameter of the role's shape), learning rates or momenta out of
range, empty grids, a vocabulary that does not match the tokenizer's (both come from the config), a sequence
longer than the context, and baselines missing from the sweeps.
"""

from __future__ import annotations

import copy

from neurips26.common.validation import is_int, is_number

from .settings import KINDS, OPTIMIZER_ARGUMENTS, LMConfig, TrainSettings, check_optimizer_spec

__all__ = [
    "ARCHS",
    "JOB_KEYS",
    "STEP_TIME_KEYS",
    "assignment",
    "check_config",
    "job_names",
    "job_params",
    "jobs",
    "model_config",
    "parameter_count",
    "runs",
    "seed_groups",
    "step_time_config",
    "train_settings",
]

ARCHS = ("dense", "moe")


def model_config(cfg: dict, arch: str, seed: int) -> LMConfig:
    """The LM of ``arch`` (``cfg["model"][arch]``) with the corpus's vocabulary and the training context."""
    if arch not in ARCHS:
        raise ValueError(f"unknown arch {arch!r}, expected one of {ARCHS}")
    sizes = dict(cfg["model"][arch])
    return LMConfig(
        vocab_size=cfg["corpus"]["vocab_size"],
        context=sizes.pop("context", cfg["train"]["seq_len"]),
        seed=seed,
        **sizes,
    )


def parameter_count(cfg: dict, arch: str) -> int:
    """Parameters of ``arch``'s LM (``model.n_parameters``'s total), counted from the sizes without torch (the
    rules' memory requests are computed when the workflow is parsed)."""
    c = model_config(cfg, arch, 0)
    attention = c.d_model * c.head_dim * (2 * c.n_heads + 2 * c.n_kv_heads)
    mlp = 3 * c.d_model * c.d_ff * max(c.n_experts, 1) + c.d_model * c.n_experts
    norms = 2 * c.d_model + 2 * c.head_dim  # the block's two RMSNorms and the query and key norms
    return 2 * c.vocab_size * c.d_model + c.n_layers * (attention + mlp + norms) + c.d_model


def step_time_bytes(cfg: dict) -> int:
    """Host bytes of the step-time job at most (on the CPU): per arch, its weights and gradients (8 bytes a
    parameter) and each method's optimizer state (at most two moments, 8 bytes a parameter), plus one row's fp32
    logits, their gradient and log-softmax; the archs are timed one after the other."""
    logits = 3 * 4 * cfg["train"]["seq_len"] * cfg["corpus"]["vocab_size"]
    return max(parameter_count(cfg, arch) * (8 + 8 * len(_sweep(cfg, arch))) + logits for arch in ARCHS)


def train_settings(cfg: dict, seed: int) -> TrainSettings:
    return TrainSettings(seed=seed, **cfg["train"])


def _sweep(cfg: dict, arch: str) -> dict:
    return cfg["methods"] if arch == "dense" else cfg["routers"]


def _seeds(cfg: dict, arch: str) -> list[int]:
    return cfg["seeds"] if arch == "dense" else cfg["moe_seeds"]


def runs(cfg: dict, arch: str | None = None) -> list[dict]:
    """Every run of the config: ``{arch, method, lr_index, multiplier, seed, name}``."""
    out = []
    for a in ARCHS if arch is None else (arch,):
        for method in _sweep(cfg, a):
            for i, mult in enumerate(cfg["lr_multipliers"]):
                for seed in _seeds(cfg, a):
                    out.append(
                        {
                            "arch": a,
                            "method": method,
                            "lr_index": i,
                            "multiplier": mult,
                            "seed": seed,
                            "name": f"{a}/{method}_lr{i}_s{seed}",
                        }
                    )
    return out


def seed_groups(cfg: dict, arch: str) -> list[list[int]]:
    """The seeds of ``arch``'s sweep in groups of ``seeds_per_job``, in the list's order (the last may be short)."""
    seeds, size = _seeds(cfg, arch), cfg["seeds_per_job"]
    return [list(seeds[i : i + size]) for i in range(0, len(seeds), size)]


def seeds_label(seeds: list[int]) -> str:
    return "-".join(str(seed) for seed in seeds)


def jobs(cfg: dict, arch: str | None = None) -> list[dict]:
    """Every training job of the config: ``{arch, method, lr_index, seeds, name}``, the runs of a cell's seeds
    grouped as :func:`seed_groups` says; the jobs' runs are :func:`runs`, in the same order."""
    out = []
    for a in ARCHS if arch is None else (arch,):
        for method in _sweep(cfg, a):
            for i in range(len(cfg["lr_multipliers"])):
                for group in seed_groups(cfg, a):
                    name = f"{a}/{method}_lr{i}_s{seeds_label(group)}"
                    out.append({"arch": a, "method": method, "lr_index": i, "seeds": group, "name": name})
    return out


def job_names(cfg: dict) -> list[str]:
    return [j["name"] for j in jobs(cfg)]


def _scaled(spec: dict, multiplier: float) -> dict:
    out = copy.deepcopy(spec)
    out["lr"] = spec["lr"] * multiplier
    if isinstance(out.get("betas"), list):
        out["betas"] = tuple(out["betas"])
    return out


def assignment(cfg: dict, arch: str, method: str, lr_index: int) -> dict[str, dict]:
    """The optimizer of every role in one run (``optimizers.build_optimizer``'s ``assignment``)."""
    sweep = _sweep(cfg, arch)
    if method not in sweep:
        raise ValueError(f"unknown {arch} method {method!r}, expected one of {sorted(sweep)}")
    if not 0 <= lr_index < len(cfg["lr_multipliers"]):
        raise ValueError(f"lr index {lr_index} outside the grid of {len(cfg['lr_multipliers'])} multipliers")
    mult = cfg["lr_multipliers"][lr_index]
    out = {kind: _scaled(spec, 1.0) for kind, spec in cfg["base"].items()}
    if arch == "dense":
        out.pop("router", None)
        for kind in ("embedding", "lm_head"):
            out[kind] = _scaled(sweep[method][kind], mult)
    else:
        out["router"] = _scaled(sweep[method], mult)
    return out


# the config entries one job's params are derived from (``job_params``)
JOB_KEYS = (
    ("methods",),
    ("routers",),
    ("lr_multipliers",),
    ("seeds",),
    ("moe_seeds",),
    ("seeds_per_job",),
    ("base",),
    ("model",),
    ("corpus", "vocab_size"),
    ("train",),
    ("spectrum_steps",),
)


def job_params(cfg: dict, arch: str, method: str, lr_index: int, seeds: str) -> dict:
    """Everything one job depends on, and nothing else (a rule's ``params``: changing another method's learning
    rate does not rerun this job): its runs (one per seed of the group ``seeds``, e.g. ``"0-1-2"``), their
    optimizers, the model's sizes (each member's initialisation seed is its run's seed) and the training
    settings (each member's data seed is its run's seed)."""
    name = f"{arch}/{method}_lr{lr_index}_s{seeds}"
    if name not in job_names(cfg):
        raise ValueError(f"no job {name} in the config (its jobs: {job_names(cfg)})")
    group = [int(seed) for seed in seeds.split("-")]
    members = [r for r in runs(cfg, arch) if r["method"] == method and r["lr_index"] == lr_index]
    config = model_config(cfg, arch, 0)
    return {
        "runs": [next(r for r in members if r["seed"] == seed) for seed in group],
        "assignment": assignment(cfg, arch, method, lr_index),
        "model": {k: getattr(config, k) for k in config.__dataclass_fields__ if k != "seed"},
        "train": dict(cfg["train"]),
        "spectrum_steps": list(cfg["spectrum_steps"]),
    }


# the config entries the step-time job reads (the models, the batch shape, the optimizers of both sweeps at the
# grid's centre, the baselines): ``step_time.step_times`` takes this part of a scale's block
STEP_TIME_KEYS = (
    ("model",),
    ("corpus", "vocab_size"),
    ("train", "seq_len"),
    ("train", "batch_size"),
    ("base",),
    ("methods",),
    ("routers",),
    ("lr_multipliers",),
    ("baseline",),
    ("router_baseline",),
)


def step_time_config(cfg: dict) -> dict:
    """The part of a scale's block that ``step_time.step_times`` reads (``STEP_TIME_KEYS``), nested as in the block."""
    out: dict = {}
    for path in STEP_TIME_KEYS:
        source, target = cfg, out
        for key in path[:-1]:
            source, target = source[key], target.setdefault(key, {})
        target[path[-1]] = copy.deepcopy(source[path[-1]])
    return out


def _check_spec(where: str, kind: str, spec) -> None:
    """What building the optimizer for a parameter of the role would refuse (``settings.check_optimizer_spec``,
    no torch: this runs when the workflow is parsed)."""
    if not isinstance(spec, dict) or "name" not in spec or "lr" not in spec:
        raise ValueError(f"{where}: must be a mapping with 'name' and 'lr', got {spec!r}")
    if spec["name"] not in OPTIMIZER_ARGUMENTS:
        raise ValueError(f"{where}: unknown optimizer {spec['name']!r}, expected one of {sorted(OPTIMIZER_ARGUMENTS)}")
    try:
        check_optimizer_spec(_scaled(spec, 1.0), kind)
    except TypeError as error:
        raise ValueError(f"{where}: {error}") from None
    except ValueError as error:
        raise ValueError(f"{where} ({kind}): {error}") from None


def check_config(cfg: dict) -> None:
    """Raise ValueError naming the first problem the schema cannot see."""
    for kind in cfg["base"]:
        if kind not in KINDS:
            raise ValueError(f"base: unknown parameter role {kind!r}, expected one of {KINDS}")
    missing = [k for k in KINDS if k not in cfg["base"]]
    if missing:
        raise ValueError(f"base: no optimizer for the roles {missing}")
    for kind, spec in cfg["base"].items():
        _check_spec(f"base.{kind}", kind, spec)
    for method, pair in cfg["methods"].items():
        if not isinstance(pair, dict) or set(pair) != {"embedding", "lm_head"}:
            raise ValueError(f"methods.{method}: needs exactly 'embedding' and 'lm_head', got {pair!r}")
        for kind, spec in pair.items():
            _check_spec(f"methods.{method}.{kind}", kind, spec)
    for method, spec in cfg["routers"].items():
        _check_spec(f"routers.{method}", "router", spec)
    if not cfg["lr_multipliers"]:
        raise ValueError("lr_multipliers: the learning-rate grid is empty")
    if not all(is_number(m, 0.0, low_open=True) for m in cfg["lr_multipliers"]):
        raise ValueError(f"lr_multipliers must be positive numbers, got {cfg['lr_multipliers']}")
    for key, sweep in (("baseline", "methods"), ("router_baseline", "routers")):
        if cfg[key] not in cfg[sweep]:
            raise ValueError(f"{key} {cfg[key]!r} is not one of {sweep} {sorted(cfg[sweep])}")
    for key in ("seeds", "moe_seeds"):
        if not cfg[key] or len(set(cfg[key])) != len(cfg[key]):
            raise ValueError(f"{key} must be a non-empty list of distinct seeds, got {cfg[key]}")
    if not is_int(cfg["seeds_per_job"], 1):
        raise ValueError(f"seeds_per_job must be an integer >= 1, got {cfg['seeds_per_job']!r}")
    for arch in ARCHS:
        mc = model_config(cfg, arch, 0)
        if (mc.n_experts > 0) != (arch == "moe"):
            raise ValueError(f"model.{arch}: n_experts must be {'> 0' if arch == 'moe' else '0'}, got {mc.n_experts}")
        if cfg["train"]["seq_len"] > mc.context:
            raise ValueError(f"train.seq_len {cfg['train']['seq_len']} exceeds model.{arch}.context {mc.context}")
    train_settings(cfg, 0)
