"""Paper 16's rehearsal (issue 38): the rehearsal block derived from the paper block passes the paper's own checks
(and its claims' thresholds), keeps the model, the ceiling's computes and every simulated configuration; the paper
downloads nothing."""

from __future__ import annotations

import pytest

from conftest import ROOT, assert_keeps_shapes
from neurips26.common.claims import load_definitions
from neurips26.common.config import derived_rehearsal, load_yaml
from neurips26.multistage_training import experiment, rehearsal
from neurips26.multistage_training.claims import threshold_mismatches

CONFIG = load_yaml(ROOT / "config/multistage_training.yaml")
SCHEMA = load_yaml(ROOT / "workflow/schemas/multistage_training.schema.yaml")
SHAPES = ("model", "ceiling.base_computes", "ceiling.window", "ceiling.budget", "simulation.configs", "comparisons")


@pytest.mark.parametrize("factor", [1, 2])
def test_the_rehearsal_block_passes_the_papers_checks_and_keeps_its_shapes(factor):
    block = derived_rehearsal("multistage_training", CONFIG, SCHEMA, factor)
    experiment.check_config(block)
    definitions = load_definitions(ROOT / "config/claims/multistage_training.yaml")
    assert threshold_mismatches(definitions, block["comparisons"]) == []
    assert_keeps_shapes(block, CONFIG["paper"], SHAPES)
    assert max(block["plateau"]["chain_lengths"]) == max(CONFIG["paper"]["plateau"]["chain_lengths"])
    assert block["simulation"]["seeds"] == [0] and rehearsal.fixtures(1) == {}
    paper = CONFIG["paper"]  # the sweeps issue 40 added, cut to their two ends
    assert block["ceiling"]["budgets"] == [min(paper["ceiling"]["budgets"]), max(paper["ceiling"]["budgets"])]
    assert block["allocation"]["rollouts"] == [
        min(paper["allocation"]["rollouts"]),
        max(paper["allocation"]["rollouts"]),
    ]


def test_the_work_of_a_phenomenon_counts_its_sweeps():
    """The ceiling's budget sweep and the allocation's rollouts sweep are part of their jobs' work."""
    block = derived_rehearsal("multistage_training", CONFIG, SCHEMA)
    for name, key, more in (("ceiling", "budgets", [1.0e9]), ("allocation", "rollouts", [32])):
        grown = {**block[name], key: block[name][key] + more}
        assert rehearsal._phenomenon_work(grown, name) > rehearsal._phenomenon_work(block[name], name)
    # the allocation and the plateau are solved in the null model without the pretraining gate too: twice the work
    alloc = block["allocation"]
    settings = (
        len(alloc["base_computes"])
        * len(alloc["demo_qualities"])
        * (len(alloc["reward_noises"]) + len(alloc["rollouts"]) - 1)
    )
    optimum = alloc["n_grid"] + 1 + rehearsal.REFINE
    assert rehearsal._phenomenon_work(alloc, "allocation") == 2 * settings * optimum
    assert rehearsal._phenomenon_work(block["plateau"], "plateau") == 2 * len(block["plateau"]["chain_lengths"])


@pytest.mark.parametrize(
    "rule, wildcards",
    [
        *(("multistage_training_phenomenon", {"phenomenon": name}) for name in experiment.PHENOMENA),
        *(
            ("multistage_training_simulate", {"config": name, "seed": "0"})
            for name in ("sft_rl", "rl_only", "sft_only")
        ),
    ],
)
def test_every_cut_rule_does_more_work_at_paper_scale(rule, wildcards):
    from neurips26.common.rehearsal import work_ratio

    block = derived_rehearsal("multistage_training", CONFIG, SCHEMA)
    assert 1 < work_ratio(rehearsal.PLAN, rule, CONFIG["paper"], block, wildcards) < 1e6
    assert work_ratio(rehearsal.PLAN, "multistage_training_report", CONFIG["paper"], block, {}) == 1
    assert not rehearsal.PLAN.not_rehearsed  # no rule left out on purpose (the driver reports any the DAG misses)
