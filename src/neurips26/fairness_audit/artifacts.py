"""Reading back the stored data sets of paper 06 (``data/{dataset}.parquet`` + ``.json``)."""

from __future__ import annotations

import json

import pandas as pd

from .data import AuditData

PROVENANCE_COLUMNS = ("git_commit", "config_hash")


def audit_meta(data: AuditData, params: dict) -> str:
    """The JSON stored beside a data set: AuditData's own meta and how the data set was made."""
    return json.dumps({"audit": data.to_frame()[1], "params": params}, indent=1, sort_keys=True, default=float)


def load_audit_data(frame_path, meta_path) -> tuple[AuditData, dict]:
    meta = json.loads(open(meta_path).read())
    frame = pd.read_parquet(frame_path).drop(columns=list(PROVENANCE_COLUMNS), errors="ignore")
    return AuditData.from_frame(frame, meta["audit"]), meta["params"]
