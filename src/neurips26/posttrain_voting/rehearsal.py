"""Paper 14's rehearsal: what it cuts from the paper block, and a fixture of CoVal's
``merged_comparisons_annotators.jsonl`` in the schema :mod:`.coval` assumes (one assessment per line: prompt_id,
annotator_id, ranking_blocks with world, personal and unacceptable blocks; rankings with ties).

Not rehearsed: the base model's scoring of the responses (``posttrain_voting_base_model``), which needs transformers
and the model's weights, neither of which the rehearsal's environment has; the rehearsal's axioms jobs run without
the ``base_model`` reference. tests/test_posttrain_voting_base_model.py runs the scoring on a tiny
stand-in model, and on a tiny random Llama where transformers is installed, and the axioms job's base_model path on
a scores table."""

from __future__ import annotations

import json

import numpy as np

from neurips26.common.rehearsal import Plan

PROMPTS = 12  # prompts of the fixture at items=1, each with 3-9 annotators
RANKINGS = ("A>B>C>D", "B>A>C=D", "A=B>C>D", "D>C>B>A", "C>A>B>D", "A>C>D>B", "B>D>A>C", "A>B=C=D")


def coval_lines(prompts: int = PROMPTS, seed: int = 0) -> list[str]:
    """JSON lines of a CoVal-shaped fixture: ``prompts`` prompts, 3-9 annotators each, world rankings always,
    personal rankings on about a third, an unacceptable block on some; one duplicated assessment and one
    malformed ranking per ten prompts (the reader counts and skips them)."""
    rng = np.random.default_rng(seed)
    lines = []
    for p in range(prompts):
        for a in range(int(rng.integers(3, 10))):
            world = RANKINGS[int(rng.integers(len(RANKINGS)))]
            personal = [{"ranking": RANKINGS[int(rng.integers(len(RANKINGS)))]}] if rng.random() < 0.35 else []
            blocks = {"world": [{"ranking": world}], "personal": personal,
                      "unacceptable": [{"rating": ["D is unacceptable"]}] if rng.random() < 0.2 else []}  # fmt: skip
            lines.append(json.dumps({"prompt_id": f"p{p:04d}", "annotator_id": f"a{a:03d}", "ranking_blocks": blocks}))
        if p % 10 == 0:
            lines.append(lines[-1])  # the same annotator twice on one prompt
            bad = {"world": [{"ranking": "A>B>C"}], "personal": [], "unacceptable": []}
            lines.append(json.dumps({"prompt_id": f"p{p:04d}", "annotator_id": "zz", "ranking_blocks": bad}))
    return lines


def comparisons_lines(prompts: int = PROMPTS, seed: int = 0) -> list[str]:
    """JSON lines of a fixture of CoVal's ``comparisons.jsonl`` in the schema :func:`.coval.read_texts` assumes, for
    the prompts of :func:`coval_lines`: a conversation (a system message on some, content as a string or as
    ``parts``) and four responses A-D of 1-40 words, listed in a shuffled order."""
    rng = np.random.default_rng([seed, 46])
    words = "the a model answer voters rank four responses policy reference prefer world personal".split()
    lines = []
    for p in range(prompts):
        messages = [{"role": "system", "content": "Be helpful."}] if p % 3 == 0 else []
        question = " ".join(rng.choice(words, int(rng.integers(3, 12))))
        messages.append({"author": {"role": "user"}, "content": {"parts": [question + "?"]}})
        responses = [{"response_index": c, "messages": [{"role": "assistant",
                      "content": " ".join(rng.choice(words, int(rng.integers(1, 41))))}]} for c in "ABCD"]  # fmt: skip
        order = rng.permutation(4)
        lines.append(json.dumps({"prompt_id": f"p{p:04d}", "prompt": {"messages": messages},
                                 "responses": [responses[i] for i in order]}))  # fmt: skip
    return lines


def _checks(cfg: dict, wc: dict) -> float:
    """Axiom checks of one axioms job: seeds x profiles x references x betas x rules x axioms."""
    syn = cfg["synthetic"]
    profiles = len(syn["families"]) * syn["profiles"] if wc["source"] == "synthetic" else cfg["coval"]["prompts"]
    return (len(cfg["seeds"]) * profiles * len(cfg["references"]["kinds"]) * len(cfg["betas"]) * len(cfg["rules"])
            * len(cfg["axioms"]))  # fmt: skip


def _searches(cfg: dict, wc: dict) -> float:
    """Hill-climbing steps and threshold-search checks of the adversarial job."""
    adv, thr = cfg["adversarial"], cfg["threshold"]
    climbs = len(adv["rules"]) * len(adv["axioms"]) * len(adv["betas"]) * adv["steps"] * adv["restarts"]
    return len(cfg["seeds"]) * (climbs + 2 * len(thr["betas"]) * thr["draws"])


PLAN = Plan(
    budgets={
        "coval.prompts": 8,
        "adversarial.steps": 5,
        "threshold.draws": 4,
        "threshold.refine": 1,
        "threshold.bound.steps": 5,
        "threshold.directed.max_iter": 5,
        "equivalence.profiles": 1,
    },
    sweeps={
        "seeds": lambda seeds: seeds[:1],
        "references.kinds": lambda kinds: [k for k in kinds if k != "base_model"] or kinds,
    },
    micro_batch=(),
    shapes={},
    fixture_paths={},
    work={
        "posttrain_voting_coval": lambda cfg, wc: 1,  # reads the file whole at both scales
        "posttrain_voting_axioms": _checks,
        "posttrain_voting_adversarial": _searches,
        "posttrain_voting_claims": lambda cfg, wc: 1,
        "posttrain_voting_report": lambda cfg, wc: 1,
    },
    not_rehearsed={
        "posttrain_voting_base_model": (
            "the base model's scoring of CoVal's responses needs transformers (envs/llm.yaml) and the model's weights"
            " (config/sources.yaml), which the rehearsal's environment lacks; its axioms jobs run without the"
            " base_model reference (module docstring)"
        ),
    },
    note=(
        "seed 0 only, no base_model reference (its scoring is not rehearsed), 8 CoVal prompts per ranking block,"
        " 5 hill-climbing steps, 4 threshold draws per beta, one"
        " refined threshold, 5 steps of the bound's minimisation and of the directed search; every rule, axiom"
        " and beta, and the uniform and Dirichlet references, are the paper's"
    ),
)
DATA_GROWTH: dict[str, int] = {}


def fixtures(items: int = 1) -> dict[str, bytes]:
    """Registry path -> bytes: CoVal's merged file at ``items`` times the base number of prompts."""
    text = "\n".join(coval_lines(PROMPTS * items)) + "\n"
    return {"posttrain_voting/coval/merged_comparisons_annotators.jsonl": text.encode()}
