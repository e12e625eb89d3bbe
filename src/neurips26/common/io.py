"""Atomic writes and Parquet tables that carry their provenance."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

PROVENANCE_KEY = b"neurips26.provenance"


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside `path`; rename it into place only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=path.suffix)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o644)  # mkstemp makes files private; outputs are for everyone to read
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def write_parquet(frame: pd.DataFrame, path: str | Path, prov: dict) -> None:
    """Write `frame` with `prov` (commit, config hash, seed, versions) in the schema metadata.

    The commit and config hash are also columns, so they survive concatenation of tables.
    """
    frame = frame.copy()
    # rows gathered from other tables keep the provenance they came with
    if "git_commit" not in frame:
        frame["git_commit"] = prov["git_commit"]
    if "config_hash" not in frame:
        frame["config_hash"] = prov["config_hash"]
    table = pa.Table.from_pandas(frame, preserve_index=False)
    meta = dict(table.schema.metadata or {})
    meta[PROVENANCE_KEY] = json.dumps(prov, default=str).encode()
    table = table.replace_schema_metadata(meta)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)


def read_provenance(path: str | Path) -> dict:
    meta = pq.read_schema(path).metadata or {}
    if PROVENANCE_KEY not in meta:
        raise ValueError(f"{path} carries no provenance metadata")
    return json.loads(meta[PROVENANCE_KEY])


def save_npz(path: str | Path, **arrays: np.ndarray) -> None:
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as handle:
            np.savez(handle, **arrays)


def load_npz(path: str | Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


def write_text(path: str | Path, text: str) -> None:
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text)
