# Paper 12: thresholding Monte Carlo tree search with Track-and-Stop and ratio-based tracking.
# instances -> theory (T*, w*, DP vs LP) -> simulate {algo} -> evaluate (with the per-round cost)
#           -> equivalence (incremental vs full ratio rule) -> claims/figures -> report


include: "functions/thresh_mcts.smk"


rule thresh_mcts_instances:
    input:
        user=tm_user_file,
    output:
        f"{TM}/instances.parquet",
    log:
        f"{TM_LOG}/instances.log",
    benchmark:
        f"{TM_BENCH}/instances.tsv"
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        instances=paper_params("thresh_mcts", "instances"),
        seed=paper_params("thresh_mcts", "seed"),
    script:
        "../scripts/thresh_mcts/instances.py"


rule thresh_mcts_theory:
    input:
        instances=f"{TM}/instances.parquet",
    output:
        theory=f"{TM}/theory.parquet",
        lp_check=f"{TM}/lp_check.parquet",
    log:
        f"{TM_LOG}/theory.log",
    benchmark:
        f"{TM_BENCH}/theory.tsv"
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        deltas=paper_params("thresh_mcts", "deltas"),
        lp_check=paper_params("thresh_mcts", "lp_check"),
        seed=paper_params("thresh_mcts", "seed"),
    script:
        "../scripts/thresh_mcts/theory.py"


rule thresh_mcts_simulate:
    input:
        instances=f"{TM}/instances.parquet",
    output:
        f"{TM}/runs/{{algo}}.parquet",
    log:
        f"{TM_LOG}/simulate/{{algo}}.log",
    benchmark:
        f"{TM_BENCH}/simulate/{{algo}}.tsv"
    wildcard_constraints:
        algo="d_tracking|c_tracking|ratio|ratio_incremental|uniform|lucb|oracle",
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        deltas=paper_params("thresh_mcts", "deltas"),
        runs=paper_params("thresh_mcts", "runs"),
        t_max=paper_params("thresh_mcts", "t_max"),
        conservative=paper_params("thresh_mcts", "conservative_beta"),
        seed=paper_params("thresh_mcts", "seed"),
    script:
        "../scripts/thresh_mcts/simulate.py"


rule thresh_mcts_equivalence:
    output:
        f"{TM}/equivalence.parquet",
    log:
        f"{TM_LOG}/equivalence.log",
    benchmark:
        f"{TM_BENCH}/equivalence.tsv"
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=1000,
        runtime=30,
    params:
        equivalence=paper_params("thresh_mcts", "equivalence"),
        t_max=paper_params("thresh_mcts", "t_max"),
        delta=0.1,
        seed=paper_params("thresh_mcts", "seed"),
    script:
        "../scripts/thresh_mcts/equivalence.py"


rule thresh_mcts_cost:
    output:
        f"{TM}/cost.parquet",
    log:
        f"{TM_LOG}/cost.log",
    benchmark:
        f"{TM_BENCH}/cost.tsv"
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=2500,
        runtime=tm_cost_runtime,
    params:
        cost=paper_params("thresh_mcts", "cost"),
        seed=paper_params("thresh_mcts", "seed"),
    script:
        "../scripts/thresh_mcts/cost.py"


rule thresh_mcts_evaluate:
    input:
        runs=tm_run_files,
        theory=f"{TM}/theory.parquet",
        cost=f"{TM}/cost.parquet",
    output:
        summary=f"{TM}/summary.parquet",
        slopes=f"{TM}/cost_slopes.parquet",
    log:
        f"{TM_LOG}/evaluate.log",
    benchmark:
        f"{TM_BENCH}/evaluate.tsv"
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/thresh_mcts/evaluate.py"


rule thresh_mcts_claims:
    input:
        summary=f"{TM}/summary.parquet",
        slopes=f"{TM}/cost_slopes.parquet",
        cost=f"{TM}/cost.parquet",
        equivalence=f"{TM}/equivalence.parquet",
        lp_check=f"{TM}/lp_check.parquet",
        definitions=claims_definitions("thresh_mcts"),
    output:
        f"{TM}/claims.parquet",
    log:
        f"{TM_LOG}/claims.log",
    benchmark:
        f"{TM_BENCH}/claims.tsv"
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/thresh_mcts/claims.py"


rule thresh_mcts_figures:
    input:
        summary=f"{TM}/summary.parquet",
        slopes=f"{TM}/cost_slopes.parquet",
        cost=f"{TM}/cost.parquet",
    output:
        **{
            name: report(
                f"{TM}/figures/{name}.png",
                caption=f"../workflow/report/thresh_mcts/{name}.rst",
                category="Paper 12: thresholding MCTS",
            )
            for name in TM_FIGURES
        },
    log:
        f"{TM_LOG}/figures.log",
    benchmark:
        f"{TM_BENCH}/figures.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/thresh_mcts/figures.py"


rule thresh_mcts_report:
    input:
        instances=f"{TM}/instances.parquet",
        summary=f"{TM}/summary.parquet",
        slopes=f"{TM}/cost_slopes.parquet",
        cost=f"{TM}/cost.parquet",
        equivalence=f"{TM}/equivalence.parquet",
        lp_check=f"{TM}/lp_check.parquet",
        claims=f"{TM}/claims.parquet",
        figures=expand(
            f"{TM}/figures/{{name}}.png", name=TM_FIGURES, allow_missing=True
        ),
        captions=expand("workflow/report/thresh_mcts/{name}.rst", name=TM_FIGURES),
        deviations="workflow/report/thresh_mcts/deviations.md",
        paper_scale="workflow/report/thresh_mcts/paper_scale.yaml",
        template="workflow/report/thresh_mcts/report.md.j2",
    output:
        f"{TM}/report.md",
    log:
        f"{TM_LOG}/report.log",
    benchmark:
        f"{TM_BENCH}/report.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        paper_scale=paper_scale_values("thresh_mcts"),
        benchmarks=TM_BENCH,
        conservative_beta=paper_params("thresh_mcts", "conservative_beta"),
        runs=paper_params("thresh_mcts", "runs"),
        t_max=paper_params("thresh_mcts", "t_max"),
        rules=paper_params("thresh_mcts", "rules"),
    script:
        "../scripts/thresh_mcts/report.py"
