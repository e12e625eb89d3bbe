# Paper 10: a benchmark audit of sequential recommendation with a transition-graph heuristic (TGH).
# prepare {dataset} (synthetic regime, ML-100k, paper-scale downloads) -> rank (training-free methods)
#   + diagnostics + train {model} (SASRec, BERT4Rec, TIGER on semantic_ids) -> tables -> claims/figures -> report
# A train job trains one group of seeds, {model}_s{seeds} (seeds joined by '-': 0-1-2): SASRec and BERT4Rec as one
# batched ensemble, `trained.seeds_per_job` seeds per job (quick: all in one; paper: one per job); its tables hold
# one block of rows per seed (a `seed` column) and its .pt every seed's weights.


include: "functions/seqrec_audit.smk"


rule seqrec_audit_prepare:
    input:
        unpack(sa_source),
    output:
        sequences=f"{SA_DATA}/sequences.parquet",
        item_table=f"{SA_DATA}/items.parquet",
        counts=f"{SA_DATA}/counts.parquet",
        features=f"{SA_DATA}/features.npy",
    log:
        f"{SA_LOG}/prepare/{{dataset}}.log",
    benchmark:
        f"{SA_BENCH}/prepare/{{dataset}}.tsv"
    conda:
        "../envs/recsys.yaml"
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        seed=paper_params("seqrec_audit", "seed"),
        min_length=paper_params("seqrec_audit", "min_length"),
        synthetic=sa_synthetic,
        k_core=sa_k_core,
        text_dim=sa_text_dim,
        embeddings=sa_embeddings,
    script:
        "../scripts/seqrec_audit/prepare.py"


rule seqrec_audit_rank:
    input:
        unpack(sa_prepared),
    output:
        f"{SA}/metrics/{{dataset}}/training_free.parquet",
    log:
        f"{SA_LOG}/rank/{{dataset}}.log",
    benchmark:
        f"{SA_BENCH}/rank/{{dataset}}.tsv"
    conda:
        "../envs/recsys.yaml"
    # every test user against every item: the rehearsal extrapolates 105-114 min for Amazon CDs and ML-1M
    resources:
        mem_mb=4000,
        runtime=180,
    params:
        seed=paper_params("seqrec_audit", "seed"),
        methods=paper_params("seqrec_audit", "methods"),
        protocol=paper_params("seqrec_audit", "protocol"),
        tgh=paper_params("seqrec_audit", "tgh"),
    script:
        "../scripts/seqrec_audit/rank.py"


rule seqrec_audit_diagnostics:
    input:
        unpack(sa_prepared),
    output:
        f"{SA}/diagnostics/{{dataset}}.parquet",
    log:
        f"{SA_LOG}/diagnostics/{{dataset}}.log",
    benchmark:
        f"{SA_BENCH}/diagnostics/{{dataset}}.tsv"
    conda:
        "../envs/recsys.yaml"
    # every test user against every item: the rehearsal extrapolates 105-114 min for Amazon CDs and ML-1M
    resources:
        mem_mb=4000,
        runtime=180,
    params:
        seed=paper_params("seqrec_audit", "seed"),
        exclude_history=paper_params("seqrec_audit", "protocol", "exclude_history"),
    script:
        "../scripts/seqrec_audit/diagnostics.py"


rule seqrec_audit_semantic_ids:
    input:
        unpack(sa_prepared),
    output:
        ids=f"{SA_DATA}/semantic_ids.parquet",
        training=f"{SA_DATA}/rqvae.parquet",
    log:
        f"{SA_LOG}/semantic_ids/{{dataset}}.log",
    benchmark:
        f"{SA_BENCH}/semantic_ids/{{dataset}}.tsv"
    conda:
        "../envs/recsys.yaml"
    threads: torch_threads
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        seed=paper_params("seqrec_audit", "seed"),
        rqvae=paper_params("seqrec_audit", "tiger", "rqvae"),
    script:
        "../scripts/seqrec_audit/semantic_ids.py"


rule seqrec_audit_train:
    input:
        unpack(sa_train_inputs),
    output:
        metrics=f"{SA}/metrics/{{dataset}}/{{model}}_s{{seeds}}.parquet",
        training=f"{SA}/training/{{dataset}}/{{model}}_s{{seeds}}.parquet",
        model=f"{SA}/models/{{dataset}}/{{model}}_s{{seeds}}.pt",
    log:
        f"{SA_LOG}/train/{{dataset}}/{{model}}_s{{seeds}}.log",
    benchmark:
        f"{SA_BENCH}/train/{{dataset}}/{{model}}_s{{seeds}}.tsv"
    wildcard_constraints:
        model="sasrec|bert4rec|tiger",
        seeds=r"\d+(-\d+)*",
    conda:
        "../envs/recsys.yaml"
    threads: torch_threads
    resources:
        mem_mb=4000,
        runtime=600,
    params:
        seed=paper_params("seqrec_audit", "seed"),
        protocol=paper_params("seqrec_audit", "protocol"),
        model=sa_model_settings,
    script:
        "../scripts/seqrec_audit/train.py"


