"""Local runs drop Snakemake's job rate limiter (neurips26.common.scheduling); cluster runs keep it."""

from __future__ import annotations

import inspect
from types import SimpleNamespace

from snakemake.scheduling.job_scheduler import JobScheduler

from neurips26.common.scheduling import unthrottle_local_scheduler


def fake_workflow(local: bool, scheduler=None):
    return SimpleNamespace(local_exec=local, scheduler=scheduler)


def test_a_local_run_loses_the_limiter_and_a_cluster_run_keeps_it():
    local = fake_workflow(True, SimpleNamespace(job_rate_limiter=object()))
    assert unthrottle_local_scheduler(local) and local.scheduler.job_rate_limiter is None
    limiter = object()
    cluster = fake_workflow(False, SimpleNamespace(job_rate_limiter=limiter))
    assert not unthrottle_local_scheduler(cluster) and cluster.scheduler.job_rate_limiter is limiter


def test_a_scheduler_without_the_attribute_is_left_alone_with_a_warning(caplog):
    scheduler = SimpleNamespace()
    assert not unthrottle_local_scheduler(fake_workflow(True, scheduler))
    assert not hasattr(scheduler, "job_rate_limiter") and "job_rate_limiter" in caplog.text


def test_the_pinned_snakemake_supports_a_scheduler_without_limiter():
    """The pinned Snakemake's scheduler has the branch for no limiter (its API's default), and re-evaluates on a
    timer only when a limiter is set: what dropping it relies on."""
    selector = inspect.getsource(JobScheduler.job_selector)
    assert "if self.job_rate_limiter is None:" in selector
    loop = inspect.getsource(JobScheduler.schedule)
    assert "if self.job_rate_limiter is not None:" in loop and "_schedule_reevalutation(self.job_rate_limiter" in loop
