"""The small model as a grader: every member of a trained ensemble solves and grades items through the harness
(:mod:`.grading`) as the local backend (:mod:`.local_backend`); backend name ``small_<regime>``."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import torch

from neurips26.common.ensemble import Ensemble

from .backends import Reply
from .decoding import GradeOutput
from .grading import run_backend
from .items import Item
from .local_backend import LocalBackend, invalid_verdict
from .small_model import member_keys
from .training import Member
from .vocabulary import Vocabulary

__all__ = ["backend_name", "grade_members"]


def backend_name(member: Member) -> str:
    return f"small_{member.regime}"


def grade_members(
    ensemble: Ensemble,
    vocab: Vocabulary,
    members: Sequence[Member],
    items: Sequence[Item],
    max_new: int,
    graded: GradeOutput | None = None,
) -> pd.DataFrame:
    """Every member's results rows (the harness's table, :func:`.grading.run_backend`) on `items`: solving their
    problems greedily and grading every item with the verdict constrained to 0-3, plus the member columns and
    ``invalid_verdict`` (a grade row whose unconstrained word is not a verdict; False on solve rows). ``graded``:
    :func:`.decoding.grade` of every member on ``render(item)`` of `items` in order, read instead of grading again."""
    if graded is not None and tuple(graded.grades.shape) != (len(members), len(items)):
        raise ValueError(f"graded holds {tuple(graded.grades.shape)} grades, not {len(members)} members x {len(items)}")
    frames = []
    for index, member in enumerate(members):
        with torch.no_grad():
            model = ensemble.module(index)
        known = None
        if graded is not None:
            pairs = zip(graded.grades[index].tolist(), graded.free[index].tolist())
            known = {item.item_id: pair for item, pair in zip(items, pairs)}
        backend = LocalBackend(model, vocab, backend_name(member), max_new=max_new, known=known)
        frame = run_backend(backend, items)
        invalid = [
            task == "grade" and invalid_verdict(Reply(raw, None)) for task, raw in zip(frame["task"], frame["raw"])
        ]
        frames.append(frame.assign(**member_keys(index, member), invalid_verdict=invalid))
    return pd.concat(frames, ignore_index=True)
