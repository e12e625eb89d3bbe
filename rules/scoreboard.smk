# results/{scale}/REPORT.md: every paper's claims and runtimes in one scoreboard.


def scoreboard_inputs(wildcards):
    check_scale(wildcards.scale)
    return {
        "claims": expand(
            "results/{scale}/{slug}/claims.parquet",
            scale=wildcards.scale,
            slug=config["papers"],
        ),
        "reports": expand(
            "results/{scale}/{slug}/report.md", scale=wildcards.scale, slug=config["papers"]
        ),
    }


rule scoreboard:
    input:
        unpack(scoreboard_inputs),
    output:
        "results/{scale}/REPORT.md",
    params:
        papers=config["papers"],
    log:
        "results/{scale}/logs/scoreboard.log",
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/common/scoreboard.py"
