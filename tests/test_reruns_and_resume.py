"""On a copy of the finished smoke run: editing a library module reruns exactly the jobs whose scripts reach
it, and every training rule killed after its first checkpoint resumes to the same results (issue 20)."""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from conftest import PAPERS, ROOT, SMOKE_PAPERS, smoke_targets, snakemake
from neurips26.common.imports import library_files

sys.path.insert(0, str(ROOT / "tools"))
from profile_imports import rule_scripts  # noqa: E402

LOOP = "src/neurips26/common/loop.py"
TIMING = re.compile(r"seconds|_time|time_|wall|elapsed|duration|git_commit|per_s(econd)?\b|per_second", re.I)


RULE_SCRIPTS = rule_scripts()
RULE_LIBRARY = {rule: set(library_files(ROOT / script, ROOT / "src")) for rule, script in RULE_SCRIPTS.items()}
TRAINING_RULES = sorted(
    rule
    for rule, script in RULE_SCRIPTS.items()  # scripts that set up the shared loop
    if "LoopSettings(" in (ROOT / script).read_text()
)


@pytest.fixture(scope="module")
def smoke_copy(smoke_run, tmp_path_factory) -> Path:
    """The finished smoke run (results, Snakemake's records, mtimes) copied, so these tests may change it."""
    dest = tmp_path_factory.mktemp("mechanisms") / "repo"
    shutil.copytree(smoke_run, dest, symlinks=True)
    return dest


def reasons(repo: Path, *targets: str) -> dict[str, set[str]]:
    """Snakemake's dry-run summary of reasons: reason -> rules (empty when nothing is to be done)."""
    out = snakemake(repo, "-n", *targets).stdout
    if "Nothing to be done" in out:
        return {}
    found: dict[str, set[str]] = {}
    section = out.split("Reasons:")[1].split("This was a dry-run")[0]
    for reason, rules in re.findall(r"^    (\S[^\n:]*):\n        ([^\n]+)", section, re.M):
        found[reason.strip()] = {r.strip() for r in rules.split(",")}
    return found


def smoke_rules(repo: Path) -> set[str]:
    summary = snakemake(repo, "--summary", *TARGETS).stdout
    return {line.split("\t")[2] for line in summary.splitlines()[1:] if line.count("\t") >= 3}


TARGETS = tuple(smoke_targets())  # every paper, or those chosen with --papers


def edited(repo: Path, module: str) -> dict[str, set[str]]:
    """The dry run's reasons after a comment is added to `module` (Snakemake compares the content of small
    inputs with the checksum it recorded, so a mere touch does not count); the file is restored after."""
    path = repo / module
    text, stat = path.read_text(), path.stat()
    try:
        path.write_text(text + "\n# an edit\n")  # now: newer than every output of the smoke run
        return reasons(repo, *TARGETS)
    finally:
        path.write_text(text)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_editing_a_library_module_reruns_exactly_the_jobs_whose_scripts_reach_it(smoke_copy):
    if SMOKE_PAPERS != PAPERS:
        pytest.skip("edits modules of several papers: needs every paper's smoke run")
    assert reasons(smoke_copy, *TARGETS) == {}, "the smoke run is not complete"
    in_dag = smoke_rules(smoke_copy)
    usage = {}
    for files in (RULE_LIBRARY[r] for r in in_dag if r in RULE_LIBRARY):
        for f in files:
            usage[f] = usage.get(f, 0) + 1
    paper_module = "src/neurips26/symm_optim/optimizers.py"  # reached only through relative imports
    common_module = min(
        (f for f in usage if "/common/" in f and f.endswith(".py") and not f.endswith("__init__.py")),
        key=lambda f: (usage[f], f),
    )
    for module in ("src/neurips26/thresh_mcts/theory.py", paper_module, common_module):
        expected = {r for r in in_dag if module in RULE_LIBRARY.get(r, ())}
        assert expected and expected != in_dag, module
        found = edited(smoke_copy, module)
        planned = set().union(*found.values()) if found else set()
        updated = found.get("updated input files", set())
        # each rule whose script reaches the module is planned, those with no rerun upstream of them for this
        # very reason (Snakemake names one reason per job); every other planned job is downstream of them
        assert updated and updated <= expected <= planned, (module, expected, found)
        assert set(found) <= {"updated input files", "input files updated by another job"}, found
    outside = smoke_copy / "src/neurips26/common/unreached_probe.py"
    outside.write_text('"""A module no script imports."""\n')
    try:
        assert reasons(smoke_copy, *TARGETS) == {}
    finally:
        outside.unlink()


