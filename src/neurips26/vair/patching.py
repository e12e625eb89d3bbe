r"""Causal patching of the final answer, after the paper (arXiv 2606.01462): for each VAIR solution the model grades
3, a counterfactual source changes the stated final answer N to N+1 (turning the VAIR item into an IAIR one); the
source's residual stream at the answer word, at layer l, is written into the original run (:class:`.model.Patch`),
and a verdict flip (3 -> below 3) says that what the model carries at the answer position decides its grade.

Layers: residual state l in 0 .. L-1 (the embedding output and the blocks' outputs that a later block reads), one at
a time, and ``ALL_LAYERS`` (every state 0 .. L at once). Patching every layer at the answer word reproduces the
source run exactly (a causal model's earlier positions are the same in both), so ``ALL_LAYERS`` is the flip rate of
grading the N+1 solution outright; so is patching state 0 alone (the embedding of the answer word is the
counterfactual word itself: its row equals ``ALL_LAYERS`` by construction). State L, the last block's output, is left
out of the per-layer rows: only the answer word's own logits read it, never the verdict, so its flip rate is 0 by
construction. The paper's contrast is between all layers and one middle layer: here states 1 .. L-1.

Control: the same number of positions (one), drawn at random among the premise numbers of the PROBLEM (the number
words before ``SOLUTION``; never a number of the solution), each patched with the hidden states of a source in which
that premise was changed by the same +1. Such a change keeps the stated answer but makes the solution use a number
the problem no longer states: a change of the same size that invalidates the reasoning and keeps the answer. A
grader that confirms the answer should not flip on it; one that checks the reasoning should. (A +1 on a number of
the solution would break that step's arithmetic: it invalidates the item too, so it is no answer-keeping control.)
Patching non-answer positions from the answer-changed source would not do: in a causal model every position before
the answer has the same states in that source as in the original run, so such a patch is a no-op.

What this measures: patching every layer at a word is grading the changed text (input sensitivity, behavioural);
the answer-minus-control contrast at ``ALL_LAYERS`` says whether the verdict follows the answer more than a premise;
the single-layer rows say where the model carries it, and are descriptive.

Paper: flip rates (all layers / the layer where its probe peaks) Qwen3-0.6B 80.5% / 47.2%, Qwen3-4B 52.2% / 27.6%,
gpt-oss-20b 55.6% / 14.2% (:data:`PAPER_FLIP_RATES`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch

from .model import Decoder, Patch, check_positions
from .sequences import encode_grade
from .vocabulary import Vocabulary

__all__ = ["ALL_LAYERS", "CONDITIONS", "PAPER_FLIP_RATES", "PATCH_COLUMNS", "patch_flip_rates", "plus_one_sources"]

ALL_LAYERS = -1  # the `layer` of the rows that patch every residual state at once
CONDITIONS = ("answer", "control")
PATCH_COLUMNS = ("layer", "condition", "n_items", "flips", "flip_rate")
FULL = 3
# arXiv 2606.01462, answer patching: flip rate when patching all layers, and at the peak-probe layer
PAPER_FLIP_RATES = {
    "Qwen3-0.6B": {"all_layers": 0.805, "peak_probe_layer": 0.472},
    "Qwen3-4B": {"all_layers": 0.522, "peak_probe_layer": 0.276},
    "gpt-oss-20b": {"all_layers": 0.556, "peak_probe_layer": 0.142},
}


def plus_one_sources(
    vocab: Vocabulary, tokens: torch.Tensor, positions: torch.Tensor, lengths: torch.Tensor
) -> torch.Tensor:
    """``tokens`` (N, T) with the number word at ``positions`` (N,) replaced by its successor n+1; ValueError naming
    the positions outside the sequences, the words that are not integers or whose successor is not in the
    vocabulary."""
    check_positions(positions[:, None], lengths)
    rows = torch.arange(len(tokens), device=tokens.device)
    words = tokens[rows, positions]
    successors = vocab.successor_ids().to(tokens.device)[words]
    if bool((successors < 0).any()):
        bad = sorted({vocab.word(int(w)) for w in words[successors < 0]})
        raise ValueError(f"no n+1 word in the vocabulary for the words {bad[:10]} (build it with successors=True)")
    source = tokens.clone()
    source[rows, positions] = successors
    return source


def _control_positions(vocab: Vocabulary, seq, generator: torch.Generator) -> torch.Tensor:
    """Per row, one random position of a premise number: a number word of the problem (after ``<bos> <grade>``,
    before ``SOLUTION``) with a successor in the vocabulary (module docstring); ValueError naming rows without one."""
    tokens = seq.tokens
    columns = torch.arange(tokens.shape[1])
    eligible = (
        (vocab.successor_ids()[tokens] >= 0)
        & (columns[None] < seq.solution_start[:, None])
        & (columns[None] > 1)  # after <bos> <grade>
    )
    empty = ~eligible.any(1)
    if bool(empty.any()):
        raise ValueError(f"rows {torch.nonzero(empty).flatten()[:10].tolist()} have no premise number for a control")
    scores = torch.rand(tokens.shape, generator=generator).masked_fill(~eligible, -1.0)
    return scores.argmax(1)


@torch.no_grad()
def _grades(model: Decoder, tokens: torch.Tensor, verdict: torch.Tensor, verdict_ids: torch.Tensor, patch=None):
    logits, _ = model(tokens, patch=patch, at=verdict[:, None], fused=True)
    return logits[:, 0, verdict_ids].argmax(-1)


@torch.no_grad()
def patch_flip_rates(
    model: Decoder,
    vocab: Vocabulary,
    texts: Sequence[str],
    seed: int = 0,
    chunk: int = 256,
    max_items: int | None = None,
) -> tuple[pd.DataFrame, np.ndarray]:
    """Flip rates per layer and condition (:data:`PATCH_COLUMNS`; ``layer`` :data:`ALL_LAYERS` for every state at
    once) over the rendered VAIR solutions ``texts`` that ``model`` grades 3 (the first ``max_items`` of them when
    given: the cost is 2 (L + 2) forwards per item); also returns the mask (N,) of the items patched. Rows with no
    such item hold ``n_items`` 0 and a NaN rate."""
    if max_items is not None and max_items < 1:
        raise ValueError(f"max_items must be >= 1 or None, got {max_items}")
    seq = encode_grade(vocab, texts, [0] * len(texts))
    generator = torch.Generator().manual_seed(seed)
    control_at = _control_positions(vocab, seq, generator)
    sites = {"answer": seq.answer, "control": control_at}
    n_layers = model.config.n_layers
    layer_sets = [((layer,), layer) for layer in range(n_layers)] + [(tuple(range(n_layers + 1)), ALL_LAYERS)]
    verdict_ids = vocab.verdict_ids
    device = model.lm_head.weight.device  # inputs go to the model's device; rates and masks come back to the CPU
    fooled_parts, flips = [], {(c, tag): 0 for c in CONDITIONS for _, tag in layer_sets}
    for start in range(0, len(texts), chunk):
        part = seq.select(torch.arange(start, min(start + chunk, len(texts))))
        part_sites = {c: s[start : start + len(part)] for c, s in sites.items()}
        width = int(part.lengths.max())
        tokens, verdict = part.tokens[:, :width].to(device), part.verdict.to(device)
        fooled = (_grades(model, tokens, verdict, verdict_ids.to(device)) == FULL).cpu()
        if max_items is not None:  # keep the first max_items fooled items over all chunks
            taken = sum(int(f.sum()) for f in fooled_parts)
            fooled &= torch.cumsum(fooled.long(), 0) <= max_items - taken
        fooled_parts.append(fooled)
        if not bool(fooled.any()):
            continue
        kept = fooled.to(device)
        tokens, lengths, verdict = tokens[kept], part.lengths.to(device)[kept], verdict[kept]
        for condition, where in part_sites.items():
            where = where.to(device)[kept]
            source = plus_one_sources(vocab, tokens, where, lengths)
            _, states = model(source, residual=True, fused=True)
            at = states.transpose(1, 2)[torch.arange(len(source), device=device), where]  # (n, L+1, d)
            for layers, tag in layer_sets:
                vectors = at[:, list(layers)][:, :, None]  # (n, len(layers), 1, d)
                patch = Patch(layers, where[:, None], vectors)
                flipped = _grades(model, tokens, verdict, verdict_ids.to(device), patch) < FULL
                flips[condition, tag] += int(flipped.sum())
    fooled = torch.cat(fooled_parts).numpy()
    n = int(fooled.sum())
    rows = [
        {
            "layer": tag,
            "condition": condition,
            "n_items": n,
            "flips": flips[condition, tag],
            "flip_rate": flips[condition, tag] / n if n else np.nan,
        }
        for condition in CONDITIONS
        for _, tag in layer_sets
    ]
    return pd.DataFrame(rows, columns=list(PATCH_COLUMNS)), fooled
