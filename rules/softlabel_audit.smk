# Paper 15: an assessment of human vs. model uncertainty in soft-label learning and calibration (arXiv 2605.18648).
# data ({dataset}: MNIST digits and morphs with SIMULATED annotator panels, or CIFAR-10H's human votes) -> train (the
#   teacher, a hard_orig classifier for the synthetic soft labels, then every label condition x seed batched, one job)
#   -> evaluate (accuracy, ECE, KL to humans, seed disagreement, cartography) -> tables -> claims/figures -> report.


include: "functions/softlabel_audit.smk"


rule softlabel_audit_data:
    input:
        unpack(sl_data_inputs),
    output:
        item_set=f"{SL}/data/{{dataset}}/data.npz",
        summary=f"{SL}/data/{{dataset}}/summary.parquet",
    log:
        f"{SL_LOG}/data/{{dataset}}.log",
    benchmark:
        f"{SL_BENCH}/data/{{dataset}}.tsv"
    wildcard_constraints:
        dataset=r"[a-z0-9_]+",
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=lambda wc: 8000 if wc.scale == "paper" else 2000,
        runtime=lambda wc: 30 if wc.scale == "paper" else 10,
    params:
        dataset=sl_dataset,
        panel=sl_panel,
    script:
        "../scripts/softlabel_audit/data.py"


rule softlabel_audit_train:
    input:
        item_set=f"{SL}/data/{{dataset}}/data.npz",
    output:
        runs=f"{SL}/runs/{{dataset}}/runs.npz",
        log_table=f"{SL}/runs/{{dataset}}/train_log.parquet",
    log:
        f"{SL_LOG}/train/{{dataset}}.log",
    benchmark:
        f"{SL_BENCH}/train/{{dataset}}.tsv"
    wildcard_constraints:
        dataset=r"[a-z0-9_]+",
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=lambda wc: 16000 if wc.scale == "paper" else 2000,
        runtime=lambda wc: 300 if wc.scale == "paper" else 20,
    params:
        conditions=paper_params("softlabel_audit", "conditions"),
        labels=paper_params("softlabel_audit", "labels"),
        model=paper_params("softlabel_audit", "model"),
        train=paper_params("softlabel_audit", "train"),
        seeds=paper_params("softlabel_audit", "seeds"),
        teacher=paper_params("softlabel_audit", "teacher"),
    script:
        "../scripts/softlabel_audit/train.py"


rule softlabel_audit_evaluate:
    input:
        item_set=f"{SL}/data/{{dataset}}/data.npz",
        runs=f"{SL}/runs/{{dataset}}/runs.npz",
    output:
        metrics=f"{SL}/runs/{{dataset}}/metrics.parquet",
        cartography=f"{SL}/runs/{{dataset}}/cartography.parquet",
    log:
        f"{SL_LOG}/evaluate/{{dataset}}.log",
    benchmark:
        f"{SL_BENCH}/evaluate/{{dataset}}.tsv"
    wildcard_constraints:
        dataset=r"[a-z0-9_]+",
    conda:
        "../envs/torch.yaml"
    resources:
        mem_mb=lambda wc: 8000 if wc.scale == "paper" else 2000,
        runtime=10,
    params:
        evaluate=paper_params("softlabel_audit", "evaluate"),
    script:
        "../scripts/softlabel_audit/evaluate.py"


rule softlabel_audit_tables:
    input:
        metrics=sl_per_dataset("runs/{dataset}/metrics.parquet"),
        data=sl_per_dataset("data/{dataset}/summary.parquet"),
    output:
        metrics=f"{SL}/metrics.parquet",
        data=f"{SL}/data_summary.parquet",
    log:
        f"{SL_LOG}/tables.log",
    benchmark:
        f"{SL_BENCH}/tables.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/softlabel_audit/tables.py"


rule softlabel_audit_claims:
    input:
        definitions=claims_definitions("softlabel_audit"),
        metrics=f"{SL}/metrics.parquet",
        data=[f"{SL}/data_summary.parquet"],
    output:
        f"{SL}/claims.parquet",
    log:
        f"{SL_LOG}/claims.log",
    benchmark:
        f"{SL_BENCH}/claims.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        comparisons=paper_params("softlabel_audit", "comparisons"),
    script:
        "../scripts/softlabel_audit/claims.py"


rule softlabel_audit_figures:
    input:
        item_set=sl_primary("data/{dataset}/data.npz"),
        runs=sl_primary("runs/{dataset}/runs.npz"),
        metrics=f"{SL}/metrics.parquet",
    output:
        **{
            name: report(
                f"{SL}/figures/{name}.png",
                caption=f"../workflow/report/softlabel_audit/{name}.rst",
                category="Paper 15: soft-label audit",
            )
            for name in SL_FIGURES
        },
    log:
        f"{SL_LOG}/figures.log",
    benchmark:
        f"{SL_BENCH}/figures.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        difficult_quantile=paper_params(
            "softlabel_audit", "evaluate", "difficult_quantile"
        ),
    script:
        "../scripts/softlabel_audit/figures.py"


rule softlabel_audit_report:
    input:
        claims=f"{SL}/claims.parquet",
        metrics=f"{SL}/metrics.parquet",
        data=f"{SL}/data_summary.parquet",
        figures=expand(
            f"{SL}/figures/{{name}}.png", name=SL_FIGURES, allow_missing=True
        ),
        captions=expand("workflow/report/softlabel_audit/{name}.rst", name=SL_FIGURES),
        deviations="workflow/report/softlabel_audit/deviations.md",
        paper_scale="workflow/report/softlabel_audit/paper_scale.yaml",
        template="workflow/report/softlabel_audit/report.md.j2",
    output:
        f"{SL}/report.md",
    log:
        f"{SL_LOG}/report.log",
    benchmark:
        f"{SL_BENCH}/report.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        paper_scale=paper_scale_values("softlabel_audit"),
        benchmarks=SL_BENCH,
        primary=paper_params("softlabel_audit", "comparisons", "primary"),
        conditions=paper_params("softlabel_audit", "conditions"),
        model=paper_params("softlabel_audit", "model"),
        train=paper_params("softlabel_audit", "train"),
        seeds=paper_params("softlabel_audit", "seeds"),
        datasets=paper_params("softlabel_audit", "datasets"),
    script:
        "../scripts/softlabel_audit/report.py"
