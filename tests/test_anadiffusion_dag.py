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
