# Paper 18: amortized OT from sliced Kantorovich potentials (RA-OT, OA-OT).
# pairs -> ground truth (Sinkhorn) -> fit (RA/OA/Meta-OT) -> predict -> evaluate -> claims/figures -> report


include: "functions/amortized_ot.smk"


# wildcard constraints sit on the rules that use each wildcard (a global block would constrain every paper)
AOT_TASK = "|".join(AOT_TASKS)
AOT_PLAN = "exact|ra|oa|indep"


rule amortized_ot_pairs:
    input:
        source=aot_source_files,
    output:
        f"{AOT}/pairs/{{task}}.npz",
    log:
        f"{AOT_LOG}/pairs/{{task}}.log",
    benchmark:
        f"{AOT_BENCH}/pairs/{{task}}.tsv"
    wildcard_constraints:
        task=AOT_TASK,
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        task=aot_pairs_task,
        train_res=aot_train_res,
        groups=aot_test_groups,
        seed=paper_params("amortized_ot", "seed"),
    script:
        "../scripts/amortized_ot/pairs.py"


rule amortized_ot_ground_truth:
    input:
        pairs=f"{AOT}/pairs/{{task}}.npz",
    output:
        f"{AOT}/ground_truth/{{task}}.npz",
    log:
        f"{AOT_LOG}/ground_truth/{{task}}.log",
    benchmark:
        f"{AOT_BENCH}/ground_truth/{{task}}.tsv"
    wildcard_constraints:
        task=AOT_TASK,
    conda:
        "../envs/ot.yaml"
    threads: torch_threads
    # paper scale, counted (issue 38): the fits take the pairs in blocks of 2^26 design or cost entries (method.py),
    # so the peak does not grow with the pairs; largest RA-OT at L = 512 on digits, two 16,416^2 Gram matrices:
    # 6.6 GB measured on 6 pairs at the paper's shapes (ru_maxrss) + 0.5 GB of the 5,000 pairs' arrays = 7.1 GB;
    # OA-OT 2.5 GB (sphere, L = 128), spilling its features to $TMPDIR (5 GB; 17 GB for digits at L = 512)
    resources:
        mem_mb=10000,
        runtime=120,
    params:
        eps=aot_eps(AOT_TASKS),
        solver=paper_params("amortized_ot", "ground_truth"),
    script:
        "../scripts/amortized_ot/ground_truth.py"


rule amortized_ot_fit:
    input:
        pairs=f"{AOT}/pairs/{{task}}.npz",
        ground_truth=f"{AOT}/ground_truth/{{task}}.npz",
    output:
        f"{AOT}/models/{{task}}/{{fitted}}_L{{L}}.npz",
    log:
        f"{AOT_LOG}/fit/{{task}}_{{fitted}}_L{{L}}.log",
    benchmark:
        f"{AOT_BENCH}/fit/{{task}}_{{fitted}}_L{{L}}.tsv"
    wildcard_constraints:
        task=AOT_TASK,
        fitted="ra|oa",
        L=r"\d+",
    conda:
        "../envs/ot.yaml"
    threads: torch_threads
    # paper scale, counted (issue 38): the fits take the pairs in blocks of 2^26 design or cost entries (method.py),
    # so the peak does not grow with the pairs; largest RA-OT at L = 512 on digits, two 16,416^2 Gram matrices:
    # 6.6 GB measured on 6 pairs at the paper's shapes (ru_maxrss) + 0.5 GB of the 5,000 pairs' arrays = 7.1 GB;
    # OA-OT 2.5 GB (sphere, L = 128), spilling its features to $TMPDIR (5 GB; 17 GB for digits at L = 512)
    resources:
        mem_mb=10000,
        runtime=120,
    params:
        eps=aot_eps(AOT_TASKS),
        n_basis=paper_params("amortized_ot", "n_basis"),
        ridge=paper_params("amortized_ot", "ridge"),
        oa=aot_fit_oa,
        seed=paper_params("amortized_ot", "seed"),
    script:
        "../scripts/amortized_ot/fit.py"


