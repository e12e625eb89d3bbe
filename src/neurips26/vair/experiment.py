"""Paper 08's config at one scale, read as the rules need it: the datasets, the small model's members (regime,
held-out flaw, seed), the grade tables of the scale, each external backend's options, and the checks the schema
cannot express (run when the workflow is parsed, before any job).

Light on purpose (it runs while Snakemake parses): the names below repeat the library's registries
(``training.REGIMES``, ``items.FLAWS``, ``backends.BACKENDS``), and tests/test_vair_experiment.py checks that they
agree.

Datasets: ``synthetic`` (the generator; the small model trains and is evaluated on it), ``gsm8k`` (GSM8K test, its
calculator annotations replayed as steps, flawed by the same transformations) and ``math`` (MATH-500, gold solutions
certified by their final answer only: graded by the external backends, never flawed). Every dataset with replayable
steps is graded by the model-free references (rule, answer_only, random); the small model grades the synthetic eval
split; each external backend (``external``: name -> options with ``kind`` http or hf) grades every dataset.
"""

from __future__ import annotations

import os
import re

__all__ = [
    "DATASETS",
    "EXTERNAL_KEYS",
    "FLAWS",
    "NO_FLAW",
    "REFERENCE_BACKENDS",
    "REGIMES",
    "STEP_DATASETS",
    "check_config",
    "external_names",
    "external_options",
    "grade_tables",
    "members",
    "missing_api_key",
]

DATASETS = ("synthetic", "gsm8k", "math")
STEP_DATASETS = ("synthetic", "gsm8k")  # items with calculator steps: the checker replays them, the flaws apply
REGIMES = ("outcome", "process")  # neurips26.vair.training.REGIMES
FLAWS = ("missing_premise", "missing_step", "shuffled", "circular")  # neurips26.vair.items.FLAWS
NO_FLAW = "none"  # the held-out flaw of an outcome member (training.NO_FLAW)
REFERENCE_BACKENDS = ("rule", "answer_only", "random")  # the model-free backends of neurips26.vair.backends
SMALL = "small"  # the grade table of the small model (grades/synthetic/small.parquet)
REFERENCE = "reference"  # the grade table of the model-free backends (grades/{dataset}/reference.parquet)
# per kind of external backend: (the keys it needs, the keys it may have besides `kind`); the options are those of
# neurips26.vair.http_backend.make_http_backend and neurips26.vair.hf_backend.make_hf_backend
EXTERNAL_KEYS = {
    "http": (
        ("base_url", "model"),
        ("base_url", "model", "api_key_env", "temperature", "max_tokens", "timeout_s", "retries", "workers"),
    ),
    "hf": (("model",), ("model", "revision", "device", "dtype", "max_new_tokens", "batch_size")),
}
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_NEEDS = {
    "base_url": "the address of an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1 for `vllm serve`",
    "model": "the model's name on the server (http) or a local folder or Hugging Face name of a causal LM (hf)",
}


def members(cfg: dict) -> list[dict]:
    """The small model's members in training order (training.standard_members): per regime and seed, one outcome
    member, or one process member per held-out flaw; each ``{regime, heldout_flaw, seed}``."""
    return [
        {"regime": regime, "heldout_flaw": flaw, "seed": int(seed)}
        for regime in cfg["regimes"]
        for flaw in ((NO_FLAW,) if regime == "outcome" else FLAWS)
        for seed in cfg["seeds"]
    ]


def external_names(cfg: dict, kind: str | None = None) -> list[str]:
    """The external backends of the block (of one `kind` when given), in config order."""
    return [name for name, spec in cfg.get("external", {}).items() if kind is None or spec["kind"] == kind]


def grade_tables(cfg: dict) -> list[tuple[str, str]]:
    """Every grade table of the scale as (dataset, table): ``reference`` per dataset with steps, ``small`` on the
    synthetic items, and each external backend on every dataset."""
    tables = [(dataset, REFERENCE) for dataset in cfg["datasets"] if dataset in STEP_DATASETS]
    tables.append(("synthetic", SMALL))
    tables += [(dataset, name) for dataset in cfg["datasets"] for name in external_names(cfg)]
    return tables


def external_options(cfg: dict, name: str) -> dict:
    """The options of external backend `name` (its entry without `kind`); KeyError naming the configured ones."""
    entries = cfg.get("external", {})
    if name not in entries:
        raise KeyError(f"no external backend {name!r}; configured: {sorted(entries)}")
    return {key: value for key, value in entries[name].items() if key != "kind"}


def missing_api_key(cfg: dict, name: str, environ=os.environ) -> str | None:
    """A message when external backend `name` names an API key variable that is not set, else None."""
    variable = cfg["external"][name].get("api_key_env")
    if variable and not environ.get(variable):
        return (
            f"external.{name}.api_key_env names the variable {variable}, which is not set in this run's environment "
            f"(export it, or set api_key_env to null for a server without a key)"
        )
    return None


def _check_external(name: str, spec: dict) -> None:
    kind = spec["kind"]
    needed, allowed = EXTERNAL_KEYS[kind]
    unknown = sorted(set(spec) - {"kind", *allowed})
    if unknown:
        raise ValueError(f"external.{name}: keys {unknown} do not apply to a {kind} backend (allowed: {list(allowed)})")
    for key in needed:
        if spec.get(key) in (None, ""):
            raise ValueError(f"external.{name}.{key} is not set: a {kind} backend needs {_NEEDS[key]}")
    if name in (SMALL, REFERENCE) or not _NAME.match(name):
        raise ValueError(
            f"external.{name}: a backend name is lower-case letters, digits and _ and not {SMALL!r} or {REFERENCE!r}"
        )


def check_config(cfg: dict) -> None:
    """The checks the schema cannot express; ValueError naming the key."""
    if "synthetic" not in cfg["datasets"]:
        raise ValueError(f"datasets {cfg['datasets']}: the small model trains on 'synthetic', which must be listed")
    missing = [d for d in cfg["datasets"] if d in STEP_DATASETS and d not in cfg["items"]]
    if missing:
        raise ValueError(f"items: no block for the datasets {missing} (each listed dataset with steps needs one)")
    unused = sorted(set(cfg["items"]) - set(cfg["datasets"]))
    if unused:
        raise ValueError(f"items: blocks {unused} name datasets that `datasets` does not list")
    if "gsm8k" in cfg["items"] and cfg["items"]["gsm8k"]["eval_fraction"] != 1.0:
        raise ValueError("items.gsm8k.eval_fraction must be 1.0: nothing trains on GSM8K, every item is evaluated")
    if len(set(cfg["seeds"])) != len(cfg["seeds"]):
        raise ValueError(f"seeds {cfg['seeds']} repeat")
    outside = sorted(set(cfg["mechanism"]["regimes"]) - set(cfg["regimes"]))
    if outside:
        raise ValueError(f"mechanism.regimes: {outside} are not among the trained regimes {cfg['regimes']}")
    problems = cfg["problems"]
    if not problems["min_steps"] <= problems["max_steps"]:
        raise ValueError(f"problems: min_steps {problems['min_steps']} > max_steps {problems['max_steps']}")
    if problems["bound"] <= problems["max_premise"]:
        raise ValueError(f"problems: bound {problems['bound']} must exceed max_premise {problems['max_premise']}")
    train = cfg["train"]
    if train["warmup"] >= train["steps"]:
        raise ValueError(f"train.warmup {train['warmup']} must be below train.steps {train['steps']}")
    for name, spec in cfg.get("external", {}).items():
        _check_external(name, spec)
