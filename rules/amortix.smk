# Paper 19: AMORTIX, amortized scaffold decoration (graph transformer, group-relative advantages).
# corpus -> scaffold split, demonstrations, oracle (surrogate classifiers) -> pretrain (behaviour cloning)
#   (paper scale: ChEMBL 35 chemreps -> corpus; TDC's GSK3B/JNK3 pickles -> arrays -> oracle, task tdc_kinase)
#   -> rl {variant}_s{seeds} (a group of seeds per job: 0-1-2 at quick, one seed at paper scale) -> sample {policy} (single shot, best-of-K) -> baselines (graph GA, per-instance RL)
#   -> pmo {oracle} -> tables -> claims/figures -> report


include: "functions/amortix.smk"


rule amortix_corpus:
    input:
        source=ax_corpus_source,
    output:
        corpus=f"{AX}/corpus.parquet",
        counts=f"{AX}/corpus_counts.parquet",
    log:
        f"{AX_LOG}/corpus.log",
    benchmark:
        f"{AX_BENCH}/corpus.tsv"
    conda:
        "../envs/chem.yaml"
    resources:
        mem_mb=ax_corpus_mem_mb,
        runtime=ax_corpus_runtime,
    params:
        corpus=paper_params("amortix", "corpus"),
        decoration_vocab=paper_params("amortix", "env", "decoration_vocab"),
        seed=paper_params("amortix", "seed"),
    script:
        "../scripts/amortix/corpus.py"


rule amortix_chembl:
    input:
        chemreps="resources/amortix/chembl35/chembl_35_chemreps.txt.gz",
        checksums="resources/amortix/chembl35/checksums.txt",
    output:
        f"{AX}/chembl35_smiles.csv",
    log:
        f"{AX_LOG}/chembl.log",
    benchmark:
        f"{AX_BENCH}/chembl.tsv"
    conda:
        "../envs/chem.yaml"
    resources:
        mem_mb=8000,
        runtime=60,
    script:
        "../scripts/amortix/chembl.py"


rule amortix_tdc_convert:
    input:
        pickle="resources/amortix/tdc/{target}_current.pkl",
    output:
        f"{AX}/tdc/{{target}}.npz",
    log:
        f"{AX_LOG}/tdc_convert/{{target}}.log",
    benchmark:
        f"{AX_BENCH}/tdc_convert/{{target}}.tsv"
    wildcard_constraints:
        target="gsk3b|jnk3",
    conda:
        "../envs/tdc_sklearn.yaml"
    resources:
        mem_mb=4000,
        runtime=20,
    script:
        "../scripts/amortix/tdc_convert.py"


rule amortix_split:
    input:
        corpus=f"{AX}/corpus.parquet",
    output:
        f"{AX}/scaffolds.parquet",
    log:
        f"{AX_LOG}/split.log",
    benchmark:
        f"{AX_BENCH}/split.tsv"
    conda:
        "../envs/chem.yaml"
    resources:
        mem_mb=ax_split_mem_mb,
        runtime=ax_split_runtime,
    params:
        split=paper_params("amortix", "split"),
        seed=paper_params("amortix", "seed"),
    script:
        "../scripts/amortix/split.py"


rule amortix_oracle:
    input:
        corpus=f"{AX}/corpus.parquet",
    output:
        model=f"{AX}/oracle.npz",
        definition=f"{AX}/oracle.json",
        selftest=f"{AX}/oracle_selftest.parquet",
        corpus_scores=f"{AX}/corpus_scores.parquet",
    log:
        f"{AX_LOG}/oracle.log",
    benchmark:
        f"{AX_BENCH}/oracle.tsv"
    conda:
        "../envs/chem.yaml"
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        task=paper_params("amortix", "task"),
        oracle=paper_params("amortix", "oracle"),
        seed=paper_params("amortix", "seed"),
    script:
        "../scripts/amortix/oracle.py"


rule amortix_oracle_tdc:
    input:
        corpus=f"{AX}/corpus.parquet",
        gsk3b=f"{AX}/tdc/gsk3b.npz",
        jnk3=f"{AX}/tdc/jnk3.npz",
    output:
        model=f"{AX}/tdc/oracle.npz",
        definition=f"{AX}/tdc/oracle.json",
        selftest=f"{AX}/tdc/oracle_selftest.parquet",
        corpus_scores=f"{AX}/tdc/corpus_scores.parquet",
    log:
        f"{AX_LOG}/oracle_tdc.log",
    benchmark:
        f"{AX_BENCH}/oracle_tdc.tsv"
    conda:
        "../envs/chem.yaml"
    resources:
        mem_mb=8000,
        runtime=480,
    params:
        task=paper_params("amortix", "task"),
        seed=paper_params("amortix", "seed"),
    script:
        "../scripts/amortix/oracle_tdc.py"


