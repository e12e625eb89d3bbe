# Paper 03: AnaDiffusion, anatomically compositional latent diffusion for 3D brain MRI (arXiv 2608.23014; project page
# AnaDiffusion/AnaDiffusion.github.io; code not released: our reconstruction).
# template (MNI152 2009a from the nilearn wheel on the grid) -> cohort (both splits of the synthetic cohort in one
#   job, quick/smoke: one import of torch instead of two) or adni {split} (paper: the user's ADNI folder checked against the manifest, preprocessed) -> train_ae (one autoencoder, shared)
#   -> encode (training latents: whole brain and part crops) -> train_denoiser {denoiser} (hemisphere, cb, whole;
#   seeds batched in one job) -> sample (per seed: ldm, paste, the injections; template and networks only, no
#   subject's mask) -> edit (donor part swaps) -> evaluate (FD, volumes, Cohen's d, edits, memorization, assets)
#   -> tables -> claims/figures -> report. Where the scale sets `seg_cldm: true` (paper), the editing baseline:
#   train_denoiser {seg_cldm} (latents and the training subjects' label maps) -> seg_cldm (its samples and edits,
#   conditioned on the subjects' label maps, the input our sampling and editing jobs never take) -> evaluate.


include: "functions/anadiffusion.smk"


rule anadiffusion_template:
    output:
        template=f"{AD}/data/template.npz",
    log:
        f"{AD_LOG}/template.log",
    benchmark:
        f"{AD_BENCH}/template.tsv"
    conda:
        "../envs/mri.yaml"
    resources:
        mem_mb=lambda wc: 8000 if wc.scale == "paper" else 2000,
        runtime=10,
    params:
        grid=ad_grid,
        support_multiple=ad_support_multiple,
    script:
        "../scripts/anadiffusion/template.py"


rule anadiffusion_cohort:
    input:
        template=f"{AD}/data/template.npz",
    output:
        train=f"{AD}/data/train.npz",
        train_subjects=f"{AD}/data/train_subjects.parquet",
        eval=f"{AD}/data/eval.npz",
        eval_subjects=f"{AD}/data/eval_subjects.parquet",
    log:
        f"{AD_LOG}/cohort.log",
    benchmark:
        f"{AD_BENCH}/cohort.tsv"
    wildcard_constraints:
        scale=AD_SYNTHETIC_SCALES,
    conda:
        "../envs/mri.yaml"
    threads: torch_threads
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        data=ad_cohort,
    script:
        "../scripts/anadiffusion/cohort.py"


rule anadiffusion_adni:
    input:
        template=f"{AD}/data/template.npz",
    output:
        volumes=f"{AD}/data/{{split}}.npz",
        subjects=f"{AD}/data/{{split}}_subjects.parquet",
    log:
        f"{AD_LOG}/adni/{{split}}.log",
    benchmark:
        f"{AD_BENCH}/adni/{{split}}.tsv"
    wildcard_constraints:
        split="train|eval",
        scale=AD_ADNI_SCALES,
    conda:
        "../envs/adni.yaml"
    threads: torch_threads
    resources:
        mem_mb=32000,
        runtime=5760,  # N4, HD-BET, the affine and the SyN atlas registration per scan (~1 min each at 1.5 mm)
    params:
        adni_root=ad_adni_value("adni_root"),
        adni_manifest=ad_adni_value("adni_manifest"),
        split_seed=paper_params("anadiffusion", "data", "split_seed"),
    script:
        "../scripts/anadiffusion/adni.py"


rule anadiffusion_train_ae:
    input:
        train=f"{AD}/data/train.npz",
    output:
        model=f"{AD}/models/ae.pt",
        trace=f"{AD}/models/ae_trace.parquet",
    log:
        f"{AD_LOG}/train_ae.log",
    benchmark:
        f"{AD_BENCH}/train_ae.tsv"
    conda:
        "../envs/mri.yaml"
    threads: torch_threads
    resources:
        mem_mb=lambda wc: 40000 if wc.scale == "paper" else 2000,
        runtime=lambda wc: 2880 if wc.scale == "paper" else 30,
    params:
        autoencoder=paper_params("anadiffusion", "autoencoder"),
    script:
        "../scripts/anadiffusion/train_ae.py"


rule anadiffusion_encode:
    input:
        template=f"{AD}/data/template.npz",
        train=f"{AD}/data/train.npz",
        autoencoder=f"{AD}/models/ae.pt",
    output:
        latents=f"{AD}/latents/train.npz",
    log:
        f"{AD_LOG}/encode.log",
    benchmark:
        f"{AD_BENCH}/encode.tsv"
    conda:
        "../envs/mri.yaml"
    threads: torch_threads
    resources:
        mem_mb=lambda wc: 16000 if wc.scale == "paper" else 2000,
        runtime=lambda wc: 120 if wc.scale == "paper" else 10,
    script:
        "../scripts/anadiffusion/encode.py"


