"""The fingerprint of a job, which ties a checkpoint to the job that wrote it (see neurips26.common.loop).

A checkpoint written by a run with other params or inputs carries another fingerprint and is ignored
rather than resumed.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path


def fingerprint(params: dict, inputs: list[str]) -> str:
    """Hash of a job's parameters and of its input files' sizes and modification times."""
    files = [(str(p), Path(p).stat().st_size, Path(p).stat().st_mtime_ns) for p in inputs]
    text = json.dumps([params, files], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()
