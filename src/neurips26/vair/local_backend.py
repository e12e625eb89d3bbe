"""The small local model as a backend of the grading harness (:mod:`.backends`): one trained member solves by greedy
decoding and grades by decoding constrained to the verdicts (:mod:`.decoding`), reading ``render(item)``.

Its grades are always parseable. A reply's ``raw`` is two lines: the word the model would write at ``<verdict>``
unconstrained, then the grade's format line (``GRADE: k``); :func:`invalid_verdict` reads the first line, and the
share of invalid verdicts is the local model's reported invalid-verdict rate. A backend built with ``known`` (item id
-> (grade, unconstrained word id), e.g. from one batched :func:`.decoding.grade` pass over every member) replies from
it instead of grading again. Registered as ``local`` on import.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

import torch

from neurips26.common.ensemble import Ensemble

from .backends import TASKS, GradeTask, Reply, SolveTask, register_backend
from .decoding import grade, greedy_decode, read_answers
from .items import render
from .model import Decoder
from .sequences import solve_prompts
from .verdicts import format_answer, format_grade
from .vocabulary import EOS, NOT_AN_INTEGER, VERDICTS, Vocabulary

__all__ = ["LocalBackend", "invalid_verdict", "make_local_backend"]


@dataclass
class LocalBackend:
    """One member of the small model (module docstring)."""

    model: Decoder
    vocab: Vocabulary
    name: str = "local"
    max_new: int = 48
    known: Mapping[str, tuple[int, int]] | None = None
    tasks: ClassVar[frozenset[str]] = frozenset(TASKS)
    external: ClassVar[bool] = False

    def solve(self, tasks: Sequence[SolveTask]) -> list[Reply]:
        prompts, lengths = solve_prompts(self.vocab, [render(task.item) for task in tasks])
        eos = self.vocab.id(EOS)
        device = self.model.lm_head.weight.device  # the model's device (a GPU at paper scale)
        written = greedy_decode(self.model.eval(), prompts.to(device), lengths.to(device), self.max_new, eos).cpu()
        answers = read_answers(self.vocab, written).tolist()
        replies = []
        for row, answer in zip(written.tolist(), answers):
            text = self.vocab.decode(row[: row.index(eos)] if eos in row else row)
            found = answer != NOT_AN_INTEGER
            replies.append(Reply(f"{text}\n{format_answer(answer)}" if found else text, answer if found else None))
        return replies

    def grade(self, tasks: Sequence[GradeTask]) -> list[Reply]:
        if self.known is not None and all(task.item.item_id in self.known for task in tasks):
            pairs = [self.known[task.item.item_id] for task in tasks]
        else:
            out = grade(Ensemble([self.model.eval()]), self.vocab, [render(task.item) for task in tasks])
            pairs = list(zip(out.grades[0].tolist(), out.free[0].tolist()))
        return [Reply(f"{self.vocab.word(int(free))}\n{format_grade(int(g))}", int(g)) for g, free in pairs]


def invalid_verdict(reply: Reply) -> bool:
    """Whether a local grade reply's unconstrained word (its first line) is not a verdict token."""
    return reply.raw.split("\n", 1)[0] not in VERDICTS


def make_local_backend(ensemble: Ensemble, vocab: Vocabulary, member: int, name: str = "local") -> LocalBackend:
    """The backend of member ``member`` of a trained ensemble (:func:`.training.unpack` gives both)."""
    with torch.no_grad():
        model = ensemble.module(member)
    return LocalBackend(model, vocab, name)


register_backend("local", make_local_backend)
