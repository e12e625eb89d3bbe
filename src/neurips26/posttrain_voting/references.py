"""Reference policies from a base model's scores of a prompt's four responses (the ``base_model`` reference kind).

``pi_ref(y | x)`` is proportional to ``exp(mean token log p(y | x))``: the base model's log-probability of the
response's tokens given the conversation, divided by the number of tokens (length-normalised), softmax-normalised
over the prompt's candidates. Summed log-probabilities (the sequence probability DPO's reference is) differ by tens
to hundreds of nats between responses of different lengths, so the reference would sit on one response (exactly 0
elsewhere once a gap passes about 745 nats in float64) and every reference-dependent rule would return that response
at every beta of the grid; :func:`reference_from_scores` with ``length_normalised=False`` gives that reference, and
rejects it where it has zeros (workflow/report/posttrain_voting/deviations.md).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .checks import check_reference

LENGTH_NORMALISED = True  # the base_model kind's normalisation (module docstring)
SCORE_COLUMNS = ("prompt_id", "candidate", "tokens", "logprob")


def reference_from_scores(logprob, tokens, length_normalised: bool = LENGTH_NORMALISED, who: str = "base_model"):
    """The reference of one prompt from its responses' summed log-probabilities and token counts (module
    docstring). ValueError naming ``who`` for a non-finite or positive log-probability, a response without tokens,
    or a reference with zeros (the rules need full support)."""
    logprob, tokens = np.asarray(logprob, float), np.asarray(tokens, float)
    if logprob.shape != tokens.shape or logprob.ndim != 1 or len(logprob) < 2:
        raise ValueError(f"{who}: one log-probability and one token count per candidate, got {logprob.shape}")
    if not np.isfinite(logprob).all() or (logprob > 0).any():
        raise ValueError(f"{who}: log-probabilities must be finite and <= 0, got {logprob.tolist()}")
    if not (tokens >= 1).all():
        raise ValueError(f"{who}: every response needs at least one scored token, got {tokens.tolist()}")
    score = logprob / tokens if length_normalised else logprob
    ref = np.exp(score - score.max())
    ref = ref / ref.sum()
    if (ref <= 0).any():
        gap = float(score.max() - score.min())
        raise ValueError(
            f"{who}: the reference has zeros where the rules need full support (a log-probability gap of {gap:.0f} "
            f"nats underflows); length normalisation keeps it off zero"
        )
    return check_reference(ref, len(ref), who=who)


def base_model_references(scores: pd.DataFrame, prompt_ids, m: int = 4, **options) -> list[np.ndarray]:
    """One reference per prompt of ``prompt_ids`` (in that order) from the scores table of the base-model rule
    (columns SCORE_COLUMNS, candidates 0..m-1 per prompt); ValueError naming a prompt that is missing or has
    another number of candidates. ``options`` go to :func:`reference_from_scores`."""
    missing = [c for c in SCORE_COLUMNS if c not in scores.columns]
    if missing:
        raise ValueError(f"base_model scores lack columns {missing}")
    groups = {str(k): g.sort_values("candidate") for k, g in scores.groupby("prompt_id", sort=False)}
    out = []
    for prompt in prompt_ids:
        group = groups.get(str(prompt))
        if group is None:
            raise ValueError(f"base_model: prompt {prompt} has a profile but no scores (comparisons.jsonl lacks it)")
        candidates = group["candidate"].tolist()
        if candidates != list(range(m)):
            raise ValueError(f"base_model: prompt {prompt} has candidates {candidates}, not 0..{m - 1}")
        out.append(reference_from_scores(group["logprob"], group["tokens"], who=f"base_model prompt {prompt}",
                                         **options))  # fmt: skip
    return out
