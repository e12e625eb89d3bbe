# Helpers shared by every paper's rules: config validation, scale lookup, paths; the registry of pinned sources
# and the helpers of the one download rule (rules/download.smk).
from pathlib import Path

from neurips26.common import sources as source_registry
from neurips26.common.config import (
    ConfigError,
    check_scale,
    load_yaml,
    scale_block,
    validate,
    validate_workflow_config,
)

IMPLEMENTED = sorted(
    path.stem
    for path in (ROOT / "rules").glob("*.smk")
    if path.stem not in ("common", "corpus", "download", "scoreboard")
)
# stops the run before any job when a key, type, range, paper or scale is wrong
PAPERS = validate_workflow_config(
    config, ROOT / "config", ROOT / "workflow" / "schemas", IMPLEMENTED
)
# the registry of pinned sources, validated against its schema and for what the schema cannot express
SOURCES = ROOT / "config" / "sources.yaml"
validate(
    load_yaml(SOURCES),
    load_yaml(ROOT / "workflow" / "schemas" / "sources.schema.yaml"),
    "config/sources.yaml",
)
try:
    source_registry.read_registry(SOURCES)
except ValueError as error:
    raise ConfigError(str(error)) from None


# the only global constraints: wildcards that mean the same in every paper (others sit on their rules)
wildcard_constraints:
    scale="[a-z]+",
    L=r"\d+",
    seed=r"\d+",


def download_source(wildcards):
    """The registry's entry of the file a download job fetches (resources/{source})."""
    return source_registry.lookup(wildcards.source, SOURCES)


def download_url(wildcards):
    """The file's url, or its name under the folder's mirror (config/config.yaml `mirrors:`)."""
    folder, _, name = wildcards.source.rpartition("/")
    mirror = config.get("mirrors", {}).get(folder)
    return mirror + name if mirror else download_source(wildcards).url


def download_hash(wildcards):
    """The pinned hash, or a stop before any job that gives the registry's reason why none is pinned."""
    try:
        return download_source(wildcards).checked_hash()
    except ValueError as error:
        raise ConfigError(str(error)) from None


def download_runtime(wildcards):
    return download_source(wildcards).runtime


def paper_params(slug, *keys):
    """A params function: the config entry `keys` of paper `slug` at the job's scale.

    Params carry exactly what a script reads, so a change reruns only the jobs that read it: a whole paper
    block is refused. The key path is recorded on the function (`config_keys`), where the rerun test reads it.
    """
    if not keys:
        raise ValueError(
            f"paper_params('{slug}') would hand a whole paper block to a rule: name the keys its script reads"
        )

    def lookup(wildcards):
        value = scale_block(PAPERS, slug, wildcards.scale)
        for key in keys:
            value = value[key]
        return value

    lookup.config_keys = ((slug, *keys),)
    return lookup


def reads(slug, *paths):
    """Decorator of a params function derived from the config: the key paths (tuples) it reads, which the
    rerun test takes as what the rule carries; e.g. @reads("amortized_ot", ("digits", "test_res")).
    """

    def mark(function):
        function.config_keys = tuple((slug, *path) for path in paths)
        return function

    return mark


def paper_config(slug, scale):
    """The whole config block of paper `slug` at `scale` (for input functions)."""
    return scale_block(PAPERS, slug, scale)


def claims_definitions(slug):
    """A paper's claims file (definitions, validated at parse time): an input of its claims rule."""
    return f"config/claims/{slug}.yaml"


def torch_threads(wildcards):
    """Torch steps use one thread at smoke and quick scale, where two jobs share the two cores and
    small tensor ops lose more to thread contention than they gain; four per job at paper scale.
    """
    return 4 if wildcards.scale == "paper" else 1


def scoreboard_inputs(wildcards):
    check_scale(wildcards.scale)
    return {
        "claims": expand(
            "results/{scale}/{slug}/claims.parquet",
            scale=wildcards.scale,
            slug=config["papers"],
        ),
        "reports": expand(
            "results/{scale}/{slug}/report.md",
            scale=wildcards.scale,
            slug=config["papers"],
        ),
    }


def add_library_inputs(workflow, root):
    """Give every rule with a script the library files that script reaches as the input `library`, so that
    editing a module of src/neurips26 reruns exactly the jobs whose scripts reach it (see
    neurips26.common.imports). Called by workflow/Snakefile after every rule is defined.
    """
    from neurips26.common.imports import library_files

    for each in workflow.rules:
        if each.script is None:
            continue
        script = Path(each.script)
        if not script.is_absolute():
            script = Path(each.snakefile).parent / script
        files = library_files(script, root / "src")
        if files:
            if each.input_modifier is None:  # a rule without inputs of its own
                each.input_modifier = workflow.modifier.path_modifier
            each.set_input(library=files)
