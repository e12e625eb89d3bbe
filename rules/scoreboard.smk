# results/{scale}/REPORT.md: every paper's claims, checks and runtimes in one scoreboard.


rule scoreboard:
    input:
        unpack(scoreboard_inputs),
    output:
        report="results/{scale}/REPORT.md",
        # the HTML report's landing page (workflow/report/workflow.rst includes it)
        landing="results/{scale}/scoreboard.rst",
        table=report(
            "results/{scale}/scoreboard.csv",
            caption="../workflow/report/scoreboard.rst",
            category="Overview: scoreboard",
        ),
    log:
        "results/{scale}/logs/scoreboard.log",
    benchmark:
        "results/{scale}/benchmarks/scoreboard.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        papers=config["papers"],
    script:
        "../scripts/common/scoreboard.py"