# RA-OT and OA-OT refitted with another seed (directions, RBF centres) on the same training pairs
rule amortized_ot_fit_seeded:
    input:
        pairs=f"{AOT}/pairs/{{task}}.npz",
        ground_truth=f"{AOT}/ground_truth/{{task}}.npz",
    output:
        f"{AOT}/models/{{task}}/{{fitted}}_L{{L}}_s{{fit_seed}}.npz",
    log:
        f"{AOT_LOG}/fit/{{task}}_{{fitted}}_L{{L}}_s{{fit_seed}}.log",
    benchmark:
        f"{AOT_BENCH}/fit/{{task}}_{{fitted}}_L{{L}}_s{{fit_seed}}.tsv"
    wildcard_constraints:
        task=AOT_TASK,
        fitted="ra|oa",
        L=r"\d+",
        fit_seed=r"\d+",
    conda:
        "../envs/ot.yaml"
    threads: torch_threads
    # as amortized_ot_fit (the refits are at the main L = 128: 2.5 GB counted)
    resources:
        mem_mb=10000,
        runtime=120,
    params:
        eps=aot_eps(aot_experiment.POTENTIAL_TASKS),
        n_basis=paper_params("amortized_ot", "n_basis"),
        ridge=paper_params("amortized_ot", "ridge"),
        oa=aot_fit_oa,
        seed=aot_fit_seed,
    script:
        "../scripts/amortized_ot/fit.py"


rule amortized_ot_fit_metaot:
    input:
        pairs=f"{AOT}/pairs/{{task}}.npz",
    output:
        f"{AOT}/models/{{task}}/metaot.pt",
    log:
        f"{AOT_LOG}/fit/{{task}}_metaot.log",
    benchmark:
        f"{AOT_BENCH}/fit/{{task}}_metaot.tsv"
    wildcard_constraints:
        task="|".join(aot_experiment.FIXED_SUPPORT_TASKS),
    conda:
        "../envs/ot.yaml"
    threads: torch_threads
    resources:
        mem_mb=8000,
        runtime=240,
    params:
        eps=aot_eps(aot_experiment.FIXED_SUPPORT_TASKS),
        metaot=paper_params("amortized_ot", "metaot"),
        seed=paper_params("amortized_ot", "seed"),
    script:
        "../scripts/amortized_ot/fit_metaot.py"


# Meta-OT retrained with another seed (initialisation, minibatch order) on the same training pairs
rule amortized_ot_fit_metaot_seeded:
    input:
        pairs=f"{AOT}/pairs/{{task}}.npz",
    output:
        f"{AOT}/models/{{task}}/metaot_s{{fit_seed}}.pt",
    log:
        f"{AOT_LOG}/fit/{{task}}_metaot_s{{fit_seed}}.log",
    benchmark:
        f"{AOT_BENCH}/fit/{{task}}_metaot_s{{fit_seed}}.tsv"
    wildcard_constraints:
        task="|".join(aot_experiment.FIXED_SUPPORT_TASKS),
        fit_seed=r"\d+",
    conda:
        "../envs/ot.yaml"
    threads: torch_threads
    resources:
        mem_mb=8000,
        runtime=240,
    params:
        eps=aot_eps(aot_experiment.FIXED_SUPPORT_TASKS),
        metaot=paper_params("amortized_ot", "metaot"),
        seed=aot_fit_seed,
    script:
        "../scripts/amortized_ot/fit_metaot.py"


