# Paper 07: symmetry-compatible optimizers (Lau and Su 2026) against AdamW in small LM pretraining.
# corpus (rules/corpus.smk: documents -> BPE -> token files; paper: FineWeb-Edu shards) -> train
#   {arch}/{method}_lr{i}_s{seeds} (dense: embedding + head optimizer; moe: router optimizer; the seeds of a group
#   as one batched ensemble: s0 at smoke, one seed per job at quick and paper scale, config seeds_per_job) + theory
#   (float64 symmetry checks) + step_time (side by side) -> tables (best LR on validation) -> claims/figures -> report


include: "functions/symm_optim.smk"


rule symm_optim_theory:
    output:
        equivariance=f"{SO}/theory/equivariance.parquet",
        identities=f"{SO}/theory/identities.parquet",
    log:
        f"{SO_LOG}/theory.log",
    benchmark:
        f"{SO_BENCH}/theory.tsv"
    conda:
        "../envs/torch.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        seed=0,
    script:
        "../scripts/symm_optim/theory.py"


rule symm_optim_train:
    input:
        unpack(so_tokens),
    output:
        steps=f"{SO}/runs/{SO_JOB}_steps.parquet",
        spectra=f"{SO}/runs/{SO_JOB}_spectra.parquet",
        summary=f"{SO}/runs/{SO_JOB}_summary.parquet",
    log:
        f"{SO_LOG}/train/{SO_JOB}.log",
    benchmark:
        f"{SO_BENCH}/train/{SO_JOB}.tsv"
    wildcard_constraints:
        arch="dense|moe",
        method="[a-z_]+",
        lr_index=r"\d+",
        seeds=r"\d+(-\d+)*",
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=so_train_mem,
        runtime=1440,
    params:
        job=so_job_params,
    script:
        "../scripts/symm_optim/train.py"


rule symm_optim_step_time:
    output:
        f"{SO}/step_time.parquet",
    log:
        f"{SO_LOG}/step_time.log",
    benchmark:
        f"{SO_BENCH}/step_time.tsv"
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=so_step_time_mem,
        runtime=60,
    params:
        config=so_step_time_params,
        repeats=paper_params("symm_optim", "step_time_repeats"),
        warmup=paper_params("symm_optim", "step_time_warmup"),
    script:
        "../scripts/symm_optim/step_time.py"


rule symm_optim_tables:
    input:
        summaries=so_run_summaries,
        steps=so_run_steps,
        spectra=so_run_spectra,
    output:
        runs=f"{SO}/runs.parquet",
        best=f"{SO}/best_lr.parquet",
        curves=f"{SO}/curves.parquet",
        spectra=f"{SO}/spectra.parquet",
    log:
        f"{SO_LOG}/tables.log",
    benchmark:
        f"{SO_BENCH}/tables.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        baseline=paper_params("symm_optim", "baseline"),
        router_baseline=paper_params("symm_optim", "router_baseline"),
    script:
        "../scripts/symm_optim/tables.py"


rule symm_optim_claims:
    input:
        definitions=claims_definitions("symm_optim"),
        equivariance=f"{SO}/theory/equivariance.parquet",
        identities=f"{SO}/theory/identities.parquet",
        runs=f"{SO}/runs.parquet",
        best=f"{SO}/best_lr.parquet",
        step_time=f"{SO}/step_time.parquet",
    output:
        f"{SO}/claims.parquet",
    log:
        f"{SO_LOG}/claims.log",
    benchmark:
        f"{SO_BENCH}/claims.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        baseline=paper_params("symm_optim", "baseline"),
        router_baseline=paper_params("symm_optim", "router_baseline"),
    script:
        "../scripts/symm_optim/claims.py"


rule symm_optim_figures:
    input:
        runs=f"{SO}/runs.parquet",
        best=f"{SO}/best_lr.parquet",
        curves=f"{SO}/curves.parquet",
        spectra=f"{SO}/spectra.parquet",
    output:
        **{
            name: report(
                f"{SO}/figures/{name}.png",
                caption=f"../workflow/report/symm_optim/{name}.rst",
                category="Paper 07: symmetry-compatible optimizers",
            )
            for name in SO_FIGURES
        },
    log:
        f"{SO_LOG}/figures.log",
    benchmark:
        f"{SO_BENCH}/figures.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/symm_optim/figures.py"


rule symm_optim_report:
    input:
        claims=f"{SO}/claims.parquet",
        runs=f"{SO}/runs.parquet",
        best=f"{SO}/best_lr.parquet",
        step_time=f"{SO}/step_time.parquet",
        equivariance=f"{SO}/theory/equivariance.parquet",
        identities=f"{SO}/theory/identities.parquet",
        figures=expand(
            f"{SO}/figures/{{name}}.png", name=SO_FIGURES, allow_missing=True
        ),
        captions=expand("workflow/report/symm_optim/{name}.rst", name=SO_FIGURES),
        deviations="workflow/report/symm_optim/deviations.md",
        paper_scale="workflow/report/symm_optim/paper_scale.yaml",
        corpus_meta=so_corpus_meta,
        template="workflow/report/symm_optim/report.md.j2",
    output:
        f"{SO}/report.md",
    log:
        f"{SO_LOG}/report.log",
    benchmark:
        f"{SO_BENCH}/report.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        paper_scale=paper_scale_values("symm_optim"),
        benchmarks=SO_BENCH,
        corpus=paper_params("symm_optim", "corpus"),
        model=paper_params("symm_optim", "model"),
        train=paper_params("symm_optim", "train"),
        base=paper_params("symm_optim", "base"),
        methods=paper_params("symm_optim", "methods"),
        routers=paper_params("symm_optim", "routers"),
        lr_multipliers=paper_params("symm_optim", "lr_multipliers"),
        seeds=paper_params("symm_optim", "seeds"),
        moe_seeds=paper_params("symm_optim", "moe_seeds"),
        baseline=paper_params("symm_optim", "baseline"),
        router_baseline=paper_params("symm_optim", "router_baseline"),
        step_time_repeats=paper_params("symm_optim", "step_time_repeats"),
    script:
        "../scripts/symm_optim/report.py"
