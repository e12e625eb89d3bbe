# Paper 18: amortized OT from sliced Kantorovich potentials (RA-OT, OA-OT).
# pairs -> ground truth (Sinkhorn) -> fit (RA/OA/Meta-OT) -> predict -> evaluate -> claims/figures -> report


wildcard_constraints:
    task="digits|colour|sphere|cfm",
    fitted="ra|oa",
    predictor=r"(ra|oa|sliced_mean)_L\d+|metaot",
    plan="exact|ra|oa|indep",


AOT = "results/{scale}/amortized_ot"
AOT_LOG = "results/{scale}/amortized_ot/logs"
AOT_BENCH = "results/{scale}/amortized_ot/benchmarks"
MNIST_FILES = {
    "train-images-idx3-ubyte.gz": "md5:f68b3c2dcbeaaa9fbdd348bbdeb94873",
    "train-labels-idx1-ubyte.gz": "md5:d53e105ee54ea40749a09fcbcd1e9432",
    "t10k-images-idx3-ubyte.gz": "md5:9fb629c4189551a2d022fa330f9573f3",
    "t10k-labels-idx1-ubyte.gz": "md5:ec29112dd5afa0611ce80d1b7f02629c",
}
MNIST_URL = "https://ossci-datasets.s3.amazonaws.com/mnist/"
AOT_FIGURES = ["interpolation", "colour_transfer", "sphere", "error_vs_projections", "speed", "cfm"]


def aot_res(scale, task):
    """The atom-count parameter a task is fitted at: grid side, colours, sphere points, batch."""
    cfg = paper_config("amortized_ot", scale)
    return {
        "digits": cfg["digits"]["train_res"],
        "colour": cfg["colour"]["colours"],
        "sphere": cfg["sphere"]["points"],
        "cfm": cfg["cfm"]["batch_size"],
    }[task]


def aot_source_files(wildcards):
    cfg = paper_config("amortized_ot", wildcards.scale)
    if wildcards.task == "digits" and cfg["digits"]["source"] == "mnist":
        return expand("resources/mnist/{name}", name=MNIST_FILES)
    return []


def aot_train_pairs(wildcards):
    res = aot_res(wildcards.scale, wildcards.task)
    return f"{AOT}/pairs/{{task}}/train_r{res}.npz".format(**wildcards)


def aot_train_ground_truth(wildcards):
    res = aot_res(wildcards.scale, wildcards.task)
    return f"{AOT}/ground_truth/{{task}}/train_r{res}.npz".format(**wildcards)


def aot_metric_files(wildcards):
    """Every per-predictor metrics table the paper's claims and figures read."""
    cfg = paper_config("amortized_ot", wildcards.scale)
    main = cfg["main_projections"]
    files = []
    for task in ("digits", "colour", "sphere"):
        res = aot_res(wildcards.scale, task)
        sweep = cfg["projections"] if task == "digits" else [main]
        for L in sweep:
            files += [f"{task}/{m}_L{L}_r{res}" for m in ("ra", "oa", "sliced_mean")]
        if task != "colour":
            files.append(f"{task}/metaot_r{res}")
        files.append(f"{task}/plan_baselines_r{res}")
    for res in cfg["digits"]["test_res"]:
        if res != cfg["digits"]["train_res"]:
            files += [f"digits/{m}_L{main}_r{res}" for m in ("ra", "oa")]
    return expand(f"{AOT}/metrics/{{f}}.parquet", f=files, scale=wildcards.scale)


def aot_cfm_files(wildcards):
    plans = paper_config("amortized_ot", wildcards.scale)["cfm"]["plans"]
    return expand(f"{AOT}/cfm/{{plan}}/metrics.parquet", plan=plans, scale=wildcards.scale)


def aot_cfm_samples(wildcards):
    plans = paper_config("amortized_ot", wildcards.scale)["cfm"]["plans"]
    return expand(f"{AOT}/cfm/{{plan}}/samples.npz", plan=plans, scale=wildcards.scale)


def aot_cfm_plan_model(wildcards):
    if wildcards.plan not in ("ra", "oa"):
        return []
    L = paper_config("amortized_ot", wildcards.scale)["main_projections"]
    return f"{AOT}/models/cfm/{wildcards.plan}_L{L}.npz".format(scale=wildcards.scale)


