"""Paper 02's config, sample sets and jobs, and the bad inputs refused before any job (netlists are refused in
test_analogtobi_grammar.py, manifests in test_analogtobi_dataset.py)."""

from __future__ import annotations

import copy

import pytest
import yaml

from conftest import ROOT, expect_config_error, planned_jobs
from neurips26.analogtobi import experiment

CONFIG = yaml.safe_load((ROOT / "config/analogtobi.yaml").read_text())


@pytest.mark.parametrize("scale", ["smoke", "quick", "paper"])
def test_every_scale_of_the_committed_config_is_accepted(scale):
    experiment.check_config(CONFIG[scale])


def test_sample_sets_are_every_configuration_and_seed_then_the_random_baseline():
    quick = CONFIG["quick"]
    sets = experiment.sample_sets(quick)
    seeds = quick["seeds"]
    assert len(seeds) == 3
    assert sets[:3] == [f"devpin-type-norename_s{s}" for s in seeds]
    assert sets[-3:] == [f"random_s{s}" for s in seeds] and len(sets) == (len(quick["configs"]) + 1) * 3
    assert experiment.decodings("bipart-type-rename") == ["grammar", "free"]
    assert experiment.decodings("devpin-type-norename") == ["free"] and experiment.decodings("random") == ["grammar"]
    assert experiment.split_sample_set("bipart-type-rename_s12") == ("bipart-type-rename", 12)


def test_training_walks_drop_the_type_token_without_conditioning_and_rename_with_renaming():
    walk = ["CIRCUIT_Opamp", "VSS", "M_S", "NM1", "M_D", "NET1", "M_D", "NM2", "M_S", "VSS", "TRUNCATE"]
    assert experiment.training_walks([walk], "bipart-type-norename", 0) == [walk]
    assert experiment.training_walks([walk], "bipart-notype-norename", 0) == [walk[1:]]
    walks = [walk] * 20
    renamed = experiment.training_walks(walks, "bipart-type-rename", 0)
    assert len(renamed) == 20  # each walk replaced by one renamed copy, as the reference
    assert all([t for t in r if not t.startswith("NM")] == [t for t in walk if not t.startswith("NM")] for r in renamed)
    assert all(r[3] != r[7] and r[3].startswith("NM") for r in renamed)  # two devices stay two devices
    assert len({(r[3], r[7]) for r in renamed}) > 10  # fresh names per walk
    assert renamed == experiment.training_walks(walks, "bipart-type-rename", 0)  # same seed, same names
    assert renamed != experiment.training_walks(walks, "bipart-type-rename", 1)
    pooled = experiment.training_walks(walks, "bipart-type-rename", 0, pool=3)
    assert {r[3] for r in pooled} | {r[7] for r in pooled} <= {"NM1", "NM2", "NM3"}


def test_prompts_ask_every_type_with_its_token_or_start_at_vss_without_conditioning():
    assert experiment.prompts(2, "bipart-type-rename", ["LDO", "Mirror"]) == [
        ("LDO", ["CIRCUIT_LDO"]), ("LDO", ["CIRCUIT_LDO"]),
        ("Mirror", ["CIRCUIT_Mirror"]), ("Mirror", ["CIRCUIT_Mirror"]),
    ]  # fmt: skip
    assert experiment.prompts(1, "devpin-notype-norename", ["LDO"]) == [("LDO", ["VSS"])]
    assert experiment.prompts(1, "random", ["LDO"]) == [("LDO", ["CIRCUIT_LDO"])]


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda c: c["configs"].append("bipart-typed-rename"), "is not <bipart|devpin>-<type|notype>"),
        (lambda c: c["configs"].append(c["configs"][0]), "lists a configuration twice"),
        (lambda c: c["sample"]["max_len"].update(bipart=500), "sample.max_len.bipart = 500 exceeds context.bipart"),
        (lambda c: c["data"]["weights"].update(Amplifier=0.5), "outside the vocabulary: ['Amplifier']"),
        (lambda c: c.update(seeds=[0, 0]), "seeds repeat"),
    ],
)
def test_bad_configs_are_refused_naming_the_problem(edit, message):
    cfg = copy.deepcopy(CONFIG["quick"])
    edit(cfg)
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        experiment.check_config(cfg)


def test_a_bad_config_stops_snakemake_before_any_job(workflow_copy):
    path = workflow_copy / "config/analogtobi.yaml"
    cfg = yaml.safe_load(path.read_text())
    cfg["smoke"]["sample"]["max_len"]["devpin"] = 4096
    path.write_text(yaml.safe_dump(cfg))
    expect_config_error(
        workflow_copy,
        "results/smoke/analogtobi/report.md",
        must_contain=("config/analogtobi.yaml", "smoke", "sample.max_len.devpin = 4096 exceeds context.devpin"),
    )


def test_the_smoke_dag_trains_each_configuration_and_seed_and_samples_the_random_baseline_without_a_model(
    workflow_copy,
):
    jobs = planned_jobs(workflow_copy, "results/smoke/analogtobi/report.md", config=("scale=smoke",))
    smoke = CONFIG["smoke"]
    runs = len(smoke["configs"]) * len(smoke["seeds"])
    assert jobs["analogtobi_train"] == runs
    assert jobs["analogtobi_sample"] == jobs["analogtobi_evaluate"] == runs + len(smoke["seeds"])
    assert jobs["analogtobi_walks"] == 2 and jobs["analogtobi_data"] == 1
