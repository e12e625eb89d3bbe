# Paper 05: BBO-Pile, optimization trajectories and decoder-only models that imitate optimizers.
# blackboxes (BBOB + shifted/rotated GO functions, split by black box) -> generate {family}_{optimizer}
#   -> serialize (tokenizer, packed rows; at paper scale with BBO-Pile's train.txt/valid.txt from resources/) -> train {run} -> optimize {condition}_{decoding}
#   (+ reference: f* by random sampling) -> tables (regret, scaling fit) -> claims/figures -> report;
#   claim B3's model seeds: train_seed {run} seed{group} (smoke, quick: one job trains every seed of the run as a
#   batched ensemble, group 0-1-2; paper: one job per further seed, group 1, 2) -> optimize_seed (every seed) -> tables;
#   claim B2: imitation scores the held-out trajectories with every model seed of that run


include: "functions/bbo_pile.smk"


rule bbo_pile_blackboxes:
    output:
        f"{BP}/blackboxes.parquet",
    log:
        f"{BP_LOG}/blackboxes.log",
    benchmark:
        f"{BP_BENCH}/blackboxes.tsv"
    conda:
        "../envs/bbo.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        seed=paper_params("bbo_pile", "seed"),
        blackboxes=paper_params("bbo_pile", "blackboxes"),
    script:
        "../scripts/bbo_pile/blackboxes.py"


rule bbo_pile_reference:
    input:
        blackboxes=f"{BP}/blackboxes.parquet",
    output:
        f"{BP}/reference.parquet",
    log:
        f"{BP_LOG}/reference.log",
    benchmark:
        f"{BP_BENCH}/reference.tsv"
    conda:
        "../envs/bbo.yaml"
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        seed=paper_params("bbo_pile", "seed"),
        reference_samples=paper_params("bbo_pile", "reference_samples"),
    script:
        "../scripts/bbo_pile/reference.py"


rule bbo_pile_generate:
    input:
        blackboxes=f"{BP}/blackboxes.parquet",
    output:
        trajectories=f"{BP}/trajectories/{{family}}/{{optimizer}}.parquet",
        throughput=f"{BP}/trajectories/{{family}}/{{optimizer}}_throughput.parquet",
    log:
        f"{BP_LOG}/generate/{{family}}_{{optimizer}}.log",
    benchmark:
        f"{BP_BENCH}/generate/{{family}}_{{optimizer}}.tsv"
    wildcard_constraints:
        family="bbob|go",
        optimizer="RS|REA|CMA|LS|TPE",
    conda:
        "../envs/bbo.yaml"
    resources:
        mem_mb=2000,
        runtime=240,
    params:
        seed=paper_params("bbo_pile", "seed"),
        seeds=paper_params("bbo_pile", "seeds"),
        budget=paper_params("bbo_pile", "budget"),
    script:
        "../scripts/bbo_pile/generate.py"


rule bbo_pile_serialize:
    input:
        blackboxes=f"{BP}/blackboxes.parquet",
        trajectories=bp_trajectories,
        pile_train=bp_pile_file("train"),
        pile_valid=bp_pile_file("valid"),
    output:
        **{name: f"{BP}/{path}" for name, path in BP_CORPUS.items()},
    log:
        f"{BP_LOG}/serialize.log",
    benchmark:
        f"{BP_BENCH}/serialize.tsv"
    conda:
        "../envs/bbo.yaml"
    resources:
        mem_mb=bp_serialize_mem,
        runtime=bp_serialize_runtime,
    params:
        seed=paper_params("bbo_pile", "seed"),
        optimizers=paper_params("bbo_pile", "optimizers"),
        tokenizer=paper_params("bbo_pile", "tokenizer"),
        context=paper_params("bbo_pile", "context"),
        pile=bp_pile,
    script:
        "../scripts/bbo_pile/serialize.py"


rule bbo_pile_train:
    input:
        unpack(bp_corpus),
    output:
        model=f"{BP}/models/{{run}}.pt",
        log_table=f"{BP}/training/{{run}}.parquet",
    log:
        f"{BP_LOG}/train/{{run}}.log",
    benchmark:
        f"{BP_BENCH}/train/{{run}}.tsv"
    conda:
        "../envs/bbo.yaml"
    threads: torch_threads
    resources:
        mem_mb=4000,
        runtime=720,
    params:
        seeds=bp_scale_seed,
        run=bp_run,
        model=bp_run_model,
        context=paper_params("bbo_pile", "context"),
        training=paper_params("bbo_pile", "training"),
    script:
        "../scripts/bbo_pile/train.py"


