# Helpers shared by every paper's rules: config validation, scale lookup, paths.
from neurips26.common.config import check_scale, scale_block, validate_workflow_config

IMPLEMENTED = sorted(
    path.stem
    for path in (ROOT / "rules").glob("*.smk")
    if path.stem not in ("common", "corpus", "scoreboard")
)
# stops the run before any job when a key, type, range, paper or scale is wrong
PAPERS = validate_workflow_config(
    config, ROOT / "config", ROOT / "workflow" / "schemas", IMPLEMENTED
)


wildcard_constraints:
    scale="[a-z]+",
    L=r"\d+",


def paper_params(slug, *keys):
    """A params function: the config entry `keys` of paper `slug` at the job's scale."""

    def lookup(wildcards):
        value = scale_block(PAPERS, slug, wildcards.scale)
        for key in keys:
            value = value[key]
        return value

    return lookup


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
