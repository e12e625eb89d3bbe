"""Single-shot inference on test scaffolds (one greedy rollout each: zero oracle calls) and K sampled completions
each (for best-of-K), both scored afterwards for evaluation only; molecules per second are timed."""

from __future__ import annotations

import logging
import time

import pandas as pd
import torch

from neurips26.amortix import environment as env
from neurips26.amortix.artifacts import score_candidates
from neurips26.amortix.evaluation import candidate_frame
from neurips26.amortix.experiment import element_index
from neurips26.amortix.policy import GraphTransformerPolicy
from neurips26.amortix.rollout import rollout

log = logging.getLogger("neurips26.amortix")


def sample_policy(
    name: str,
    policy: GraphTransformerPolicy,
    scaffolds: list[str],
    config: env.EnvConfig,
    oracle,
    k: int,
    temperature: float,
    seed: int,
) -> pd.DataFrame:
    """Greedy (one per scaffold) and sampled (`k` per scaffold) completions by `policy` (on the job's device), with
    their evaluation scores; the draws come from a CPU generator seeded with `seed`, so they do not depend on
    the device."""
    elements = element_index(config)
    checked = [env.make_scaffold(s, config) for s in scaffolds]
    frames = []
    for mode, repeats in (("greedy", 1), ("sample", k)):
        start = time.perf_counter()
        episodes = rollout(
            policy,
            checked,
            repeats,
            config,
            elements,
            temperature=temperature,
            greedy=mode == "greedy",
            generator=torch.Generator().manual_seed(seed),
        )
        seconds = time.perf_counter() - start
        frame = candidate_frame(name, scaffolds, [e.outcome for e in episodes], repeats)
        frames.append(score_candidates(frame, oracle).assign(mode=mode, molecules_per_second=len(frame) / seconds))
        log.info(
            "%s %s: %d molecules in %.2f s (%.0f per second), valid %.3f, retained %.3f, mean score %.3f",
            name,
            mode,
            len(frame),
            seconds,
            len(frame) / seconds,
            frame["valid"].mean(),
            frame["retained"].mean(),
            frames[-1]["score"].mean(),
        )
    return pd.concat(frames, ignore_index=True)
