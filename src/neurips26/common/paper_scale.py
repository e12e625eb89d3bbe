"""The paper's settings beside our paper-scale config: workflow/report/<slug>/paper_scale.yaml, checked when the
workflow is parsed and rendered in each report's deviations.

A file lists rows (aspect, setting, the paper's value with where it is stated, `ours`: dotted key paths into the
config's `paper:` block, or `fixed:` text for a value fixed in code, and the reason for any difference). The report
reads our values from the config, so the `ours` column cannot drift from it (a reason such as "same" is text and
can). Plain Python: called while the workflow is parsed.
"""

from __future__ import annotations

import json

ASPECTS = ("model", "steps", "batch", "seeds", "data", "other")
REQUIRED = ("model", "steps", "batch", "seeds", "data")

__all__ = ["ASPECTS", "REQUIRED", "config_value", "paper_scale_paths", "paper_scale_rows"]


def config_value(block: dict, path: str):
    """The value at dotted key `path` of a config block; KeyError naming the first missing key."""
    value = block
    for depth, key in enumerate(path.split(".")):
        if not isinstance(value, dict) or key not in value:
            raise KeyError(f"{path}: no key {key!r} at {'.'.join(path.split('.')[:depth]) or 'the block'}")
        value = value[key]
    return value


def paper_scale_paths(spec: dict, block: dict) -> list[str]:
    """Check a paper_scale.yaml against the paper block (ValueError naming the row and the problem) and return
    the key paths its rows read, sorted."""
    rows = spec.get("rows") if isinstance(spec, dict) else None
    if not isinstance(spec, dict) or not str(spec.get("cite", "")).strip() or not rows:
        raise ValueError("needs `cite` (the paper and code read) and a list of `rows`")
    paths: set[str] = set()
    for i, row in enumerate(rows):
        where = f"row {i + 1} ({row.get('setting', '?')!r})"
        unknown = set(row) - {"aspect", "setting", "paper", "ours", "fixed", "reason"}
        if unknown:
            raise ValueError(f"{where}: unknown keys {sorted(unknown)}")
        if row.get("aspect") not in ASPECTS:
            raise ValueError(f"{where}: aspect must be one of {ASPECTS}, got {row.get('aspect')!r}")
        for key in ("setting", "paper", "reason"):
            if not str(row.get(key, "")).strip():
                raise ValueError(f"{where}: `{key}` is empty")
        ours = row.get("ours", [])
        if not isinstance(ours, list) or not all(isinstance(p, str) for p in ours):
            raise ValueError(f"{where}: `ours` must be a list of dotted key paths")
        if not ours and not str(row.get("fixed", "")).strip():
            raise ValueError(f"{where}: neither `ours` (config key paths) nor `fixed` (a value set in code)")
        for path in ours:
            try:
                config_value(block, path)
            except KeyError as error:
                raise ValueError(f"{where}: the paper block has no {error.args[0]}") from None
            paths.add(path)
    missing = [aspect for aspect in REQUIRED if aspect not in {row["aspect"] for row in rows}]
    if missing:
        raise ValueError(f"no row for the aspects {missing} (every table covers {REQUIRED})")
    return sorted(paths)


def _compact(value) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(", ", ": "))
    return str(value)


def paper_scale_rows(spec: dict, values: dict) -> list[dict]:
    """The table's rows: aspect, setting, the paper's value, ours (`path = value` from `values`, or the fixed
    text), the reason."""
    rows = []
    for row in spec["rows"]:
        ours = "; ".join(f"`{path}` = {_compact(values[path])}" for path in row.get("ours", []))
        if row.get("fixed"):
            ours = f"{ours}; {row['fixed']}" if ours else row["fixed"]
        rows.append(
            {
                "aspect": row["aspect"],
                "setting": row["setting"],
                "paper": row["paper"],
                "ours (the config's paper block)": ours,
                "reason": row["reason"],
            }
        )
    return rows
