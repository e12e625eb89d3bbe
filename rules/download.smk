# The one download rule of every paper: each file of the registry of sources (config/sources.yaml) is fetched
# into resources/ and checked against its pinned hash or its lock (config/sources.lock.yaml), which a first fetch
# writes for a source locked on first fetch (helpers download_* in rules/common.smk). Cached between
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
        source=download_params,
        mirror=download_mirror,
        lock=SOURCES_LOCK,
    script:
        "../scripts/common/download.py"
