# Paper 18: amortized OT from sliced Kantorovich potentials (RA-OT, OA-OT).
from neurips26.amortized_ot import experiment as aot_experiment

# pairs -> ground truth (Sinkhorn) -> fit (RA/OA/Meta-OT) -> predict -> evaluate -> claims/figures -> report


wildcard_constraints:
    task="digits|colour|sphere|cfm",
    fitted="ra|oa",
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


def aot_config(wildcards):
    return paper_config("amortized_ot", wildcards.scale)


def aot_task_params(wildcards):
    """The block of config for the job's task (digits, colour, sphere or cfm)."""
    return aot_config(wildcards)[wildcards.task]


def aot_res_by_task(wildcards):
    cfg = aot_config(wildcards)
    return {task: aot_experiment.task_res(cfg, task) for task in ("digits", "colour", "sphere")}


def aot_source_files(wildcards):
    if wildcards.task == "digits" and aot_config(wildcards)["digits"]["source"] == "mnist":
        return expand("resources/mnist/{name}", name=MNIST_FILES)
    return []


def aot_task_models(wildcards):
    """Every model fitted for the job's task (RA/OA per L, Meta-OT where defined)."""
    names = aot_experiment.fitted_models(aot_config(wildcards), wildcards.task)
    return [
        f"{AOT}/models/{{task}}/{name}.{'pt' if name == 'metaot' else 'npz'}".format(
            scale=wildcards.scale, task=wildcards.task
        )
        for name in names
    ]


def aot_predictions_params(wildcards):
    return aot_experiment.predictions(aot_config(wildcards), wildcards.task)


def aot_test_groups(wildcards):
    """Test groups of the task and their resolutions (none for the CFM minibatches)."""
    if wildcards.task == "cfm":
        return {}
    return aot_experiment.test_groups(aot_config(wildcards), wildcards.task)


def aot_train_res(wildcards):
    return aot_experiment.task_res(aot_config(wildcards), wildcards.task)


def aot_cfm_plan_model(wildcards):
    if wildcards.plan not in ("ra", "oa"):
        return []
    L = aot_config(wildcards)["main_projections"]
    return f"{AOT}/models/cfm/{wildcards.plan}_L{L}.npz".format(scale=wildcards.scale)


def aot_cfm_flows(wildcards):
    plans = aot_config(wildcards)["cfm"]["plans"]
    return expand(f"{AOT}/cfm/{{plan}}/flow.pt", plan=plans, scale=wildcards.scale)


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
        f"{AOT}/pairs/{{task}}.npz",
    params:
        task=aot_task_params,
        train_res=aot_train_res,
        groups=aot_test_groups,
        seed=paper_params("amortized_ot", "seed"),
    log:
        f"{AOT_LOG}/pairs/{{task}}.log",
    benchmark:
        f"{AOT_BENCH}/pairs/{{task}}.tsv"
    conda:
        "../envs/data.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/amortized_ot/pairs.py"


rule amortized_ot_ground_truth:
    input:
        f"{AOT}/pairs/{{task}}.npz",
    output:
        f"{AOT}/ground_truth/{{task}}.npz",
    params:
        task=aot_task_params,
        solver=paper_params("amortized_ot", "ground_truth"),
    log:
        f"{AOT_LOG}/ground_truth/{{task}}.log",
    benchmark:
        f"{AOT_BENCH}/ground_truth/{{task}}.tsv"
    conda:
        "../envs/ot.yaml"
    threads: torch_threads
    resources:
        mem_mb=8000,
        runtime=120,
    script:
        "../scripts/amortized_ot/ground_truth.py"


rule amortized_ot_fit:
    input:
        pairs=f"{AOT}/pairs/{{task}}.npz",
        ground_truth=f"{AOT}/ground_truth/{{task}}.npz",
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
    threads: torch_threads
    resources:
        mem_mb=8000,
        runtime=120,
    script:
        "../scripts/amortized_ot/fit.py"


rule amortized_ot_fit_metaot:
    wildcard_constraints:
        task="|".join(aot_experiment.FIXED_SUPPORT_TASKS),
    input:
        f"{AOT}/pairs/{{task}}.npz",
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
    threads: torch_threads
    resources:
        mem_mb=8000,
        runtime=240,
    script:
        "../scripts/amortized_ot/fit_metaot.py"


