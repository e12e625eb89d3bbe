# Paper 04: BIRD, Bayesian information restricted diffusion, and the memorization-generalization boundary.
# data -> theory (Gaussian patch MI) and information {dataset}/N{n} (posterior entropy, MI) -> phase
#      -> samples {dataset}/N{n} (BIRD reverse process, memorized fraction)
#      -> networks {dataset}/{arch}/N{n}/s{seeds}: train -> calibrate (k_cal vs k_mem); one job per seed group
#         (networks.seeds_per_job: s0-1-2 trains seeds 0, 1, 2 as one batched ensemble, s0 one seed)
#      -> cost; claims/figures -> report


include: "functions/bird.smk"


rule bird_data:
    input:
        archives=bird_archive_inputs,
    output:
        f"{BIRD}/data/{{dataset}}.npz",
    log:
        f"{BIRD_LOG}/data/{{dataset}}.log",
    benchmark:
        f"{BIRD_BENCH}/data/{{dataset}}.tsv"
    conda:
        "../envs/torch.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        dataset=bird_data_settings,
        seed=paper_params("bird", "seed"),
    script:
        "../scripts/bird/data.py"


rule bird_theory:
    input:
        f"{BIRD}/data/{{dataset}}.npz",
    output:
        f"{BIRD}/theory/{{dataset}}.parquet",
    log:
        f"{BIRD_LOG}/theory/{{dataset}}.log",
    benchmark:
        f"{BIRD_BENCH}/theory/{{dataset}}.tsv"
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        dataset=bird_theory_settings,
        windows=paper_params("bird", "windows"),
        snr=paper_params("bird", "snr"),
    script:
        "../scripts/bird/theory.py"


rule bird_information:
    input:
        f"{BIRD}/data/{{dataset}}.npz",
    output:
        f"{BIRD}/information/{{dataset}}/N{{n}}.parquet",
    log:
        f"{BIRD_LOG}/information/{{dataset}}/N{{n}}.log",
    benchmark:
        f"{BIRD_BENCH}/information/{{dataset}}/N{{n}}.tsv"
    wildcard_constraints:
        n=r"\d+",
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        windows=paper_params("bird", "windows"),
        snr=paper_params("bird", "snr"),
        information=paper_params("bird", "information"),
        restriction=paper_params("bird", "restriction"),
        seed=paper_params("bird", "seed"),
    script:
        "../scripts/bird/information.py"


rule bird_sample:
    input:
        f"{BIRD}/data/{{dataset}}.npz",
    output:
        samples=f"{BIRD}/samples/{{dataset}}/N{{n}}.npz",
        memorization=f"{BIRD}/samples/{{dataset}}/N{{n}}.parquet",
    log:
        f"{BIRD_LOG}/sample/{{dataset}}/N{{n}}.log",
    benchmark:
        f"{BIRD_BENCH}/sample/{{dataset}}/N{{n}}.tsv"
    wildcard_constraints:
        n=r"\d+",
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        sample=paper_params("bird", "sample"),
        restriction=paper_params("bird", "restriction"),
        seed=paper_params("bird", "seed"),
    script:
        "../scripts/bird/sample.py"


rule bird_train:
    input:
        data=f"{BIRD}/data/{{dataset}}.npz",
    output:
        checkpoints=f"{BIRD}/networks/{BIRD_NET}/checkpoints.pt",
        log_table=f"{BIRD}/networks/{BIRD_NET}/train_log.parquet",
    log:
        f"{BIRD_LOG}/train/{BIRD_NET}.log",
    benchmark:
        f"{BIRD_BENCH}/train/{BIRD_NET}.tsv"
    wildcard_constraints:
        n=r"\d+",
        arch="unet_tiny|dit_tiny",
        seeds=r"\d+(-\d+)*",
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=4000,
        runtime=lambda wildcards: 240 * bird_group_size(wildcards),
    params:
        spec=bird_arch_spec,
        train=paper_params("bird", "networks", "train"),
        subset_seed=paper_params("bird", "seed"),
    script:
        "../scripts/bird/train.py"


rule bird_calibrate:
    input:
        data=f"{BIRD}/data/{{dataset}}.npz",
        checkpoints=f"{BIRD}/networks/{BIRD_NET}/checkpoints.pt",
    output:
        f"{BIRD}/networks/{BIRD_NET}/calibration.parquet",
    log:
        f"{BIRD_LOG}/calibrate/{BIRD_NET}.log",
    benchmark:
        f"{BIRD_BENCH}/calibrate/{BIRD_NET}.tsv"
    wildcard_constraints:
        n=r"\d+",
        arch="unet_tiny|dit_tiny",
        seeds=r"\d+(-\d+)*",
    conda:
        "../envs/torch.yaml"
    threads: torch_threads
    resources:
        mem_mb=4000,
        runtime=lambda wildcards: 120 * bird_group_size(wildcards),
    params:
        windows=paper_params("bird", "windows"),
        calibrate=paper_params("bird", "networks", "calibrate"),
        restriction=paper_params("bird", "restriction"),
        subset_seed=paper_params("bird", "seed"),
    script:
        "../scripts/bird/calibrate.py"


