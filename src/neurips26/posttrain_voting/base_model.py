"""A small open base model scoring CoVal's four responses per prompt: log p(response | conversation), summed over
the response's tokens, for the ``base_model`` reference (:mod:`.references` turns the scores into a policy).

The conversation is rendered as plain text for a base (not instruction-tuned) model: ``Role: text`` blocks joined by
blank lines, then ``Assistant:``; the response follows after one space. Context and response are tokenized apart and
concatenated, so the response's tokens are exactly those scored. A pair longer than ``max_tokens`` loses the
conversation's oldest tokens first, then the response's last ones (counted in the table's ``truncated``).

:func:`response_logprobs` is the computation itself, for any ``logits_fn(ids, mask) -> logits`` (a causal LM's
forward pass); the model is loaded by :func:`load_base_model` with Hugging Face transformers (pinned in
envs/llm.yaml), imported there so that this module imports without it and a missing install is reported by name.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
import torch

from neurips26.common.llm_imports import import_transformers

log = logging.getLogger(__name__)

MAX_TOKENS = 4096  # conversation + response tokens per scored pair (Qwen2.5-0.5B's context is 32,768)
BATCH_TOKENS = 16384  # padded tokens per forward pass
TIME_CHUNK = 1024  # positions whose log-softmax over the vocabulary is taken at once (float32 memory)


def render_conversation(messages: Sequence[Sequence[str]]) -> str:
    """The text a base model continues with a response: ``Role: text`` blocks, then ``Assistant:``."""
    blocks = [f"{str(role).capitalize()}: {text}" for role, text in messages]
    return "\n\n".join([*blocks, "Assistant:"])


def encode_pair(tokenize: Callable[[str], list[int]], context: str, response: str, max_tokens: int = MAX_TOKENS):
    """(token ids of context + " " + response, index of the first response token, truncated?); the context keeps
    at least one token. ValueError for a response without tokens or ``max_tokens`` < 2."""
    if max_tokens < 2:
        raise ValueError(f"max_tokens must be >= 2 (one context and one response token), got {max_tokens}")
    ctx, resp = list(tokenize(context)), list(tokenize(" " + response))
    if not resp or not ctx:
        raise ValueError("a scored pair needs at least one context and one response token")
    truncated = len(ctx) + len(resp) > max_tokens
    resp = resp[: max_tokens - 1]
    ctx = ctx[len(ctx) - min(len(ctx), max_tokens - len(resp)) :]
    return ctx + resp, len(ctx), truncated


def _batches(lengths: Sequence[int], batch_tokens: int) -> list[list[int]]:
    """Indices grouped longest first, each group's size x its longest length within ``batch_tokens`` (a sequence
    longer than the budget forms a group of its own)."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    groups: list[list[int]] = []
    for i in order:
        if groups and (len(groups[-1]) + 1) * lengths[groups[-1][0]] <= batch_tokens:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def response_logprobs(
    logits_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    sequences: Sequence[Sequence[int]],
    starts: Sequence[int],
    device: torch.device | str = "cpu",
    batch_tokens: int = BATCH_TOKENS,
    pad_id: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """(sum over t >= start of log p(token_t | tokens before t), number of such tokens) per sequence, with
    ``logits_fn(ids, mask)`` giving a causal LM's logits ``(batch, time, vocab)`` for right-padded ids and their
    attention mask on ``device``. Static shapes throughout (no data-dependent indexing), float32 log-softmax in
    chunks of TIME_CHUNK positions. ValueError for a start outside 1..len-1."""
    lengths = [len(s) for s in sequences]
    bad = [k for k, (n, s) in enumerate(zip(lengths, starts)) if not 1 <= s < n]
    if bad:
        raise ValueError(f"sequences {bad[:5]}: the first scored token must have a predecessor and exist")
    total, counts = np.zeros(len(sequences)), np.asarray([n - s for n, s in zip(lengths, starts)], float)
    for group in _batches(lengths, batch_tokens):
        width = lengths[group[0]]
        ids = torch.full((len(group), width), pad_id, dtype=torch.long)
        mask = torch.zeros((len(group), width), dtype=torch.long)
        keep = torch.zeros((len(group), width - 1))
        for row, i in enumerate(group):
            ids[row, : lengths[i]] = torch.as_tensor(sequences[i], dtype=torch.long)
            mask[row, : lengths[i]] = 1
            keep[row, starts[i] - 1 : lengths[i] - 1] = 1.0  # position t - 1 predicts token t
        ids, mask, keep = ids.to(device), mask.to(device), keep.to(device)
        with torch.inference_mode():
            logits = logits_fn(ids, mask)
            sums = torch.zeros(len(group), device=logits.device)
            for t0 in range(0, width - 1, TIME_CHUNK):
                t1 = min(t0 + TIME_CHUNK, width - 1)
                chunk = logits[:, t0:t1].float()
                token = chunk.gather(-1, ids[:, t0 + 1 : t1 + 1, None]).squeeze(-1)
                sums = sums + ((token - torch.logsumexp(chunk, -1)) * keep[:, t0:t1]).sum(-1)
        total[group] = sums.double().cpu().numpy()
    return total, counts


def score_responses(
    texts: pd.DataFrame,
    logits_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    tokenize: Callable[[str], list[int]],
    device: torch.device | str = "cpu",
    max_tokens: int = MAX_TOKENS,
    batch_tokens: int = BATCH_TOKENS,
) -> pd.DataFrame:
    """The scores table of :func:`.coval.read_texts`' rows: prompt_id, candidate, tokens (response tokens scored),
    logprob (their summed log-probability), context_tokens, truncated."""
    encoded = [encode_pair(tokenize, render_conversation(json.loads(c)), r, max_tokens)
               for c, r in zip(texts["conversation"], texts["response"])]  # fmt: skip
    sequences = [ids for ids, _, _ in encoded]
    starts = [start for _, start, _ in encoded]
    logprob, tokens = response_logprobs(logits_fn, sequences, starts, device, batch_tokens)
    return pd.DataFrame({
        "prompt_id": texts["prompt_id"].astype(str).to_numpy(), "candidate": texts["candidate"].to_numpy(),
        "tokens": tokens.astype(int), "logprob": logprob, "context_tokens": np.asarray(starts),
        "truncated": np.asarray([t for _, _, t in encoded]),
    })  # fmt: skip


def place(lm: torch.nn.Module, device: torch.device | str | None = None) -> torch.nn.Module:
    """``lm`` in evaluation mode on ``device``, by default the job's (neurips26.common.loop.job_device)."""
    from neurips26.common.loop import job_device

    return lm.to(device if device is not None else job_device()).eval()


def load_base_model(folder, device: torch.device | str | None = None):
    """(logits_fn, tokenize, device) of the causal LM saved in ``folder`` (config, weights and tokenizer files),
    placed on ``device`` (default: the job's device) in bfloat16 on a GPU, float32 elsewhere. ModuleNotFoundError
    naming transformers when it is not installed."""
    transformers = import_transformers("the base-model reference")
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder))
    lm = transformers.AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32)
    lm = place(lm, device)
    target = next(lm.parameters()).device
    if target.type == "cuda":
        lm = lm.to(torch.bfloat16)

    def logits_fn(ids, mask):
        return lm(input_ids=ids, attention_mask=mask).logits

    def tokenize(text):
        return tokenizer(text, add_special_tokens=False)["input_ids"]

    log.info("base model %s on %s (%s)", folder, target, next(lm.parameters()).dtype)
    return logits_fn, tokenize, target
