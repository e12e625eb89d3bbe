r"""The small model at work: greedy solving and constrained grading, vectorised over problems (and, for grading,
over the ensemble's members).

* Solving (production, arXiv 2606.01462 scores it on the final answer): from ``<bos> <solve> problem ... SOLUTION``
  each member writes greedily, with a key/value cache, until ``<eos>`` or ``max_new`` words; the answer is the
  integer word after the first ``ANSWER`` it writes (:data:`.vocabulary.NOT_AN_INTEGER` when it writes none, which
  counts as wrong). Members decode one after another, each over all problems at once: the cache is written in place,
  which ``vmap`` does not batch.
* Grading: one forward of ``<bos> <grade> problem ... ANSWER n <verdict>`` per member, over all solutions at once
  (members one after another with the fused attention kernel: faster on our CPU than ``vmap`` over members, whose
  attention must run by explicit math). The grade is the argmax of the four verdict logits ``<G0>`` .. ``<G3>`` at
  ``<verdict>`` (decoding constrained to the verdicts: the local model's grade is always parseable), and a grade is
  counted invalid when the unconstrained argmax over the whole vocabulary is not a verdict token (the invalid-verdict
  rate reported for the local model). The same forward returns the residual stream at the last solution word, every
  layer, for the probes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from neurips26.common.ensemble import Ensemble

from .model import Decoder
from .sequences import encode_grade, solve_prompts
from .vocabulary import ANSWER_WORD, EOS, NOT_AN_INTEGER, Vocabulary

__all__ = ["GradeOutput", "grade", "greedy_answers", "greedy_decode", "read_answers"]


@dataclass(frozen=True)
class GradeOutput:
    """Per member and item: the constrained ``grades`` (S, N) in 0..3, the unconstrained argmax word ``free`` (S, N)
    and ``invalid`` (S, N) where it is not a verdict, the softmax over the four verdict logits ``verdict_probs``
    (S, N, 4) and, when asked, ``hidden`` (S, N, L+1, d), the residual stream at the last solution word."""

    grades: torch.Tensor
    free: torch.Tensor
    invalid: torch.Tensor
    verdict_probs: torch.Tensor
    hidden: torch.Tensor | None


@torch.no_grad()
def grade(
    ens: Ensemble, vocab: Vocabulary, texts: Sequence[str], hidden: bool = False, chunk: int = 512
) -> GradeOutput:
    """Every member's grade of every rendered solution (module docstring), ``chunk`` texts per forward."""
    seq = encode_grade(vocab, texts, [0] * len(texts))
    verdict_ids = vocab.verdict_ids
    grades, free, probs, reads = [], [], [], []
    for member in range(ens.size):
        model = ens.module(member).eval()
        device = model.lm_head.weight.device
        parts = []
        for start in range(0, len(texts), chunk):
            rows = slice(start, start + chunk)
            tokens = seq.tokens[rows, : int(seq.lengths[rows].max())].to(device)
            logits, states = model(tokens, hidden, at=seq.verdict[rows, None].to(device), fused=True)
            at_verdict = logits[:, 0].cpu()  # (n, V)
            read = states.transpose(1, 2)[torch.arange(len(tokens)), seq.last_solution[rows]].cpu() if hidden else None
            parts.append((at_verdict[:, verdict_ids], at_verdict.argmax(-1), read))
        verdict_logits = torch.cat([p[0] for p in parts])
        grades.append(verdict_logits.argmax(-1))
        probs.append(verdict_logits.softmax(-1))
        free.append(torch.cat([p[1] for p in parts]))
        reads.append(torch.cat([p[2] for p in parts]) if hidden else None)
    free = torch.stack(free)
    return GradeOutput(
        grades=torch.stack(grades),
        free=free,
        invalid=~torch.isin(free, verdict_ids),
        verdict_probs=torch.stack(probs),
        hidden=torch.stack(reads) if hidden else None,
    )


@torch.no_grad()
def greedy_decode(
    model: Decoder, prompts: torch.Tensor, lengths: torch.Tensor, max_new: int, stop: int
) -> torch.Tensor:
    """Greedy continuation (N, max_new) of right-padded ``prompts`` (N, T) of ``lengths`` (N,), with a key/value cache;
    after a row writes ``stop`` it writes ``stop`` again (the loop ends when every row has stopped)."""
    c = model.config
    n, width = prompts.shape
    max_new = min(max_new, c.context - int(lengths.max()))
    if max_new < 1:
        raise ValueError(f"prompts of {int(lengths.max())} words leave no room in the context {c.context}")
    device = prompts.device
    x = model.embed(prompts)
    caches = []
    for block in model.blocks:
        x, (k, v) = block(x, model.rope_cos[:width], model.rope_sin[:width])  # fused causal attention
        keys, values = (
            k.new_zeros(n, k.shape[1], c.context, k.shape[3]),
            v.new_zeros(n, v.shape[1], c.context, k.shape[3]),
        )
        keys[:, :, :width], values[:, :, :width] = k, v  # padding slots are overwritten before any row attends them
        caches.append((keys, values))
    rows = torch.arange(n, device=device)
    logits = model.lm_head(model.norm(x[rows, lengths - 1]))
    out = torch.full((n, max_new), stop, dtype=torch.long, device=device)
    done = torch.zeros(n, dtype=torch.bool, device=device)
    position = lengths.clone()
    slots = torch.arange(c.context, device=device)
    for t in range(max_new):
        word = torch.where(done, stop, logits.argmax(-1))
        out[:, t] = word
        done |= word == stop
        if bool(done.all()) or t == max_new - 1:
            break
        x = model.embed(word)[:, None]
        cos, sin = model.rope_cos[position][:, None, None], model.rope_sin[position][:, None, None]
        mask = (slots[None] <= position[:, None])[:, None, None]
        for block, cache in zip(model.blocks, caches):
            x, _ = block(x, cos, sin, cache=cache, write_at=position, mask=mask)
        logits = model.lm_head(model.norm(x[:, 0]))
        position = position + 1
    return out


def read_answers(vocab: Vocabulary, generated: torch.Tensor) -> torch.Tensor:
    """The integer after the first ``ANSWER`` of each generated row (..., T), :data:`NOT_AN_INTEGER` when there is
    none or it is not an integer."""
    is_answer = generated == vocab.id(ANSWER_WORD)
    found = is_answer.any(-1)
    after = (is_answer.int().argmax(-1) + 1).clamp(max=generated.shape[-1] - 1)
    values = vocab.integer_value(generated.gather(-1, after[..., None])[..., 0])
    return torch.where(found & (is_answer.int().argmax(-1) + 1 < generated.shape[-1]), values, NOT_AN_INTEGER)


def greedy_answers(
    ens: Ensemble, vocab: Vocabulary, texts: Sequence[str], max_new: int = 48, members: Sequence[int] | None = None
) -> torch.Tensor:
    """Each member's greedy final answer (S, N) to the problems of rendered items ``texts`` (their solutions are cut
    off: only ``problem ... SOLUTION`` is shown)."""
    prompts, lengths = solve_prompts(vocab, texts)
    device = next(iter(ens.params.values())).device
    prompts, lengths = prompts.to(device), lengths.to(device)
    answers = []
    for index in members if members is not None else range(ens.size):
        model = ens.module(index).eval()
        answers.append(read_answers(vocab, greedy_decode(model, prompts, lengths, max_new, vocab.id(EOS))))
    return torch.stack(answers).cpu()
