# Paper 17: GPLVM with amortized structured stochastic variational inference (code found: maxtretiakov/gp_lvm_ssvi;
# the paper itself was not found).
# data (a lifted manifold, or the oil-flow archive; a share of entries hidden) -> train ({dataset}/{method}_s{seed}:
#   Bayesian GPLVM mean-field, amortized mean-field, amortized structured) -> evaluate (hidden-entry metrics,
#   uncertainty map, GPyTorch cross-check) and pca (per dataset) -> tables -> claims/figures -> report


include: "functions/gplvm_assvi.smk"


rule gplvm_assvi_data:
    input:
        unpack(gp_data_inputs),
    output:
        data=f"{GP}/data/{{dataset}}.npz",
        surface=f"{GP}/data/{{dataset}}_surface.npy",
    log:
        f"{GP_LOG}/data/{{dataset}}.log",
    benchmark:
        f"{GP_BENCH}/data/{{dataset}}.tsv"
    wildcard_constraints:
        dataset=r"[a-z0-9_]+",
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        dataset=gp_dataset_params,
    script:
        "../scripts/gplvm_assvi/data.py"


rule gplvm_assvi_train:
    input:
        data=f"{GP}/data/{{dataset}}.npz",
    output:
        model=f"{GP}/runs/{{dataset}}/{{method}}_s{{seed}}.pt",
        trace=f"{GP}/runs/{{dataset}}/{{method}}_s{{seed}}_trace.parquet",
    log:
        f"{GP_LOG}/train/{{dataset}}/{{method}}_s{{seed}}.log",
    benchmark:
        f"{GP_BENCH}/train/{{dataset}}/{{method}}_s{{seed}}.tsv"
    wildcard_constraints:
        dataset=r"[a-z0-9_]+",
        method="bgplvm_mf|aeb_mf|ssvi_amort|ssvi_summary|ssvi_indep",
        seed=r"\d+",
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=4000,
        runtime=240,
    params:
        dataset=gp_shape_params,
        model=paper_params("gplvm_assvi", "model"),
        train=paper_params("gplvm_assvi", "train"),
    script:
        "../scripts/gplvm_assvi/train.py"


rule gplvm_assvi_evaluate:
    input:
        unpack(gp_data),
        models=gp_models,
    output:
        **{t: f"{GP}/runs/{{dataset}}/evaluation_{t}.parquet" for t in GP_RUN_TABLES},
    log:
        f"{GP_LOG}/evaluate/{{dataset}}.log",
    benchmark:
        f"{GP_BENCH}/evaluate/{{dataset}}.tsv"
    wildcard_constraints:
        dataset=r"[a-z0-9_]+",
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        runs=gp_runs_of,
        dataset=gp_shape_params,
        model=paper_params("gplvm_assvi", "model"),
        evaluate=paper_params("gplvm_assvi", "evaluate"),
    script:
        "../scripts/gplvm_assvi/evaluate.py"


rule gplvm_assvi_pca:
    input:
        unpack(gp_data),
    output:
        metrics=f"{GP}/runs/{{dataset}}/pca_metrics.parquet",
    log:
        f"{GP_LOG}/pca/{{dataset}}.log",
    benchmark:
        f"{GP_BENCH}/pca/{{dataset}}.tsv"
    wildcard_constraints:
        dataset=r"[a-z0-9_]+",
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        dataset=gp_shape_params,
        iterations=paper_params("gplvm_assvi", "pca", "iterations"),
    script:
        "../scripts/gplvm_assvi/pca.py"


rule gplvm_assvi_tables:
    input:
        unpack(gp_all_tables),
    output:
        metrics=f"{GP}/metrics.parquet",
        latents=f"{GP}/latents.parquet",
        grids=f"{GP}/grids.parquet",
        traces=f"{GP}/traces.parquet",
    log:
        f"{GP_LOG}/tables.log",
    benchmark:
        f"{GP_BENCH}/tables.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/gplvm_assvi/tables.py"


rule gplvm_assvi_claims:
    input:
        definitions=claims_definitions("gplvm_assvi"),
        metrics=f"{GP}/metrics.parquet",
    output:
        f"{GP}/claims.parquet",
    log:
        f"{GP_LOG}/claims.log",
    benchmark:
        f"{GP_BENCH}/claims.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        comparisons=gp_comparisons,
    script:
        "../scripts/gplvm_assvi/claims.py"


rule gplvm_assvi_figures:
    input:
        metrics=f"{GP}/metrics.parquet",
        latents=f"{GP}/latents.parquet",
        grids=f"{GP}/grids.parquet",
    output:
        **{
            name: report(
                f"{GP}/figures/{name}.png",
                caption=f"../workflow/report/gplvm_assvi/{name}.rst",
                category="Paper 17: GPLVM with amortized SSVI",
            )
            for name in GP_FIGURES
        },
    log:
        f"{GP_LOG}/figures.log",
    benchmark:
        f"{GP_BENCH}/figures.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        seeds=paper_params("gplvm_assvi", "seeds"),
    script:
        "../scripts/gplvm_assvi/figures.py"


rule gplvm_assvi_report:
    input:
        claims=f"{GP}/claims.parquet",
        metrics=f"{GP}/metrics.parquet",
        traces=f"{GP}/traces.parquet",
        figures=expand(
            f"{GP}/figures/{{name}}.png", name=GP_FIGURES, allow_missing=True
        ),
        captions=expand("workflow/report/gplvm_assvi/{name}.rst", name=GP_FIGURES),
        deviations="workflow/report/gplvm_assvi/deviations.md",
        paper_scale="workflow/report/gplvm_assvi/paper_scale.yaml",
        template="workflow/report/gplvm_assvi/report.md.j2",
    output:
        f"{GP}/report.md",
    log:
        f"{GP_LOG}/report.log",
    benchmark:
        f"{GP_BENCH}/report.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        paper_scale=paper_scale_values("gplvm_assvi"),
        benchmarks=GP_BENCH,
        datasets=paper_params("gplvm_assvi", "datasets"),
        methods=paper_params("gplvm_assvi", "methods"),
        ablation=paper_params("gplvm_assvi", "ablation"),
        model=paper_params("gplvm_assvi", "model"),
        train=paper_params("gplvm_assvi", "train"),
        evaluate=paper_params("gplvm_assvi", "evaluate"),
        seeds=paper_params("gplvm_assvi", "seeds"),
        dataset_seeds=paper_params("gplvm_assvi", "dataset_seeds"),
        comparisons=paper_params("gplvm_assvi", "comparisons"),
    script:
        "../scripts/gplvm_assvi/report.py"
