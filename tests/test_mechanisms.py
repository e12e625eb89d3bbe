"""The workflow's promises as mechanisms (issue 20): per-step params, scoped wildcards, library imports as
inputs, errors in the rule's log, YAML numbers, cheap parsing."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from modulefinder import ModuleFinder
from pathlib import Path

import jsonschema
import pytest

from conftest import ROOT, SNAKEMAKE, snakemake
from neurips26.common.config import load_yaml
from neurips26.common.imports import library_files, reached

RULE_FILES = sorted((ROOT / "rules").rglob("*.smk"))
SCRIPTS = sorted((ROOT / "scripts").rglob("*.py"))


def test_no_rule_takes_a_whole_paper_block():
    whole = re.compile(r"paper_params\(\s*\"[a-z_0-9]+\"\s*\)")
    found = [
        f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}"
        for path in RULE_FILES
        for text in [path.read_text()]
        for m in whole.finditer(text)
    ]
    assert not found, f"params holding a whole paper block (name the keys the script reads): {found}"


def test_scripts_read_the_config_only_through_their_params():
    offenders = [
        str(p.relative_to(ROOT))
        for p in SCRIPTS
        if re.search(r"snakemake\.config|config/[a-z_]+\.yaml|load_yaml\(", p.read_text())
    ]
    assert not offenders, f"scripts reading the config outside snakemake.params: {offenders}"


def test_wildcard_constraints_sit_on_rules_except_in_common():
    top_level = [
        str(p.relative_to(ROOT))
        for p in RULE_FILES
        if p.name != "common.smk" and re.search(r"^wildcard_constraints:", p.read_text(), re.M)
    ]
    assert not top_level, f"global wildcard_constraints constrain every paper's rules: {top_level}"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT / "scripts")))
def test_the_library_files_a_rule_depends_on_are_those_python_finds_from_its_script(script):
    """The fast scan that gives rules their library inputs, and the syntax-tree walk of the env test, against
    the standard library's own import finder (relative imports, lazy imports inside functions, packages)."""
    src = (ROOT / "src").resolve()
    finder = ModuleFinder(path=[str(src)])
    finder.run_script(str(script))
    truth = sorted(
        str(Path(m.__file__).resolve().relative_to(ROOT))
        for name, m in finder.modules.items()
        if name.split(".")[0] == "neurips26" and m.__file__
    )
    assert truth, "the script imports nothing of the library"
    assert library_files(script, ROOT / "src") == truth
    assert sorted(str(f.relative_to(ROOT)) for f in reached(script, src)[0]) == truth


def test_a_config_number_written_with_an_exponent_and_no_dot_is_a_number(tmp_path):
    """As users write it (`lr: 1e-3`), not only as PyYAML 1.1 wants it (`lr: 1.0e-3`)."""
    path = tmp_path / "amortix.yaml"
    text = (ROOT / "config/amortix.yaml").read_text()
    assert re.search(r"lr: [0-9]+\.0e-[0-9]+", text), "the test needs an lr written with an exponent"
    path.write_text(re.sub(r"lr: ([0-9]+)\.0e-([0-9]+)", r"lr: \1e-\2", text))
    assert re.search(r"lr: [0-9]+e-[0-9]+,", path.read_text())
    data = load_yaml(path)
    jsonschema.validate(data, load_yaml(ROOT / "workflow/schemas/amortix.schema.yaml"))
    assert data == load_yaml(ROOT / "config/amortix.yaml")
    (tmp_path / "x.yaml").write_text("a: 5e-2\nb: '5e-2'\nc: 1E3\nd: 7\n")
    assert load_yaml(tmp_path / "x.yaml") == {"a": 0.05, "b": "5e-2", "c": 1000.0, "d": 7}


def test_an_uncaught_error_lands_with_its_traceback_in_the_rules_log(workflow_copy, tmp_path):
    target = "results/smoke/thresh_mcts/instances.parquet"
    run = snakemake(
        workflow_copy,
        "-c1",
        target,
        check=False,
        env={"NEURIPS26_TEST_FAULT": f"thresh_mcts_instances:fail_once:{tmp_path}"},
    )
    assert run.returncode != 0
    log = (workflow_copy / "results/smoke/thresh_mcts/logs/instances.log").read_text()
    assert "Traceback (most recent call last)" in log and "InjectedFault" in log, log
    assert "Traceback" in run.stdout + run.stderr  # --show-failed-logs prints it to the user


