# Paper 08: the production-evaluation gap on valid-answer-invalid-reasoning solutions (Sun, Yeo, Solar-Lezama and
# Zhi-Xuan 2026, arXiv 2606.01462).
# synthetic (generated problems and their items: gold, flawed and slipped solutions, each certified by the step
#   checker; paper: GSM8K test through the download rule -> problems_gsm8k -> items {gsm8k}; MATH-500: gold solutions
#   certified by their answer) ->
#   train (every member of the small model, outcome and process regimes x held-out flaw x seed, one batched job) ->
#   evaluate_small (one job, one grading pass: every member solves and grades the synthetic eval items; probes and
#   answer patching per member); grade_reference (the model-free graders on every dataset with steps); paper scale: grade_http and
#   grade_hf (external models on every dataset) -> tables -> claims/figures -> report


include: "functions/vair.smk"


rule vair_synthetic:
    output:
        problems=f"{VAIR}/data/synthetic/problems.parquet",
        item_table=f"{VAIR}/data/synthetic/items.parquet",
        counts=f"{VAIR}/data/synthetic/counts.parquet",
    log:
        f"{VAIR_LOG}/synthetic.log",
    benchmark:
        f"{VAIR_BENCH}/synthetic.tsv"
    conda:
        "../envs/llm.yaml"
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        problems=paper_params("vair", "problems"),
        settings=paper_params("vair", "items", "synthetic"),
    script:
        "../scripts/vair/synthetic.py"


rule vair_problems_gsm8k:
    input:
        records=VAIR_GSM8K,
    output:
        problems=f"{VAIR}/data/gsm8k/problems.parquet",
        skipped=f"{VAIR}/data/gsm8k/skipped.parquet",
    log:
        f"{VAIR_LOG}/problems_gsm8k.log",
    benchmark:
        f"{VAIR_BENCH}/problems_gsm8k.tsv"
    conda:
        "../envs/llm.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/vair/problems_gsm8k.py"


rule vair_math500:
    input:
        records=VAIR_MATH500,
    output:
        item_table=f"{VAIR}/data/math/items.parquet",
        skipped=f"{VAIR}/data/math/skipped.parquet",
        counts=f"{VAIR}/data/math/counts.parquet",
    log:
        f"{VAIR_LOG}/math500.log",
    benchmark:
        f"{VAIR_BENCH}/math500.tsv"
    conda:
        "../envs/llm.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/vair/math500.py"


rule vair_items:
    input:
        problems=f"{VAIR}/data/{{dataset}}/problems.parquet",
    output:
        item_table=f"{VAIR}/data/{{dataset}}/items.parquet",
        counts=f"{VAIR}/data/{{dataset}}/counts.parquet",
    log:
        f"{VAIR_LOG}/items/{{dataset}}.log",
    benchmark:
        f"{VAIR_BENCH}/items/{{dataset}}.tsv"
    wildcard_constraints:
        dataset="gsm8k",
    conda:
        "../envs/llm.yaml"
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        settings=vair_items_params,
    script:
        "../scripts/vair/items.py"


rule vair_train:
    input:
        item_table=f"{VAIR}/data/synthetic/items.parquet",
    output:
        model=f"{VAIR}/models/small.pt",
        trace=f"{VAIR}/models/trace.parquet",
        members=f"{VAIR}/models/members.parquet",
    log:
        f"{VAIR_LOG}/train.log",
    benchmark:
        f"{VAIR_BENCH}/train.tsv"
    conda:
        "../envs/llm.yaml"
    threads: torch_threads
    resources:
        mem_mb=vair_train_mem_mb,
        runtime=720,
    params:
        members=vair_members,
        model=paper_params("vair", "model"),
        train=paper_params("vair", "train"),
    script:
        "../scripts/vair/train.py"


rule vair_grade_reference:
    input:
        item_table=f"{VAIR}/data/{{dataset}}/items.parquet",
    output:
        grades=f"{VAIR}/grades/{{dataset}}/reference.parquet",
    log:
        f"{VAIR_LOG}/grade_reference/{{dataset}}.log",
    benchmark:
        f"{VAIR_BENCH}/grade_reference/{{dataset}}.tsv"
    wildcard_constraints:
        dataset="synthetic|gsm8k",
    conda:
        "../envs/llm.yaml"
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        reference=paper_params("vair", "reference"),
    script:
        "../scripts/vair/grade_reference.py"


rule vair_evaluate_small:
    input:
        model=f"{VAIR}/models/small.pt",
        item_table=f"{VAIR}/data/synthetic/items.parquet",
    output:
        grades=f"{VAIR}/grades/synthetic/small.parquet",
        probes=f"{VAIR}/evaluation/probes.parquet",
        patching=f"{VAIR}/evaluation/patching.parquet",
    log:
        f"{VAIR_LOG}/evaluate_small.log",
    benchmark:
        f"{VAIR_BENCH}/evaluate_small.tsv"
    conda:
        "../envs/llm.yaml"
    threads: torch_threads
    resources:
        mem_mb=8000,
        runtime=720,
    params:
        solve=paper_params("vair", "solve"),
        mechanism=paper_params("vair", "mechanism"),
    script:
        "../scripts/vair/evaluate_small.py"


