# Paper 11: ECFR, cross-modal feature reconstruction for unified multi-class multimodal anomaly detection (official
# code: wang1393/An-Efficient-Cross-modal-Feature-Reconstruction-Model-for-Multimodal-Multi-class-Anomaly-Detection).
# data ({dataset}: synthetic RGB + depth, or MVTec 3D-AD / Eyecandies) and teacher (pretext-trained small ResNet, or
#   ImageNet ResNet-34) -> train ({dataset}/{method}_{setting}_s{seed}: ecfr, same_modal, cfm; unified or per class)
#   -> evaluate (per dataset: anomaly maps, I-/P-AUROC, AUPRO per class and defect) and complexity (params, FLOPs)
#   -> tables -> claims/figures -> report.
# tune (quick, smoke; not in the report's DAG): the pilot that chose the quick teacher, widths and steps, on a draw of
#   the synthetic set no claim scores (`snakemake results/quick/ecfr/tuning/tuning.md`).


include: "functions/ecfr.smk"


rule ecfr_data:
    input:
        unpack(ec_data_inputs),
    output:
        train=f"{EC}/data/{{dataset}}/{{draw}}/train.npz",
        test=f"{EC}/data/{{dataset}}/{{draw}}/test.npz",
        summary=f"{EC}/data/{{dataset}}/{{draw}}/summary.parquet",
    log:
        f"{EC_LOG}/data/{{dataset}}/{{draw}}.log",
    benchmark:
        f"{EC_BENCH}/data/{{dataset}}/{{draw}}.tsv"
    wildcard_constraints:
        dataset=r"[a-z0-9_]+",
        draw=r"s\d+|fixed",
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=lambda wc: 16000 if wc.scale == "paper" else 2000,
        runtime=lambda wc: 120 if wc.scale == "paper" else 10,
    params:
        dataset=ec_dataset_params,
    script:
        "../scripts/ecfr/data.py"


# the tuning pilot's draw of the synthetic set (t<data seed>): its files and job time apart from the scored draws
rule ecfr_tuning_data:
    output:
        train=f"{EC}/tuning/data/{{dataset}}/{{draw}}/train.npz",
        test=f"{EC}/tuning/data/{{dataset}}/{{draw}}/test.npz",
        summary=f"{EC}/tuning/data/{{dataset}}/{{draw}}/summary.parquet",
    log:
        f"{EC_LOG}/tuning/data/{{dataset}}/{{draw}}.log",
    benchmark:
        f"{EC}/tuning/benchmarks/data/{{dataset}}/{{draw}}.tsv"
    wildcard_constraints:
        dataset=r"[a-z0-9_]+",
        draw=r"t\d+",
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        dataset=ec_tuning_dataset_params,
    script:
        "../scripts/ecfr/data.py"


rule ecfr_teacher:
    input:
        unpack(ec_teacher_inputs),
    output:
        teacher=f"{EC}/teacher.pt",
        trace=f"{EC}/teacher_trace.parquet",
    log:
        f"{EC_LOG}/teacher.log",
    benchmark:
        f"{EC_BENCH}/teacher.tsv"
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        teacher=paper_params("ecfr", "teacher"),
    script:
        "../scripts/ecfr/teacher.py"


rule ecfr_tune:
    input:
        unpack(ec_tuning_data),
    output:
        table=f"{EC}/tuning/tuning.parquet",
        summary=f"{EC}/tuning/tuning.md",
    log:
        f"{EC_LOG}/tuning.log",
    benchmark:
        f"{EC}/tuning/benchmarks/tune.tsv"  # apart from the report's job times: the pilot is not in its DAG
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=2000,
        runtime=120,
    params:
        tuning=ec_tuning,
        teacher=paper_params("ecfr", "teacher"),
        model=paper_params("ecfr", "model"),
        cfm=paper_params("ecfr", "cfm"),
        train=ec_tuning_train,
        sigma=paper_params("ecfr", "evaluate", "sigma"),
        aupro_limit=paper_params("ecfr", "evaluate", "aupro_limit"),
        methods=paper_params("ecfr", "methods"),
    script:
        "../scripts/ecfr/tune.py"


rule ecfr_train:
    input:
        unpack(ec_data),
        teacher=f"{EC}/teacher.pt",
    output:
        model=f"{EC}/runs/{{dataset}}/{{method}}_{{setting}}_s{{seed}}.pt",
        trace=f"{EC}/runs/{{dataset}}/{{method}}_{{setting}}_s{{seed}}_trace.parquet",
    log:
        f"{EC_LOG}/train/{{dataset}}/{{method}}_{{setting}}_s{{seed}}.log",
    benchmark:
        f"{EC_BENCH}/train/{{dataset}}/{{method}}_{{setting}}_s{{seed}}.tsv"
    wildcard_constraints:
        dataset=r"[a-z0-9_]+",
        method="ecfr|same_modal_b|same_modal|cfm",
        setting="unified|per_class",
        seed=r"\d+",
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=lambda wc: 24000 if wc.scale == "paper" else 2000,
        runtime=lambda wc: 2880 if wc.scale == "paper" else 30,
    params:
        teacher=ec_teacher_shape,
        model=ec_run_model,
        cfm=ec_run_cfm,
        train=ec_run_train,
    script:
        "../scripts/ecfr/train.py"