rule bird_cost:
    input:
        f"{BIRD}/data/{{dataset}}.npz",
    output:
        f"{BIRD}/cost/{{dataset}}.parquet",
    log:
        f"{BIRD_LOG}/cost/{{dataset}}.log",
    benchmark:
        f"{BIRD_BENCH}/cost/{{dataset}}.tsv"
    conda:
        "../envs/torch.yaml"
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        cost=paper_params("bird", "cost"),
        archs=paper_params("bird", "networks", "archs"),
        restriction=paper_params("bird", "restriction"),
        seed=paper_params("bird", "seed"),
    script:
        "../scripts/bird/cost.py"


rule bird_phase:
    input:
        theory=bird_theory_files,
        information=bird_information_files,
    output:
        phase=f"{BIRD}/phase.parquet",
        boundary=f"{BIRD}/boundary.parquet",
        kmem=f"{BIRD}/kmem.parquet",
    log:
        f"{BIRD_LOG}/phase.log",
    benchmark:
        f"{BIRD_BENCH}/phase.tsv"
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        fraction_of_log_n=paper_params("bird", "thresholds", "fraction_of_log_n"),
        nats=paper_params("bird", "thresholds", "nats"),
    script:
        "../scripts/bird/phase.py"


rule bird_claims:
    input:
        phase=f"{BIRD}/phase.parquet",
        boundary=f"{BIRD}/boundary.parquet",
        kmem=f"{BIRD}/kmem.parquet",
        memorization=bird_memorization_files,
        calibration=bird_calibration_files,
        definitions=claims_definitions("bird"),
    output:
        claims=f"{BIRD}/claims.parquet",
        kcal=f"{BIRD}/kcal.parquet",
    log:
        f"{BIRD_LOG}/claims.log",
    benchmark:
        f"{BIRD_BENCH}/claims.tsv"
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        nats=paper_params("bird", "thresholds", "nats"),
        fraction_of_log_n=paper_params("bird", "thresholds", "fraction_of_log_n"),
        calibration_fraction=paper_params("bird", "thresholds", "calibration_fraction"),
        batch=paper_params("bird", "networks", "train", "batch"),
        early_steps=paper_params("bird", "networks", "early_steps"),
    script:
        "../scripts/bird/claims.py"


rule bird_figures:
    input:
        phase=f"{BIRD}/phase.parquet",
        boundary=f"{BIRD}/boundary.parquet",
        kmem=f"{BIRD}/kmem.parquet",
        kcal=f"{BIRD}/kcal.parquet",
        memorization=bird_memorization_files,
        cost=bird_cost_files,
        samples=bird_sample_files,
    output:
        **{
            name: report(
                f"{BIRD}/figures/{name}.png",
                caption=f"../workflow/report/bird/{name}.rst",
                category="Paper 04: BIRD",
            )
            for name in BIRD_FIGURES
        },
    log:
        f"{BIRD_LOG}/figures.log",
    benchmark:
        f"{BIRD_BENCH}/figures.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/bird/figures.py"


rule bird_report:
    input:
        phase=f"{BIRD}/phase.parquet",
        boundary=f"{BIRD}/boundary.parquet",
        kmem=f"{BIRD}/kmem.parquet",
        kcal=f"{BIRD}/kcal.parquet",
        claims=f"{BIRD}/claims.parquet",
        memorization=bird_memorization_files,
        cost=bird_cost_files,
        figures=expand(
            f"{BIRD}/figures/{{name}}.png", name=BIRD_FIGURES, allow_missing=True
        ),
        captions=expand("workflow/report/bird/{name}.rst", name=BIRD_FIGURES),
        deviations="workflow/report/bird/deviations.md",
        paper_scale="workflow/report/bird/paper_scale.yaml",
        template="workflow/report/bird/report.md.j2",
    output:
        f"{BIRD}/report.md",
    log:
        f"{BIRD_LOG}/report.log",
    benchmark:
        f"{BIRD_BENCH}/report.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        paper_scale=paper_scale_values("bird"),
        benchmarks=BIRD_BENCH,
        datasets=bird_report_datasets,
        restriction=paper_params("bird", "restriction", "type"),
        windows=paper_params("bird", "windows"),
        snr=paper_params("bird", "snr"),
        n_images=paper_params("bird", "information", "n_images"),
        fraction_of_log_n=paper_params("bird", "thresholds", "fraction_of_log_n"),
        nats=paper_params("bird", "thresholds", "nats"),
        archs=bird_arch_names,
        net_dataset=paper_params("bird", "networks", "dataset"),
        net_n_train=paper_params("bird", "networks", "n_train"),
        net_seeds=paper_params("bird", "networks", "seeds"),
        net_seeds_per_job=paper_params("bird", "networks", "seeds_per_job"),
        epochs=paper_params("bird", "networks", "train", "epochs"),
        checkpoint_epochs=paper_params("bird", "networks", "train", "checkpoint_epochs"),
        calibrate=paper_params("bird", "networks", "calibrate"),
    script:
        "../scripts/bird/report.py"
