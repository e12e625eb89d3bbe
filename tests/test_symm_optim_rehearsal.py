"""Paper 07's rehearsal (issue 38): the block derived from the paper block passes the paper's own checks at the
paper's shapes, and the FineWeb-Edu fixture shards are read by the paper's readers as the real shards are."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import ROOT
from neurips26.common.config import derived_rehearsal, load_yaml
from neurips26.common.token_files import read_tokens
from neurips26.symm_optim import artifacts, experiment, rehearsal, sources

DATA = load_yaml(ROOT / "config/symm_optim.yaml")
SCHEMA = load_yaml(ROOT / "workflow/schemas/symm_optim.schema.yaml")


@pytest.mark.parametrize("factor", [1, 2])
def test_the_rehearsal_block_passes_the_papers_checks_at_the_papers_shapes(factor):
    block = derived_rehearsal("symm_optim", DATA, SCHEMA, factor)
    paper = DATA["paper"]
    experiment.check_config(block)
    assert block["model"]["dense"] == paper["model"]["dense"] and block["corpus"]["vocab_size"] == 151936
    # the MoE's depth is cut (its job was killed at 23 GB on this machine), every matrix keeps its shape
    assert block["model"]["moe"] == {**paper["model"]["moe"], "n_layers": rehearsal.MOE_LAYERS} != paper["model"]["moe"]
    assert block["train"]["seq_len"] == paper["train"]["seq_len"] == 1024
    assert block["train"]["batch_size"] == factor and block["train"]["steps"] == 1
    assert block["spectrum_steps"] == [1]  # the spectra of the 151,936 x 1,024 matrices are taken once
    # one job per kept method and router: the baselines and the heaviest updates, at the largest multiplier
    assert experiment.job_names(block) == [
        "dense/adamw_lr0_s44",
        "dense/hybrid_lr0_s44",
        "moe/adamw_lr0_s44",
        "moe/centered_left_polar_lr0_s44",
    ]
    assert block["lr_multipliers"] == [2.0]


def test_the_fixture_shards_are_read_as_the_real_shards_by_the_papers_reader(tmp_path):
    block = derived_rehearsal("symm_optim", DATA, SCHEMA)
    files = sources.shard_files("fineweb_edu_qwen3", block["corpus"]["train_shards"])
    payloads = rehearsal.fixtures()
    assert sorted(payloads) == sorted(f"symm_optim/fineweb_edu_qwen3/{n}" for n in [*files["val"], *files["train"]])
    paths = {}
    for key, payload in payloads.items():
        paths[key.rpartition("/")[2]] = path = tmp_path / key.rpartition("/")[2]
        path.write_bytes(payload)
        tokens = read_tokens(path)
        assert tokens.dtype == np.dtype("<u4") and tokens.size == rehearsal.SHARD_TOKENS
        assert tokens[0] == rehearsal.QWEN3_EOT and int(tokens.max()) < block["corpus"]["vocab_size"]
        assert 10 < int((tokens == rehearsal.QWEN3_EOT).sum()) < tokens.size // 20  # documents of tens to 1,500
    train = artifacts.read_stream([paths[n] for n in files["train"]])
    need = block["train"]["steps"] * 2 * (block["train"]["seq_len"] + 1)  # the steps at the doubled micro-batch
    assert train.size > need and artifacts.read_stream([paths[files["val"][0]]]).size >= block["train"]["eval_tokens"]


def test_every_paper_building_a_shard_builds_the_same_bytes():
    """Paper 09 reads the same shards (the driver refuses two papers' fixtures of one source that differ)."""
    small, nine = rehearsal.fineweb_shards(1, 1), rehearsal.fineweb_shards(1, 9)
    assert all(nine[key] == payload for key, payload in small.items()) and len(nine) == 10
    assert rehearsal.fineweb_shards(2, 1) != small  # `items` grows every shard


@pytest.mark.parametrize("scale", ["smoke", "quick"])
def test_the_parameter_count_of_the_memory_requests_is_the_models(scale):
    import torch

    from neurips26.symm_optim.model import LM, n_parameters

    cfg = DATA[scale]  # paper scale's models (625,784,832 and 953,313,792) take 30 s to build on meta
    for arch in experiment.ARCHS:
        with torch.device("meta"):
            model = LM(experiment.model_config(cfg, arch, 0))
        assert experiment.parameter_count(cfg, arch) == n_parameters(model)["total"]


def test_the_step_time_job_holds_one_model_and_gradient_not_one_per_method():
    """At paper scale a copy of the model and its gradients per method, and the whole batch's logits, held 100 GB
    on a job that asked for 4 (found by counting the rehearsal's shapes)."""
    from neurips26.common.tensor_memory import TensorMemory
    from neurips26.symm_optim.step_time import step_times

    cfg = {**DATA["smoke"], "train": {**DATA["smoke"]["train"], "batch_size": 2, "seq_len": 4}}
    weights = 4 * experiment.parameter_count(cfg, "dense")
    with TensorMemory() as memory:
        rows = step_times(cfg, "dense", repeats=1, warmup=0)
    assert {r["method"] for r in rows} == set(cfg["methods"])
    assert memory.peak < 2 * weights * (1 + len(cfg["methods"]))  # 9.2 x the weights with a copy per method, 5.2 now
    assert memory.peak <= experiment.step_time_bytes(cfg)


def test_the_work_of_the_cut_rules_extrapolates_to_paper_scale():
    from neurips26.common.rehearsal import work_ratio

    block = derived_rehearsal("symm_optim", DATA, SCHEMA)
    train = work_ratio(rehearsal.PLAN, "symm_optim_train", DATA["paper"], block, {"arch": "dense"})
    assert train == pytest.approx((30000 * 28 * 1024 + 61 * 10551296 / 3) / (1 * 1024 + 2 * 1024 / 3))
    assert work_ratio(rehearsal.PLAN, "symm_optim_step_time", DATA["paper"], block, {}) == 53 * 7 / (4 * 4)