def test_the_workflow_parses_and_plans_the_quick_dag_within_seconds():
    """About 5 s on 2 cores (README, Caching and reruns: Parsing cost); the bound is generous, for loaded
    CI machines and for the Slurm plugin's `scontrol` call at import."""
    started = time.perf_counter()
    run = subprocess.run(
        [SNAKEMAKE, "-n", "--config", "scale=quick", "--quiet", "all"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    seconds = time.perf_counter() - started
    assert run.returncode == 0, run.stderr[-3000:]
    assert seconds < 30, f"a dry run of the quick DAG took {seconds:.1f} s"


PARSE_IMPORTS = """
import sys
from pathlib import Path
from snakemake.api import SnakemakeApi
from snakemake.settings.types import ConfigSettings, DAGSettings, OutputSettings, Quietness, ResourceSettings
before = set(sys.modules)
api = SnakemakeApi(OutputSettings(quiet={Quietness.ALL})).__enter__()
workflow_api = api.workflow(resource_settings=ResourceSettings(cores=1), config_settings=ConfigSettings(
    config={"scale": "quick"}), snakefile=Path("workflow/Snakefile"), workdir=Path("."))
workflow_api.dag(DAGSettings(targets={"all"}))
workflow = workflow_api._workflow
workflow._prepare_dag(forceall=True, ignore_incomplete=True, lock_warn_only=True, nolock=True)
workflow._build_dag()
print(" ".join(sorted(m for m in set(sys.modules) - before if "." not in m)))
"""


@pytest.mark.workflow  # parses the workflow through Snakemake's API
def test_parsing_and_planning_the_workflow_imports_no_heavy_library():
    """What parsing the rules and planning the quick DAG imports beyond Snakemake itself (the config checks
    and params functions run at parse time included) stays light: no torch, scikit-learn, POT, optuna, pandas."""
    run = subprocess.run([sys.executable, "-c", PARSE_IMPORTS], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    added = set(run.stdout.split())
    assert "neurips26" in added
    heavy = added & {"torch", "sklearn", "ot", "optuna", "pandas", "pyarrow", "matplotlib", "tokenizers"}
    assert not heavy, f"parsing imports {sorted(heavy)}"


def rerun_scope(repo: Path, *papers: str) -> dict:
    run = subprocess.run(
        [sys.executable, str(ROOT / "tests/rerun_scope.py"), str(repo), "quick", *papers],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_the_rerun_scope_check_catches_a_params_function_that_reads_an_undeclared_key(workflow_copy):
    rules = workflow_copy / "rules/thresh_mcts.smk"
    text = rules.read_text()
    simulate = text.index("rule thresh_mcts_simulate:")
    declared = 'runs=paper_params("thresh_mcts", "runs"),'
    at = text.index(declared, simulate)
    assert at < text.index("\nrule ", simulate + 1)  # the simulate rule's own param
    undeclared = 'runs=lambda wc: paper_config("thresh_mcts", wc.scale)["runs"],'
    rules.write_text(text[:at] + undeclared + text[at + len(declared) :])
    report = rerun_scope(workflow_copy, "thresh_mcts")["thresh_mcts"]
    assert {(tuple(v["key"]), v["rule"]) for v in report["violations"]} == {(("runs",), "thresh_mcts_simulate")}


def test_a_changed_config_key_reruns_only_the_rules_that_carry_it(workflow_copy):
    """A seeded sample of the leaf keys of every paper's quick config (every key path a rule declares, and
    more), changed one at a time (tests/rerun_scope.py; NEURIPS26_RERUN_KEYS=all tests every key)."""
    report = rerun_scope(workflow_copy)
    lines, problems = [], []
    for slug, result in report.items():
        if "error" in result:
            problems.append(f"{slug}: {result['error']}")
            continue
        lines.append(
            f"{slug}: {len(result['tested'])} keys tested, {len(result['refused'])} refused, "
            f"{len(result['uncovered'])} declared paths not reached at quick scale"
        )
        problems += [
            f"{slug}: {'.'.join(v['key'])} reruns {v['rule']} (carries {v['declared']})" for v in result["violations"]
        ]
        assert result["tested"], f"{slug}: no key could be tested"
    print("\n".join(lines))
    assert not problems, "\n".join(problems)
