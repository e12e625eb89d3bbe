"""Paper 04's quick design (issue 41): the network claims rest on 3 seeds trained as one batched ensemble per arch,
every kept checkpoint counts as early; the SNR grid holds the authors' 12 points; every hard claim names its null."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import yaml

from neurips26.bird import experiment
from neurips26.common.claims import load_definitions

ROOT = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((ROOT / "config/bird.yaml").read_text())
DEFINITIONS = {d.claim_id: d for d in load_definitions(ROOT / "config/claims/bird.yaml")}
NETWORK_CLAIMS = ("C5a", "C5b", "C6a", "C6b")


def test_quick_network_claims_rest_on_three_seeds_batched_in_one_job_per_arch():
    nets = CONFIG["quick"]["networks"]
    assert len(nets["seeds"]) >= 3 and experiment.seed_groups(nets) == [list(nets["seeds"])]
    assert all(DEFINITIONS[c].min_runs >= 3 and DEFINITIONS[c].kind in ("hard", "soft") for c in NETWORK_CLAIMS)


def test_quick_training_keeps_only_early_checkpoints():
    nets = CONFIG["quick"]["networks"]
    steps_per_epoch = math.ceil(nets["n_train"] / nets["train"]["batch"])
    assert max(nets["train"]["checkpoint_epochs"]) * steps_per_epoch <= nets["early_steps"]
    assert nets["train"]["checkpoint_epochs"][-1] == nets["train"]["epochs"]


def test_quick_snr_grid_holds_the_authors_grid():
    grid = np.log10(experiment.snr_grid(CONFIG["quick"]["snr"]))
    authors = np.log10(np.logspace(-2, 2, 12))
    assert len(grid) > len(authors)
    assert all(np.isclose(grid, a, atol=1e-9).any() for a in authors)


def test_every_hard_claim_names_its_null_and_c3b_is_soft_with_its_reason():
    hard = [d for d in DEFINITIONS.values() if d.kind == "hard"]
    assert {d.claim_id for d in hard} == {"C2a", "C4a"}
    assert all("Null:" in d.statement and "null" in d.metric for d in hard)
    c3b = DEFINITIONS["C3b"]
    assert c3b.kind == "soft" and "Null:" in c3b.statement and "cannot decide" in c3b.source
