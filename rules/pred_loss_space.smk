# Paper 01: prediction space vs loss space in denoising generative models (the 3x3 x/eps/v matrix).
# data -> (features) -> train {dataset}/{arch}/{pred}x{loss}/s{seeds} -> sample -> evaluate
#      -> metrics -> claims/figures -> report
# {seeds} is a job's seed group (config `seeds_per_job`): at smoke and quick scale one job trains, samples and
# scores all seeds of a cell (trained together as a batched ensemble, issue 23), at paper scale one job per seed.


include: "functions/pred_loss_space.smk"


rule pred_loss_space_data:
    input:
        archives=pls_archive_inputs,
    output:
        f"{PLS}/data/{{dataset}}.npz",
    log:
        f"{PLS_LOG}/data/{{dataset}}.log",
    benchmark:
        f"{PLS_BENCH}/data/{{dataset}}.tsv"
    conda:
        "../envs/torch.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        dataset=pls_dataset,
    script:
        "../scripts/pred_loss_space/data.py"


rule pred_loss_space_features:
    input:
        data=f"{PLS}/data/{{dataset}}.npz",
    output:
        f"{PLS}/features/{{dataset}}.pt",
    log:
        f"{PLS_LOG}/features/{{dataset}}.log",
    benchmark:
        f"{PLS_BENCH}/features/{{dataset}}.tsv"
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        features=paper_params("pred_loss_space", "features"),
        seed=0,
    script:
        "../scripts/pred_loss_space/features.py"


rule pred_loss_space_fid_reference:
    input:
        data=f"{PLS}/data/{{dataset}}.npz",
        weights=PLS_INCEPTION,
    output:
        f"{PLS}/fid_reference/{{dataset}}.npz",
    log:
        f"{PLS_LOG}/fid_reference/{{dataset}}.log",
    benchmark:
        f"{PLS_BENCH}/fid_reference/{{dataset}}.tsv"
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=8000,
        runtime=120,
    params:
        batch=200,
    script:
        "../scripts/pred_loss_space/fid_reference.py"


rule pred_loss_space_train:
    input:
        data=f"{PLS}/data/{{dataset}}.npz",
    output:
        model=f"{PLS}/runs/{PLS_RUN}/model.pt",
        log_table=f"{PLS}/runs/{PLS_RUN}/train_log.parquet",
    log:
        f"{PLS_LOG}/train/{PLS_RUN}.log",
    benchmark:
        f"{PLS_BENCH}/train/{PLS_RUN}.tsv"
    wildcard_constraints:
        pred="x|eps|v",
        loss="x|eps|v",
        seeds=r"\d+(-\d+)*",
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        spec=pls_model_spec,
        bottleneck=pls_bottleneck,
        train=pls_train,
        noise=paper_params("pred_loss_space", "noise"),
    script:
        "../scripts/pred_loss_space/train.py"


rule pred_loss_space_sample:
    input:
        model=f"{PLS}/runs/{PLS_RUN}/model.pt",
    output:
        f"{PLS}/runs/{PLS_RUN}/samples.npz",
    log:
        f"{PLS_LOG}/sample/{PLS_RUN}.log",
    benchmark:
        f"{PLS_BENCH}/sample/{PLS_RUN}.tsv"
    wildcard_constraints:
        pred="x|eps|v",
        loss="x|eps|v",
        seeds=r"\d+(-\d+)*",
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        spec=pls_model_spec,
        sample=paper_params("pred_loss_space", "sample"),
        t_eps=paper_params("pred_loss_space", "noise", "t_eps"),
        t_min=paper_params("pred_loss_space", "noise", "t_min"),
    script:
        "../scripts/pred_loss_space/sample.py"