def aot_main_prediction(task, method):
    def path(wildcards):
        L = paper_config("amortized_ot", wildcards.scale)["main_projections"]
        res = aot_res(wildcards.scale, task)
        return f"{AOT}/predictions/{task}/{method}_L{L}_r{res}.npz".format(scale=wildcards.scale)

    return path


def aot_task_file(kind, task):
    def path(wildcards):
        res = aot_res(wildcards.scale, task)
        return f"{AOT}/{kind}/{task}/test_r{res}.npz".format(scale=wildcards.scale)

    return path


def aot_task_params(wildcards):
    """The block of config for the job's task (digits, colour, sphere or cfm)."""
    return paper_config("amortized_ot", wildcards.scale)[wildcards.task]


def mnist_url(wildcards):
    return MNIST_URL + wildcards.name


def mnist_hash(wildcards):
    return MNIST_FILES[wildcards.name]


# cached between workflows, hence no benchmark: (Snakemake forbids both on one rule)
rule amortized_ot_download_mnist:
    output:
        "resources/mnist/{name}",
    wildcard_constraints:
        name="|".join(MNIST_FILES),
    params:
        url=mnist_url,
        known_hash=mnist_hash,
    log:
        "resources/logs/mnist/{name}.log",
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=1000,
        runtime=30,
    cache: True
    script:
        "../scripts/common/download.py"


rule amortized_ot_pairs:
    input:
        aot_source_files,
    output:
        f"{AOT}/pairs/{{task}}/{{split}}_r{{res}}.npz",
    params:
        task=aot_task_params,
        seed=paper_params("amortized_ot", "seed"),
    log:
        f"{AOT_LOG}/pairs/{{task}}_{{split}}_r{{res}}.log",
    benchmark:
        f"{AOT_BENCH}/pairs/{{task}}_{{split}}_r{{res}}.tsv"
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/amortized_ot/pairs.py"


rule amortized_ot_ground_truth:
    input:
        f"{AOT}/pairs/{{task}}/{{split}}_r{{res}}.npz",
    output:
        f"{AOT}/ground_truth/{{task}}/{{split}}_r{{res}}.npz",
    params:
        task=aot_task_params,
        solver=paper_params("amortized_ot", "ground_truth"),
    log:
        f"{AOT_LOG}/ground_truth/{{task}}_{{split}}_r{{res}}.log",
    benchmark:
        f"{AOT_BENCH}/ground_truth/{{task}}_{{split}}_r{{res}}.tsv"
    conda:
        "../envs/ot.yaml"
    threads: 2
    resources:
        mem_mb=4000,
        runtime=60,
    script:
        "../scripts/amortized_ot/ground_truth.py"


rule amortized_ot_fit:
    input:
        pairs=aot_train_pairs,
        ground_truth=aot_train_ground_truth,
    output:
        f"{AOT}/models/{{task}}/{{fitted}}_L{{L}}.npz",
    params:
        task=aot_task_params,
        n_basis=paper_params("amortized_ot", "n_basis"),
        ridge=paper_params("amortized_ot", "ridge"),
        oa=paper_params("amortized_ot", "oa"),
        seed=paper_params("amortized_ot", "seed"),
    log:
        f"{AOT_LOG}/fit/{{task}}_{{fitted}}_L{{L}}.log",
    benchmark:
        f"{AOT_BENCH}/fit/{{task}}_{{fitted}}_L{{L}}.tsv"
    conda:
        "../envs/ot.yaml"
    threads: 2
    resources:
        mem_mb=4000,
        runtime=60,
    script:
        "../scripts/amortized_ot/fit.py"


rule amortized_ot_fit_metaot:
    input:
        pairs=aot_train_pairs,
    output:
        f"{AOT}/models/{{task}}/metaot.pt",
    params:
        task=aot_task_params,
        metaot=paper_params("amortized_ot", "metaot"),
        seed=paper_params("amortized_ot", "seed"),
    log:
        f"{AOT_LOG}/fit/{{task}}_metaot.log",
    benchmark:
        f"{AOT_BENCH}/fit/{{task}}_metaot.tsv"
    conda:
        "../envs/ot.yaml"
    threads: 2
    resources:
        mem_mb=4000,
        runtime=120,
    script:
        "../scripts/amortized_ot/fit_metaot.py"