rule amortized_ot_predict:
    input:
        pairs=f"{AOT}/pairs/{{task}}.npz",
        models=aot_task_models,
    output:
        f"{AOT}/predictions/{{task}}.npz",
    log:
        f"{AOT_LOG}/predict/{{task}}.log",
    benchmark:
        f"{AOT_BENCH}/predict/{{task}}.tsv"
    wildcard_constraints:
        task="|".join(aot_experiment.POTENTIAL_TASKS),
    conda:
        "../envs/ot.yaml"
    threads: torch_threads
    resources:
        mem_mb=8000,
        runtime=60,
    params:
        eps=aot_eps(aot_experiment.POTENTIAL_TASKS),
        runs=aot_predictions_params,
        evaluation=paper_params("amortized_ot", "evaluation"),
        seed=paper_params("amortized_ot", "seed"),
    script:
        "../scripts/amortized_ot/predict.py"


rule amortized_ot_speed_profile:
    input:
        pairs=f"{AOT}/pairs/colour.npz",
        model=aot_profile_model,
    output:
        summary=f"{AOT}/speed/summary.parquet",
        stages=f"{AOT}/speed/stages.parquet",
        top=f"{AOT}/speed/top.parquet",
    log:
        f"{AOT_LOG}/speed_profile.log",
    benchmark:
        f"{AOT_BENCH}/speed_profile.tsv"
    conda:
        "../envs/ot.yaml"
    threads: torch_threads
    resources:
        mem_mb=8000,
        runtime=60,
    params:
        eps=paper_params("amortized_ot", "colour", "eps"),
        evaluation=paper_params("amortized_ot", "evaluation"),
        seed=paper_params("amortized_ot", "seed"),
    script:
        "../scripts/amortized_ot/speed_profile.py"


rule amortized_ot_evaluate:
    input:
        pairs=f"{AOT}/pairs/{{task}}.npz",
        ground_truth=f"{AOT}/ground_truth/{{task}}.npz",
        predictions=f"{AOT}/predictions/{{task}}.npz",
    output:
        f"{AOT}/metrics/{{task}}.parquet",
    log:
        f"{AOT_LOG}/evaluate/{{task}}.log",
    benchmark:
        f"{AOT_BENCH}/evaluate/{{task}}.tsv"
    wildcard_constraints:
        task="|".join(aot_experiment.POTENTIAL_TASKS),
    conda:
        "../envs/ot.yaml"
    threads: torch_threads
    # paper scale, counted (issue 38): test pairs in blocks of 2^24 cost entries (evaluation.py): 1.24 GB measured on
    # 10 sphere pairs of 2,000 points (ru_maxrss) + 0.35 GB of the task's pairs and potentials = 1.6 GB
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        eps=aot_eps(aot_experiment.POTENTIAL_TASKS),
        groups=aot_test_groups,
        runs=aot_predictions_params,
        projections=paper_params("amortized_ot", "main_projections"),
        evaluation=paper_params("amortized_ot", "evaluation"),
        seed=paper_params("amortized_ot", "seed"),
    script:
        "../scripts/amortized_ot/evaluate.py"


rule amortized_ot_cfm_train:
    input:
        model=aot_cfm_plan_model,
    output:
        f"{AOT}/cfm/{{plan}}/flow.pt",
    log:
        f"{AOT_LOG}/cfm_train/{{plan}}.log",
    benchmark:
        f"{AOT_BENCH}/cfm_train/{{plan}}.tsv"
    wildcard_constraints:
        plan=AOT_PLAN,
    conda:
        "../envs/ot.yaml"
    threads: torch_threads
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        cfm=aot_cfm_train_params,
        seed=paper_params("amortized_ot", "seed"),
    script:
        "../scripts/amortized_ot/cfm_train.py"


# the same flow trained with another seed (minibatches, initialisation); RA/OA plans from the base-seed models
rule amortized_ot_cfm_train_seeded:
    input:
        model=aot_cfm_plan_model,
    output:
        f"{AOT}/cfm/{{plan}}/flow_s{{fit_seed}}.pt",
    log:
        f"{AOT_LOG}/cfm_train/{{plan}}_s{{fit_seed}}.log",
    benchmark:
        f"{AOT_BENCH}/cfm_train/{{plan}}_s{{fit_seed}}.tsv"
    wildcard_constraints:
        plan=AOT_PLAN,
        fit_seed=r"\d+",
    conda:
        "../envs/ot.yaml"
    threads: torch_threads
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        cfm=aot_cfm_train_params,
        seed=aot_fit_seed,
    script:
        "../scripts/amortized_ot/cfm_train.py"