rule pred_loss_space_evaluate:
    input:
        data=f"{PLS}/data/{{dataset}}.npz",
        model=f"{PLS}/runs/{PLS_RUN}/model.pt",
        train_log=f"{PLS}/runs/{PLS_RUN}/train_log.parquet",
        samples=f"{PLS}/runs/{PLS_RUN}/samples.npz",
        features=pls_feature_inputs,
        fid=pls_fid_inputs,
    output:
        f"{PLS}/runs/{PLS_RUN}/metrics.parquet",
    log:
        f"{PLS_LOG}/evaluate/{PLS_RUN}.log",
    benchmark:
        f"{PLS_BENCH}/evaluate/{PLS_RUN}.tsv"
    wildcard_constraints:
        pred="x|eps|v",
        loss="x|eps|v",
        seeds=r"\d+(-\d+)*",
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        spec=pls_model_spec,
        bottleneck=pls_bottleneck,
        t_grid=paper_params("pred_loss_space", "evaluate", "t_grid"),
        n_test=paper_params("pred_loss_space", "evaluate", "n_test"),
        t_eps=paper_params("pred_loss_space", "noise", "t_eps"),
        t_min=paper_params("pred_loss_space", "noise", "t_min"),
    script:
        "../scripts/pred_loss_space/evaluate.py"


rule pred_loss_space_metrics:
    input:
        tables=pls_run_metrics,
    output:
        f"{PLS}/metrics.parquet",
    log:
        f"{PLS_LOG}/metrics.log",
    benchmark:
        f"{PLS_BENCH}/metrics.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/common/concat_tables.py"


rule pred_loss_space_claims:
    input:
        metrics=f"{PLS}/metrics.parquet",
        definitions=claims_definitions("pred_loss_space"),
    output:
        f"{PLS}/claims.parquet",
    log:
        f"{PLS_LOG}/claims.log",
    benchmark:
        f"{PLS_BENCH}/claims.tsv"
    conda:
        "../envs/torch.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        t_eps=paper_params("pred_loss_space", "noise", "t_eps"),
        t_min=paper_params("pred_loss_space", "noise", "t_min"),
        ranks=pls_output_ranks,
    script:
        "../scripts/pred_loss_space/claims.py"


rule pred_loss_space_figures:
    input:
        metrics=f"{PLS}/metrics.parquet",
        samples=pls_run_samples,
        data=pls_data_files,
    output:
        **{
            name: report(
                f"{PLS}/figures/{name}.png",
                caption=f"../workflow/report/pred_loss_space/{name}.rst",
                category="Paper 01: prediction vs loss space",
            )
            for name in PLS_FIGURES
        },
    log:
        f"{PLS_LOG}/figures.log",
    benchmark:
        f"{PLS_BENCH}/figures.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        noise=paper_params("pred_loss_space", "noise"),
        runs=pls_run_ids,
    script:
        "../scripts/pred_loss_space/figures.py"


rule pred_loss_space_report:
    input:
        metrics=f"{PLS}/metrics.parquet",
        claims=f"{PLS}/claims.parquet",
        figures=expand(
            f"{PLS}/figures/{{name}}.png", name=PLS_FIGURES, allow_missing=True
        ),
        captions=expand("workflow/report/pred_loss_space/{name}.rst", name=PLS_FIGURES),
        deviations="workflow/report/pred_loss_space/deviations.md",
        paper_scale="workflow/report/pred_loss_space/paper_scale.yaml",
        template="workflow/report/pred_loss_space/report.md.j2",
    output:
        f"{PLS}/report.md",
    log:
        f"{PLS_LOG}/report.log",
    benchmark:
        f"{PLS_BENCH}/report.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        paper_scale=paper_scale_values("pred_loss_space"),
        benchmarks=PLS_BENCH,
        regimes=paper_params("pred_loss_space", "regimes"),
        seeds=paper_params("pred_loss_space", "seeds"),
        seeds_per_job=paper_params("pred_loss_space", "seeds_per_job"),
        steps=paper_params("pred_loss_space", "train", "steps"),
        batch=paper_params("pred_loss_space", "train", "batch"),
        lr=paper_params("pred_loss_space", "train", "lr"),
        ema=paper_params("pred_loss_space", "train", "ema"),
        p_mean=paper_params("pred_loss_space", "noise", "p_mean"),
        p_std=paper_params("pred_loss_space", "noise", "p_std"),
        sample=paper_params("pred_loss_space", "sample"),
    script:
        "../scripts/pred_loss_space/report.py"
