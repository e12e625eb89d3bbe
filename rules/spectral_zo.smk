# Paper 13: SZO-kappa, spectral zeroth-order gradient estimation from activation geometry. THE PAPER WAS NOT FOUND:
# the SZO-kappa family is our reconstruction (src/neurips26/spectral_zo), beside weight perturbation, SPSA (Spall
# 1992), MeZO (Malladi et al. 2023), node perturbation, AGZO (arXiv 2601.17261), forward gradients (Baydin et al.
# 2022) and backpropagation.
# data ({dataset}: digits / MNIST-5k from wheels, MNIST / Fashion-MNIST / CIFAR-10 downloaded) -> alignment, bias
#   variance, dimension (one job each, seeds in turn), spectral sweep (a{alpha}: synthetic teacher-student), train
#   ({dataset}/{method}: lr from the shared grid on the validation split, then the seeds at a matched forward-pass
#   budget), cost (MeZO beside batched SPSA), checks -> tables -> claims / figures -> report.


include: "functions/spectral_zo.smk"


rule spectral_zo_data:
    input:
        unpack(sz_data_inputs),
    output:
        f"{SZ}/data/{{dataset}}.npz",
    log:
        f"{SZ_LOG}/data/{{dataset}}.log",
    benchmark:
        f"{SZ_BENCH}/data/{{dataset}}.tsv"
    wildcard_constraints:
        dataset=r"[a-z0-9_]+",
    conda:
        "../envs/torch.yaml"
    resources:
        mem_mb=lambda wc: 8000 if wc.scale == "paper" else 1000,
        runtime=lambda wc: 30 if wc.scale == "paper" else 10,
    params:
        dataset=sz_dataset_params,
    script:
        "../scripts/spectral_zo/data.py"


rule spectral_zo_alignment:
    input:
        data=sz_section_data("alignment"),
    output:
        f"{SZ}/alignment.parquet",
    log:
        f"{SZ_LOG}/alignment.log",
    benchmark:
        f"{SZ_BENCH}/alignment.tsv"
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=lambda wc: 16000 if wc.scale == "paper" else 2000,
        runtime=lambda wc: 720 if wc.scale == "paper" else 20,
    params:
        measurement="alignment",
        block=paper_params("spectral_zo", "alignment"),
        methods=sz_methods("alignment"),
    script:
        "../scripts/spectral_zo/measure.py"


rule spectral_zo_bias_variance:
    input:
        data=sz_section_data("bias_variance"),
    output:
        f"{SZ}/bias_variance.parquet",
    log:
        f"{SZ_LOG}/bias_variance.log",
    benchmark:
        f"{SZ_BENCH}/bias_variance.tsv"
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=lambda wc: 16000 if wc.scale == "paper" else 2000,
        runtime=lambda wc: 720 if wc.scale == "paper" else 20,
    params:
        measurement="bias_variance",
        block=paper_params("spectral_zo", "bias_variance"),
        methods=sz_methods("bias_variance"),
    script:
        "../scripts/spectral_zo/measure.py"


rule spectral_zo_dimension:
    input:
        data=sz_section_data("dimension"),
    output:
        f"{SZ}/dimension.parquet",
    log:
        f"{SZ_LOG}/dimension.log",
    benchmark:
        f"{SZ_BENCH}/dimension.tsv"
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=lambda wc: 16000 if wc.scale == "paper" else 2000,
        runtime=lambda wc: 720 if wc.scale == "paper" else 20,
    params:
        measurement="dimension",
        block=paper_params("spectral_zo", "dimension"),
        methods=sz_methods("dimension"),
    script:
        "../scripts/spectral_zo/measure.py"


rule spectral_zo_spectral:
    output:
        f"{SZ}/spectral/a{{alpha}}.parquet",
    log:
        f"{SZ_LOG}/spectral/a{{alpha}}.log",
    benchmark:
        f"{SZ_BENCH}/spectral/a{{alpha}}.tsv"
    wildcard_constraints:
        alpha=r"\d+(\.\d+)?",
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=lambda wc: 8000 if wc.scale == "paper" else 1000,
        runtime=lambda wc: 240 if wc.scale == "paper" else 10,
    params:
        block=paper_params("spectral_zo", "spectral"),
        methods=sz_methods("spectral"),
    script:
        "../scripts/spectral_zo/spectral.py"


rule spectral_zo_train:
    input:
        data=f"{SZ}/data/{{dataset}}.npz",
    output:
        curves=f"{SZ}/runs/{{dataset}}/{{method}}_curves.parquet",
        tuning=f"{SZ}/runs/{{dataset}}/{{method}}_tuning.parquet",
    log:
        f"{SZ_LOG}/train/{{dataset}}/{{method}}.log",
    benchmark:
        f"{SZ_BENCH}/train/{{dataset}}/{{method}}.tsv"
    wildcard_constraints:
        dataset=r"[a-z0-9_]+",
        method=r"[a-z][a-z0-9_]*",
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=lambda wc: 16000 if wc.scale == "paper" else 1000,
        runtime=lambda wc: 2880 if wc.scale == "paper" else 20,
    params:
        dataset=sz_dataset_params,
        method=sz_train_method,
        train=paper_params("spectral_zo", "train"),
    script:
        "../scripts/spectral_zo/train.py"


