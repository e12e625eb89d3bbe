# Paper 16: an analytically tractable model of multistage training (pretraining, SFT, RL). The paper was not found:
# the model is our reconstruction (the research notes' skill-chain model), solved in closed form or by ODE and
# simulated stochastically.
# phenomenon ({phenomenon}: complementarity, plateau, ceiling, allocation, amplification, pretraining) and simulate
#   ({config}_s{seed}: the stochastic pipeline beside the mean-field solution) -> tables -> claims/figures -> report


include: "functions/multistage_training.smk"


rule multistage_training_phenomenon:
    output:
        f"{MT}/phenomena/{{phenomenon}}.parquet",
    log:
        f"{MT_LOG}/phenomenon/{{phenomenon}}.log",
    benchmark:
        f"{MT_BENCH}/phenomenon/{{phenomenon}}.tsv"
    wildcard_constraints:
        phenomenon="|".join(MT_PHENOMENA),
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=lambda wc: 8000 if wc.scale == "paper" else 1000,
        runtime=lambda wc: 120 if wc.scale == "paper" else 10,
    params:
        model=paper_params("multistage_training", "model"),
        block=mt_block,
    script:
        "../scripts/multistage_training/phenomenon.py"


rule multistage_training_simulate:
    output:
        f"{MT}/simulation/{{config}}_s{{seed}}.parquet",
    log:
        f"{MT_LOG}/simulate/{{config}}_s{{seed}}.log",
    benchmark:
        f"{MT_BENCH}/simulate/{{config}}_s{{seed}}.tsv"
    wildcard_constraints:
        config=r"[a-z0-9_]+",
        seed=r"\d+",
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=lambda wc: 8000 if wc.scale == "paper" else 1000,
        runtime=lambda wc: 120 if wc.scale == "paper" else 10,
    params:
        model=paper_params("multistage_training", "model"),
        run=mt_run,
        sampling=mt_sampling,
    script:
        "../scripts/multistage_training/simulate.py"


rule multistage_training_tables:
    input:
        phenomena=expand(
            f"{MT}/phenomena/{{phenomenon}}.parquet",
            phenomenon=MT_PHENOMENA,
            allow_missing=True,
        ),
        simulations=mt_simulations,
    output:
        **{name: f"{MT}/{name}.parquet" for name in MT_PHENOMENA},
        simulation=f"{MT}/simulation.parquet",
    log:
        f"{MT_LOG}/tables.log",
    benchmark:
        f"{MT_BENCH}/tables.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/multistage_training/tables.py"


rule multistage_training_claims:
    input:
        **{name: f"{MT}/{name}.parquet" for name in MT_PHENOMENA},
        definitions=claims_definitions("multistage_training"),
        simulation=f"{MT}/simulation.parquet",
    output:
        f"{MT}/claims.parquet",
    log:
        f"{MT_LOG}/claims.log",
    benchmark:
        f"{MT_BENCH}/claims.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        comparisons=mt_comparisons,
    script:
        "../scripts/multistage_training/claims.py"


rule multistage_training_figures:
    input:
        **{name: f"{MT}/{name}.parquet" for name in MT_PHENOMENA},
        simulation=f"{MT}/simulation.parquet",
    output:
        **{
            name: report(
                f"{MT}/figures/{name}.png",
                caption=f"../workflow/report/multistage_training/{name}.rst",
                category="Paper 16: multistage training",
            )
            for name in MT_FIGURES
        },
    log:
        f"{MT_LOG}/figures.log",
    benchmark:
        f"{MT_BENCH}/figures.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/multistage_training/figures.py"


rule multistage_training_report:
    input:
        **{name: f"{MT}/{name}.parquet" for name in MT_PHENOMENA},
        claims=f"{MT}/claims.parquet",
        simulation=f"{MT}/simulation.parquet",
        figures=expand(
            f"{MT}/figures/{{name}}.png", name=MT_FIGURES, allow_missing=True
        ),
        captions=expand(
            "workflow/report/multistage_training/{name}.rst", name=MT_FIGURES
        ),
        deviations="workflow/report/multistage_training/deviations.md",
        paper_scale="workflow/report/multistage_training/paper_scale.yaml",
        template="workflow/report/multistage_training/report.md.j2",
    output:
        f"{MT}/report.md",
    log:
        f"{MT_LOG}/report.log",
    benchmark:
        f"{MT_BENCH}/report.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        paper_scale=paper_scale_values("multistage_training"),
        benchmarks=MT_BENCH,
        model=paper_params("multistage_training", "model"),
        complementarity=paper_params("multistage_training", "complementarity"),
        ceiling=paper_params("multistage_training", "ceiling"),
        allocation=paper_params("multistage_training", "allocation"),
        amplification=paper_params("multistage_training", "amplification"),
        plateau=paper_params("multistage_training", "plateau"),
        pretraining=paper_params("multistage_training", "pretraining"),
        simulation=paper_params("multistage_training", "simulation"),
    script:
        "../scripts/multistage_training/report.py"
