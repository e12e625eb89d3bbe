"""OpenAI's CoVal ("Collective Alignment 1", ``openai/coval`` on the Hugging Face hub) read as preference profiles.

Assumed schema of ``merged_comparisons_annotators.jsonl`` (the hub's ``resolve/<revision>/`` file; field names as
public code that reads the file from ``openai/coval`` uses them, not a field list from the dataset card; the
rehearsal's fixture and tests/test_posttrain_voting_coval.py follow it): one JSON object per line, one assessment of
one prompt's four responses by one annotator, with ``prompt_id``, ``annotator_id`` and ``ranking_blocks``, a dict
whose ``world`` and ``personal`` entries (the two rankings the wildcard names; the block ``unacceptable`` is not a
ranking and is ignored) are lists of dicts with a ``ranking`` string over the letters A-D such as ``"A>B>C=D"``
(``=`` a tie, spaces dropped; weak orders are kept, ties count 1/2 in the pairwise matrix); the first entry of a
block is the ranking. An empty block or a ranking that does not name the four letters exactly once is skipped and
counted.

One voter per (prompt, annotator): a second assessment by the same annotator of the same prompt replaces none and is
counted as a duplicate (the first is kept). A prompt with fewer than ``min_voters`` voters is dropped.

The texts the base-model reference scores (:func:`read_texts`) are not in that file (about 1.4 kB a line, too small
for four responses): they are read from ``comparisons.jsonl``, one JSON object per prompt with ``prompt_id``,
``prompt`` (a dict whose ``messages`` list the conversation before the responses: each message with ``role``, or
``author.role``, and ``content``, a string or a dict with a ``parts`` list) and ``responses`` (a list of dicts with
``response_index``, the letter A-D that the rankings name, and ``messages`` whose contents, joined, are the
response). Field names as public code that reads the file from ``openai/coval`` uses them, not a field list from
the dataset card. A prompt without all four letters, or with an empty response, is refused naming its line.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pandas as pd

from .profiles import Profile

LETTERS = "ABCD"


def _ranking(block) -> str | None:
    if not block or not isinstance(block, list) or not isinstance(block[0], dict):
        return None
    text = block[0].get("ranking")
    if not isinstance(text, str) or not text.strip():
        return None
    text = text.replace(" ", "")
    flat = [c for group in text.split(">") for c in group.split("=")]
    return text if sorted(flat) == list(LETTERS) else None


def _records(path: str | Path, fields: tuple[str, ...]):
    """(line number, record) of each non-empty JSON line of ``path``; ValueError naming the line for one that is not
    JSON or lacks one of ``fields``."""
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{number}: not JSON ({error.msg})") from None
            missing = [k for k in fields if k not in record]
            if missing:
                raise ValueError(f"{path}:{number}: missing fields {missing} (assumed CoVal schema: coval.py)")
            yield number, record


def read_rankings(path: str | Path, ranking: str) -> tuple[pd.DataFrame, dict]:
    """Rows (prompt_id, annotator_id, ranking) of the ``ranking`` block (``world`` or ``personal``) and counts of
    what was skipped: ``empty`` (no ranking in the block), ``malformed``, ``duplicate`` (prompt, annotator)."""
    if ranking not in ("world", "personal"):
        raise ValueError(f"CoVal ranking must be 'world' or 'personal', got {ranking!r}")
    rows, skipped, seen = [], Counter(), set()
    for _, record in _records(path, ("prompt_id", "annotator_id", "ranking_blocks")):
        block = (record["ranking_blocks"] or {}).get(ranking)
        text = _ranking(block)
        if text is None:
            skipped["empty" if not block else "malformed"] += 1
            continue
        key = (str(record["prompt_id"]), str(record["annotator_id"]))
        if key in seen:
            skipped["duplicate"] += 1
            continue
        seen.add(key)
        rows.append({"prompt_id": key[0], "annotator_id": key[1], "ranking": text})
    return pd.DataFrame(rows, columns=["prompt_id", "annotator_id", "ranking"]), dict(skipped)


def profiles_table(rankings: pd.DataFrame, min_voters: int) -> pd.DataFrame:
    """One row per prompt with at least ``min_voters`` voters: prompt_id, voters, the profile's JSON
    (:meth:`.profiles.Profile.to_dict`, equal rankings merged into counts), ties (voters with a tie)."""
    out = []
    for prompt, group in rankings.groupby("prompt_id", sort=True):
        if len(group) < min_voters:
            continue
        counts = group["ranking"].value_counts(sort=False)
        profile = Profile.from_strings(list(counts.index), counts.to_numpy(float), m=len(LETTERS))
        out.append({"prompt_id": prompt, "voters": len(group), "ties": int(group["ranking"].str.contains("=").sum()),
                    "profile": json.dumps(profile.to_dict())})  # fmt: skip
    return pd.DataFrame(out, columns=["prompt_id", "voters", "ties", "profile"])


def load_profiles(table: pd.DataFrame, limit: int | None = None) -> list[tuple[str, Profile]]:
    """(family, Profile) pairs of a profiles table (family ``coval``), the first ``limit`` prompts."""
    rows = table if limit is None else table.head(limit)
    return [("coval", Profile.from_dict(json.loads(text))) for text in rows["profile"]]


def _content(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, dict):
        content = "\n".join(str(part) for part in content.get("parts") or [])
    return "" if content is None else str(content)


def _role(message: dict) -> str:
    return str(message.get("role") or (message.get("author") or {}).get("role") or "user")


def read_texts(path: str | Path) -> pd.DataFrame:
    """Rows (prompt_id, candidate, conversation, response) of ``comparisons.jsonl``, four per prompt in the order
    A-D (candidate 0-3, the profiles' order): ``conversation`` the JSON list of the prompt's (role, text) messages,
    ``response`` the response's text. ValueError naming the line for a record outside the assumed schema."""
    rows, seen = [], set()
    for number, record in _records(path, ("prompt_id", "prompt", "responses")):
        prompt = str(record["prompt_id"])
        if prompt in seen:
            raise ValueError(f"{path}:{number}: prompt {prompt} appears twice")
        seen.add(prompt)
        messages = [[_role(m), _content(m)] for m in (record["prompt"] or {}).get("messages") or []]
        if not any(text.strip() for _, text in messages):
            raise ValueError(f"{path}:{number}: prompt {prompt} has no message text")
        texts = {r.get("response_index"): "\n".join(_content(m) for m in r.get("messages") or [])
                 for r in record["responses"] or []}  # fmt: skip
        bad = [c for c in LETTERS if not texts.get(c, "").strip()]
        if bad:
            raise ValueError(f"{path}:{number}: prompt {prompt} has no response text for {bad}")
        conversation = json.dumps(messages)
        rows += [{"prompt_id": prompt, "candidate": i, "conversation": conversation, "response": texts[c]}
                 for i, c in enumerate(LETTERS)]  # fmt: skip
    return pd.DataFrame(rows, columns=["prompt_id", "candidate", "conversation", "response"])
