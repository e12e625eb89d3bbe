"""Paper 12's config checks that the schema cannot express (run at parse time, before any job)."""

from __future__ import annotations

import json
from pathlib import Path

from neurips26.thresh_mcts import instances


def check_config(cfg: dict, root: Path) -> None:
    """Raise ValueError naming the first problem: duplicate instance ids, an unreadable or invalid user tree
    file (a cycle, a shared child, an unlabelled internal node, means outside [0, 1], theta equal to the root
    value), or a per-round cost sweep that cannot fit a slope."""
    names = [
        f"{name}_gauss" if kind == "gaussian" else name
        for kind in cfg["instances"]["kinds"]
        for name in cfg["instances"]["fixed"]
    ]
    names += [spec["id"] for spec in cfg["instances"]["random"]]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"instances: duplicate instance ids {duplicates}")
    user_file = cfg["instances"].get("user_file")
    if user_file:
        path = Path(user_file) if Path(user_file).is_absolute() else root / user_file
        if not path.exists():
            raise ValueError(f"instances.user_file: {path} does not exist")
        try:
            records = json.loads(path.read_text())
        except json.JSONDecodeError as error:
            raise ValueError(f"instances.user_file: {path} is not valid JSON ({error})") from None
        for i, record in enumerate(records if isinstance(records, list) else [records]):
            try:
                instances.validate_instance(record)
            except (ValueError, KeyError, TypeError) as error:
                raise ValueError(
                    f"instances.user_file: instance {i} ({record.get('id', '?')!r}) in {path}: {error}"
                ) from None
    if len(cfg["cost"]["depths"]) < 2:
        raise ValueError("cost.depths: need at least two tree sizes to fit a slope")