rule amortized_ot_predict:
    input:
        pairs=f"{AOT}/pairs/{{task}}/test_r{{res}}.npz",
        model=f"{AOT}/models/{{task}}/{{fitted}}_L{{L}}.npz",
    output:
        f"{AOT}/predictions/{{task}}/{{fitted}}_L{{L}}_r{{res}}.npz",
    params:
        task=aot_task_params,
        seed=paper_params("amortized_ot", "seed"),
    log:
        f"{AOT_LOG}/predict/{{task}}_{{fitted}}_L{{L}}_r{{res}}.log",
    benchmark:
        f"{AOT_BENCH}/predict/{{task}}_{{fitted}}_L{{L}}_r{{res}}.tsv"
    conda:
        "../envs/ot.yaml"
    threads: 2
    resources:
        mem_mb=4000,
        runtime=30,
    script:
        "../scripts/amortized_ot/predict.py"


use rule amortized_ot_predict as amortized_ot_predict_sliced_mean with:
    input:
        pairs=f"{AOT}/pairs/{{task}}/test_r{{res}}.npz",
    output:
        f"{AOT}/predictions/{{task}}/sliced_mean_L{{L}}_r{{res}}.npz",
    log:
        f"{AOT_LOG}/predict/{{task}}_sliced_mean_L{{L}}_r{{res}}.log",
    benchmark:
        f"{AOT_BENCH}/predict/{{task}}_sliced_mean_L{{L}}_r{{res}}.tsv"


use rule amortized_ot_predict as amortized_ot_predict_metaot with:
    input:
        pairs=f"{AOT}/pairs/{{task}}/test_r{{res}}.npz",
        train_pairs=aot_train_pairs,
        model=f"{AOT}/models/{{task}}/metaot.pt",
    output:
        f"{AOT}/predictions/{{task}}/metaot_r{{res}}.npz",
    log:
        f"{AOT_LOG}/predict/{{task}}_metaot_r{{res}}.log",
    benchmark:
        f"{AOT_BENCH}/predict/{{task}}_metaot_r{{res}}.tsv"


rule amortized_ot_evaluate:
    input:
        pairs=f"{AOT}/pairs/{{task}}/test_r{{res}}.npz",
        ground_truth=f"{AOT}/ground_truth/{{task}}/test_r{{res}}.npz",
        prediction=f"{AOT}/predictions/{{task}}/{{predictor}}_r{{res}}.npz",
    output:
        f"{AOT}/metrics/{{task}}/{{predictor}}_r{{res}}.parquet",
    params:
        task=aot_task_params,
        evaluation=paper_params("amortized_ot", "evaluation"),
        seed=paper_params("amortized_ot", "seed"),
    log:
        f"{AOT_LOG}/evaluate/{{task}}_{{predictor}}_r{{res}}.log",
    benchmark:
        f"{AOT_BENCH}/evaluate/{{task}}_{{predictor}}_r{{res}}.tsv"
    conda:
        "../envs/ot.yaml"
    threads: 2
    resources:
        mem_mb=4000,
        runtime=30,
    script:
        "../scripts/amortized_ot/evaluate.py"


rule amortized_ot_plan_baselines:
    input:
        pairs=f"{AOT}/pairs/{{task}}/test_r{{res}}.npz",
        ground_truth=f"{AOT}/ground_truth/{{task}}/test_r{{res}}.npz",
    output:
        f"{AOT}/metrics/{{task}}/plan_baselines_r{{res}}.parquet",
    params:
        task=aot_task_params,
        projections=paper_params("amortized_ot", "main_projections"),
        evaluation=paper_params("amortized_ot", "evaluation"),
        seed=paper_params("amortized_ot", "seed"),
    log:
        f"{AOT_LOG}/plan_baselines/{{task}}_r{{res}}.log",
    benchmark:
        f"{AOT_BENCH}/plan_baselines/{{task}}_r{{res}}.tsv"
    conda:
        "../envs/ot.yaml"
    threads: 2
    resources:
        mem_mb=4000,
        runtime=30,
    script:
        "../scripts/amortized_ot/plan_baselines.py"


rule amortized_ot_cfm_train:
    input:
        model=aot_cfm_plan_model,
    output:
        f"{AOT}/cfm/{{plan}}/flow.pt",
    params:
        cfm=paper_params("amortized_ot", "cfm"),
        seed=paper_params("amortized_ot", "seed"),
    log:
        f"{AOT_LOG}/cfm_train/{{plan}}.log",
    benchmark:
        f"{AOT_BENCH}/cfm_train/{{plan}}.tsv"
    conda:
        "../envs/ot.yaml"
    threads: 2
    resources:
        mem_mb=4000,
        runtime=60,
    script:
        "../scripts/amortized_ot/cfm_train.py"


