"""Paper 02's config at one scale, read as the rules need it: the trained configurations of the ablation, their
decodings, the sample sets, and the checks the schema cannot express (run when the workflow is parsed).

A configuration is named ``{rep}-{tt}-{ren}`` as the rows of the paper's Table 3: the representation (``bipart``,
the bipartite device-net walk; ``devpin``, AnalogGenie's device-pin walk), circuit-type conditioning (``type`` or
``notype``) and device renaming (``rename`` or ``norename``). A bipartite model is decoded with and without the
grammar (``grammar``, ``free``), a device-pin model without (the grammar is defined on bipartite walks). The sample
set ``random_s{seed}`` is the random-logits baseline under the grammar, with type tokens. Sample sets are named
``{config}_s{seed}`` or ``random_s{seed}``.
"""

from __future__ import annotations

import re

import numpy as np

from . import devpin, serialize
from .metrics import rename
from .tokens import CIRCUIT_TYPES, Vocabulary

__all__ = [
    "RANDOM",
    "REPRESENTATIONS",
    "check_config",
    "decodings",
    "parse_config_name",
    "sample_sets",
    "training_walks",
    "vocabulary",
]

REPRESENTATIONS = ("bipart", "devpin")
RANDOM = "random"
_NAME = re.compile(r"^(bipart|devpin)-(type|notype)-(rename|norename)$")


def parse_config_name(name: str) -> dict:
    """``{"rep", "typed", "renamed"}`` of a configuration name; ValueError naming the expected form."""
    match = _NAME.match(name)
    if not match:
        raise ValueError(f"configuration {name!r} is not <bipart|devpin>-<type|notype>-<rename|norename>")
    rep, tt, ren = match.groups()
    return {"rep": rep, "typed": tt == "type", "renamed": ren == "rename"}


def vocabulary(rep: str) -> Vocabulary:
    return Vocabulary.bipartite() if rep == "bipart" else devpin.vocabulary()


def walker(rep: str):
    """``walk_tokens(circuit, type | None, rng)`` of a representation."""
    return serialize.walk_tokens if rep == "bipart" else devpin.walk_tokens


def decodings(name: str) -> list[str]:
    """The decodings a configuration is sampled with: grammar and free for bipartite walks, free for device-pin."""
    if name == RANDOM:
        return ["grammar"]
    return ["grammar", "free"] if parse_config_name(name)["rep"] == "bipart" else ["free"]


def sample_sets(cfg: dict) -> list[str]:
    """Every sample set of a scale: each configuration x seed, then the random baseline per seed."""
    names = [f"{c}_s{seed}" for c in cfg["configs"] for seed in cfg["seeds"]]
    if cfg["random_baseline"]:
        names += [f"{RANDOM}_s{seed}" for seed in cfg["seeds"]]
    return names


def split_sample_set(name: str) -> tuple[str, int]:
    config, _, seed = name.rpartition("_s")
    return config, int(seed)


def training_walks(walks: list[list[str]], name: str, seed: int, pool: int | None = None) -> list[list[str]]:
    """The token walks a configuration trains on: its representation's training walks (traversal augmentation
    already applied), the type token dropped without conditioning, and with renaming each walk replaced by one
    renamed copy (a generator seeded by ``seed``; indices from 1..``pool`` where given), as the reference's
    ``PREPROCESSING_Renaming.py`` replaces each sequence: renaming leaves the number of walks unchanged."""
    spec = parse_config_name(name)
    out = []
    rng = np.random.default_rng([seed, 2])
    for walk in walks:
        body = walk if spec["typed"] else [t for t in walk if not t.startswith("CIRCUIT_")]
        if spec["renamed"]:
            out.append(rename(body, rng, pool))
        else:
            out.append(list(body))
    return out


def prompts(per_type: int, name: str, types: list[str]) -> list[tuple[str, list[str]]]:
    """(requested type, prompt) of every sample of a set: ``per_type`` per circuit type of the training data, the
    type token as prompt with conditioning, ``VSS`` without (the type then only labels the sample's slot)."""
    typed = name == RANDOM or parse_config_name(name)["typed"]
    return [(t, [f"CIRCUIT_{t}"] if typed else ["VSS"]) for t in types for _ in range(per_type)]


def check_config(cfg: dict) -> None:
    """What the schema cannot say: configuration names, the random baseline's need for a bipartite
    configuration's context, sample lengths within the model context, type weights among the vocabulary's types."""
    for name in cfg["configs"]:
        parse_config_name(name)
    if len(set(cfg["configs"])) != len(cfg["configs"]):
        raise ValueError(f"configs lists a configuration twice: {cfg['configs']}")
    for rep in {parse_config_name(c)["rep"] for c in cfg["configs"]}:
        if cfg["sample"]["max_len"][rep] > cfg["context"][rep]:
            raise ValueError(
                f"sample.max_len.{rep} = {cfg['sample']['max_len'][rep]} exceeds context.{rep} = {cfg['context'][rep]}"
            )
    data = cfg["data"]
    if data["source"] == "generator":
        unknown = sorted(set(data["weights"]) - set(CIRCUIT_TYPES))
        if unknown:
            raise ValueError(f"data.weights names circuit types outside the vocabulary: {unknown}")
    if len(set(cfg["seeds"])) != len(cfg["seeds"]):
        raise ValueError(f"seeds repeat: {cfg['seeds']}")
