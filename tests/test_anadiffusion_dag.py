"""Paper 03 (AnaDiffusion): "no segmentation at inference" on the workflow's DAG (check K1's structural half): no
input of the sampling or editing job is made by the cohort, ADNI or encode rules (the per-subject volumes, labels
and training crops), read from Snakemake's own dry run of the smoke report."""

from __future__ import annotations

from conftest import snakemake
from test_claims_contract import parse_dry_run

GENERATION = ("anadiffusion_sample", "anadiffusion_edit")
PER_SUBJECT = ("anadiffusion_cohort", "anadiffusion_adni", "anadiffusion_encode")


def test_the_sampling_and_editing_jobs_take_no_per_subject_file_on_the_dag(workflow_copy):
    jobs = parse_dry_run(snakemake(workflow_copy, "-n", "results/smoke/anadiffusion/report.md").stdout)
    producers = {out: job["rule"] for job in jobs for out in job["output"]}
    generation = [job for job in jobs if job["rule"] in GENERATION]
    assert sorted(job["rule"] for job in generation) == sorted(GENERATION)
    assert {producers[f] for f in producers if f.endswith(("/data/train.npz", "/latents/train.npz"))} == {
        "anadiffusion_cohort",
        "anadiffusion_encode",
    }  # the parser sees the per-subject rules, so their absence below means something
    for job in generation:
        assert job["input"], job
        taken = {path: producers.get(path) for path in job["input"]}
        bad = {path: rule for path, rule in taken.items() if rule in PER_SUBJECT}
        assert not bad, f"{job['rule']} takes per-subject files {bad}"
        made = {path: rule for path, rule in taken.items() if not path.startswith("src/")}  # library sources aside
        assert set(made.values()) <= {
            "anadiffusion_template", "anadiffusion_train_ae", "anadiffusion_train_denoiser", "anadiffusion_sample"
        }, made  # fmt: skip
    (claims,) = [job for job in jobs if job["rule"] == "anadiffusion_claims"]
    records = sorted(p.split("/anadiffusion/", 1)[1] for p in claims["input"] if p.endswith("inputs.parquet"))
    # K1 reads every record the scale writes: ours and the evaluation's, its positive control (no Seg. cLDM at smoke)
    assert records == ["evaluation/inputs.parquet", "samples/edit_inputs.parquet", "samples/inputs.parquet"]


def test_at_paper_scale_only_the_seg_cldm_baseline_takes_the_subjects_label_maps(workflow_copy):
    """The positive case on the DAG: the Seg. cLDM's job (the paper's editing baseline) takes the training split
    with its label maps from the ADNI rule; our sampling and editing jobs still take nothing per subject, and the
    separate hemisphere models of Table 2's ablation and the baseline are trained beside the shared one (a dry run
    plans paper scale without the ADNI folder)."""
    jobs = parse_dry_run(snakemake(workflow_copy, "-n", "results/paper/anadiffusion/report.md").stdout)
    producers = {out: job["rule"] for job in jobs for out in job["output"]}
    by_rule = {}
    for job in jobs:
        by_rule.setdefault(job["rule"], []).append(job)
    (baseline,) = by_rule["anadiffusion_seg_cldm"]
    assert {producers.get(path) for path in baseline["input"]} >= {"anadiffusion_adni", "anadiffusion_train_denoiser"}
    for rule in GENERATION:
        (job,) = by_rule[rule]
        assert not {producers.get(path) for path in job["input"]} & set(PER_SUBJECT), rule
    trained = sorted(path.rsplit("/", 1)[1] for job in by_rule["anadiffusion_train_denoiser"] for path in job["output"])
    models = [p.removesuffix(".pt") for p in trained if p.endswith(".pt")]
    assert models == ["cb", "hemisphere", "lh", "rh", "seg_cldm", "whole"]  # the baseline trained as a denoiser
    (claims,) = by_rule["anadiffusion_claims"]
    records = sorted(p.split("/anadiffusion/", 1)[1] for p in claims["input"] if p.endswith("inputs.parquet"))
    assert records == [
        "evaluation/inputs.parquet",
        "samples/edit_inputs.parquet",
        "samples/inputs.parquet",
        "samples/seg_cldm_inputs.parquet",
    ]  # K1 reads every record, the controls' too
