# Paper 02: AnalogToBi, analog circuit topology generation (Kim et al. 2026, arXiv 2603.08720).
# data (generator, or AnalogGenie's netlists checked against their manifest; train/test split) -> walks (one
#   representation: bipartite or device-pin, traversal augmentation) -> reference (type classifier, ngspice and
#   features of the held-out circuits) -> train ({config}_s{seed}) -> sample (every decoding; random_s{seed}: random
#   logits under the grammar) -> evaluate (per-sample metrics, ngspice) -> tables -> claims/figures -> report


include: "functions/analogtobi.smk"


rule analogtobi_data:
    input:
        unpack(atb_data_inputs),
    output:
        circuits=f"{ATB}/data/circuits.parquet",
        rejects=f"{ATB}/data/rejects.parquet",
    log:
        f"{ATB_LOG}/data.log",
    benchmark:
        f"{ATB_BENCH}/data.tsv"
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        data=paper_params("analogtobi", "data"),
    script:
        "../scripts/analogtobi/data.py"


rule analogtobi_walks:
    input:
        circuits=f"{ATB}/data/circuits.parquet",
    output:
        f"{ATB}/data/walks_{{rep}}.parquet",
    log:
        f"{ATB_LOG}/walks/{{rep}}.log",
    benchmark:
        f"{ATB_BENCH}/walks/{{rep}}.tsv"
    wildcard_constraints:
        rep="bipart|devpin",
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        walks=atb_walks_params,
    script:
        "../scripts/analogtobi/walks.py"


rule analogtobi_reference:
    input:
        circuits=f"{ATB}/data/circuits.parquet",
    output:
        classifier=f"{ATB}/reference/classifier.pkl",
        reference=f"{ATB}/reference/held_out.parquet",
    log:
        f"{ATB_LOG}/reference.log",
    benchmark:
        f"{ATB_BENCH}/reference.tsv"
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        reference=atb_reference_params,
    script:
        "../scripts/analogtobi/reference.py"


rule analogtobi_train:
    input:
        walks=atb_walks_of,
    output:
        model=f"{ATB}/models/{{config}}_s{{seed}}.pt",
        curve=f"{ATB}/models/{{config}}_s{{seed}}_curve.parquet",
    log:
        f"{ATB_LOG}/train/{{config}}_s{{seed}}.log",
    benchmark:
        f"{ATB_BENCH}/train/{{config}}_s{{seed}}.tsv"
    wildcard_constraints:
        config=ATB_CONFIG,
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=4000,
        runtime=1440,
    params:
        train=atb_train_params,
    script:
        "../scripts/analogtobi/train.py"


rule analogtobi_sample:
    input:
        unpack(atb_sample_inputs),
    output:
        samples=f"{ATB}/samples/{{config}}_s{{seed}}.parquet",
        timing=f"{ATB}/samples/{{config}}_s{{seed}}_timing.parquet",
    log:
        f"{ATB_LOG}/sample/{{config}}_s{{seed}}.log",
    benchmark:
        f"{ATB_BENCH}/sample/{{config}}_s{{seed}}.tsv"
    wildcard_constraints:
        config=f"{ATB_CONFIG}|random",
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=4000,
        runtime=240,
    params:
        sample=paper_params("analogtobi", "sample"),
    script:
        "../scripts/analogtobi/sample.py"


rule analogtobi_evaluate:
    input:
        samples=f"{ATB}/samples/{{config}}_s{{seed}}.parquet",
        circuits=f"{ATB}/data/circuits.parquet",
        walks=atb_walks_of,
        classifier=f"{ATB}/reference/classifier.pkl",
    output:
        metrics=f"{ATB}/metrics/{{config}}_s{{seed}}.parquet",
        timing=f"{ATB}/metrics/{{config}}_s{{seed}}_timing.parquet",
    log:
        f"{ATB_LOG}/evaluate/{{config}}_s{{seed}}.log",
    benchmark:
        f"{ATB_BENCH}/evaluate/{{config}}_s{{seed}}.tsv"
    wildcard_constraints:
        config=f"{ATB_CONFIG}|random",
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=2000,
        runtime=240,
    params:
        evaluate=atb_evaluate_params,
    script:
        "../scripts/analogtobi/evaluate.py"


