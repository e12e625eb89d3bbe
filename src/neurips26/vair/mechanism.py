"""The mechanism of the small model's gap, per member of a trained ensemble (after arXiv 2606.01462): linear probes
per layer on the residual stream at the last solution word (:mod:`.probes`), and answer patching N -> N+1 per layer
against a same-size perturbation elsewhere (:mod:`.patching`); every row carries the member columns of
:func:`.small_model.member_keys`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch

from neurips26.common.ensemble import Ensemble

from .decoding import GradeOutput, grade
from .items import Item, render
from .patching import patch_flip_rates
from .probes import PROBE_COLUMNS, probe_layers
from .small_model import member_keys
from .training import Member
from .vocabulary import Vocabulary

__all__ = ["patch_members", "probe_members"]


def _members_of(members: Sequence[Member], regimes: Sequence[str]) -> list[int]:
    chosen = [index for index, member in enumerate(members) if member.regime in regimes]
    if not chosen:
        raise ValueError(f"no member of the regimes {list(regimes)} among {len(members)} members")
    return chosen


def probe_members(
    ensemble: Ensemble,
    vocab: Vocabulary,
    members: Sequence[Member],
    items: Sequence[Item],
    regimes: Sequence[str],
    test_share: float,
    C: float,
    seed: int,
    graded: GradeOutput | None = None,
) -> pd.DataFrame:
    """Per member of `regimes` and layer: :func:`.probes.probe_layers` on the member's grades of `items` and its
    residual stream at the last solution word (held-out controls grouped by problem), plus ``iair_flagged``: the
    share of the held-out IAIR controls (graded invalid) that the same layer's probe flags as invalid (the same fitted
    probe, :func:`.probes.probe_layers` with ``is_iair``), the null of a probe that is fooled rather than weak. A
    member whose correctly graded items hold one class gets no probe: its rows hold NaN and the refusal in ``note``
    ("" where fitted). ``graded``: :func:`.decoding.grade` of every member
    on ``render(item)`` of `items` with ``hidden=True`` (one pass shared with the grading rows), else computed here."""
    out = graded if graded is not None else grade(ensemble, vocab, [render(item) for item in items], hidden=True)
    if out.hidden is None or out.hidden.shape[1] != len(items):
        raise ValueError("graded must hold the hidden states of every item (decoding.grade with hidden=True)")
    valid = np.array([item.reasoning_valid for item in items])
    is_vair = np.array([item.category == "VAIR" for item in items])
    is_iair = np.array([item.category == "IAIR" for item in items])
    groups = np.array([item.problem_id for item in items])
    frames = []
    for index in _members_of(members, regimes):
        grades, hidden = out.grades[index].numpy(), out.hidden[index].numpy().astype(np.float64)
        try:
            table = probe_layers(
                hidden, valid, grades, is_vair, groups=groups, test_share=test_share, seed=seed, C=C, is_iair=is_iair
            )
            table["note"] = ""
        except ValueError as refusal:  # a probe with one class measures nothing: its rows say why, with no value
            table = pd.DataFrame({"layer": range(hidden.shape[1])}).reindex(columns=[*PROBE_COLUMNS, "iair_flagged"])
            table["layer"] = range(hidden.shape[1])
            table["note"] = f"not fitted: {refusal}"
        frames.append(table.assign(**member_keys(index, members[index])))
    return pd.concat(frames, ignore_index=True)


def patch_members(
    ensemble: Ensemble,
    vocab: Vocabulary,
    members: Sequence[Member],
    items: Sequence[Item],
    regimes: Sequence[str],
    seed: int,
) -> pd.DataFrame:
    """Per member of `regimes`: :func:`.patching.patch_flip_rates` over the VAIR items of `items` it grades 3 (answer
    N -> N+1 patched per layer and at every layer at once, against the same +1 at a random other number word)."""
    texts = [render(item) for item in items if item.category == "VAIR"]
    if not texts:
        raise ValueError("no VAIR item to patch")
    frames = []
    for index in _members_of(members, regimes):
        with torch.no_grad():
            model = ensemble.module(index).eval()
        table, _ = patch_flip_rates(model, vocab, texts, seed=seed)
        frames.append(table.assign(**member_keys(index, members[index])))
    return pd.concat(frames, ignore_index=True)