rule vair_grade_http:
    input:
        item_table=vair_graded_items,
        prompts=VAIR_PROMPTS,
    output:
        grades=f"{VAIR}/grades/{{dataset}}/{{backend}}.parquet",
    log:
        f"{VAIR_LOG}/grade_external/{{dataset}}/{{backend}}.log",
    benchmark:
        f"{VAIR_BENCH}/grade_external/{{dataset}}/{{backend}}.tsv"
    wildcard_constraints:
        dataset="synthetic|gsm8k|math",
        backend=vair_external_pattern("http"),
    conda:
        "../envs/llm.yaml"
    resources:
        mem_mb=4000,
        runtime=720,
    params:
        kind="http",
        options=vair_external_options,
    script:
        "../scripts/vair/grade_external.py"


rule vair_grade_hf:
    input:
        item_table=vair_graded_items,
        prompts=VAIR_PROMPTS,
    output:
        grades=f"{VAIR}/grades/{{dataset}}/{{backend}}.parquet",
    log:
        f"{VAIR_LOG}/grade_external/{{dataset}}/{{backend}}.log",
    benchmark:
        f"{VAIR_BENCH}/grade_external/{{dataset}}/{{backend}}.tsv"
    wildcard_constraints:
        dataset="synthetic|gsm8k|math",
        backend=vair_external_pattern("hf"),
    conda:
        "../envs/llm.yaml"
    threads: torch_threads
    resources:
        mem_mb=32000,
        runtime=720,
    params:
        kind="hf",
        options=vair_external_options,
    script:
        "../scripts/vair/grade_external.py"


include: "functions/vair_report.smk"


rule vair_tables:
    input:
        grades=vair_grade_files,
        counts=vair_counts_files,
        item_table=f"{VAIR}/data/synthetic/items.parquet",
    output:
        **{name: f"{VAIR}/tables/{name}.parquet" for name in VAIR_TABLES},
    log:
        f"{VAIR_LOG}/tables.log",
    benchmark:
        f"{VAIR_BENCH}/tables.tsv"
    conda:
        "../envs/llm.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/vair/tables.py"


rule vair_claims:
    input:
        definitions=claims_definitions("vair"),
        accuracy=f"{VAIR}/tables/accuracy.parquet",
        gap=f"{VAIR}/tables/gap.parquet",
        unparseable=f"{VAIR}/tables/unparseable.parquet",
        probes=f"{VAIR}/evaluation/probes.parquet",
        patching=f"{VAIR}/evaluation/patching.parquet",
        members=f"{VAIR}/models/members.parquet",
        step_items=vair_step_items,
    output:
        f"{VAIR}/claims.parquet",
    log:
        f"{VAIR_LOG}/claims.log",
    benchmark:
        f"{VAIR_BENCH}/claims.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/vair/claims.py"


rule vair_figures:
    input:
        gap=f"{VAIR}/tables/gap.parquet",
        probes=f"{VAIR}/evaluation/probes.parquet",
        patching=f"{VAIR}/evaluation/patching.parquet",
    output:
        **{
            name: report(
                f"{VAIR}/figures/{name}.png",
                caption=f"../workflow/report/vair/{name}.rst",
                category="Paper 08: VAIR, the production-evaluation gap",
            )
            for name in VAIR_FIGURES
        },
    log:
        f"{VAIR_LOG}/figures.log",
    benchmark:
        f"{VAIR_BENCH}/figures.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/vair/figures.py"


rule vair_report:
    input:
        claims=f"{VAIR}/claims.parquet",
        accuracy=f"{VAIR}/tables/accuracy.parquet",
        gap=f"{VAIR}/tables/gap.parquet",
        unparseable=f"{VAIR}/tables/unparseable.parquet",
        counts=f"{VAIR}/tables/counts.parquet",
        paper=f"{VAIR}/tables/paper.parquet",
        shortcuts=f"{VAIR}/tables/shortcuts.parquet",
        probes=f"{VAIR}/evaluation/probes.parquet",
        patching=f"{VAIR}/evaluation/patching.parquet",
        trace=f"{VAIR}/models/trace.parquet",
        skipped=vair_skipped_files,
        figures=expand(
            f"{VAIR}/figures/{{name}}.png", name=VAIR_FIGURES, allow_missing=True
        ),
        captions=expand("workflow/report/vair/{name}.rst", name=VAIR_FIGURES),
        deviations="workflow/report/vair/deviations.md",
        paper_scale="workflow/report/vair/paper_scale.yaml",
        template="workflow/report/vair/report.md.j2",
    output:
        f"{VAIR}/report.md",
    log:
        f"{VAIR_LOG}/report.log",
    benchmark:
        f"{VAIR_BENCH}/report.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        paper_scale=paper_scale_values("vair"),
        benchmarks=VAIR_BENCH,
        datasets=paper_params("vair", "datasets"),
        problems=paper_params("vair", "problems"),
        model=paper_params("vair", "model"),
        train=paper_params("vair", "train"),
        seeds=paper_params("vair", "seeds"),
        mechanism=paper_params("vair", "mechanism"),
        external=paper_params("vair", "external"),
    script:
        "../scripts/vair/report.py"
