# results/{scale}/REPORT.md: every paper's claims, checks and runtimes in one scoreboard.


rule scoreboard:
    input:
        unpack(scoreboard_inputs),
    output:
        report="results/{scale}/REPORT.md",
        table=report(
            "results/{scale}/scoreboard.csv",
            caption="../workflow/report/scoreboard.rst",
            category="Scoreboard",
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
