# Helpers shared by every paper's rules: config validation, scale lookup, paths; the registry of pinned sources
# and the helpers of the one download rule (rules/download.smk).
import dataclasses
from pathlib import Path

from neurips26.common import sources as source_registry
from neurips26.common.costs import decoder_work
from neurips26.common.paper_scale import config_value, paper_scale_paths
from neurips26.common.scheduling import unthrottle_local_scheduler
from neurips26.common.config import (
    ConfigError,
    check_scale,
    checked_scales,
    load_yaml,
    scale_block,
    validate,
    validate_workflow_config,
)

IMPLEMENTED = sorted(
    path.stem
    for path in (ROOT / "rules").glob("*.smk")
    if path.stem not in ("common", "corpus", "download", "plan", "scoreboard")
)
# stops the run before any job when a key, type, range, paper or scale is wrong
PAPERS = validate_workflow_config(
    config, ROOT / "config", ROOT / "workflow" / "schemas", IMPLEMENTED
)
# the registry of pinned sources, validated against its schema and for what the schema cannot express
SOURCES = ROOT / "config" / "sources.yaml"
SOURCES_LOCK = (
    "config/sources.lock.yaml"  # written by first fetches (neurips26.common.locking)
)
# rule name -> function (wildcards, scale) -> the work of one job, in a unit of the rule's choosing (the plan of a
# scale divides it by the rate measured at quick scale: rules/plan.smk)
PLAN_WORK = {}
validate(
    load_yaml(SOURCES),
    load_yaml(ROOT / "workflow" / "schemas" / "sources.schema.yaml"),
    "config/sources.yaml",
)
try:
    _unknown_mirrors = set(config.get("mirrors", {})) - set(
        source_registry.read_registry(SOURCES)
    )
except ValueError as error:
    raise ConfigError(str(error)) from None
if _unknown_mirrors:
    raise ConfigError(
        f"mirrors: {sorted(_unknown_mirrors)} name no folder of config/sources.yaml"
    )


# the only global constraints: wildcards that mean the same in every paper (others sit on their rules)
wildcard_constraints:
    scale="[a-z]+",
    L=r"\d+",
    seed=r"\d+",


def download_source(wildcards):
    """The registry's entry of the file a download job fetches (resources/{source})."""
    return source_registry.lookup(wildcards.source, SOURCES)


def download_mirror(wildcards):
    """The folder's mirror (config/config.yaml `mirrors:`), which replaces its host, or None."""
    return config.get("mirrors", {}).get(wildcards.source.rpartition("/")[0])


def download_params(wildcards):
    """The registry's entry of the file as the download script reads it; a stop before any job, with the
    registry's reason, for a file neither pinned nor locked on first fetch."""
    source = download_source(wildcards)
    try:
        source.check_fetchable()
    except ValueError as error:
        raise ConfigError(str(error)) from None
    return dataclasses.asdict(source)


def download_runtime(wildcards):
    return download_source(wildcards).runtime


def paper_scale_values(slug):
    """A params function of a report rule: the paper-scale config's values at the key paths that the paper's
    workflow/report/<slug>/paper_scale.yaml lists beside the paper's settings (its table of the deviations).
    """
    spec = load_yaml(ROOT / "workflow" / "report" / slug / "paper_scale.yaml")
    try:
        paths = paper_scale_paths(spec, PAPERS[slug]["paper"])
    except ValueError as error:
        raise ConfigError(f"workflow/report/{slug}/paper_scale.yaml: {error}") from None

    def values(wildcards):
        return {path: config_value(PAPERS[slug]["paper"], path) for path in paths}

    return values


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


def rehearsal_measurements(wildcards):
    """The rehearsal's measurements (results/rehearsal/jobs.csv and claims.csv, written by `make rehearse`) for
    the plan of paper scale, where they exist: the plan then predicts memory and time per job and says what will
    not fit or run (rules/plan.smk)."""
    found = {
        "rehearsal": "results/rehearsal/jobs.csv",
        "rehearsal_claims": "results/rehearsal/claims.csv",
    }
    if wildcards.scale != "paper" or not all(
        Path(path).exists() for path in found.values()
    ):
        return {}
    return found


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
