"""Paper 12's rehearsal (issue 38): the rehearsal block derived from the paper block passes the paper's own checks,
keeps every algorithm, kind and the LP check's limit, and keeps the largest trees; the paper downloads nothing."""

from __future__ import annotations

import pytest

from conftest import ROOT, assert_keeps_shapes
from neurips26.common.config import derived_rehearsal, load_yaml
from neurips26.thresh_mcts import experiment, rehearsal

CONFIG = load_yaml(ROOT / "config/thresh_mcts.yaml")
SCHEMA = load_yaml(ROOT / "workflow/schemas/thresh_mcts.schema.yaml")
SHAPES = ("rules", "instances.kinds", "instances.gaussian_fixed", "lp_check", "cost.branching", "cost.rules", "seed")


@pytest.mark.parametrize("factor", [1, 2])
def test_the_rehearsal_block_passes_the_papers_checks_and_keeps_its_shapes(factor):
    paper = CONFIG["paper"]
    block = derived_rehearsal("thresh_mcts", CONFIG, SCHEMA, factor)
    experiment.check_config(block, ROOT)
    assert_keeps_shapes(block, paper, SHAPES)
    leaves = [spec["branching"] ** spec["depth"] for spec in paper["instances"]["random"]]
    kept = block["instances"]["random"][0]
    assert kept["branching"] ** kept["depth"] == max(leaves)
    assert max(block["cost"]["depths"]) == max(paper["cost"]["depths"]) and block["deltas"] == [min(paper["deltas"])]
    assert rehearsal.fixtures(1) == {}


def test_the_per_round_cost_tape_holds_rounds_plus_one_pulls_per_leaf(monkeypatch):
    """Found by the rehearsal: the cost job's tape held K x (K + rounds) rewards, 26 GB at the paper's depth 10."""
    from neurips26.thresh_mcts import simulation

    shapes = []
    tape = simulation.reward_tape
    monkeypatch.setattr(
        simulation,
        "reward_tape",
        lambda mu, kind, length, seed: shapes.append((len(mu), length)) or tape(mu, kind, length, seed),
    )
    cost = simulation.per_round_cost([2, 3], 3, 4, 1, ["d_tracking", "ratio", "ratio_incremental"], 0)
    assert shapes == [(9, 5), (27, 5)] and (cost["rounds"] == 4).all()


@pytest.mark.parametrize("algo", ["d_tracking", "ratio", "oracle"])
def test_every_cut_rule_does_more_work_at_paper_scale(algo):
    from neurips26.common.rehearsal import work_ratio

    block = derived_rehearsal("thresh_mcts", CONFIG, SCHEMA)
    ratios = {r: work_ratio(rehearsal.PLAN, r, CONFIG["paper"], block, {"algo": algo}) for r in rehearsal.PLAN.work}
    for rule in ("instances", "theory", "simulate", "equivalence", "cost", "evaluate"):
        assert 1 < ratios[f"thresh_mcts_{rule}"] < 1e8, rule
    assert ratios["thresh_mcts_equivalence"] == (100 * 5 * 500000) / (2 * 1 * 2000)
    assert ratios["thresh_mcts_report"] == 1
    assert rehearsal._instances(block) == 3 and rehearsal._leaves_total(block) == 2 * 27 + 81  # I3 x 2 kinds, R7
    assert not rehearsal.PLAN.not_rehearsed  # no rule left out on purpose (the driver reports any the DAG misses)
