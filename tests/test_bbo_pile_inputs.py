"""Paper 05's bad inputs: inconsistent configs stop before any job, naming the key (unknown functions, runs naming
missing models, heads that do not group, conditioning on an optimizer absent from the data, model seeds repeating
the scale's seed, trajectories longer than the context, no RS to normalise the regret)."""

from __future__ import annotations

import copy

import pytest
import yaml

from conftest import ROOT, expect_config_error
from neurips26.bbo_pile import experiment

CONFIG = yaml.safe_load((ROOT / "config/bbo_pile.yaml").read_text())


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda c: c["blackboxes"]["go"].update(functions=["sphere", "camel"]), r"go.functions: unknown \['camel'\]"),
        (lambda c: c["blackboxes"].update(eval_functions=[25]), r"eval_functions: \[25\] are not among"),
        (lambda c: c["runs"]["d32_t1"].update(model="d48"), r"runs.d32_t1.model: 'd48' is not one of models"),
        (lambda c: c["evaluate"].update(run="d128"), "evaluate.run: 'd128' is not one of runs"),
        (lambda c: c["evaluate"].update(conditions=["CMA", "TPE"]), r"evaluate.conditions: \['TPE'\] generate no"),
        (
            lambda c: c["evaluate"].update(boxes=500),
            "evaluate.boxes: 500 held-out boxes asked for, the eval split has 54",
        ),
        (lambda c: c["models"]["d64"].update(n_heads=4, n_query_groups=3), "models.d64: n_heads 4 is not a multiple"),
        (lambda c: c["model_seeds"].update(seeds=[0, 1]), "model_seeds.seeds: 0 is the scale's seed"),
        (lambda c: c["model_seeds"].update(run="d128_t1"), "model_seeds.run: 'd128_t1' is not one of runs"),
        (lambda c: c["model_seeds"].update(condition="TPE"), "model_seeds.condition: 'TPE' generates no training"),
        (  # found by the rehearsal: without RS the tables job failed after every optimize job had run
            lambda c: c.update(optimizers=[o for o in c["optimizers"] if o != "RS"]),
            r"optimizers: \[.*\] lack RS, whose first trial normalises every regret",
        ),
        (
            lambda c: c.update(context=256),
            r"context: a 24-trial trajectory on \S+ \(dim 5\) takes \d+ tokens, more than the context of 256",
        ),
    ],
)
def test_an_inconsistent_config_is_rejected_naming_the_problem(change, message):
    cfg = copy.deepcopy(CONFIG["quick"])
    change(cfg)
    with pytest.raises(ValueError, match=message):
        experiment.check_config(cfg)


def test_every_shipped_scale_passes_the_checks():
    for scale in ("smoke", "quick", "paper"):
        experiment.check_config(CONFIG[scale])
    boxes = experiment.blackbox_catalog(CONFIG["quick"]["blackboxes"])
    assert set(boxes.loc[boxes["split"] == "eval", "function"]) == {f"f{k}" for k in range(19, 25)}
    picked = experiment.eval_boxes(boxes, 12)
    assert len(picked) == 12 and (picked["split"] == "eval").all() and picked["function"].nunique() >= 4


def test_a_model_seed_is_one_of_the_scales_seed_and_the_further_ones():
    cfg = CONFIG["quick"]
    assert experiment.model_seeds(cfg) == [0, 1, 2]
    assert experiment.model_seed(cfg, "2") == 2 and experiment.model_seed(cfg, 0) == 0  # 0: the scaling run's own
    with pytest.raises(ValueError, match="model seed 7 is not one of"):
        experiment.model_seed(cfg, 7)


def test_a_bad_config_stops_snakemake_before_any_job(workflow_copy):
    path = workflow_copy / "config/bbo_pile.yaml"
    data = yaml.safe_load(path.read_text())
    data["smoke"]["context"] = 64
    path.write_text(yaml.safe_dump(data))
    expect_config_error(
        workflow_copy,
        "results/smoke/bbo_pile/report.md",
        must_contain=("config/bbo_pile.yaml", "smoke", "context: a 12-trial trajectory"),
    )