rule amortix_demonstrations:
    input:
        corpus=f"{AX}/corpus.parquet",
    output:
        f"{AX}/demonstrations.parquet",
    log:
        f"{AX_LOG}/demonstrations.log",
    benchmark:
        f"{AX_BENCH}/demonstrations.tsv"
    conda:
        "../envs/chem.yaml"
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        env=paper_params("amortix", "env"),
        max_heavy=paper_params("amortix", "corpus", "max_heavy"),
        seed=paper_params("amortix", "seed"),
    script:
        "../scripts/amortix/demonstrations.py"


rule amortix_pretrain:
    input:
        demonstrations=f"{AX}/demonstrations.parquet",
        split=f"{AX}/scaffolds.parquet",
    output:
        policy=f"{AX}/policies/pretrained.pt",
        log_table=f"{AX}/pretrain_log.parquet",
    log:
        f"{AX_LOG}/pretrain.log",
    benchmark:
        f"{AX_BENCH}/pretrain.tsv"
    conda:
        "../envs/chem.yaml"
    threads: torch_threads
    resources:
        mem_mb=4000,
        runtime=600,
    params:
        env=paper_params("amortix", "env"),
        max_heavy=paper_params("amortix", "corpus", "max_heavy"),
        policy=paper_params("amortix", "policy"),
        pretrain=paper_params("amortix", "pretrain"),
        seed=paper_params("amortix", "seed"),
    script:
        "../scripts/amortix/pretrain.py"


rule amortix_rl:
    input:
        policy=f"{AX}/policies/pretrained.pt",
        split=f"{AX}/scaffolds.parquet",
        oracle=ax_oracle("model"),
    output:
        policy=f"{AX}/policies/{{variant}}_s{{seeds}}.pt",
        log_table=f"{AX}/rl/{{variant}}_s{{seeds}}.parquet",
    log:
        f"{AX_LOG}/rl/{{variant}}_s{{seeds}}.log",
    benchmark:
        f"{AX_BENCH}/rl/{{variant}}_s{{seeds}}.tsv"
    wildcard_constraints:
        variant="drgrpo|grpo|global|none",
        seeds=r"\d+(-\d+)*",
    conda:
        "../envs/chem.yaml"
    threads: torch_threads
    resources:
        mem_mb=4000,
        runtime=600,
    params:
        env=paper_params("amortix", "env"),
        max_heavy=paper_params("amortix", "corpus", "max_heavy"),
        rl=ax_rl_run,
        seed=paper_params("amortix", "seed"),
    script:
        "../scripts/amortix/rl.py"


rule amortix_sample:
    input:
        policy=ax_policy_file,
        split=f"{AX}/scaffolds.parquet",
        oracle=ax_oracle("model"),
    output:
        f"{AX}/samples/{{policy}}.parquet",
    log:
        f"{AX_LOG}/sample/{{policy}}.log",
    benchmark:
        f"{AX_BENCH}/sample/{{policy}}.tsv"
    wildcard_constraints:
        policy=r"pretrained|(drgrpo|grpo|global|none)_s\d+",
    conda:
        "../envs/chem.yaml"
    threads: torch_threads
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        env=paper_params("amortix", "env"),
        max_heavy=paper_params("amortix", "corpus", "max_heavy"),
        evaluate=paper_params("amortix", "evaluate"),
        seed=paper_params("amortix", "seed"),
    script:
        "../scripts/amortix/sample.py"


rule amortix_graph_ga:
    input:
        samples=f"{AX}/samples/pretrained.parquet",
        split=f"{AX}/scaffolds.parquet",
        oracle=ax_oracle("model"),
    output:
        f"{AX}/baselines/graph_ga.parquet",
    log:
        f"{AX_LOG}/graph_ga.log",
    benchmark:
        f"{AX_BENCH}/graph_ga.tsv"
    conda:
        "../envs/chem.yaml"
    resources:
        mem_mb=2000,
        runtime=120,
    params:
        env=paper_params("amortix", "env"),
        max_heavy=paper_params("amortix", "corpus", "max_heavy"),
        scaffolds=paper_params("amortix", "baselines", "scaffolds"),
        graph_ga=paper_params("amortix", "baselines", "graph_ga"),
        seed=paper_params("amortix", "seed"),
    script:
        "../scripts/amortix/graph_ga.py"


rule amortix_per_instance:
    input:
        policy=f"{AX}/policies/pretrained.pt",
        split=f"{AX}/scaffolds.parquet",
        oracle=ax_oracle("model"),
    output:
        f"{AX}/baselines/per_instance.parquet",
    log:
        f"{AX_LOG}/per_instance.log",
    benchmark:
        f"{AX_BENCH}/per_instance.tsv"
    conda:
        "../envs/chem.yaml"
    threads: torch_threads
    resources:
        mem_mb=4000,
        runtime=240,
    params:
        env=paper_params("amortix", "env"),
        max_heavy=paper_params("amortix", "corpus", "max_heavy"),
        scaffolds=paper_params("amortix", "baselines", "scaffolds"),
        per_instance=paper_params("amortix", "baselines", "per_instance"),
        seed=paper_params("amortix", "seed"),
    script:
        "../scripts/amortix/per_instance.py"