rule anadiffusion_train_denoiser:
    input:
        unpack(ad_denoiser_inputs),
    output:
        model=f"{AD}/models/{{denoiser}}.pt",
        trace=f"{AD}/models/{{denoiser}}_trace.parquet",
    log:
        f"{AD_LOG}/train_denoiser/{{denoiser}}.log",
    benchmark:
        f"{AD_BENCH}/train_denoiser/{{denoiser}}.tsv"
    wildcard_constraints:
        denoiser="hemisphere|cb|whole|lh|rh|seg_cldm",
    conda:
        "../envs/mri.yaml"
    threads: torch_threads
    resources:
        mem_mb=lambda wc: 40000 if wc.scale == "paper" else 2000,
        runtime=lambda wc: 2880 if wc.scale == "paper" else 30,
    params:
        denoiser=paper_params("anadiffusion", "denoiser"),
        schedule=paper_params("anadiffusion", "schedule"),
        seeds=paper_params("anadiffusion", "seeds"),
    script:
        "../scripts/anadiffusion/train_denoiser.py"


rule anadiffusion_seg_cldm:
    input:
        autoencoder=f"{AD}/models/ae.pt",
        model=f"{AD}/models/seg_cldm.pt",
        train=f"{AD}/data/train.npz",
        train_subjects=f"{AD}/data/train_subjects.parquet",
    output:
        samples=f"{AD}/samples/seg_cldm.npz",
        inputs=f"{AD}/samples/seg_cldm_inputs.parquet",
    log:
        f"{AD_LOG}/seg_cldm.log",
    benchmark:
        f"{AD_BENCH}/seg_cldm.tsv"
    conda:
        "../envs/mri.yaml"
    threads: torch_threads
    resources:
        mem_mb=lambda wc: 40000 if wc.scale == "paper" else 2000,
        runtime=lambda wc: 720 if wc.scale == "paper" else 30,
    params:
        schedule=paper_params("anadiffusion", "schedule"),
        sampling=paper_params("anadiffusion", "sampling"),
        pairs=paper_params("anadiffusion", "edit", "pairs"),
        seeds=paper_params("anadiffusion", "seeds"),
    script:
        "../scripts/anadiffusion/seg_cldm.py"


rule anadiffusion_sample:
    input:
        template=f"{AD}/data/template.npz",
        autoencoder=f"{AD}/models/ae.pt",
        denoisers=ad_denoiser_files,
    output:
        samples=f"{AD}/samples/samples.npz",
        inputs=f"{AD}/samples/inputs.parquet",
    log:
        f"{AD_LOG}/sample.log",
    benchmark:
        f"{AD_BENCH}/sample.tsv"
    conda:
        "../envs/mri.yaml"
    threads: torch_threads
    resources:
        mem_mb=lambda wc: 40000 if wc.scale == "paper" else 2000,
        runtime=lambda wc: 720 if wc.scale == "paper" else 30,
    params:
        denoisers=ad_denoiser_params,
        part_model=paper_params("anadiffusion", "denoiser", "part_model"),
        schedule=paper_params("anadiffusion", "schedule"),
        sampling=paper_params("anadiffusion", "sampling"),
        methods=paper_params("anadiffusion", "methods"),
        injections=ad_injections,
        seeds=paper_params("anadiffusion", "seeds"),
        population=ad_template_file,
    script:
        "../scripts/anadiffusion/sample.py"


rule anadiffusion_edit:
    input:
        template=f"{AD}/data/template.npz",
        autoencoder=f"{AD}/models/ae.pt",
        whole=f"{AD}/models/whole.pt",
        samples=f"{AD}/samples/samples.npz",
    output:
        edits=f"{AD}/samples/edits.npz",
        inputs=f"{AD}/samples/edit_inputs.parquet",
    log:
        f"{AD_LOG}/edit.log",
    benchmark:
        f"{AD_BENCH}/edit.tsv"
    conda:
        "../envs/mri.yaml"
    threads: torch_threads
    resources:
        mem_mb=lambda wc: 40000 if wc.scale == "paper" else 2000,
        runtime=lambda wc: 240 if wc.scale == "paper" else 20,
    params:
        methods=paper_params("anadiffusion", "edit", "methods"),
        pairs=paper_params("anadiffusion", "edit", "pairs"),
        injections=ad_edit_injections,
        schedule=paper_params("anadiffusion", "schedule"),
        ddim_steps=paper_params("anadiffusion", "sampling", "ddim_steps"),
        seeds=paper_params("anadiffusion", "seeds"),
        population=ad_template_file,
    script:
        "../scripts/anadiffusion/edit.py"


