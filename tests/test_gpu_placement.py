"""GPU requests match the code (issue 20): every rule that profiles/slurm gives a GPU places its model and data
on the job's device, and a test runs its training or sampling on a fake device (tests/fake_gpu.py), where a
tensor left on the CPU fails as it would on a GPU."""

from __future__ import annotations

import re

import pytest
import yaml

from conftest import ROOT
from neurips26.common.imports import library_files
from test_reruns_and_resume import RULE_LIBRARY, RULE_SCRIPTS

PROFILE = yaml.safe_load((ROOT / "profiles/slurm/config.yaml").read_text())
GPU_RULES = sorted(rule for rule, res in PROFILE["set-resources"].items() if res.get("gpu"))
MARKED = {
    name
    for path in (ROOT / "tests").glob("test_*.py")
    for name in re.findall(r"pytest\.mark\.gpu_rule\(\"(\w+)\"\)", path.read_text())
}


def test_the_profile_asks_for_gpus():
    assert GPU_RULES


@pytest.mark.parametrize("rule", GPU_RULES)
def test_a_gpu_rule_places_its_work_on_the_jobs_device(rule):
    assert rule in RULE_SCRIPTS, f"{rule}: in profiles/slurm but not a rule"
    files = RULE_LIBRARY[rule] | {RULE_SCRIPTS[rule]}
    assert any("job_device(" in (ROOT / f).read_text() for f in files if not f.endswith("common/loop.py")), (
        f"{rule} asks for a GPU but nothing its script reaches calls loop.job_device()"
    )


@pytest.mark.parametrize("rule", GPU_RULES)
def test_a_gpu_rule_is_run_on_a_fake_device_by_a_test(rule):
    assert rule in MARKED, f'no test marked @pytest.mark.gpu_rule("{rule}") runs {rule}\'s work under fake_gpu()'


@pytest.mark.parametrize(
    "rule", sorted(r for r, res in PROFILE["set-resources"].items() if "--signal" in str(res.get("slurm_extra", "")))
)
def test_a_rule_asking_for_sigterm_answers_it_with_a_checkpoint(rule):
    """Slurm's SIGTERM kills a script that does not handle it: only the shared loop's rules ask for it."""
    assert "src/neurips26/common/loop.py" in library_files(ROOT / RULE_SCRIPTS[rule], ROOT / "src")