EXEMPT = "does not use the shared training loop"  # a module that backpropagates outside it says why, so


def test_every_library_module_that_trains_runs_in_the_shared_loop():
    trainers = {
        f for files in RULE_LIBRARY.values() for f in files if re.search(r"\.backward\(", (ROOT / f).read_text())
    }
    assert trainers
    uses_loop = re.compile(r"^from neurips26\.common import [^\n]*\bloop\b|neurips26\.common\.loop", re.M)
    outside = sorted(
        f for f in trainers if not uses_loop.search((ROOT / f).read_text()) and EXEMPT not in (ROOT / f).read_text()
    )
    assert not outside, f"modules that train outside common.loop without saying why ('{EXEMPT}'): {outside}"
    assert TRAINING_RULES


def _same(a, b, where: str) -> None:
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), where
        for key in a:
            if not TIMING.search(str(key)):
                _same(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]")
    elif torch.is_tensor(a):
        assert torch.equal(a, b), where
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b, err_msg=where)
    elif isinstance(a, str) and isinstance(b, str) and a.startswith("{") and b.startswith("{"):
        import json  # settings stored as a JSON string inside a checkpoint (their training seconds are wall clock)

        _same(json.loads(a), json.loads(b), where)
    elif isinstance(a, float) and np.isnan(a):
        assert isinstance(b, float) and np.isnan(b), where
    else:
        assert a == b, where


def same_output(path: Path, reference: Path) -> None:
    if path.suffix == ".parquet":
        a, b = pd.read_parquet(path), pd.read_parquet(reference)
        keep = [c for c in a.columns if not TIMING.search(c)]
        pd.testing.assert_frame_equal(a[keep], b[keep], check_exact=True, obj=str(path))
    elif path.suffix in (".pt", ".pth"):
        _same(torch.load(path, weights_only=True), torch.load(reference, weights_only=True), path.name)
    elif path.suffix == ".npz":
        with np.load(path) as a, np.load(reference) as b:
            _same(dict(a), dict(b), path.name)
    elif path.suffix == ".json":
        import json

        _same(json.loads(path.read_text()), json.loads(reference.read_text()), path.name)
    else:
        assert path.read_bytes() == reference.read_bytes(), path


def test_each_training_rule_killed_after_its_first_checkpoint_resumes_to_the_same_results(
    smoke_copy, pristine_smoke, tmp_path
):
    summary = snakemake(smoke_copy, "--summary", *TARGETS).stdout.splitlines()
    outputs: dict[str, list[tuple[str, str]]] = {}
    for line in summary[1:]:
        fields = line.split("\t")
        if len(fields) >= 4 and fields[2] in TRAINING_RULES:
            outputs.setdefault(fields[2], []).append((fields[0], fields[3]))
    by_script: dict[str, list[str]] = {}
    chosen = [r for r in TRAINING_RULES if any(r.startswith(slug + "_") for slug in SMOKE_PAPERS)]
    if not chosen:
        pytest.skip(f"no training rule among the papers {SMOKE_PAPERS}")
    for rule in chosen:  # seed replicates run their rule's script: one job per training script
        by_script.setdefault(RULE_SCRIPTS[rule], []).append(rule)
    missing = [script for script, rules in by_script.items() if not set(rules) & set(outputs)]
    assert not missing, f"training scripts without a smoke job: {missing}"
    targets = {min(set(rules) & set(outputs)): None for rules in by_script.values()}
    targets = {rule: outputs[rule][0] for rule in targets}
    markers = tmp_path / "killed"
    run = snakemake(
        smoke_copy,
        "-c2",
        *[out for out, _ in targets.values()],
        "--retries",
        "1",
        "--forcerun",
        *sorted(targets),
        env={"NEURIPS26_TEST_FAULT": f"{','.join(sorted(targets))}:kill_after_checkpoint:{markers}"},
    )
    killed = len(list(markers.glob("*.killed")))
    assert killed == len(targets), (
        f"{killed} of {len(targets)} jobs were killed after a checkpoint\n{run.stderr[-3000:]}"
    )
    for rule, (_output, log) in sorted(targets.items()):
        job_outputs = [o for o, job_log in outputs[rule] if job_log == log]  # every output of the same job
        for out in job_outputs:
            same_output(smoke_copy / out, pristine_smoke / Path(out).relative_to("results"))
        text = (smoke_copy / log).read_text() if log and (smoke_copy / log).is_file() else ""
        assert re.search(r"resuming from checkpoint .* at step \d+", text), f"{rule}: no resume in {log}"
