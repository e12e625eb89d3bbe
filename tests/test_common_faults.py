"""The test faults of neurips26.common.faults: kill_after_checkpoint kills a job once per rule."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import sys
from neurips26.common import faults
faults.inject_fault("paper_train")
for path in sys.argv[1:]:
    faults.checkpoint_written(path)
print("survived")
"""


def _job(markers: Path, *checkpoints: str, rule: str = "paper_train") -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), NEURIPS26_TEST_FAULT=f"{rule}:kill_after_checkpoint:{markers}")
    return subprocess.run([sys.executable, "-c", SCRIPT, *checkpoints], env=env, capture_output=True, text=True)


def test_a_job_writing_several_checkpoints_is_killed_once_and_its_rerun_completes(tmp_path):
    first = _job(tmp_path / "markers", "runs/a.ckpt", "runs/b.ckpt", "runs/c.ckpt")
    assert first.returncode == -signal.SIGKILL and "survived" not in first.stdout
    rerun = _job(tmp_path / "markers", "runs/a.ckpt", "runs/b.ckpt", "runs/c.ckpt")  # later runs' checkpoints too
    assert rerun.returncode == 0 and "survived" in rerun.stdout


def test_a_fault_aimed_at_another_rule_leaves_the_job_alone(tmp_path):
    other = _job(tmp_path / "markers", "runs/a.ckpt", rule="other_train")
    assert other.returncode == 0 and "survived" in other.stdout
