"""Faults on the local SLURM cluster (issue 3, item 5), each on the workflow's real jobs: a job cancelled
with scancel while it runs, a job over its memory request and a job over its time request. (A job that
fails once and is retried is part of the cluster smoke run, tests/test_cluster.py.)"""

from __future__ import annotations

import os
import re
import subprocess
import time

import pytest

from conftest import SNAKEMAKE, copy_workflow, planned_jobs, snakemake
from slurm_records import CLUSTER_PROFILE, slurm_call, slurm_jobs

pytestmark = pytest.mark.cluster
PAIRS = "results/smoke/amortized_ot/pairs/{task}.npz"
GROUND_TRUTH = "results/smoke/amortized_ot/ground_truth/{task}.npz"


def start_snakemake(repo, *args, fault: str | None = None) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(repo / "src"))
    if fault:
        env["NEURIPS26_TEST_FAULT"] = fault
    return subprocess.Popen(
        [SNAKEMAKE, *CLUSTER_PROFILE, *args],
        cwd=repo,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


@pytest.fixture(scope="module")
def time_limit_run(slurm_cluster, tmp_path_factory, preempted_training_run):
    """A job asking for 1 minute that sleeps for 10, started in the background at once: Slurm ends it
    only at its next time-limit sweep (every 30 s), so the other fault tests run meanwhile."""
    repo = copy_workflow(tmp_path_factory.mktemp("time_limit") / "repo")
    proc = start_snakemake(
        repo,
        PAIRS.format(task="sphere"),
        "--retries",
        "0",
        "--set-resources",
        "amortized_ot_pairs:runtime=1",
        fault="amortized_ot_pairs:sleep:600",
    )
    yield repo, proc
    if proc.poll() is None:
        proc.kill()


METAOT = "results/smoke/amortized_ot/models/digits/metaot.pt"


@pytest.fixture(scope="module")
def preempted_training_run(slurm_cluster, tmp_path_factory):
    """A training job (Meta-OT, 50 steps slowed to 1.5 s each, checkpoints only on SIGTERM) given 1 minute:
    Slurm ends it at its time limit with SIGTERM, the loop writes a checkpoint, and the profile's retry
    resumes it. Its inputs are made locally first; started at once in the background, like the time-limit
    run, so the other tests run meanwhile."""
    repo = copy_workflow(tmp_path_factory.mktemp("preempted") / "repo")
    snakemake(repo, "-c2", METAOT, "--omit-from", "amortized_ot_fit_metaot")
    proc = start_snakemake(
        repo,
        METAOT,
        "--retries",
        "3",
        "--set-resources",
        "amortized_ot_fit_metaot:runtime=1",
        fault="amortized_ot_fit_metaot:slow_steps:1.5",
    )
    yield repo, proc
    if proc.poll() is None:
        proc.kill()


def test_a_job_over_its_memory_request_is_reported_with_slurms_reason(time_limit_run, tmp_path):
    repo = copy_workflow(tmp_path / "repo")
    run = snakemake(
        repo,
        *CLUSTER_PROFILE,
        PAIRS.format(task="digits"),
        "--retries",
        "0",
        "--set-resources",
        "amortized_ot_pairs:mem_mb=600",
        check=False,
        timeout=300,
        env={"NEURIPS26_TEST_FAULT": "amortized_ot_pairs:allocate:1500"},
    )
    log = run.stdout + run.stderr
    assert run.returncode != 0
    assert "SLURM-job" in log and "failed" in log
    [job] = slurm_jobs(repo).itertuples()
    assert job.ReqMem == "600M" and job.State in {"FAILED", "OUT_OF_MEMORY"}
    # Slurm's reason reaches the user in Snakemake's message or, when the plugin polled before the accounting had
    # it ("Reason: Unknown"), in the job's Slurm log that the message points to
    slurm_log = "".join(p.read_text() for p in (repo / "logs/slurm").rglob(f"{job.JobID}.log"))
    reason = r"[Ee]xceeded (job )?memory limit|oom[_-]kill|OUT_OF_MEMORY"
    assert re.search(reason, log) or re.search(reason, slurm_log), (log[-2000:], slurm_log[-2000:])
    assert not (repo / PAIRS.format(task="digits")).exists()


def test_a_job_cancelled_with_scancel_fails_the_run_and_a_rerun_redoes_only_it(time_limit_run, tmp_path):
    repo = copy_workflow(tmp_path / "repo")
    target = GROUND_TRUTH.format(task="cfm")
    # squeue, not the default sacct, reads the status: the plugin (2.8.0) takes sacct's state of a job
    # cancelled by a user, 'CANCELLED by <uid>', for a running job and waits forever (README, Cluster)
    proc = start_snakemake(
        repo,
        target,
        "--retries",
        "0",
        "--slurm-status-command",
        "squeue",
        fault="amortized_ot_ground_truth:sleep:600",
    )
    deadline, job_id = time.monotonic() + 240, None
    while job_id is None and time.monotonic() < deadline and proc.poll() is None:
        for line in slurm_call("squeue", "-h", "-o", "%i|%T|%k|%Z").splitlines():
            jid, state, comment, workdir = line.split("|")
            if workdir == str(repo) and state == "RUNNING" and comment.startswith("rule_amortized_ot_ground_truth"):
                job_id = jid
        time.sleep(0.5)
    assert job_id is not None, "the ground-truth job never ran"
    slurm_call("scancel", job_id)
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode != 0
    assert re.search(rf"SLURM-job '{job_id}' failed, SLURM status is: 'CANCELLED", out), out[-3000:]
    assert (repo / PAIRS.format(task="cfm")).exists() and not (repo / target).exists()

    assert planned_jobs(repo, target) == {"amortized_ot_ground_truth": 1}  # the finished pairs job stays
    snakemake(repo, *CLUSTER_PROFILE, target, timeout=300)
    jobs = slurm_jobs(repo)
    rules = jobs["Comment"].str.extract(r"rule_(\w+?)_wildcards")[0]
    states = {rule: [s.split()[0] for s in group["State"]] for rule, group in jobs.groupby(rules)}  # 'CANCELLED by 0'

    assert states == {"amortized_ot_pairs": ["COMPLETED"], "amortized_ot_ground_truth": ["CANCELLED", "COMPLETED"]}
    assert (repo / target).stat().st_size > 0


def test_a_job_over_its_time_request_is_reported_with_slurms_reason(time_limit_run):
    repo, proc = time_limit_run
    out, _ = proc.communicate(timeout=400)
    assert proc.returncode != 0
    assert "SLURM status is: 'TIMEOUT'" in out, out[-3000:]
    assert "DUE TO TIME LIMIT" in out, out[-3000:]  # Slurm's own words, from the job's Slurm log
    [job] = slurm_jobs(repo).itertuples()
    assert job.Timelimit == "00:01:00" and job.State == "TIMEOUT"


def test_a_training_job_reaching_its_time_limit_is_resumed_by_the_retry_and_completes(preempted_training_run):
    repo, proc = preempted_training_run
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, out[-3000:]
    states = [s.split()[0] for s in slurm_jobs(repo)["State"]]
    assert len(states) >= 2 and states[-1] == "COMPLETED" and "TIMEOUT" in states[:-1], states
    log = repo / "results/smoke/amortized_ot/logs/fit/digits_metaot.log"
    resumed = re.findall(r"resuming from checkpoint .* at step (\d+) of 50", log.read_text())
    assert resumed, log.read_text()[-2000:]
    # the attempt Slurm stopped answered SIGTERM with the checkpoint the retry resumed from (its stderr is in
    # its Slurm log; the rule's log is rewritten by the retry)
    slurm_logs = "".join(p.read_text() for p in (repo / "logs/slurm").rglob("*.log"))
    stopped = re.findall(r"SIGTERM received; stopping at step (\d+)", slurm_logs)
    assert resumed[-1] in stopped, (resumed, stopped)
    assert (repo / METAOT).stat().st_size > 0
    assert not list((repo / "results/smoke/amortized_ot/models/digits").glob(".*.ckpt"))  # deleted when done
