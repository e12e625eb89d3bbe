"""The code is ruff clean (the settings are in pyproject.toml); `make lint` runs the same commands."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUFF = str(Path(sys.executable).with_name("ruff"))
TREES = ("src", "scripts", "tests", "tools")


def test_ruff_finds_nothing_to_fix():
    out = subprocess.run([RUFF, "check", *TREES], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]


def test_ruff_format_would_change_nothing():
    out = subprocess.run([RUFF, "format", "--check", *TREES], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
