# Paper 13: SZO-kappa, spectral zeroth-order gradient estimation from activation geometry. THE PAPER WAS NOT FOUND:
# the SZO-kappa family is our reconstruction (src/neurips26/spectral_zo), beside weight perturbation, SPSA (Spall
# 1992), MeZO (Malladi et al. 2023), node perturbation, AGZO (arXiv 2601.17261), forward gradients (Baydin et al.
# 2022) and backpropagation.
# data ({dataset}: digits / MNIST-5k from wheels, MNIST / Fashion-MNIST / CIFAR-10 downloaded) -> geometry (one job:
#   alignment, bias-variance, dimension, the spectral sweep over a, the construction checks and MeZO's cost beside
#   batched SPSA) and train ({dataset}/{group}: the groups of train.groups, each method's lr from the shared grid on
#   the validation split, then the seeds at a matched forward-pass budget) -> figures (with the training and tuning
#   tables of every job joined) -> claims -> report.


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


rule spectral_zo_geometry:
    input:
        unpack(sz_geometry_data),
    output:
        **{name: f"{SZ}/{name}.parquet" for name in SZ_GEOMETRY},
    log:
        f"{SZ_LOG}/geometry.log",
    benchmark:
        f"{SZ_BENCH}/geometry.tsv"
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=sz_mem_mb("geometry"),
        # CPU only; the rehearsal (2 steps of each alignment section at paper shapes, 3.7 GB peak) extrapolated
        # 2,842 min on one core of a 2-core machine shared with tests: 72 h leaves a margin of 1.5
        runtime=lambda wc: 4320 if wc.scale == "paper" else 20,
    params:
        probe_bytes=sz_probe_bytes("geometry"),
        alignment=paper_params("spectral_zo", "alignment"),
        bias_variance=paper_params("spectral_zo", "bias_variance"),
        dimension=paper_params("spectral_zo", "dimension"),
        spectral=paper_params("spectral_zo", "spectral"),
        checks=paper_params("spectral_zo", "checks"),
        cost=paper_params("spectral_zo", "cost"),
        methods=sz_geometry_methods,
    script:
        "../scripts/spectral_zo/geometry.py"


rule spectral_zo_train:
    input:
        data=f"{SZ}/data/{{dataset}}.npz",
    output:
        curves=f"{SZ}/runs/{{dataset}}/{{group}}_curves.parquet",
        tuning=f"{SZ}/runs/{{dataset}}/{{group}}_tuning.parquet",
    log:
        f"{SZ_LOG}/train/{{dataset}}/{{group}}.log",
    benchmark:
        f"{SZ_BENCH}/train/{{dataset}}/{{group}}.tsv"
    wildcard_constraints:
        dataset=r"[a-z0-9_]+",
        group=r"[a-z][a-z0-9_]*",
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=sz_mem_mb("train"),
        runtime=sz_train_runtime,
    params:
        probe_bytes=sz_probe_bytes("train"),
        dataset=sz_dataset_params,
        methods=sz_group_methods,
        train=sz_train_settings,
    script:
        "../scripts/spectral_zo/train.py"


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
        unpack(sz_runs),
        alignment=f"{SZ}/alignment.parquet",
        dimension=f"{SZ}/dimension.parquet",
    output:
        **{
            name: report(
                f"{SZ}/figures/{name}.png",
                caption=f"../workflow/report/spectral_zo/{name}.rst",
                category="Paper 13: SZO-kappa (reconstruction)",
            )
            for name in SZ_FIGURES
        },
        curves=f"{SZ}/training.parquet",
        tuning=f"{SZ}/tuning.parquet",
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
