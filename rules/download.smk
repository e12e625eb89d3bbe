# The one download rule of every paper: each file of the registry of pinned sources (config/sources.yaml) is
# fetched with its pinned hash into resources/ (helpers download_* in rules/common.smk). Cached between
# workflows, hence no benchmark: (Snakemake forbids both on one rule).


rule download:
    output:
        "resources/{source}",
    log:
        "resources/logs/{source}.log",
    wildcard_constraints:
        source=source_registry.path_pattern(SOURCES),
    cache: True
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=1000,
        runtime=download_runtime,
    params:
        url=download_url,
        known_hash=download_hash,
    script:
        "../scripts/common/download.py"
