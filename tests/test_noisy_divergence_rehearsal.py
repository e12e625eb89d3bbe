"""Paper 09's rehearsal (issue 38): the block derived from the paper block passes the paper's checks and keeps every
shape but the one the plan cuts (with its reason, and a count at the real shape above this machine), the fixture
shards are paper 07's and are read by the training job's readers, and what the rehearsal found at paper scale: the
report read a corpus description that only the shared BPE corpus writes (the downloaded shards have none), and the
loss-curve figure failed when no cell of the deep shape was trained."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch

from conftest import ROOT
from neurips26.common.config import derived_rehearsal, load_yaml
from neurips26.common.rehearsal import work_ratio
from neurips26.common.token_files import read_tokens
from neurips26.noisy_divergence import experiment, plots, rehearsal
from neurips26.noisy_divergence.model import LM, LMConfig, n_parameters
from neurips26.noisy_divergence.summary import divergence_table, failure_mode_cells, report_tables, runs_table
from neurips26.symm_optim import rehearsal as symm_rehearsal
from neurips26.symm_optim import sources
from test_noisy_divergence_summary import DETECT, UNIGRAM, tables

DATA = load_yaml(ROOT / "config/noisy_divergence.yaml")
SCHEMA = load_yaml(ROOT / "workflow/schemas/noisy_divergence.schema.yaml")
PAPER = DATA["paper"]
MACHINE_BYTES = 24e9


@pytest.mark.parametrize("factor", [1, 2])
def test_the_rehearsal_block_passes_the_papers_checks_and_keeps_its_shapes_but_the_cut_width(factor):
    block = derived_rehearsal("noisy_divergence", DATA, SCHEMA, factor)
    experiment.check_config(block)
    assert block["corpus"] == {**PAPER["corpus"], "train_shards": 1}
    for key in ("seq_len", "precision", "attention", "lr", "betas"):
        assert block["train"][key] == PAPER["train"][key]
    assert block["train"]["micro_batch"] == factor and block["train"]["batch_size"] == 2  # 2 micro-batches, then 1
    assert experiment.job_names(block) == ["B1p3w_noqk_lr1_g0"] and block["seeds"] == [max(PAPER["seeds"])]
    assert block["jobs"] == [job for job in PAPER["jobs"] if job["shape"] == "B1p3w"]
    cut, real = block["shapes"]["B1p3w"], PAPER["shapes"]["B1p3w"]
    assert {k: v for k, v in cut.items() if v != real[k]} == rehearsal.CUT_WIDTH
    assert cut["n_heads"] * cut["head_dim"] == cut["d_model"]  # as at the real width (22 x 128 = 2,816)
    assert {k: v for k, v in block["shapes"].items() if k != "B1p3w"} == {
        k: v for k, v in PAPER["shapes"].items() if k != "B1p3w"
    }


def test_the_rehearsed_job_is_the_largest_model_and_the_cut_is_forced_by_its_memory():
    """B1p3w has the most parameters of the jobs' shapes; its float32 weights, gradients and AdamW state (16 bytes
    a parameter) exceed this 24 GB machine, as the plan's reason says, and the cut shape's are under 2 GB."""

    vocab = PAPER["corpus"]["vocab_size"]

    def parameters(shape: dict) -> int:  # untied embedding and head, per layer q, k, v, o, the SwiGLU and 2 norms
        d, inner = shape["d_model"], shape["n_heads"] * shape["head_dim"]
        return 2 * vocab * d + shape["n_layers"] * (4 * d * inner + 3 * d * shape["d_ff"] + 2 * d) + d

    cut = derived_rehearsal("noisy_divergence", DATA, SCHEMA)["shapes"]["B1p3w"]
    with torch.device("meta"):  # the count is the model's (a 2B-parameter model takes seconds to build, even on meta)
        assert parameters(cut) == n_parameters(LM(LMConfig(**cut, vocab_size=vocab)))["total"] == 87_431_424
    counts = {job["shape"]: parameters(PAPER["shapes"][job["shape"]]) for job in PAPER["jobs"]}
    assert max(counts, key=counts.get) == rehearsal.REHEARSED_SHAPE
    assert 16 * counts["B1p3w"] > MACHINE_BYTES and "32.2 GB" in rehearsal.SHAPE_REASON
    assert counts["B1p3w"] == 2_014_974_720 and f"{16 * counts['B1p3w'] / 1e9:.1f} GB" == "32.2 GB"
    assert 16 * parameters(cut) < 2e9


def test_the_training_work_ratio_counts_tokens_and_the_real_width():
    block = derived_rehearsal("noisy_divergence", DATA, SCHEMA)
    ratio = work_ratio(rehearsal.PLAN, "noisy_divergence_train", PAPER, block, {"job": "B1p3w_noqk_lr1_g0"})
    tokens = PAPER["train"]["steps"] * PAPER["train"]["batch_size"] / (1 * 2)  # optimizer windows, forward only apart
    assert tokens * 20 < ratio < tokens * 30  # B1p3w passes a token through 23 x the cut shape's weights


def test_the_fixture_shards_are_paper_07s_and_feed_the_training_job(tmp_path):
    block = derived_rehearsal("noisy_divergence", DATA, SCHEMA, 2)
    payloads = rehearsal.fixtures()
    assert payloads == symm_rehearsal.fixtures()  # one source, one fixture (the driver refuses two that differ)
    files = sources.shard_files(block["corpus"]["name"], block["corpus"]["train_shards"])
    assert sorted(payloads) == sorted(f"symm_optim/fineweb_edu_qwen3/{n}" for n in [*files["val"], *files["train"]])
    streams = {}
    for key, payload in payloads.items():
        path = tmp_path / key.rpartition("/")[2]
        path.write_bytes(payload)
        streams[path.name] = read_tokens(path)
    val, train = streams[files["val"][0]], streams[files["train"][0]]
    special = experiment.special_ids(block["corpus"])
    assert int(val.max()) < block["corpus"]["vocab_size"] and train[0] == block["corpus"]["eot_id"]
    assert not np.isin(train[1:50], special[1:]).any()  # documents of ordinary ids
    seq, micro = block["train"]["seq_len"], block["train"]["micro_batch"]
    assert len(val) - 1 >= max(block["train"]["eval_tokens"], micro * seq)  # validation window and probe batch
    assert len(train) > 4 * (seq + 1)


def _report_inputs(tmp_path, runs: pd.DataFrame, corpus_meta) -> SimpleNamespace:
    paths = {}
    throughput = pd.DataFrame(
        [{"job": "j", "members": 1, "tokens": 1, "seconds": 1.0, "tokens_per_s": 1.0, "model_flops_per_s": 1.0,
          "gemm_model_flops_per_s": 2.0}]
    )  # fmt: skip
    frames = {"runs": runs, "divergence": divergence_table(runs), "classifier": pd.DataFrame([{"task": "null"}]),
              "throughput": throughput}  # fmt: skip
    for name, frame in frames.items():
        paths[name] = tmp_path / f"{name}.parquet"
        frame.to_parquet(paths[name])
    # pilot: the rule's empty input where the scale has no pilot (paper)
    return SimpleNamespace(**{k: str(v) for k, v in paths.items()}, stats=[], corpus_meta=corpus_meta, pilot=[])


def test_the_report_describes_downloaded_shards_without_a_corpus_description(tmp_path):
    """At paper scale the corpus is paper 07's downloaded shards, which have no meta.json (the report rule's input is
    empty): the description comes from the corpus block. The rehearsal's report job failed here."""
    runs = runs_table(*tables(), DETECT, UNIGRAM)
    params = SimpleNamespace(shapes=PAPER["shapes"], corpus=PAPER["corpus"])
    out = report_tables(_report_inputs(tmp_path, runs, []), params)
    assert "FineWeb-Edu" in out["corpus"] and "9 training shards" in out["corpus"] and "151,936" in out["corpus"]
    meta = tmp_path / "meta.json"
    meta.write_text(json.dumps({"corpus": "c", "documents": {"train": 3}, "tokens": {"train": 1000}, "vocab_size": 5}))
    smoke = report_tables(_report_inputs(tmp_path, runs, str(meta)), SimpleNamespace(shapes={}, corpus={}))
    assert smoke["corpus"] == "c (3 training documents, 1,000 tokens, byte-level BPE of 5)"