rule amortized_ot_cfm_evaluate:
    input:
        flows=aot_cfm_flows,
    output:
        samples=f"{AOT}/cfm/samples.npz",
        metrics=f"{AOT}/metrics/cfm.parquet",
    log:
        f"{AOT_LOG}/cfm_evaluate.log",
    benchmark:
        f"{AOT_BENCH}/cfm_evaluate.tsv"
    conda:
        "../envs/ot.yaml"
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        cfm=aot_cfm_evaluate_params,
        seed=paper_params("amortized_ot", "seed"),
    script:
        "../scripts/amortized_ot/cfm_evaluate.py"


rule amortized_ot_metrics:
    input:
        tables=expand(
            f"{AOT}/metrics/{{task}}.parquet",
            task=[*aot_experiment.POTENTIAL_TASKS, "cfm"],
            allow_missing=True,
        ),
    output:
        f"{AOT}/metrics.parquet",
    log:
        f"{AOT_LOG}/metrics.log",
    benchmark:
        f"{AOT_BENCH}/metrics.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/common/concat_tables.py"


rule amortized_ot_claims:
    input:
        definitions=claims_definitions("amortized_ot"),
        metrics=expand(
            f"{AOT}/metrics/{{task}}.parquet",
            task=[*aot_experiment.POTENTIAL_TASKS, "cfm"],
            allow_missing=True,
        ),
    output:
        f"{AOT}/claims.parquet",
    log:
        f"{AOT_LOG}/claims.log",
    benchmark:
        f"{AOT_BENCH}/claims.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        main_projections=paper_params("amortized_ot", "main_projections"),
        res_by_task=aot_res_by_task,
        test_res=paper_params("amortized_ot", "digits", "test_res"),
        projections=paper_params("amortized_ot", "projections"),
        seed=paper_params("amortized_ot", "seed"),
    script:
        "../scripts/amortized_ot/claims.py"


rule amortized_ot_figure_interpolation:
    input:
        pairs=f"{AOT}/pairs/digits.npz",
        predictions=f"{AOT}/predictions/digits.npz",
    output:
        report(
            f"{AOT}/figures/interpolation.png",
            caption="../workflow/report/amortized_ot/interpolation.rst",
            category="Paper 18: amortized OT",
        ),
    log:
        f"{AOT_LOG}/figures/interpolation.log",
    benchmark:
        f"{AOT_BENCH}/figures/interpolation.tsv"
    conda:
        "../envs/ot.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        eps=paper_params("amortized_ot", "digits", "eps"),
        res=paper_params("amortized_ot", "digits", "train_res"),
        projections=paper_params("amortized_ot", "main_projections"),
    script:
        "../scripts/amortized_ot/figure_interpolation.py"


rule amortized_ot_figure_colour_transfer:
    input:
        pairs=f"{AOT}/pairs/colour.npz",
        ground_truth=f"{AOT}/ground_truth/colour.npz",
        predictions=f"{AOT}/predictions/colour.npz",
    output:
        report(
            f"{AOT}/figures/colour_transfer.png",
            caption="../workflow/report/amortized_ot/colour_transfer.rst",
            category="Paper 18: amortized OT",
        ),
    log:
        f"{AOT_LOG}/figures/colour_transfer.log",
    benchmark:
        f"{AOT_BENCH}/figures/colour_transfer.tsv"
    conda:
        "../envs/ot.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        eps=paper_params("amortized_ot", "colour", "eps"),
        projections=paper_params("amortized_ot", "main_projections"),
    script:
        "../scripts/amortized_ot/figure_colour_transfer.py"


