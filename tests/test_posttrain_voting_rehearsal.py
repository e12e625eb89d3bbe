"""Paper 14's rehearsal: the rehearsal block derived from the paper block passes the paper's own checks and keeps
every rule, axiom, beta and source, and every reference but the base model's (its scoring is not rehearsed, with the
reason); every cut rule does more work at paper scale."""

from __future__ import annotations

import pytest

from conftest import ROOT
from neurips26.common.config import derived_rehearsal, load_yaml
from neurips26.common.rehearsal import work_ratio
from neurips26.posttrain_voting import experiment, rehearsal

CONFIG = load_yaml(ROOT / "config/posttrain_voting.yaml")
SCHEMA = load_yaml(ROOT / "workflow/schemas/posttrain_voting.schema.yaml")


@pytest.mark.parametrize("factor", [1, 2])
def test_the_rehearsal_block_passes_the_papers_checks_and_keeps_its_shapes(factor):
    block = derived_rehearsal("posttrain_voting", CONFIG, SCHEMA, factor)
    experiment.check_config(block, "rehearsal")
    paper = CONFIG["paper"]
    for key in ("rules", "axioms", "betas", "sources"):
        assert block[key] == paper[key]
    assert "base_model" in paper["references"]["kinds"]
    assert block["references"]["kinds"] == [k for k in paper["references"]["kinds"] if k != "base_model"]
    assert "posttrain_voting_base_model" in rehearsal.PLAN.not_rehearsed
    assert block["seeds"] == [0] and block["coval"]["prompts"] < paper["coval"]["prompts"]


@pytest.mark.parametrize(
    ("rule", "wildcards"),
    [("posttrain_voting_axioms", {"source": "world"}), ("posttrain_voting_adversarial", {})],
)
def test_every_cut_rule_does_more_work_at_paper_scale(rule, wildcards):
    block = derived_rehearsal("posttrain_voting", CONFIG, SCHEMA)
    assert 1 < work_ratio(rehearsal.PLAN, rule, CONFIG["paper"], block, wildcards) < 1e6
    assert work_ratio(rehearsal.PLAN, "posttrain_voting_report", CONFIG["paper"], block, {}) == 1