rule anadiffusion_evaluate:
    input:
        unpack(ad_feature_weights),
        unpack(ad_seg_cldm_samples),
        template=f"{AD}/data/template.npz",
        train=f"{AD}/data/train.npz",
        eval=f"{AD}/data/eval.npz",
        samples=f"{AD}/samples/samples.npz",
        edits=f"{AD}/samples/edits.npz",
    output:
        **{name: f"{AD}/evaluation/{name}.parquet" for name in AD_EVALUATION},
        inputs=f"{AD}/evaluation/inputs.parquet",
    log:
        f"{AD_LOG}/evaluate.log",
    benchmark:
        f"{AD_BENCH}/evaluate.tsv"
    conda:
        "../envs/mri.yaml"
    threads: torch_threads
    resources:
        mem_mb=lambda wc: 64000 if wc.scale == "paper" else 2000,
        runtime=lambda wc: 720 if wc.scale == "paper" else 20,
    params:
        evaluate=paper_params("anadiffusion", "evaluate"),
        methods=paper_params("anadiffusion", "methods"),
        edit_methods=paper_params("anadiffusion", "edit", "methods"),
        population=ad_template_file,
    script:
        "../scripts/anadiffusion/evaluate.py"


rule anadiffusion_tables:
    input:
        **{name: f"{AD}/evaluation/{name}.parquet" for name in AD_TABLE_INPUTS},
    output:
        expand(f"{AD}/tables/{{name}}.parquet", name=AD_TABLES, allow_missing=True),
    log:
        f"{AD_LOG}/tables.log",
    benchmark:
        f"{AD_BENCH}/tables.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        dataset=paper_params("anadiffusion", "data", "source"),
        bootstrap=paper_params("anadiffusion", "evaluate", "bootstrap"),
    script:
        "../scripts/anadiffusion/tables.py"


rule anadiffusion_claims:
    input:
        **{name: f"{AD}/evaluation/{name}.parquet" for name in AD_CLAIMS_INPUTS},
        volumes=f"{AD}/evaluation/volumes.parquet",
        eval_subjects=f"{AD}/data/eval_subjects.parquet",
        definitions=claims_definitions("anadiffusion"),
        traces=ad_traces,
        input_records=ad_input_records,
    output:
        f"{AD}/claims.parquet",
    log:
        f"{AD_LOG}/claims.log",
    benchmark:
        f"{AD_BENCH}/claims.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        subject_files=ad_subject_files,
        expected_jobs=ad_record_jobs,
        dataset=paper_params("anadiffusion", "data", "source"),
    script:
        "../scripts/anadiffusion/claims.py"


rule anadiffusion_figures:
    input:
        samples=f"{AD}/samples/samples.npz",
        edits=f"{AD}/samples/edits.npz",
        eval=f"{AD}/data/eval.npz",
        fd=f"{AD}/evaluation/fd.parquet",
    output:
        **{
            name: report(
                f"{AD}/figures/{name}.png",
                caption=f"../workflow/report/anadiffusion/{name}.rst",
                category="Paper 03: AnaDiffusion",
            )
            for name in AD_FIGURES
        },
    log:
        f"{AD_LOG}/figures.log",
    benchmark:
        f"{AD_BENCH}/figures.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        methods=paper_params("anadiffusion", "methods"),
        edit_method=ad_edit_method,
    script:
        "../scripts/anadiffusion/figures.py"


rule anadiffusion_report:
    input:
        claims=f"{AD}/claims.parquet",
        tables=expand(
            f"{AD}/tables/{{name}}.parquet", name=AD_TABLES, allow_missing=True
        ),
        figures=expand(
            f"{AD}/figures/{{name}}.png", name=AD_FIGURES, allow_missing=True
        ),
        captions=expand("workflow/report/anadiffusion/{name}.rst", name=AD_FIGURES),
        deviations="workflow/report/anadiffusion/deviations.md",
        paper_scale="workflow/report/anadiffusion/paper_scale.yaml",
        template="workflow/report/anadiffusion/report.md.j2",
    output:
        f"{AD}/report.md",
    log:
        f"{AD_LOG}/report.log",
    benchmark:
        f"{AD_BENCH}/report.tsv"
    conda:
        "../envs/report.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        paper_scale=paper_scale_values("anadiffusion"),
        benchmarks=AD_BENCH,
        data=paper_params("anadiffusion", "data"),
        autoencoder=paper_params("anadiffusion", "autoencoder"),
        denoiser=paper_params("anadiffusion", "denoiser"),
        schedule=paper_params("anadiffusion", "schedule"),
        sampling=paper_params("anadiffusion", "sampling"),
        methods=paper_params("anadiffusion", "methods"),
        injections=paper_params("anadiffusion", "injections"),
        seeds=paper_params("anadiffusion", "seeds"),
        edit=paper_params("anadiffusion", "edit"),
        evaluate=paper_params("anadiffusion", "evaluate"),
        seg_cldm=paper_params("anadiffusion", "seg_cldm"),
    script:
        "../scripts/anadiffusion/report.py"
