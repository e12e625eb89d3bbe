# Paper 14: post-training methods as reference-dependent probabilistic voting rules (DPO, NLHF; RLHF-BT and Borda
# and maximal lotteries as references). The paper was not found: the rules' closed forms and the axioms are our
# reconstruction. coval ({ranking}: world, personal; paper scale) and base_model (a small open base model scoring
# every prompt's four responses; paper scale) -> axioms ({source}: synthetic or a CoVal ranking block; every seed,
# rule, beta, reference and axiom in one job) and adversarial (hill-climbing, the NLHF monotonicity
# threshold against its computed bound, RLHF-BT against DPO) -> claims/figures -> report


include: "functions/posttrain_voting.smk"


rule posttrain_voting_coval:
    input:
        records=PV_COVAL,
    output:
        f"{PV}/profiles/{{ranking}}.parquet",
    log:
        f"{PV_LOG}/coval/{{ranking}}.log",
    benchmark:
        f"{PV_BENCH}/coval/{{ranking}}.tsv"
    wildcard_constraints:
        ranking="world|personal",
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        min_voters=paper_params("posttrain_voting", "coval", "min_voters"),
    script:
        "../scripts/posttrain_voting/coval.py"


rule posttrain_voting_base_model:
    input:
        comparisons=PV_COVAL_TEXTS,
        model=PV_BASE_MODEL,
    output:
        f"{PV}/references/base_model.parquet",
    log:
        f"{PV_LOG}/base_model.log",
    benchmark:
        f"{PV_BENCH}/base_model.tsv"
    conda:
        "../envs/llm.yaml"
    threads: torch_threads
    resources:
        mem_mb=32000,
        runtime=720,
    script:
        "../scripts/posttrain_voting/base_model.py"


rule posttrain_voting_axioms:
    input:
        unpack(pv_source_profiles),
    output:
        f"{PV}/axioms/{{source}}.parquet",
    log:
        f"{PV_LOG}/axioms/{{source}}.log",
    benchmark:
        f"{PV_BENCH}/axioms/{{source}}.tsv"
    wildcard_constraints:
        source="synthetic|world|personal",
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=lambda wc: 4000 if wc.scale == "paper" else 1000,
        runtime=lambda wc: 600 if wc.scale == "paper" else 10,
    params:
        sweep=pv_sweep,
    script:
        "../scripts/posttrain_voting/axioms.py"


rule posttrain_voting_adversarial:
    output:
        **{name: f"{PV}/{name}.parquet" for name in PV_TABLES},
    log:
        f"{PV_LOG}/adversarial.log",
    benchmark:
        f"{PV_BENCH}/adversarial.tsv"
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=lambda wc: 4000 if wc.scale == "paper" else 1000,
        runtime=lambda wc: 600 if wc.scale == "paper" else 10,
    params:
        seeds=paper_params("posttrain_voting", "seeds"),
        adversarial=paper_params("posttrain_voting", "adversarial"),
        threshold=paper_params("posttrain_voting", "threshold"),
        equivalence=paper_params("posttrain_voting", "equivalence"),
        synthetic=paper_params("posttrain_voting", "synthetic"),
    script:
        "../scripts/posttrain_voting/adversarial.py"


rule posttrain_voting_claims:
    input:
        **{name: f"{PV}/{name}.parquet" for name in PV_TABLES},
        axioms=pv_axiom_tables,
        definitions=claims_definitions("posttrain_voting"),
    output:
        f"{PV}/claims.parquet",
    log:
        f"{PV_LOG}/claims.log",
    benchmark:
        f"{PV_BENCH}/claims.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/posttrain_voting/claims.py"


rule posttrain_voting_figures:
    input:
        axioms=pv_axiom_tables,
        threshold=f"{PV}/threshold.parquet",
    output:
        **{
            name: report(
                f"{PV}/figures/{name}.png",
                caption=f"../workflow/report/posttrain_voting/{name}.rst",
                category="Paper 14: post-training as voting",
            )
            for name in PV_FIGURES
        },
    log:
        f"{PV_LOG}/figures.log",
    benchmark:
        f"{PV_BENCH}/figures.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/posttrain_voting/figures.py"


rule posttrain_voting_report:
    input:
        **{name: f"{PV}/{name}.parquet" for name in PV_TABLES},
        axioms=pv_axiom_tables,
        claims=f"{PV}/claims.parquet",
        figures=expand(
            f"{PV}/figures/{{name}}.png", name=PV_FIGURES, allow_missing=True
        ),
        captions=expand("workflow/report/posttrain_voting/{name}.rst", name=PV_FIGURES),
        deviations="workflow/report/posttrain_voting/deviations.md",
        paper_scale="workflow/report/posttrain_voting/paper_scale.yaml",
        template="workflow/report/posttrain_voting/report.md.j2",
    output:
        f"{PV}/report.md",
    log:
        f"{PV_LOG}/report.log",
    benchmark:
        f"{PV_BENCH}/report.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        paper_scale=paper_scale_values("posttrain_voting"),
        benchmarks=PV_BENCH,
        seeds=paper_params("posttrain_voting", "seeds"),
        sources=paper_params("posttrain_voting", "sources"),
        rules=paper_params("posttrain_voting", "rules"),
        betas=paper_params("posttrain_voting", "betas"),
        synthetic=paper_params("posttrain_voting", "synthetic"),
        references=paper_params("posttrain_voting", "references"),
        threshold=paper_params("posttrain_voting", "threshold"),
    script:
        "../scripts/posttrain_voting/report.py"
