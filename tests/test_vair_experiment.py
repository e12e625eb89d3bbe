"""Paper 08's config read as the rules need it: the parse-time names agree with the library's registries, the members
are the training's, every scale's block passes its checks, a bad block is refused naming the key, the grade tables
of each scale, and the external backends' options and API key check."""

from __future__ import annotations

import copy

import pytest

from conftest import ROOT
from neurips26.common.config import load_yaml, validate
from neurips26.vair import experiment
from neurips26.vair.backends import BACKENDS
from neurips26.vair.items import FLAWS
from neurips26.vair.training import NO_FLAW, REGIMES, standard_members

DATA = load_yaml(ROOT / "config/vair.yaml")
SCHEMA = load_yaml(ROOT / "workflow/schemas/vair.schema.yaml")


def test_the_parse_time_names_are_the_librarys():
    assert experiment.REGIMES == tuple(REGIMES) and experiment.FLAWS == FLAWS and experiment.NO_FLAW == NO_FLAW
    assert set(experiment.REFERENCE_BACKENDS) <= set(BACKENDS)


def test_members_are_the_trainings_standard_members_in_order():
    cfg = {"regimes": ["outcome", "process"], "seeds": [0, 1, 2]}
    expected = [
        {"regime": m.regime, "heldout_flaw": m.heldout_flaw, "seed": m.seed} for m in standard_members([0, 1, 2])
    ]
    assert experiment.members(cfg) == expected
    assert len(expected) == 15 and expected[0] == {"regime": "outcome", "heldout_flaw": "none", "seed": 0}
    assert experiment.members({"regimes": ["process"], "seeds": [4]})[0]["heldout_flaw"] == "missing_premise"


@pytest.mark.parametrize("scale", ["smoke", "quick", "paper"])
def test_every_scale_of_the_real_config_passes_its_schema_and_checks(scale):
    validate(DATA, SCHEMA, "config/vair.yaml")
    experiment.check_config(DATA[scale])


def _broken(edit):
    cfg = copy.deepcopy(DATA["paper"])
    edit(cfg)
    return cfg


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda c: c.update(datasets=["gsm8k"]), "must be listed"),
        (lambda c: c["items"].pop("gsm8k"), r"items: no block for the datasets \['gsm8k'\]"),
        (lambda c: c["items"]["gsm8k"].update(eval_fraction=0.5), "items.gsm8k.eval_fraction must be 1.0"),
        (lambda c: c.update(datasets=["synthetic"]), r"items: blocks \['gsm8k'\]"),
        (lambda c: c.update(seeds=[0, 0]), "repeat"),
        (lambda c: c.update(regimes=["outcome"]), r"mechanism.regimes: \['process'\]"),
        (lambda c: c["problems"].update(min_steps=6), "min_steps 6 > max_steps 5"),
        (lambda c: c["problems"].update(bound=12), "bound 12 must exceed max_premise 12"),
        (lambda c: c["train"].update(warmup=20000), "train.warmup 20000 must be below"),
        (lambda c: c["external"]["http"].update(base_url=None), "external.http.base_url is not set"),
        (lambda c: c["external"]["http"].pop("model"), "external.http.model is not set"),
        (lambda c: c["external"]["hf"].update(model=""), "external.hf.model is not set"),
        (lambda c: c["external"]["hf"].update(workers=4), r"keys \['workers'\] do not apply to a hf backend"),
        (lambda c: c["external"].update(small={"kind": "http", "base_url": "http://x", "model": "m"}), "not 'small'"),
    ],
)
def test_a_bad_block_is_refused_naming_the_key(edit, message):
    with pytest.raises(ValueError, match=message):
        experiment.check_config(_broken(edit))


def test_the_grade_tables_of_each_scale():
    assert experiment.grade_tables(DATA["quick"]) == [("synthetic", "reference"), ("synthetic", "small")]
    paper = experiment.grade_tables(DATA["paper"])
    assert paper[:3] == [("synthetic", "reference"), ("gsm8k", "reference"), ("synthetic", "small")]
    assert sorted(paper[3:]) == sorted((d, b) for d in ("synthetic", "gsm8k", "math") for b in ("http", "hf"))
    assert experiment.external_names(DATA["paper"], "hf") == ["hf"] and experiment.external_names(DATA["quick"]) == []


def test_external_options_drop_the_kind_and_an_unset_key_variable_is_named():
    options = experiment.external_options(DATA["paper"], "http")
    assert "kind" not in options and options["base_url"].startswith("http://") and options["model"]
    with pytest.raises(KeyError, match="no external backend 'vllm'"):
        experiment.external_options(DATA["paper"], "vllm")
    keyed = _broken(lambda c: c["external"]["http"].update(api_key_env="VAIR_TEST_KEY"))
    assert "VAIR_TEST_KEY, which is not set" in experiment.missing_api_key(keyed, "http", environ={})
    assert experiment.missing_api_key(keyed, "http", environ={"VAIR_TEST_KEY": "k"}) is None
    assert experiment.missing_api_key(DATA["paper"], "http", environ={}) is None  # no key variable, none needed
