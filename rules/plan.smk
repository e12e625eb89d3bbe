# results/{scale}/PLAN.md and one PLAN.md per paper: what a run of the scale would cost before it is submitted
# (jobs, requested CPU- and GPU-hours, downloads, the longest chain, estimates from measured rates). Nothing heavy
# runs: the job builds the DAG of every paper's report at the scale, as `snakemake -n --forceall` would. Rules
# declare the work of their jobs for estimates in PLAN_WORK (rule name -> function of wildcards and scale).


rule plan:
    input:
        unpack(rehearsal_measurements),
        configs=expand("config/{slug}.yaml", slug=IMPLEMENTED),
        profile="profiles/slurm/config.yaml",
        registry="config/sources.yaml",
        lock=SOURCES_LOCK,
        rules=sorted(str(p.relative_to(ROOT)) for p in (ROOT / "rules").rglob("*.smk")),
    output:
        plan="results/{scale}/PLAN.md",
        papers=expand("results/{{scale}}/{slug}/PLAN.md", slug=config["papers"]),
    log:
        "results/{scale}/logs/plan.log",
    benchmark:
        "results/{scale}/benchmarks/plan.tsv"
    conda:
        "../envs/workflow.yaml"
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        scale="{scale}",
        papers=config["papers"],
    script:
        "../scripts/common/plan.py"