rule bbo_pile_imitation:
    input:
        models=bp_seed_models,
        vocab=f"{BP}/corpus/vocab.json",
        blackboxes=f"{BP}/blackboxes.parquet",
        trajectories=bp_trajectories,
    output:
        pooled=f"{BP}/imitation.parquet",
        trajectories=f"{BP}/imitation_trajectories.parquet",
    log:
        f"{BP_LOG}/imitation.log",
    benchmark:
        f"{BP_BENCH}/imitation.tsv"
    conda:
        "../envs/bbo.yaml"
    threads: torch_threads
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        seed=paper_params("bbo_pile", "seed"),
        optimizers=paper_params("bbo_pile", "optimizers"),
        run=paper_params("bbo_pile", "model_seeds", "run"),
        model_seeds=bp_model_seed_list,
    script:
        "../scripts/bbo_pile/imitation.py"


rule bbo_pile_optimize:
    input:
        model=bp_evaluation_model,
        vocab=f"{BP}/corpus/vocab.json",
        blackboxes=f"{BP}/blackboxes.parquet",
    output:
        f"{BP}/optimize/{{condition}}_{{decoding}}.parquet",
    log:
        f"{BP_LOG}/optimize/{{condition}}_{{decoding}}.log",
    benchmark:
        f"{BP_BENCH}/optimize/{{condition}}_{{decoding}}.tsv"
    wildcard_constraints:
        condition="RS|REA|CMA|LS|TPE",
        decoding="constrained|free",
    conda:
        "../envs/bbo.yaml"
    threads: torch_threads
    resources:
        mem_mb=4000,
        runtime=240,
    params:
        seed=paper_params("bbo_pile", "seed"),
        budget=paper_params("bbo_pile", "budget"),
        context=paper_params("bbo_pile", "context"),
        boxes=paper_params("bbo_pile", "evaluate", "boxes"),
        eval_seeds=paper_params("bbo_pile", "evaluate", "seeds"),
        temperature=paper_params("bbo_pile", "evaluate", "temperature"),
    script:
        "../scripts/bbo_pile/optimize.py"


rule bbo_pile_train_seed:
    input:
        unpack(bp_corpus),
    output:
        model=f"{BP}/seeds/{{run}}/seed{{seed_group}}/model.pt",
        log_table=f"{BP}/seeds/{{run}}/seed{{seed_group}}/training.parquet",
    log:
        f"{BP_LOG}/train_seed/{{run}}_seed{{seed_group}}.log",
    benchmark:
        f"{BP_BENCH}/train_seed/{{run}}_seed{{seed_group}}.tsv"
    wildcard_constraints:
        seed_group=r"\d+(-\d+)*",
    conda:
        "../envs/bbo.yaml"
    threads: torch_threads
    resources:
        mem_mb=4000,
        runtime=720,
    params:
        seeds=bp_seed_group,
        run=bp_run,
        model=bp_run_model,
        context=paper_params("bbo_pile", "context"),
        training=paper_params("bbo_pile", "training"),
    script:
        "../scripts/bbo_pile/train.py"


rule bbo_pile_optimize_seed:
    input:
        model=bp_seed_model,
        vocab=f"{BP}/corpus/vocab.json",
        blackboxes=f"{BP}/blackboxes.parquet",
    output:
        f"{BP}/seeds/{{run}}/seed{{model_seed}}/optimize/{{condition}}_{{decoding}}.parquet",
    log:
        f"{BP_LOG}/optimize_seed/{{run}}_seed{{model_seed}}_{{condition}}_{{decoding}}.log",
    benchmark:
        f"{BP_BENCH}/optimize_seed/{{run}}_seed{{model_seed}}_{{condition}}_{{decoding}}.tsv"
    wildcard_constraints:
        model_seed=r"\d+",
        condition="RS|REA|CMA|LS|TPE",
        decoding="constrained",
    conda:
        "../envs/bbo.yaml"
    threads: torch_threads
    resources:
        mem_mb=4000,
        runtime=240,
    params:
        seed=bp_model_seed,
        budget=paper_params("bbo_pile", "budget"),
        context=paper_params("bbo_pile", "context"),
        boxes=paper_params("bbo_pile", "evaluate", "boxes"),
        eval_seeds=paper_params("bbo_pile", "evaluate", "seeds"),
        temperature=paper_params("bbo_pile", "evaluate", "temperature"),
    script:
        "../scripts/bbo_pile/optimize.py"


