"""Paper 06's stored data sets and results: the data sets (``data/{dataset}.parquet`` + ``.json``) written and read
back, the per-data-set result tables and the selection rankings read back."""

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


def read_results(paths) -> pd.DataFrame:
    """Stored result tables concatenated, without their provenance columns."""
    return pd.concat([pd.read_parquet(p).drop(columns=list(PROVENANCE_COLUMNS)) for p in paths], ignore_index=True)


def read_rankings(paths) -> dict[str, dict[str, list[str]]]:
    """``{dataset: {ranking: players}}`` from the stored ``{dataset}_rankings.json`` files."""
    return {str(path).rsplit("/", 1)[1].removesuffix("_rankings.json"): json.loads(open(path).read()) for path in paths}


def read_metas(paths) -> list[dict]:
    """The JSON objects stored beside the data sets (:func:`audit_meta`)."""
    return [json.loads(open(p).read()) for p in paths]
