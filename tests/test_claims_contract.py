"""The claims contract, checked statically for every paper (issue 19).

- Each paper has a claims file that follows the schema; every claim id in it is measured by the paper's library.
- The claims rule reads the claims file, and each claim's evidence names files that rule reads.
- No hard or soft claim rests only on files the pipeline makes without running an experiment: at least one of
  its evidence files is produced by one of the paper's experiment rules or downstream of one.
- Every claim has three verdict cases in its paper's claims tests: one where it holds, one where it fails, one
  where its evidence is missing or too thin and it is inconclusive.
"""

from __future__ import annotations

import fnmatch
import importlib
import re
from pathlib import Path

import pytest

from conftest import PAPERS, ROOT, copy_workflow, expect_config_error, snakemake
from neurips26.common.claims import VERDICTS, load_definitions
from neurips26.common.config import load_yaml

SCHEMA = ROOT / "workflow/schemas/claims.schema.yaml"


def claims_file(slug: str) -> Path:
    return ROOT / "config/claims" / f"{slug}.yaml"


def parse_dry_run(text: str) -> list[dict]:
    """Jobs of a Snakemake dry run: rule, inputs, outputs."""
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:\n)", text):
        head = re.match(r"(?:local)?rule (\w+):\n", block)
        if not head:
            continue
        files = {}
        for key in ("input", "output"):
            found = re.search(rf"^    {key}: (.*)$", block, re.M)
            files[key] = [f.strip() for f in found.group(1).split(",")] if found else []
        jobs.append({"rule": head.group(1), **files})
    return jobs


@pytest.fixture(scope="module")
def smoke_dag(tmp_path_factory) -> list[dict]:
    """Every job of the smoke scale, planned in a copy without results (so every job is listed)."""
    repo = copy_workflow(tmp_path_factory.mktemp("dag") / "repo")
    return parse_dry_run(snakemake(repo, "-n", "results/smoke/REPORT.md").stdout)


def test_the_dry_run_parser_reads_rules_and_files():
    text = (
        "rule a_train:\n    input: x.parquet, y.parquet\n    output: z.parquet\n    jobid: 1\n\n"
        "localrule b:\n    output: w\n"
    )
    assert parse_dry_run(text) == [
        {"rule": "a_train", "input": ["x.parquet", "y.parquet"], "output": ["z.parquet"]},
        {"rule": "b", "input": [], "output": ["w"]},
    ]


@pytest.mark.parametrize("slug", PAPERS)
def test_every_paper_has_a_valid_claims_file_naming_itself(slug):
    definitions = load_definitions(claims_file(slug), SCHEMA)
    data = load_yaml(claims_file(slug))
    assert data["paper"] == slug
    hard = [d for d in definitions if d.kind == "hard"]
    # a paper whose central claims quick scale cannot decide says why instead (issue 40: paper 09's D1 is soft)
    assert hard or data.get("no_hard_claim"), f"{slug} has no hard claim and does not say why (no_hard_claim)"
    assert not (hard and data.get("no_hard_claim")), f"{slug} has hard claims and says it has none"


@pytest.mark.parametrize("slug", PAPERS)
def test_every_defined_claim_is_measured_by_the_library(slug):
    source = (ROOT / "src/neurips26" / slug / "claims.py").read_text()
    literals = set(re.findall(r"""["']([A-Za-z][A-Za-z0-9_]*)["']""", source))
    missing = [d.claim_id for d in load_definitions(claims_file(slug), SCHEMA) if d.claim_id not in literals]
    assert not missing, f"{slug}: claims defined in the claims file but never named in its claims.py: {missing}"


def _producers(dag: list[dict]) -> dict[str, dict]:
    return {out: job for job in dag for out in job["output"]}


def _downstream_of_experiment(path: str, producers: dict[str, dict], experiments: set[str], seen: set[str]) -> bool:
    """Whether `path` is made by an experiment rule or (through its inputs) from the output of one."""
    if path in seen or path not in producers:
        return False
    seen.add(path)
    job = producers[path]
    if job["rule"] in experiments:
        return True
    return any(_downstream_of_experiment(p, producers, experiments, seen) for p in job["input"])


@pytest.mark.parametrize("slug", PAPERS)
def test_claims_read_their_evidence_and_hard_claims_rest_on_experiments(slug, smoke_dag):
    data = load_yaml(claims_file(slug))
    rules = {job["rule"] for job in smoke_dag}
    unknown = sorted(set(data["experiments"]) - rules)
    assert not unknown, f"{slug}: experiment rules not in the smoke DAG: {unknown}"
    (claims_job,) = [job for job in smoke_dag if job["rule"] == f"{slug}_claims"]
    assert f"config/claims/{slug}.yaml" in claims_job["input"], f"{slug}_claims does not read its claims file"
    prefix = f"results/smoke/{slug}/"
    read = [p[len(prefix) :] for p in claims_job["input"] if p.startswith(prefix)]
    producers = _producers(smoke_dag)
    for definition in load_definitions(claims_file(slug), SCHEMA):
        matched = {p for pattern in definition.evidence for p in fnmatch.filter(read, pattern)}
        unmatched = [pattern for pattern in definition.evidence if not fnmatch.filter(read, pattern)]
        assert not unmatched, f"{slug} {definition.claim_id}: evidence {unmatched} is not read by {slug}_claims"
        if definition.kind in ("hard", "soft"):
            assert any(
                _downstream_of_experiment(prefix + p, producers, set(data["experiments"]), set()) for p in matched
            ), (
                f"{slug} {definition.claim_id} is a {definition.kind} claim but none of its evidence "
                f"{sorted(matched)} comes from an experiment rule {data['experiments']}"
            )


@pytest.mark.parametrize("slug", PAPERS)
def test_every_claim_has_a_holds_a_fails_and_an_inconclusive_case(slug):
    module = importlib.import_module(f"test_{slug}_claims")
    cases = getattr(module, "VERDICT_CASES", None)
    assert cases, f"tests/test_{slug}_claims.py defines no VERDICT_CASES"
    source = Path(module.__file__).read_text()
    assert re.search(r"parametrize\([^)]*VERDICT_CASES", source), (
        f"test_{slug}_claims.py does not run its VERDICT_CASES"
    )
    covered = {(case[0], case[1]) for case in cases}
    assert {case[1] for case in cases} <= set(VERDICTS)
    missing = [
        (d.claim_id, v)
        for d in load_definitions(claims_file(slug), SCHEMA)
        for v in VERDICTS
        if (d.claim_id, v) not in covered
    ]
    assert not missing, f"{slug}: claims without a verdict case: {missing}"


def test_a_bad_or_missing_claims_file_stops_the_run_before_any_job(workflow_copy):
    path = workflow_copy / "config/claims/thresh_mcts.yaml"
    text = path.read_text()
    path.write_text(text.replace("kind: soft", "kind: strong", 1))
    expect_config_error(
        workflow_copy,
        "results/smoke/thresh_mcts/report.md",
        must_contain=("config/claims/thresh_mcts.yaml", "claims.2.kind", "allowed values"),  # M2a: the first soft
    )
    path.write_text(text.replace("paper: thresh_mcts", "paper: bird", 1))
    expect_config_error(workflow_copy, "results/smoke/thresh_mcts/report.md", must_contain=("'bird' should be",))
    path.unlink()
    expect_config_error(
        workflow_copy, "results/smoke/thresh_mcts/report.md", must_contain=("paper thresh_mcts has no claims file",)
    )
