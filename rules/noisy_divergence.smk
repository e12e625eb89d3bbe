# Paper 09: noisy data and LLM pretraining loss divergence (Zhang et al. 2026, arXiv 2602.02400).
# corpus (rules/corpus.smk; paper scale: paper 07's FineWeb-Edu shards) -> inject (one noise setting: the statistics
#   of every seed's noised stream) -> train (noises the clean stream as it reads it, one placement per seed) (one shape x QK-norm x LR multiplier: every setting and seed of it as one batched ensemble;
#   one run per job at paper scale) -> tables (divergence detected from the curves, failure to learn against the
#   clean stream's unigram entropy, rates per cell) -> classifier
#   (noise- vs LR-induced, leave one seed out) -> claims/figures -> report; pilot (smoke, quick: the edge-of-stability
#   pilot of issue 40's review, its own seeds) -> report


include: "functions/noisy_divergence.smk"


rule noisy_divergence_inject:
    input:
        clean=nd_clean_train,
    output:
        stats=f"{ND}/data/{{setting}}/stats.parquet",
    log:
        f"{ND_LOG}/inject/{{setting}}.log",
    benchmark:
        f"{ND_BENCH}/inject/{{setting}}.tsv"
    wildcard_constraints:
        setting=ND_SETTING,
    conda:
        "../envs/torch.yaml"  # its artifacts module measures GEMM rates with torch (imported where used)
    # counted for groups of ND_INJECT_CHUNK = 2^24 clean tokens of uint32 ids at the paper's alpha 0.55 (2.2 x as
    # many tokens out): a group's clean, noised and mask arrays and their concatenations (0.5 GB), its statistics'
    # temporaries (the int64 document index and noise ids of the noised group, 1.5 GB), the plan of the stream's
    # ~1M documents (0.1 GB), the interpreter and libraries (0.5 GB): 3 GB. Nothing is written but the statistics:
    # the training jobs noise the clean stream as they read it, one placement per seed
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        noise=nd_inject_params,
    script:
        "../scripts/noisy_divergence/inject.py"


rule noisy_divergence_train:
    input:
        unpack(nd_train_inputs),
    output:
        **{t: f"{ND}/runs/{{job}}_{t}.parquet" for t in ND_JOB_TABLES},
    log:
        f"{ND_LOG}/train/{{job}}.log",
    benchmark:
        f"{ND_BENCH}/train/{{job}}.tsv"
    wildcard_constraints:
        job=r"[A-Za-z0-9]+_(qk|noqk)_lr[0-9.e+-]+_g\d+",
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=nd_train_mem_mb,
        runtime=1440,
    params:
        job=nd_job_params,
        matmul_repeats=paper_params("noisy_divergence", "matmul_repeats"),
    script:
        "../scripts/noisy_divergence/train.py"


rule noisy_divergence_pilot:
    input:
        unpack(nd_train_inputs),
    output:
        pilot=f"{ND}/pilot.parquet",
    log:
        f"{ND_LOG}/pilot.log",
    benchmark:
        f"{ND_BENCH}/pilot.tsv"
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        pilot=nd_pilot_params,
    script:
        "../scripts/noisy_divergence/pilot.py"


rule noisy_divergence_tables:
    input:
        unpack(nd_all_job_tables),
        clean=nd_clean_train,
    output:
        runs=f"{ND}/runs.parquet",
        divergence=f"{ND}/divergence.parquet",
        curves=f"{ND}/curves.parquet",
        diag=f"{ND}/diag.parquet",
        throughput=f"{ND}/throughput.parquet",
    log:
        f"{ND_LOG}/tables.log",
    benchmark:
        f"{ND_BENCH}/tables.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        divergence=paper_params("noisy_divergence", "divergence"),
        vocab_size=paper_params("noisy_divergence", "corpus", "vocab_size"),
    script:
        "../scripts/noisy_divergence/tables.py"


rule noisy_divergence_classifier:
    input:
        runs=f"{ND}/runs.parquet",
        curves=f"{ND}/curves.parquet",
        diag=f"{ND}/diag.parquet",
    output:
        features=f"{ND}/classifier_features.parquet",
        classifier=f"{ND}/classifier.parquet",
    log:
        f"{ND_LOG}/classifier.log",
    benchmark:
        f"{ND_BENCH}/classifier.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        classifier=paper_params("noisy_divergence", "classifier"),
        base_lr=paper_params("noisy_divergence", "comparisons", "base_lr_multiplier"),
        deep_shape=paper_params("noisy_divergence", "comparisons", "deep_shape"),
    script:
        "../scripts/noisy_divergence/classifier.py"


rule noisy_divergence_claims:
    input:
        definitions=claims_definitions("noisy_divergence"),
        runs=f"{ND}/runs.parquet",
        classifier=f"{ND}/classifier.parquet",
        throughput=f"{ND}/throughput.parquet",
        stats=nd_stats,
    output:
        f"{ND}/claims.parquet",
    log:
        f"{ND_LOG}/claims.log",
    benchmark:
        f"{ND_BENCH}/claims.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        comparisons=paper_params("noisy_divergence", "comparisons"),
    script:
        "../scripts/noisy_divergence/claims.py"


rule noisy_divergence_figures:
    input:
        runs=f"{ND}/runs.parquet",
        divergence=f"{ND}/divergence.parquet",
        curves=f"{ND}/curves.parquet",
        diag=f"{ND}/diag.parquet",
    output:
        **{
            name: report(
                f"{ND}/figures/{name}.png",
                caption=f"../workflow/report/noisy_divergence/{name}.rst",
                category="Paper 09: noisy data and loss divergence",
            )
            for name in ND_FIGURES
        },
    log:
        f"{ND_LOG}/figures.log",
    benchmark:
        f"{ND_BENCH}/figures.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        comparisons=paper_params("noisy_divergence", "comparisons"),
    script:
        "../scripts/noisy_divergence/figures.py"


rule noisy_divergence_report:
    input:
        claims=f"{ND}/claims.parquet",
        runs=f"{ND}/runs.parquet",
        divergence=f"{ND}/divergence.parquet",
        classifier=f"{ND}/classifier.parquet",
        throughput=f"{ND}/throughput.parquet",
        stats=nd_stats,
        figures=expand(
            f"{ND}/figures/{{name}}.png", name=ND_FIGURES, allow_missing=True
        ),
        captions=expand("workflow/report/noisy_divergence/{name}.rst", name=ND_FIGURES),
        deviations="workflow/report/noisy_divergence/deviations.md",
        paper_scale="workflow/report/noisy_divergence/paper_scale.yaml",
        corpus_meta=nd_corpus_meta,
        pilot=nd_pilot,
        template="workflow/report/noisy_divergence/report.md.j2",
    output:
        f"{ND}/report.md",
    log:
        f"{ND_LOG}/report.log",
    benchmark:
        f"{ND_BENCH}/report.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        paper_scale=paper_scale_values("noisy_divergence"),
        benchmarks=ND_BENCH,
        shapes=paper_params("noisy_divergence", "shapes"),
        corpus=paper_params("noisy_divergence", "corpus"),
        train=paper_params("noisy_divergence", "train"),
        jobs=paper_params("noisy_divergence", "jobs"),
        seeds=paper_params("noisy_divergence", "seeds"),
        divergence=paper_params("noisy_divergence", "divergence"),
        classifier=paper_params("noisy_divergence", "classifier"),
        comparisons=paper_params("noisy_divergence", "comparisons"),
    script:
        "../scripts/noisy_divergence/report.py"
