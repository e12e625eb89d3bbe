"""Local runs without Snakemake's job rate limiter, whose re-evaluation timers multiply.

Snakemake 9.27 always rate-limits job starts (`--max-jobs-per-timespan`, default 100/1s; the command line cannot
unset it). With the limiter, every pass of the scheduler's loop starts a one-second timer that triggers another
pass, and every finished job triggers one more pass that starts its own timer, so the passes per second grow
with the number of jobs finished (snakemake/snakemake pull request 3744). Each pass stats every input of every
ready job and starts threads. In a local smoke run of two papers (39 jobs, 2 cores) Snakemake's own process
used 28.6 s of CPU with the limiter and 11.9 s without it (one pair of runs on a loaded machine, not replicated;
their wall times, 707 s and 424 s, say less). A local run starts at most `--cores` jobs at a time anyway, so it
drops the limiter; cluster runs keep it (it spares the batch system).
"""

from __future__ import annotations

import logging

log = logging.getLogger("neurips26.scheduling")


def unthrottle_local_scheduler(workflow) -> bool:
    """Drop the job rate limiter of a local run's scheduler (call from `onstart:`); True when dropped."""
    if not workflow.local_exec:
        return False
    scheduler = getattr(workflow, "scheduler", None)
    if scheduler is None or not hasattr(scheduler, "job_rate_limiter"):
        log.warning("Snakemake's scheduler has no job_rate_limiter (another Snakemake version?): left as it is")
        return False
    scheduler.job_rate_limiter = None
    return True