rule ecfr_evaluate:
    input:
        tests=ec_test_sets,
        teacher=f"{EC}/teacher.pt",
        models=ec_models,
    output:
        evaluation=f"{EC}/runs/{{dataset}}/evaluation.parquet",
        examples=f"{EC}/runs/{{dataset}}/examples.npz",
    log:
        f"{EC_LOG}/evaluate/{{dataset}}.log",
    benchmark:
        f"{EC_BENCH}/evaluate/{{dataset}}.tsv"
    wildcard_constraints:
        dataset=r"[a-z0-9_]+",
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=lambda wc: 24000 if wc.scale == "paper" else 2000,
        runtime=lambda wc: 240 if wc.scale == "paper" else 20,
    params:
        runs=ec_runs_of,
        teacher=ec_teacher_shape,
        model=paper_params("ecfr", "model"),
        cfm=paper_params("ecfr", "cfm"),
        evaluate=paper_params("ecfr", "evaluate"),
    script:
        "../scripts/ecfr/evaluate.py"


rule ecfr_complexity:
    output:
        f"{EC}/complexity.parquet",
    log:
        f"{EC_LOG}/complexity.log",
    benchmark:
        f"{EC_BENCH}/complexity.tsv"
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=4000,
        runtime=10,
    params:
        teacher=ec_teacher_shape,
        model=paper_params("ecfr", "model"),
        cfm=paper_params("ecfr", "cfm"),
        size=ec_largest_size,
        methods=paper_params("ecfr", "methods"),
        paper=ec_paper_configuration,
    script:
        "../scripts/ecfr/complexity.py"


rule ecfr_tables:
    input:
        unpack(ec_all_tables),
    output:
        metrics=f"{EC}/metrics.parquet",
        traces=f"{EC}/traces.parquet",
        data=f"{EC}/data_summary.parquet",
    log:
        f"{EC_LOG}/tables.log",
    benchmark:
        f"{EC_BENCH}/tables.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/ecfr/tables.py"


rule ecfr_claims:
    input:
        definitions=claims_definitions("ecfr"),
        metrics=f"{EC}/metrics.parquet",
        complexity=f"{EC}/complexity.parquet",
        traces=f"{EC}/traces.parquet",
    output:
        f"{EC}/claims.parquet",
    log:
        f"{EC_LOG}/claims.log",
    benchmark:
        f"{EC_BENCH}/claims.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        comparisons=paper_params("ecfr", "comparisons"),
        sources=ec_dataset_sources,
    script:
        "../scripts/ecfr/claims.py"


rule ecfr_figures:
    input:
        metrics=f"{EC}/metrics.parquet",
        complexity=f"{EC}/complexity.parquet",
        examples=ec_examples,
    output:
        **{
            name: report(
                f"{EC}/figures/{name}.png",
                caption=f"../workflow/report/ecfr/{name}.rst",
                category="Paper 11: ECFR",
            )
            for name in EC_FIGURES
        },
    log:
        f"{EC_LOG}/figures.log",
    benchmark:
        f"{EC_BENCH}/figures.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        primary=paper_params("ecfr", "comparisons", "primary"),
        datasets=paper_params("ecfr", "datasets"),
    script:
        "../scripts/ecfr/figures.py"


rule ecfr_report:
    input:
        claims=f"{EC}/claims.parquet",
        metrics=f"{EC}/metrics.parquet",
        complexity=f"{EC}/complexity.parquet",
        traces=f"{EC}/traces.parquet",
        data=f"{EC}/data_summary.parquet",
        teacher=f"{EC}/teacher_trace.parquet",
        figures=expand(
            f"{EC}/figures/{{name}}.png", name=EC_FIGURES, allow_missing=True
        ),
        captions=expand("workflow/report/ecfr/{name}.rst", name=EC_FIGURES),
        deviations="workflow/report/ecfr/deviations.md",
        paper_scale="workflow/report/ecfr/paper_scale.yaml",
        template="workflow/report/ecfr/report.md.j2",
    output:
        f"{EC}/report.md",
    log:
        f"{EC_LOG}/report.log",
    benchmark:
        f"{EC_BENCH}/report.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        paper_scale=paper_scale_values("ecfr"),
        benchmarks=EC_BENCH,
        datasets=paper_params("ecfr", "datasets"),
        teacher=paper_params("ecfr", "teacher"),
        model=paper_params("ecfr", "model"),
        cfm=paper_params("ecfr", "cfm"),
        train=paper_params("ecfr", "train"),
        evaluate=paper_params("ecfr", "evaluate"),
        seeds=paper_params("ecfr", "seeds"),
        per_class_seeds=ec_per_class_seeds,
        comparisons=paper_params("ecfr", "comparisons"),
        tuning=ec_tuning_or_none,
    script:
        "../scripts/ecfr/report.py"