rule amortix_pmo:
    input:
        policy=f"{AX}/policies/pretrained.pt",
    output:
        f"{AX}/pmo/{{oracle}}.parquet",
    log:
        f"{AX_LOG}/pmo/{{oracle}}.log",
    benchmark:
        f"{AX_BENCH}/pmo/{{oracle}}.tsv"
    wildcard_constraints:
        oracle="qed|osimertinib_mpo|celecoxib_rediscovery",
    conda:
        "../envs/chem.yaml"
    threads: torch_threads
    resources:
        mem_mb=4000,
        runtime=240,
    params:
        env=paper_params("amortix", "env"),
        max_heavy=paper_params("amortix", "corpus", "max_heavy"),
        pmo=ax_pmo_run,
        seed=paper_params("amortix", "seed"),
    script:
        "../scripts/amortix/pmo.py"


rule amortix_tables:
    input:
        samples=ax_sample_files,
        rl=ax_rl_logs,
        graph_ga=f"{AX}/baselines/graph_ga.parquet",
        per_instance=f"{AX}/baselines/per_instance.parquet",
        pmo=ax_pmo_files,
        demonstrations=f"{AX}/demonstrations.parquet",
        split=f"{AX}/scaffolds.parquet",
        oracle=ax_oracle("model"),
    output:
        decoration=f"{AX}/table_scaffold.parquet",
        best_of_k=f"{AX}/best_of_k.parquet",
        pmo=f"{AX}/table_pmo.parquet",
        training=f"{AX}/table_training.parquet",
        throughput=f"{AX}/throughput.parquet",
    log:
        f"{AX_LOG}/tables.log",
    benchmark:
        f"{AX_BENCH}/tables.tsv"
    conda:
        "../envs/chem.yaml"
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        k_values=paper_params("amortix", "evaluate", "k_values"),
        pmo=ax_pmo_table,
    script:
        "../scripts/amortix/tables.py"


rule amortix_claims:
    input:
        decoration=f"{AX}/table_scaffold.parquet",
        best_of_k=f"{AX}/best_of_k.parquet",
        pmo=f"{AX}/table_pmo.parquet",
        training=f"{AX}/table_training.parquet",
        samples=ax_sample_files,
        definitions=claims_definitions("amortix"),
    output:
        f"{AX}/claims.parquet",
    log:
        f"{AX_LOG}/claims.log",
    benchmark:
        f"{AX_BENCH}/claims.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/amortix/claims.py"


rule amortix_figures:
    input:
        rl=ax_rl_logs,
        decoration=f"{AX}/table_scaffold.parquet",
        best_of_k=f"{AX}/best_of_k.parquet",
        pmo=ax_pmo_files,
        samples=ax_sample_files,
    output:
        **{
            name: report(
                f"{AX}/figures/{name}.png",
                caption=f"../workflow/report/amortix/{name}.rst",
                category="Paper 19: AMORTIX",
            )
            for name in AX_FIGURES
        },
    log:
        f"{AX_LOG}/figures.log",
    benchmark:
        f"{AX_BENCH}/figures.tsv"
    conda:
        "../envs/chem.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        top_k=paper_params("amortix", "pmo", "top_k"),
    script:
        "../scripts/amortix/figures.py"


rule amortix_report:
    input:
        counts=f"{AX}/corpus_counts.parquet",
        split=f"{AX}/scaffolds.parquet",
        demonstrations=f"{AX}/demonstrations.parquet",
        oracle=ax_oracle("definition"),
        selftest=ax_oracle("selftest"),
        pretrain=f"{AX}/pretrain_log.parquet",
        decoration=f"{AX}/table_scaffold.parquet",
        best_of_k=f"{AX}/best_of_k.parquet",
        pmo=f"{AX}/table_pmo.parquet",
        training=f"{AX}/table_training.parquet",
        throughput=f"{AX}/throughput.parquet",
        claims=f"{AX}/claims.parquet",
        figures=expand(
            f"{AX}/figures/{{name}}.png", name=AX_FIGURES, allow_missing=True
        ),
        captions=expand("workflow/report/amortix/{name}.rst", name=AX_FIGURES),
        deviations="workflow/report/amortix/deviations.md",
        paper_scale="workflow/report/amortix/paper_scale.yaml",
        template="workflow/report/amortix/report.md.j2",
    output:
        f"{AX}/report.md",
    log:
        f"{AX_LOG}/report.log",
    benchmark:
        f"{AX_BENCH}/report.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        paper_scale=paper_scale_values("amortix"),
        benchmarks=AX_BENCH,
        rl=ax_rl_report,
        test_scaffolds=paper_params("amortix", "evaluate", "test_scaffolds"),
        baseline_scaffolds=paper_params("amortix", "baselines", "scaffolds"),
        graph_ga_budget=paper_params("amortix", "baselines", "graph_ga", "budget"),
        per_instance_budget=paper_params(
            "amortix", "baselines", "per_instance", "budget"
        ),
        pmo_start=paper_params("amortix", "pmo", "start"),
        pmo_budget=paper_params("amortix", "pmo", "budget"),
        split_cutoff=paper_params("amortix", "split", "cutoff"),
    script:
        "../scripts/amortix/report.py"