rule amortized_ot_figure_sphere:
    input:
        pairs=f"{AOT}/pairs/sphere.npz",
        ground_truth=f"{AOT}/ground_truth/sphere.npz",
        predictions=f"{AOT}/predictions/sphere.npz",
    output:
        report(
            f"{AOT}/figures/sphere.png",
            caption="../workflow/report/amortized_ot/sphere.rst",
            category="Paper 18: amortized OT",
        ),
    log:
        f"{AOT_LOG}/figures/sphere.log",
    benchmark:
        f"{AOT_BENCH}/figures/sphere.tsv"
    conda:
        "../envs/ot.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        eps=paper_params("amortized_ot", "sphere", "eps"),
        projections=paper_params("amortized_ot", "main_projections"),
    script:
        "../scripts/amortized_ot/figure_sphere.py"


rule amortized_ot_figure_tables:
    input:
        metrics=f"{AOT}/metrics.parquet",
    output:
        error=report(
            f"{AOT}/figures/error_vs_projections.png",
            caption="../workflow/report/amortized_ot/error_vs_projections.rst",
            category="Paper 18: amortized OT",
        ),
        speed=report(
            f"{AOT}/figures/speed.png",
            caption="../workflow/report/amortized_ot/speed.rst",
            category="Paper 18: amortized OT",
        ),
    log:
        f"{AOT_LOG}/figures/tables.log",
    benchmark:
        f"{AOT_BENCH}/figures/tables.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        projections=paper_params("amortized_ot", "main_projections"),
        res_by_task=aot_res_by_task,
        seed=paper_params("amortized_ot", "seed"),
    script:
        "../scripts/amortized_ot/figure_tables.py"


rule amortized_ot_figure_cfm:
    input:
        samples=f"{AOT}/cfm/samples.npz",
        metrics=f"{AOT}/metrics/cfm.parquet",
    output:
        report(
            f"{AOT}/figures/cfm.png",
            caption="../workflow/report/amortized_ot/cfm.rst",
            category="Paper 18: amortized OT",
        ),
    log:
        f"{AOT_LOG}/figures/cfm.log",
    benchmark:
        f"{AOT_BENCH}/figures/cfm.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        seed=paper_params("amortized_ot", "seed"),
    script:
        "../scripts/amortized_ot/figure_cfm.py"


rule amortized_ot_report:
    input:
        metrics=f"{AOT}/metrics.parquet",
        claims=f"{AOT}/claims.parquet",
        speed_summary=f"{AOT}/speed/summary.parquet",
        speed_stages=f"{AOT}/speed/stages.parquet",
        speed_top=f"{AOT}/speed/top.parquet",
        figures=expand(
            f"{AOT}/figures/{{name}}.png", name=AOT_FIGURES, allow_missing=True
        ),
        captions=expand("workflow/report/amortized_ot/{name}.rst", name=AOT_FIGURES),
        deviations="workflow/report/amortized_ot/deviations.md",
        paper_scale="workflow/report/amortized_ot/paper_scale.yaml",
        template="workflow/report/amortized_ot/report.md.j2",
    output:
        f"{AOT}/report.md",
    log:
        f"{AOT_LOG}/report.log",
    benchmark:
        f"{AOT_BENCH}/report.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        paper_scale=paper_scale_values("amortized_ot"),
        benchmarks=AOT_BENCH,
        seed=paper_params("amortized_ot", "seed"),
        main_projections=paper_params("amortized_ot", "main_projections"),
        n_basis=paper_params("amortized_ot", "n_basis"),
        res_by_task=aot_res_by_task,
        digits_source=paper_params("amortized_ot", "digits", "source"),
        digits_train_pairs=paper_params("amortized_ot", "digits", "train_pairs"),
        fit_seeds=paper_params("amortized_ot", "fit_seeds"),
        cfm_seeds=paper_params("amortized_ot", "cfm_seeds"),
        warm_tol=paper_params("amortized_ot", "evaluation", "warm_tol"),
    script:
        "../scripts/amortized_ot/report.py"