rule amortized_ot_cfm_evaluate:
    input:
        f"{AOT}/cfm/{{plan}}/flow.pt",
    output:
        samples=f"{AOT}/cfm/{{plan}}/samples.npz",
        metrics=f"{AOT}/cfm/{{plan}}/metrics.parquet",
    params:
        cfm=paper_params("amortized_ot", "cfm"),
        seed=paper_params("amortized_ot", "seed"),
    log:
        f"{AOT_LOG}/cfm_evaluate/{{plan}}.log",
    benchmark:
        f"{AOT_BENCH}/cfm_evaluate/{{plan}}.tsv"
    conda:
        "../envs/ot.yaml"
    threads: 2
    resources:
        mem_mb=2000,
        runtime=30,
    script:
        "../scripts/amortized_ot/cfm_evaluate.py"


rule amortized_ot_metrics:
    input:
        potentials=aot_metric_files,
        cfm=aot_cfm_files,
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
        f"{AOT}/metrics.parquet",
    output:
        f"{AOT}/claims.parquet",
    params:
        main_projections=paper_params("amortized_ot", "main_projections"),
        digits=paper_params("amortized_ot", "digits"),
    log:
        f"{AOT_LOG}/claims.log",
    benchmark:
        f"{AOT_BENCH}/claims.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/amortized_ot/claims.py"


rule amortized_ot_figure_interpolation:
    input:
        pairs=aot_task_file("pairs", "digits"),
        ra=aot_main_prediction("digits", "ra"),
    output:
        report(
            f"{AOT}/figures/interpolation.png",
            caption="../workflow/report/amortized_ot/interpolation.rst",
            category="Paper 18: amortized OT",
        ),
    params:
        task=paper_params("amortized_ot", "digits"),
    log:
        f"{AOT_LOG}/figures/interpolation.log",
    benchmark:
        f"{AOT_BENCH}/figures/interpolation.tsv"
    conda:
        "../envs/ot.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/amortized_ot/figure_interpolation.py"


rule amortized_ot_figure_colour_transfer:
    input:
        pairs=aot_task_file("pairs", "colour"),
        ground_truth=aot_task_file("ground_truth", "colour"),
        ra=aot_main_prediction("colour", "ra"),
    output:
        report(
            f"{AOT}/figures/colour_transfer.png",
            caption="../workflow/report/amortized_ot/colour_transfer.rst",
            category="Paper 18: amortized OT",
        ),
    params:
        task=paper_params("amortized_ot", "colour"),
    log:
        f"{AOT_LOG}/figures/colour_transfer.log",
    benchmark:
        f"{AOT_BENCH}/figures/colour_transfer.tsv"
    conda:
        "../envs/ot.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/amortized_ot/figure_colour_transfer.py"


rule amortized_ot_figure_sphere:
    input:
        pairs=aot_task_file("pairs", "sphere"),
        ground_truth=aot_task_file("ground_truth", "sphere"),
        ra=aot_main_prediction("sphere", "ra"),
    output:
        report(
            f"{AOT}/figures/sphere.png",
            caption="../workflow/report/amortized_ot/sphere.rst",
            category="Paper 18: amortized OT",
        ),
    params:
        task=paper_params("amortized_ot", "sphere"),
    log:
        f"{AOT_LOG}/figures/sphere.log",
    benchmark:
        f"{AOT_BENCH}/figures/sphere.tsv"
    conda:
        "../envs/ot.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/amortized_ot/figure_sphere.py"


rule amortized_ot_figure_tables:
    input:
        f"{AOT}/metrics.parquet",
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
    script:
        "../scripts/amortized_ot/figure_tables.py"


rule amortized_ot_figure_cfm:
    input:
        samples=aot_cfm_samples,
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
    script:
        "../scripts/amortized_ot/figure_cfm.py"


rule amortized_ot_report:
    input:
        metrics=f"{AOT}/metrics.parquet",
        claims=f"{AOT}/claims.parquet",
        figures=expand(f"{AOT}/figures/{{name}}.png", name=AOT_FIGURES, allow_missing=True),
        deviations="workflow/report/amortized_ot/deviations.md",
    output:
        f"{AOT}/report.md",
    params:
        benchmarks=AOT_BENCH,
        config=paper_params("amortized_ot"),
    log:
        f"{AOT_LOG}/report.log",
    benchmark:
        f"{AOT_BENCH}/report.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/amortized_ot/report.py"