rule seqrec_audit_tables:
    input:
        training_free=sa_training_free,
        trained=sa_trained_metrics,
        training=sa_trained_training,
        diagnostics=sa_diagnostics,
        counts=sa_counts,
        replicate_training_free=sa_replicate_training_free,
        replicate_trained=sa_replicate_trained,
        replicate_diagnostics=sa_replicate_diagnostics,
    output:
        metrics=f"{SA}/metrics.parquet",
        ndcg=f"{SA}/table_ndcg.parquet",
        seeds=f"{SA}/table_seeds.parquet",
        gains=f"{SA}/table_gains.parquet",
        cost=f"{SA}/table_cost.parquet",
        data=f"{SA}/table_data.parquet",
        runs=f"{SA}/table_runs.parquet",
        run_diagnostics=f"{SA}/table_run_diagnostics.parquet",
    log:
        f"{SA_LOG}/tables.log",
    benchmark:
        f"{SA_BENCH}/tables.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        seed=paper_params("seqrec_audit", "seed"),
        datasets=paper_params("seqrec_audit", "datasets"),
    script:
        "../scripts/seqrec_audit/tables.py"


# C1's training-free bound (issue 41): many data seeds of one regime, training-free methods only, in one job (about
# 1 s of CPU per data seed at quick size); an empty table at a scale without a `bound` block
rule seqrec_audit_bound:
    output:
        f"{SA}/table_bound.parquet",
    log:
        f"{SA_LOG}/bound.log",
    benchmark:
        f"{SA_BENCH}/bound.tsv"
    conda:
        "../envs/recsys.yaml"
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        seed=paper_params("seqrec_audit", "seed"),
        synthetic=paper_params("seqrec_audit", "synthetic"),
        min_length=paper_params("seqrec_audit", "min_length"),
        methods=paper_params("seqrec_audit", "methods"),
        protocol=paper_params("seqrec_audit", "protocol"),
        tgh=paper_params("seqrec_audit", "tgh"),
        bound=sa_bound_block,
    script:
        "../scripts/seqrec_audit/bound.py"


rule seqrec_audit_claims:
    input:
        definitions=claims_definitions("seqrec_audit"),
        runs=f"{SA}/table_runs.parquet",
        bound=f"{SA}/table_bound.parquet",
        run_diagnostics=f"{SA}/table_run_diagnostics.parquet",
        gains=f"{SA}/table_gains.parquet",
    output:
        f"{SA}/claims.parquet",
    log:
        f"{SA_LOG}/claims.log",
    benchmark:
        f"{SA_BENCH}/claims.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/seqrec_audit/claims.py"


rule seqrec_audit_figures:
    input:
        ndcg=f"{SA}/table_ndcg.parquet",
        gains=f"{SA}/table_gains.parquet",
        training=sa_trained_training,
    output:
        **{
            name: report(
                f"{SA}/figures/{name}.png",
                caption=f"../workflow/report/seqrec_audit/{name}.rst",
                category="Paper 10: sequential recommendation audit",
            )
            for name in SA_FIGURES
        },
    log:
        f"{SA_LOG}/figures.log",
    benchmark:
        f"{SA_BENCH}/figures.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/seqrec_audit/figures.py"


rule seqrec_audit_report:
    input:
        ndcg=f"{SA}/table_ndcg.parquet",
        metrics=f"{SA}/metrics.parquet",
        seeds=f"{SA}/table_seeds.parquet",
        gains=f"{SA}/table_gains.parquet",
        cost=f"{SA}/table_cost.parquet",
        data=f"{SA}/table_data.parquet",
        runs=f"{SA}/table_runs.parquet",
        claims=f"{SA}/claims.parquet",
        figures=expand(
            f"{SA}/figures/{{name}}.png", name=SA_FIGURES, allow_missing=True
        ),
        captions=expand("workflow/report/seqrec_audit/{name}.rst", name=SA_FIGURES),
        deviations="workflow/report/seqrec_audit/deviations.md",
        paper_scale="workflow/report/seqrec_audit/paper_scale.yaml",
        template="workflow/report/seqrec_audit/report.md.j2",
    output:
        f"{SA}/report.md",
    log:
        f"{SA_LOG}/report.log",
    benchmark:
        f"{SA_BENCH}/report.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        paper_scale=paper_scale_values("seqrec_audit"),
        benchmarks=SA_BENCH,
        seed=paper_params("seqrec_audit", "seed"),
        datasets=paper_params("seqrec_audit", "datasets"),
        trained=paper_params("seqrec_audit", "trained"),
        replicates=sa_replicate_block,
        protocol=paper_params("seqrec_audit", "protocol"),
        tgh=paper_params("seqrec_audit", "tgh"),
        synthetic=paper_params("seqrec_audit", "synthetic"),
        min_length=paper_params("seqrec_audit", "min_length"),
        models=sa_report_models,
    script:
        "../scripts/seqrec_audit/report.py"