rule spectral_zo_cost:
    output:
        f"{SZ}/cost.parquet",
    log:
        f"{SZ_LOG}/cost.log",
    benchmark:
        f"{SZ_BENCH}/cost.tsv"
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=lambda wc: 16000 if wc.scale == "paper" else 1000,
        runtime=lambda wc: 60 if wc.scale == "paper" else 10,
    params:
        block=paper_params("spectral_zo", "cost"),
    script:
        "../scripts/spectral_zo/cost.py"


rule spectral_zo_checks:
    input:
        data=sz_section_data("alignment"),
    output:
        f"{SZ}/checks.parquet",
    log:
        f"{SZ_LOG}/checks.log",
    benchmark:
        f"{SZ_BENCH}/checks.tsv"
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=lambda wc: 8000 if wc.scale == "paper" else 1000,
        runtime=lambda wc: 60 if wc.scale == "paper" else 10,
    params:
        block=paper_params("spectral_zo", "checks"),
        hidden=sz_check_hidden,
    script:
        "../scripts/spectral_zo/checks.py"


rule spectral_zo_tables:
    input:
        unpack(sz_tables_inputs),
    output:
        curves=f"{SZ}/training.parquet",
        tuning=f"{SZ}/tuning.parquet",
        spectral=f"{SZ}/spectral.parquet",
    log:
        f"{SZ_LOG}/tables.log",
    benchmark:
        f"{SZ_BENCH}/tables.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/spectral_zo/tables.py"


rule spectral_zo_claims:
    input:
        definitions=claims_definitions("spectral_zo"),
        alignment=f"{SZ}/alignment.parquet",
        bias_variance=f"{SZ}/bias_variance.parquet",
        dimension=f"{SZ}/dimension.parquet",
        spectral=f"{SZ}/spectral.parquet",
        curves=f"{SZ}/training.parquet",
        tuning=f"{SZ}/tuning.parquet",
        cost=f"{SZ}/cost.parquet",
        checks=f"{SZ}/checks.parquet",
    output:
        f"{SZ}/claims.parquet",
    log:
        f"{SZ_LOG}/claims.log",
    benchmark:
        f"{SZ_BENCH}/claims.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        comparisons=sz_comparisons,
    script:
        "../scripts/spectral_zo/claims.py"


rule spectral_zo_figures:
    input:
        alignment=f"{SZ}/alignment.parquet",
        dimension=f"{SZ}/dimension.parquet",
        curves=f"{SZ}/training.parquet",
    output:
        **{
            name: report(
                f"{SZ}/figures/{name}.png",
                caption=f"../workflow/report/spectral_zo/{name}.rst",
                category="Paper 13: SZO-kappa (reconstruction)",
            )
            for name in SZ_FIGURES
        },
    log:
        f"{SZ_LOG}/figures.log",
    benchmark:
        f"{SZ_BENCH}/figures.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/spectral_zo/figures.py"


rule spectral_zo_report:
    input:
        claims=f"{SZ}/claims.parquet",
        alignment=f"{SZ}/alignment.parquet",
        bias_variance=f"{SZ}/bias_variance.parquet",
        dimension=f"{SZ}/dimension.parquet",
        spectral=f"{SZ}/spectral.parquet",
        curves=f"{SZ}/training.parquet",
        tuning=f"{SZ}/tuning.parquet",
        cost=f"{SZ}/cost.parquet",
        checks=f"{SZ}/checks.parquet",
        figures=expand(
            f"{SZ}/figures/{{name}}.png", name=SZ_FIGURES, allow_missing=True
        ),
        captions=expand("workflow/report/spectral_zo/{name}.rst", name=SZ_FIGURES),
        deviations="workflow/report/spectral_zo/deviations.md",
        paper_scale="workflow/report/spectral_zo/paper_scale.yaml",
        template="workflow/report/spectral_zo/report.md.j2",
    output:
        f"{SZ}/report.md",
    log:
        f"{SZ_LOG}/report.log",
    benchmark:
        f"{SZ_BENCH}/report.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        paper_scale=paper_scale_values("spectral_zo"),
        benchmarks=SZ_BENCH,
        datasets=paper_params("spectral_zo", "datasets"),
        alignment=paper_params("spectral_zo", "alignment"),
        bias_variance=paper_params("spectral_zo", "bias_variance"),
        dimension=paper_params("spectral_zo", "dimension"),
        spectral=paper_params("spectral_zo", "spectral"),
        train=paper_params("spectral_zo", "train"),
        cost=paper_params("spectral_zo", "cost"),
        comparisons=sz_comparisons,
    script:
        "../scripts/spectral_zo/report.py"