rule bbo_pile_tables:
    input:
        blackboxes=f"{BP}/blackboxes.parquet",
        reference=f"{BP}/reference.parquet",
        trajectories=bp_trajectories,
        throughput=bp_throughput,
        optimized=bp_optimized,
        seed_optimized=bp_seed_optimized,
        training=bp_training_logs,
        stats=f"{BP}/corpus/stats.parquet",
    output:
        regret=f"{BP}/regret.parquet",
        table_regret=f"{BP}/table_regret.parquet",
        scaling=f"{BP}/table_scaling.parquet",
        runs=f"{BP}/table_runs.parquet",
        validity=f"{BP}/table_validity.parquet",
        data=f"{BP}/table_data.parquet",
        throughput=f"{BP}/table_throughput.parquet",
    log:
        f"{BP_LOG}/tables.log",
    benchmark:
        f"{BP_BENCH}/tables.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        seed=paper_params("bbo_pile", "seed"),
        budget=paper_params("bbo_pile", "budget"),
    script:
        "../scripts/bbo_pile/tables.py"


rule bbo_pile_claims:
    input:
        definitions=claims_definitions("bbo_pile"),
        regret=f"{BP}/regret.parquet",
        scaling=f"{BP}/table_scaling.parquet",
        runs=f"{BP}/table_runs.parquet",
        imitation_trajectories=f"{BP}/imitation_trajectories.parquet",
        validity=f"{BP}/table_validity.parquet",
        seed_training=bp_seed_training_logs,
    output:
        f"{BP}/claims.parquet",
    log:
        f"{BP_LOG}/claims.log",
    benchmark:
        f"{BP_BENCH}/claims.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        seed=paper_params("bbo_pile", "seed"),
        run=paper_params("bbo_pile", "model_seeds", "run"),
        condition=paper_params("bbo_pile", "model_seeds", "condition"),
    script:
        "../scripts/bbo_pile/claims.py"


rule bbo_pile_figures:
    input:
        regret=f"{BP}/regret.parquet",
        scaling=f"{BP}/table_scaling.parquet",
        runs=f"{BP}/table_runs.parquet",
        training=bp_training_logs,
        imitation=f"{BP}/imitation.parquet",
        data=f"{BP}/table_data.parquet",
    output:
        **{
            name: report(
                f"{BP}/figures/{name}.png",
                caption=f"../workflow/report/bbo_pile/{name}.rst",
                category="Paper 05: BBO-Pile",
            )
            for name in BP_FIGURES
        },
    log:
        f"{BP_LOG}/figures.log",
    benchmark:
        f"{BP_BENCH}/figures.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        seed=paper_params("bbo_pile", "seed"),
    script:
        "../scripts/bbo_pile/figures.py"


rule bbo_pile_report:
    input:
        data=f"{BP}/table_data.parquet",
        throughput=f"{BP}/table_throughput.parquet",
        runs=f"{BP}/table_runs.parquet",
        scaling=f"{BP}/table_scaling.parquet",
        table_regret=f"{BP}/table_regret.parquet",
        validity=f"{BP}/table_validity.parquet",
        imitation=f"{BP}/imitation.parquet",
        imitation_trajectories=f"{BP}/imitation_trajectories.parquet",
        regret=f"{BP}/regret.parquet",
        seed_training=bp_seed_training_logs,
        claims=f"{BP}/claims.parquet",
        figures=expand(
            f"{BP}/figures/{{name}}.png", name=BP_FIGURES, allow_missing=True
        ),
        captions=expand("workflow/report/bbo_pile/{name}.rst", name=BP_FIGURES),
        deviations="workflow/report/bbo_pile/deviations.md",
        paper_scale="workflow/report/bbo_pile/paper_scale.yaml",
        template="workflow/report/bbo_pile/report.md.j2",
    output:
        f"{BP}/report.md",
    log:
        f"{BP_LOG}/report.log",
    benchmark:
        f"{BP_BENCH}/report.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        paper_scale=paper_scale_values("bbo_pile"),
        benchmarks=BP_BENCH,
        seed=paper_params("bbo_pile", "seed"),
        blackboxes=paper_params("bbo_pile", "blackboxes"),
        optimizers=paper_params("bbo_pile", "optimizers"),
        budget=paper_params("bbo_pile", "budget"),
        seeds=paper_params("bbo_pile", "seeds"),
        tokenizer=paper_params("bbo_pile", "tokenizer"),
        context=paper_params("bbo_pile", "context"),
        models=paper_params("bbo_pile", "models"),
        evaluate=paper_params("bbo_pile", "evaluate"),
        model_seeds=paper_params("bbo_pile", "model_seeds"),
    script:
        "../scripts/bbo_pile/report.py"