rule amortized_ot_predict:
    wildcard_constraints:
        task="|".join(aot_experiment.POTENTIAL_TASKS),
    input:
        pairs=f"{AOT}/pairs/{{task}}.npz",
        models=aot_task_models,
    output:
        f"{AOT}/predictions/{{task}}.npz",
    params:
        task=aot_task_params,
        runs=aot_predictions_params,
        seed=paper_params("amortized_ot", "seed"),
    log:
        f"{AOT_LOG}/predict/{{task}}.log",
    benchmark:
        f"{AOT_BENCH}/predict/{{task}}.tsv"
    conda:
        "../envs/ot.yaml"
    threads: torch_threads
    resources:
        mem_mb=8000,
        runtime=60,
    script:
        "../scripts/amortized_ot/predict.py"


rule amortized_ot_evaluate:
    wildcard_constraints:
        task="|".join(aot_experiment.POTENTIAL_TASKS),
    input:
        pairs=f"{AOT}/pairs/{{task}}.npz",
        ground_truth=f"{AOT}/ground_truth/{{task}}.npz",
        predictions=f"{AOT}/predictions/{{task}}.npz",
    output:
        f"{AOT}/metrics/{{task}}.parquet",
    params:
        task=aot_task_params,
        groups=aot_test_groups,
        runs=aot_predictions_params,
        projections=paper_params("amortized_ot", "main_projections"),
        evaluation=paper_params("amortized_ot", "evaluation"),
        seed=paper_params("amortized_ot", "seed"),
    log:
        f"{AOT_LOG}/evaluate/{{task}}.log",
    benchmark:
        f"{AOT_BENCH}/evaluate/{{task}}.tsv"
    conda:
        "../envs/ot.yaml"
    threads: torch_threads
    resources:
        mem_mb=8000,
        runtime=60,
    script:
        "../scripts/amortized_ot/evaluate.py"


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
    threads: torch_threads
    resources:
        mem_mb=4000,
        runtime=120,
    script:
        "../scripts/amortized_ot/cfm_train.py"


rule amortized_ot_cfm_evaluate:
    input:
        aot_cfm_flows,
    output:
        samples=f"{AOT}/cfm/samples.npz",
        metrics=f"{AOT}/metrics/cfm.parquet",
    params:
        cfm=paper_params("amortized_ot", "cfm"),
        seed=paper_params("amortized_ot", "seed"),
    log:
        f"{AOT_LOG}/cfm_evaluate.log",
    benchmark:
        f"{AOT_BENCH}/cfm_evaluate.tsv"
    conda:
        "../envs/ot.yaml"
    resources:
        mem_mb=4000,
        runtime=30,
    script:
        "../scripts/amortized_ot/cfm_evaluate.py"


rule amortized_ot_metrics:
    input:
        expand(
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
        f"{AOT}/metrics.parquet",
    output:
        f"{AOT}/claims.parquet",
    params:
        main_projections=paper_params("amortized_ot", "main_projections"),
        res_by_task=aot_res_by_task,
        test_res=paper_params("amortized_ot", "digits", "test_res"),
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
        pairs=f"{AOT}/pairs/digits.npz",
        predictions=f"{AOT}/predictions/digits.npz",
    output:
        report(
            f"{AOT}/figures/interpolation.png",
            caption="../workflow/report/amortized_ot/interpolation.rst",
            category="Paper 18: amortized OT",
        ),
    params:
        task=paper_params("amortized_ot", "digits"),
        projections=paper_params("amortized_ot", "main_projections"),
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
        pairs=f"{AOT}/pairs/colour.npz",
        ground_truth=f"{AOT}/ground_truth/colour.npz",
        predictions=f"{AOT}/predictions/colour.npz",
    output:
        report(
            f"{AOT}/figures/colour_transfer.png",
            caption="../workflow/report/amortized_ot/colour_transfer.rst",
            category="Paper 18: amortized OT",
        ),
    params:
        task=paper_params("amortized_ot", "colour"),
        projections=paper_params("amortized_ot", "main_projections"),
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
        pairs=f"{AOT}/pairs/sphere.npz",
        ground_truth=f"{AOT}/ground_truth/sphere.npz",
        predictions=f"{AOT}/predictions/sphere.npz",
    output:
        report(
            f"{AOT}/figures/sphere.png",
            caption="../workflow/report/amortized_ot/sphere.rst",
            category="Paper 18: amortized OT",
        ),
    params:
        task=paper_params("amortized_ot", "sphere"),
        projections=paper_params("amortized_ot", "main_projections"),
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
    params:
        projections=paper_params("amortized_ot", "main_projections"),
        res_by_task=aot_res_by_task,
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