rule analogtobi_tables:
    input:
        metrics=atb_metrics,
        timings=atb_timings,
        curves=atb_curves,
        reference=f"{ATB}/reference/held_out.parquet",
    output:
        ablation=f"{ATB}/ablation.parquet",
        summary=f"{ATB}/ablation_summary.parquet",
        per_type=f"{ATB}/per_type.parquet",
        throughput=f"{ATB}/throughput.parquet",
        training=f"{ATB}/training.parquet",
    log:
        f"{ATB_LOG}/tables.log",
    benchmark:
        f"{ATB_BENCH}/tables.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        main=paper_params("analogtobi", "main"),
    script:
        "../scripts/analogtobi/tables.py"


rule analogtobi_claims:
    input:
        definitions=claims_definitions("analogtobi"),
        ablation=f"{ATB}/ablation.parquet",
        metrics=atb_metrics,
        reference=f"{ATB}/reference/held_out.parquet",
        walks=expand(
            f"{ATB}/data/walks_{{rep}}.parquet",
            rep=["bipart", "devpin"],
            allow_missing=True,
        ),
        circuits=f"{ATB}/data/circuits.parquet",
    output:
        f"{ATB}/claims.parquet",
    log:
        f"{ATB_LOG}/claims.log",
    benchmark:
        f"{ATB_BENCH}/claims.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        main=paper_params("analogtobi", "main"),
    script:
        "../scripts/analogtobi/claims.py"


rule analogtobi_figures:
    input:
        summary=f"{ATB}/ablation_summary.parquet",
        ablation=f"{ATB}/ablation.parquet",
        training=f"{ATB}/training.parquet",
        samples=atb_samples,
        metrics=atb_metrics,
    output:
        **{
            name: report(
                f"{ATB}/figures/{name}.png",
                caption=f"../workflow/report/analogtobi/{name}.rst",
                category="Paper 02: AnalogToBi",
            )
            for name in ATB_FIGURES
        },
    log:
        f"{ATB_LOG}/figures.log",
    benchmark:
        f"{ATB_BENCH}/figures.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        main=paper_params("analogtobi", "main"),
    script:
        "../scripts/analogtobi/figures.py"


rule analogtobi_report:
    input:
        claims=f"{ATB}/claims.parquet",
        ablation=f"{ATB}/ablation.parquet",
        summary=f"{ATB}/ablation_summary.parquet",
        per_type=f"{ATB}/per_type.parquet",
        throughput=f"{ATB}/throughput.parquet",
        training=f"{ATB}/training.parquet",
        reference=f"{ATB}/reference/held_out.parquet",
        circuits=f"{ATB}/data/circuits.parquet",
        rejects=f"{ATB}/data/rejects.parquet",
        figures=expand(
            f"{ATB}/figures/{{name}}.png", name=ATB_FIGURES, allow_missing=True
        ),
        captions=expand("workflow/report/analogtobi/{name}.rst", name=ATB_FIGURES),
        deviations="workflow/report/analogtobi/deviations.md",
        paper_scale="workflow/report/analogtobi/paper_scale.yaml",
        template="workflow/report/analogtobi/report.md.j2",
    output:
        f"{ATB}/report.md",
    log:
        f"{ATB_LOG}/report.log",
    benchmark:
        f"{ATB_BENCH}/report.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        paper_scale=paper_scale_values("analogtobi"),
        benchmarks=ATB_BENCH,
        data=paper_params("analogtobi", "data"),
        model=paper_params("analogtobi", "model"),
        train=paper_params("analogtobi", "train"),
        seeds=paper_params("analogtobi", "seeds"),
        sample=paper_params("analogtobi", "sample"),
        evaluate=paper_params("analogtobi", "evaluate"),
        main=paper_params("analogtobi", "main"),
    script:
        "../scripts/analogtobi/report.py"
