"""Provenance records python, snakemake and every package the job imported; a job's log gets the library's
records (common.runtime)."""

from __future__ import annotations

import logging
import sys
from importlib import metadata
from types import SimpleNamespace

from neurips26.common import provenance, runtime


def test_package_versions_name_every_imported_distribution_sorted_after_python():
    import yaml  # noqa: F401  (PyYAML, imported here if no earlier test did)

    versions = provenance.package_versions()
    names = list(versions)
    assert names[0] == "python" and names[1:] == sorted(names[1:], key=str.lower)
    assert versions["PyYAML"] == metadata.version("PyYAML") and versions["snakemake"] == metadata.version("snakemake")
    assert "neurips26" not in versions  # the project is named by its commit
    assert not set(names[1:]) & set(sys.stdlib_module_names)


def test_the_module_owners_agree_with_importlib_metadata():
    expected = metadata.packages_distributions()
    owners = provenance._module_owners()
    for module in {name.partition(".")[0] for name in list(sys.modules)} - set(sys.stdlib_module_names):
        assert sorted(owners.get(module, {})) == sorted(set(expected.get(module, []))), module


def test_the_provenance_line_lists_packages_as_name_equals_version():
    prov = {"git_commit": "abc", "config_hash": "123", "seed": 3, "packages": {"python": "3.11.7", "numpy": "2.0"}}
    line = provenance.provenance_line(prov)
    assert line.endswith("seed 3; python==3.11.7, numpy==2.0._")


def test_a_jobs_log_gets_its_own_and_every_library_modules_records_once(tmp_path):
    log_file = tmp_path / "job.log"
    job = SimpleNamespace(rule="some_rule", log=[str(log_file)], wildcards={}, threads=1)
    hook = sys.excepthook
    log = runtime.start_job(job)
    sys.excepthook = hook  # start_job's hook writes uncaught errors to the job's log; not wanted beyond this test
    log.info("from the script")
    logging.getLogger("neurips26.some_paper").info("from a paper's library")
    logging.getLogger("neurips26.download").info("from common")
    for handler in log.handlers:
        handler.flush()
    text = log_file.read_text()
    for message in ("from the script", "from a paper's library", "from common"):
        assert text.count(message) == 1, text
    for handler in log.handlers:  # leave no open file behind for later tests
        handler.close()
    logging.getLogger(runtime.LIBRARY_LOGGER).handlers = []


def test_a_job_caps_the_blas_and_openmp_pools_to_its_threads(tmp_path):
    from threadpoolctl import threadpool_info, threadpool_limits

    job = SimpleNamespace(rule="some_rule", log=[str(tmp_path / "job.log")], wildcards={}, threads=1)
    hook = sys.excepthook
    with threadpool_limits(limits=2):  # two threads before the job starts; undone when the test ends
        assert all(pool["num_threads"] == 2 for pool in threadpool_info())
        log = runtime.start_job(job)
        sys.excepthook = hook
        pools = threadpool_info()
        assert any(pool["internal_api"] == "openblas" for pool in pools)  # numpy's BLAS is loaded and capped
        assert all(pool["num_threads"] == 1 for pool in pools), pools
    for handler in log.handlers:
        handler.close()
    logging.getLogger(runtime.LIBRARY_LOGGER).handlers = []
