"""The small model's runs as the workflow's jobs make them, member by member of one trained ensemble: its
vocabulary and context from the items, and the training items each member could draw (the evidence that the outcome
regime never trains on VAIR and a process member never on its held-out flaw). Its grading is in
:mod:`.small_grading`, the probes and the patching in :mod:`.mechanism`.

Each member is identified in every table by ``member`` (its index in the ensemble), ``regime``, ``heldout_flaw`` and
``seed``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict

import pandas as pd

from .items import CATEGORY_FLAWS, Item
from .sequences import encode_grade
from .training import Member, grade_pool
from .vocabulary import Vocabulary

__all__ = ["MEMBER_COLUMNS", "member_draws", "member_keys", "vocabulary_and_context"]

MEMBER_COLUMNS = ("member", "regime", "heldout_flaw", "seed")


def member_keys(index: int, member: Member) -> dict:
    """The member columns of a table row."""
    return {"member": index, **asdict(member)}


def vocabulary_and_context(texts: Sequence[str]) -> tuple[Vocabulary, int]:
    """The word vocabulary of every rendered item (with n+1 of every number, for the patching's counterfactuals) and
    the context that holds the longest grade sequence (a solve sequence is one word shorter)."""
    vocab = Vocabulary.from_texts(texts, successors=True)
    lengths = encode_grade(vocab, list(texts), [0] * len(texts)).lengths
    return vocab, int(lengths.max())


def member_draws(items: Sequence[Item], members: Sequence[Member]) -> pd.DataFrame:
    """Per member and (category, flaw): the training items its grade examples are drawn from (``n_items``, 0 where
    none) and the share of its grade draws they get (``draw_share``), from :func:`.training.grade_pool`: the
    evidence that the outcome regime never trains on VAIR and a process member never on its held-out flaw."""
    rows = []
    for index, member in enumerate(members):
        chosen, probs = grade_pool(items, member)
        drawn: dict[tuple[str, str], list[float]] = {}
        for i, p in zip(chosen.tolist(), probs.tolist()):
            drawn.setdefault((items[i].category, items[i].flaw), []).append(p)
        for category, flaws in CATEGORY_FLAWS.items():
            for flaw in flaws:
                found = drawn.get((category, flaw), [])
                rows.append(
                    {
                        **member_keys(index, member),
                        "category": category,
                        "flaw": flaw,
                        "n_items": len(found),
                        "draw_share": float(sum(found)),
                    }
                )
    return pd.DataFrame(rows)
