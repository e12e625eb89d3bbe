"""Shared fixtures: a throwaway copy of the workflow, and a way to run Snakemake in it."""

from __future__ import annotations

import contextlib
import functools
import http.server
import inspect
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

if "PYTEST_XDIST_WORKER" in os.environ:  # one of make test's unit-test workers: one thread each, not one per core
    os.environ.setdefault("OMP_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
COPIED = ("workflow", "rules", "scripts", "config", "src", "profiles", "envs")
TIMINGS: list[str] = []  # wall times of the expensive fixtures, printed at the end of the test run


def pytest_terminal_summary(terminalreporter):
    if TIMINGS:
        terminalreporter.section("workflow and cluster timings")
        for line in TIMINGS:
            terminalreporter.write_line(line)


@contextlib.contextmanager
def mirror(repo: Path, folder: str, files: dict[str, bytes], served: Path):
    """Serve `files` from `served` on 127.0.0.1 as the mirror of registry folder `folder` of the workflow copy
    `repo` (config.yaml `mirrors:`), for the duration of the block."""
    served.mkdir(parents=True, exist_ok=True)
    for name, payload in files.items():
        (served / name).write_bytes(payload)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        config = repo / "config/config.yaml"
        config.write_text(config.read_text() + f"mirrors:\n  {folder}: http://127.0.0.1:{server.server_port}/\n")
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def copy_workflow(dest: Path) -> Path:
    """The workflow's files in `dest`, without results or caches, so a test can change and break them."""
    for name in COPIED:
        shutil.copytree(ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dest


@pytest.fixture
def workflow_copy(tmp_path: Path) -> Path:
    return copy_workflow(tmp_path / "repo")


def snakemake(
    cwd: Path, *args: str, check: bool = True, timeout: float = 900, env: dict | None = None
) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(cwd / "src"), **(env or {}))
    proc = subprocess.run([SNAKEMAKE, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc


def expect_config_error(repo: Path, *args: str, must_contain: tuple[str, ...]):
    """A dry run of `args` in `repo` fails before any job, and its message contains every piece."""
    out = snakemake(repo, "-n", *args, check=False)
    text = out.stdout + out.stderr
    assert out.returncode != 0, "the bad config was accepted"
    assert "Select jobs to execute" not in text and "Finished jobid" not in text  # stopped before any job
    for piece in must_contain:
        assert piece in text, f"{piece!r} not in:\n{text[-3000:]}"


def planned_jobs(cwd: Path, *targets: str, config: tuple[str, ...] = ()) -> dict[str, int]:
    """The job counts per rule of a dry run (Snakemake's own 'Job stats' table)."""
    args = ["-n", *targets]
    if config:
        args += ["--config", *config]
    out = snakemake(cwd, *args).stdout
    if "Nothing to be done" in out:
        return {}
    table = out.split("Job stats:")[1].split("total")[0]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\S+)\s+(\d+)\s*$", table, re.M)}


PAPERS = sorted(
    p.stem
    for p in (ROOT / "rules").glob("*.smk")
    if p.stem not in {"common", "corpus", "download", "plan", "scoreboard"}
)
SMOKE_TARGETS = (*(f"results/smoke/{slug}/report.md" for slug in PAPERS), "results/smoke/REPORT.md")
SMOKE_PAPERS: list[str] = list(PAPERS)  # narrowed by --papers in pytest_configure, before collection

# a test runs Snakemake (a dry run or a real one) when it uses one of these fixtures or calls one of these helpers
_WORKFLOW_FIXTURES = {"smoke_run", "pristine_smoke", "workflow_copy", "slurm_cluster", "smoke_dag"}
_WORKFLOW_CALLS = re.compile(
    r"\b(snakemake|planned_jobs|expect_config_error|copy_workflow|planned_resources)\(|\[SNAKEMAKE\b"
)


def pytest_addoption(parser):
    parser.addoption(
        "--papers",
        default="",
        help="comma-separated paper slugs: the smoke fixture runs only these papers, tests of other papers are skipped",
    )


def pytest_configure(config):
    for slug in PAPERS:
        config.addinivalue_line("markers", f"{slug}: a test of paper {slug} (from its file name or @pytest.mark.paper)")
    chosen = [s for s in config.getoption("--papers").split(",") if s]
    unknown = sorted(set(chosen) - set(PAPERS))
    if unknown:
        raise pytest.UsageError(f"--papers: unknown paper(s) {unknown}; the papers are {PAPERS}")
    if chosen:
        SMOKE_PAPERS[:] = sorted(chosen)


def smoke_targets() -> list[str]:
    """The smoke reports of the chosen papers, and the scoreboard when every paper is chosen."""
    reports = [f"results/smoke/{slug}/report.md" for slug in SMOKE_PAPERS]
    return reports + (["results/smoke/REPORT.md"] if SMOKE_PAPERS == PAPERS else [])


def _paper_of(item) -> str | None:
    """A test's paper: @pytest.mark.paper("slug"), a `slug` parameter, or its file name test_<slug>_*.py."""
    marker = item.get_closest_marker("paper")
    if marker:
        return marker.args[0]
    callspec = getattr(item, "callspec", None)
    if callspec and callspec.params.get("slug") in PAPERS:
        return callspec.params["slug"]
    name = Path(str(item.fspath)).stem.removeprefix("test_")
    return next((slug for slug in PAPERS if name.startswith(slug + "_")), None)


def pytest_collection_modifyitems(config, items):
    """Markers from what a test does: `workflow` on every test that runs Snakemake, the paper's own marker
    (`pytest -m bird`); with --papers, tests of the other papers are skipped."""
    for item in items:
        function = getattr(item, "function", None)
        source = inspect.getsource(function) if function else ""
        if _WORKFLOW_FIXTURES & set(getattr(item, "fixturenames", ())) or _WORKFLOW_CALLS.search(source):
            item.add_marker(pytest.mark.workflow)
        paper = _paper_of(item)
        if paper:
            item.add_marker(getattr(pytest.mark, paper))
            if paper not in SMOKE_PAPERS:
                item.add_marker(pytest.mark.skip(reason=f"paper {paper} is not among --papers {SMOKE_PAPERS}"))


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory) -> Path:
    """One local smoke run of every paper in a throwaway copy, shared by the workflow tests (which change
    it) and the cluster test (which compares against `pristine_smoke`, a copy taken right after)."""
    repo = copy_workflow(tmp_path_factory.mktemp("smoke") / "repo")
    started = time.monotonic()
    snakemake(repo, "-c2", *smoke_targets())
    TIMINGS.append(f"local smoke run of {SMOKE_PAPERS}: {time.monotonic() - started:.0f} s")
    shutil.copytree(repo / "results", repo.parent / "pristine_results")
    return repo


@pytest.fixture(scope="session")
def pristine_smoke(smoke_run) -> Path:
    """The results of the local smoke run as it left them, whatever the workflow tests did since."""
    return smoke_run.parent / "pristine_results"


@pytest.fixture(scope="session")
def slurm_cluster():
    """A one-node SLURM cluster with accounting on this machine, started for the cluster tests and stopped
    after them (cluster/start_local_slurm.sh: installs Debian's packages if missing; needs root)."""
    if os.geteuid() != 0:
        pytest.fail(
            "the cluster tests start a local SLURM cluster and need root; run `pytest -m 'not cluster'` otherwise"
        )
    started = time.monotonic()
    start = subprocess.run([str(ROOT / "cluster/start_local_slurm.sh")], capture_output=True, text=True, timeout=900)
    if start.returncode != 0:
        pytest.fail(f"the local SLURM cluster did not start:\n{start.stdout}\n{start.stderr}")
    TIMINGS.append(f"local SLURM cluster started in {time.monotonic() - started:.0f} s: {start.stderr.strip()}")
    yield
    subprocess.run([str(ROOT / "cluster/stop_local_slurm.sh")], capture_output=True, timeout=300)


def crash_after_step(monkeypatch, step: int) -> None:
    """Make the shared training loop die (KeyboardInterrupt) right after `step` steps, as a killed job would; undo
    with monkeypatch.undo() before the resumed run."""
    from neurips26.common import loop

    done = []

    def crash():
        done.append(1)
        if len(done) == step:
            raise KeyboardInterrupt

    monkeypatch.setattr(loop.faults, "step_done", crash)


def assert_keeps_shapes(block: dict, paper: dict, paths) -> None:
    """Every dotted path of ``paths`` (a shape the rehearsal must not cut) holds the same value in a derived
    rehearsal block as in the paper block."""
    for path in paths:
        mine, theirs = block, paper
        for key in path.split("."):
            mine, theirs = mine[key], theirs[key]
        assert mine == theirs, path


def written_fixture(tmp_path: Path, payloads: dict[str, bytes], path: str) -> Path:
    """A rehearsal fixture (``payloads``: source path -> bytes) written under ``tmp_path`` by its file name."""
    out = tmp_path / path.rpartition("/")[2]
    out.write_bytes(payloads[path])
    return out