def test_the_loss_curves_figure_is_drawn_when_no_cell_of_the_deep_shape_was_trained():
    """The rehearsal trains the widest shape only; a paper block may likewise train no cell the figure shows."""
    runs = runs_table(*tables(), DETECT, UNIGRAM)
    curves = tables()[1]
    comparisons = {"deep_shape": "absent", "base_lr_multiplier": 1, "reference_setting": "insert-k5-a0.5-d0.5"}
    cells = failure_mode_cells(runs, comparisons)
    assert cells == []
    fig = plots.loss_curves(curves, cells)
    assert len(fig.axes) == 1 and "no cell" in fig.axes[0].texts[0].get_text()
    assert plots.diagnostic_traces(tables()[2], curves, cells) is not None


def test_the_rates_figure_takes_a_wilson_bound_a_rounding_error_past_the_rate():
    """The quick run of issue 40's review stopped here: 0 of 12 has a Wilson lower bound of 2.8e-17, above p = 0."""
    divergence = pd.DataFrame(
        {"shape": ["deep"], "qk_norm": [False], "lr_multiplier": [1], "setting": ["clean"], "k": [0], "n": [12],
         "p": [0.0], "low": [2.775558e-17], "high": [0.2425]}
    )  # fmt: skip
    assert plots.divergence_rates(divergence) is not None
