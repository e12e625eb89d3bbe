"""Config validation with messages that name the bad key and the allowed values."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jsonschema
import yaml

SCALES = ("smoke", "quick", "paper", "rehearsal")
# the scales a config file holds; `rehearsal` is derived from `paper` in code (neurips26.common.rehearsal)
FILE_SCALES = ("smoke", "quick", "paper")
REHEARSAL_HELP = (
    "the rehearsal scale runs through `make rehearse` (tools/rehearse.py), which serves fixture files on"
    " 127.0.0.1 in a copy of the workflow and sets `rehearsal:` in its config"
)


class ConfigError(ValueError):
    """A config file or value that the workflow cannot run with."""


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # libyaml: every dry run reads ~50 files
    """YAML with YAML 1.2's floats: `5e-2` and `1e3` are numbers (PyYAML's 1.1 rules read them as text)."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
                   |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
                   |[-+]?\.[0-9_]+(?:[eE][-+]?[0-9]+)?
                   |[-+]?\.(?:inf|Inf|INF)
                   |\.(?:nan|NaN|NAN))$""",
        re.X,
    ),
    list("-+0123456789."),
)


def load_yaml(path: str | Path) -> dict:
    with open(path) as handle:
        data = yaml.load(handle, Loader=_Loader)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: top level must be a mapping, got {type(data).__name__}")
    return data


def _allowed(error: jsonschema.ValidationError) -> str:
    """Say what the schema would have accepted at the failing spot."""
    schema = error.schema if isinstance(error.schema, dict) else {}
    if error.validator == "additionalProperties":
        keys = sorted(schema.get("properties", {}))
        return "allowed keys: " + ", ".join(keys)
    if "enum" in schema:
        return "allowed values: " + ", ".join(map(str, schema["enum"]))
    parts = []
    if "type" in schema:
        parts.append(f"type {schema['type']}")
    for bound, word in (
        ("minimum", ">="),
        ("exclusiveMinimum", ">"),
        ("maximum", "<="),
        ("exclusiveMaximum", "<"),
    ):
        if bound in schema:
            parts.append(f"{word} {schema[bound]}")
    if "minItems" in schema:
        parts.append(f"at least {schema['minItems']} items")
    if "items" in schema and isinstance(schema["items"], dict):
        inner = schema["items"]
        if "enum" in inner:
            parts.append("items in: " + ", ".join(map(str, inner["enum"])))
        elif "type" in inner:
            parts.append(f"items of type {inner['type']}")
    return "allowed: " + ", ".join(parts) if parts else ""


def _key_path(error: jsonschema.ValidationError) -> str:
    path = ".".join(str(p) for p in error.absolute_path)
    if error.validator == "additionalProperties":
        extra = sorted(
            set(error.instance) - set(error.schema.get("properties", {})) if isinstance(error.instance, dict) else []
        )
        key = ",".join(extra)
        return f"{path}.{key}" if path else key
    return path or "(top level)"


def validate(data: dict, schema: dict, source: str) -> None:
    """Raise ConfigError listing every violation of `schema` in `data` (from file `source`)."""
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    if not errors:
        return
    lines = []
    for error in errors:
        key = _key_path(error)
        if error.validator == "additionalProperties":
            message = "unknown key"
        else:
            message = error.message
        allowed = _allowed(error)
        lines.append(f"  {key}: {message}" + (f" ({allowed})" if allowed else ""))
    raise ConfigError(f"invalid config in {source}:\n" + "\n".join(lines))


def validate_workflow_config(
    config: dict, config_dir: str | Path, schema_dir: str | Path, implemented: list[str]
) -> dict[str, dict]:
    """Validate config/config.yaml and every config/<slug>.yaml it names; return the paper configs.

    `implemented` lists the slugs that have a rules file; a paper outside it is an error.
    """
    config_dir, schema_dir = Path(config_dir), Path(schema_dir)
    validate(config, load_yaml(schema_dir / "config.schema.yaml"), "config/config.yaml")
    unknown = [slug for slug in config["papers"] if slug not in implemented]
    if unknown:
        raise ConfigError(
            f"invalid config in config/config.yaml:\n  papers: unknown paper(s) {unknown} "
            f"(allowed values: {', '.join(implemented)})"
        )
    papers: dict[str, dict] = {}
    for slug in implemented:
        data = load_yaml(config_dir / f"{slug}.yaml")
        schema = load_yaml(schema_dir / f"{slug}.schema.yaml")
        validate(data, schema, f"config/{slug}.yaml")
        papers[slug] = data
        if "rehearsal" in config and slug in config["papers"]:
            data["rehearsal"] = derived_rehearsal(slug, data, schema, config["rehearsal"]["factor"])
        check_claims_file(config_dir / "claims" / f"{slug}.yaml", schema_dir / "claims.schema.yaml", slug)
    return papers


def rehearsal_plan(slug: str):
    """The paper's rehearsal plan (`neurips26.<slug>.rehearsal.PLAN`), or None where the paper has none."""
    import importlib

    try:
        module = importlib.import_module(f"neurips26.{slug}.rehearsal")
    except ModuleNotFoundError as error:
        if error.name != f"neurips26.{slug}.rehearsal":
            raise
        return None
    return module.PLAN


def derived_rehearsal(slug: str, data: dict, schema: dict, factor: int = 1) -> dict:
    """The rehearsal block of config/<slug>.yaml, derived from its paper block and checked against the same schema
    as the paper block; ConfigError naming the paper and key when the paper has no plan or the plan is stale."""
    from neurips26.common.rehearsal import rehearsal_block

    plan = rehearsal_plan(slug)
    if plan is None:
        raise ConfigError(f"paper {slug} has no rehearsal plan (src/neurips26/{slug}/rehearsal.py, PLAN)")
    try:
        block = rehearsal_block(data["paper"], plan, factor=factor, slug=slug)
    except ValueError as error:
        raise ConfigError(f"invalid rehearsal plan of config/{slug}.yaml's paper block:\n  {error}") from None
    validate({**data, "paper": block}, schema, f"the rehearsal block derived from config/{slug}.yaml")
    return block


def check_scale(scale: str) -> str:
    if scale not in SCALES:
        raise ConfigError(f"unknown scale '{scale}' (allowed values: {', '.join(SCALES)})")
    return scale


def scale_block(papers: dict[str, dict], slug: str, scale: str) -> dict[str, Any]:
    """The parameter block of one paper at one scale, with a clear error for unknown names."""
    if slug not in papers:
        raise ConfigError(f"unknown paper '{slug}' (allowed values: {', '.join(sorted(papers))})")
    if check_scale(scale) == "rehearsal" and scale not in papers[slug]:
        raise ConfigError(f"{slug}: {REHEARSAL_HELP}")
    return papers[slug][scale]


def checked_scales(papers: dict[str, dict], slug: str) -> tuple[str, ...]:
    """The scales whose block a paper's parse-time checks (experiment.check_config) must pass: the file's three,
    and the rehearsal's where the run derives it."""
    return tuple(scale for scale in SCALES if scale in papers[slug])


def check_claims_file(path: Path, schema: Path, slug: str) -> None:
    """A paper's claims file exists, follows the claims schema and names its own paper."""
    from neurips26.common.claims import load_definitions

    if not path.exists():
        raise ConfigError(f"paper {slug} has no claims file: {path} (see workflow/schemas/claims.schema.yaml)")
    load_definitions(path, schema)
    paper = load_yaml(path)["paper"]
    if paper != slug:
        raise ConfigError(f"invalid config in {path}:\n  paper: {paper!r} should be {slug!r}")
