"""Paper 05's rehearsal (issue 38): the block derived from the paper block passes the paper's own checks at the
paper's shapes, and the BBO-Pile fixture files are read by the paper's reader as the real files are."""

from __future__ import annotations

import io

import pytest

from conftest import ROOT
from neurips26.bbo_pile import experiment, rehearsal
from neurips26.bbo_pile.pile import check_algorithms, read_pile
from neurips26.common.config import derived_rehearsal, load_yaml

DATA = load_yaml(ROOT / "config/bbo_pile.yaml")
SCHEMA = load_yaml(ROOT / "workflow/schemas/bbo_pile.schema.yaml")


@pytest.mark.parametrize("factor", [1, 2])
def test_the_rehearsal_block_passes_the_papers_checks_at_the_papers_shapes(factor):
    block = derived_rehearsal("bbo_pile", DATA, SCHEMA, factor)
    paper = DATA["paper"]
    experiment.check_config(block)
    for key in ("context", "tokenizer", "pile", "seed"):
        assert block[key] == paper[key]
    assert block["budget"] == rehearsal.TRIALS < paper["budget"]
    assert block["models"] == {"q30m": paper["models"]["q30m"]}
    assert block["runs"] == {"q30m_t2": {"model": "q30m", "tokens": rehearsal.TOKENS}}
    assert block["training"]["batch"] == 2 and block["training"]["micro_batch"] == factor
    cut = ("batch", "micro_batch")
    assert {k: v for k, v in block["training"].items() if k not in cut} == {
        k: v for k, v in paper["training"].items() if k not in cut
    }
    boxes = experiment.blackbox_catalog(block["blackboxes"])
    assert sorted(boxes["dim"].unique()) == [10] and sorted(boxes["split"]) == ["eval", "train", "train"]
    assert block["evaluate"]["run"] == block["model_seeds"]["run"] == "q30m_t2"


def test_the_fixture_files_are_read_by_the_papers_reader_into_trajectories():
    block = derived_rehearsal("bbo_pile", DATA, SCHEMA)
    vocab = experiment.corpus_vocabulary(block["optimizers"], block["tokenizer"], block["pile"])
    payloads = rehearsal.fixtures()
    assert sorted(payloads) == [f"bbo_pile/pile/{block['pile'][s]}" for s in ("train", "valid")]
    for name, lines in rehearsal.LINES.items():
        text = payloads[f"bbo_pile/pile/{name}"].decode("utf-8")
        assert not text.endswith("\n") and text.count("\n") == lines - 1  # compile_data.py's "\n".join
        counts = check_algorithms(io.StringIO(text), vocab, name)
        assert set(counts) == set(rehearsal.PILE_ALGORITHMS) == set(block["pile"]["algorithms"])
        reading = read_pile(io.StringIO(text), vocab, block["context"], block["pile"]["max_malformed"], source=name)
        assert len(reading.malformed) == 1 and "bin 1000" in reading.malformed[0][1]  # a pre-v0.5 line, tolerated
        assert sum(reading.kept.values()) >= lines - 1 - sum(reading.skipped.values()) >= 0.8 * lines
        assert all(
            seq[0] == vocab.bos and seq[-1] == vocab.eos and seq.size <= block["context"] for seq in reading.sequences
        )
        assert {"INT", "CAT"} <= {
            kind
            for seq in reading.sequences
            for kind in vocab.decode_text(seq).split("type:")[1:]
            for kind in [kind[:3]]
        }
    assert rehearsal.fixtures() == payloads and rehearsal.fixtures(2) != payloads  # seeded; `items` grows the files


def test_the_work_of_the_cut_rules_extrapolates_to_paper_scale():
    from neurips26.common.rehearsal import work_ratio

    block, paper = derived_rehearsal("bbo_pile", DATA, SCHEMA), DATA["paper"]
    wildcards = {"family": "bbob", "run": "q30m_t2", "seed_group": "1", "decoding": "constrained"}
    for rule in set(rehearsal.PLAN.work) - {"bbo_pile_report"}:
        assert work_ratio(rehearsal.PLAN, rule, paper, block, wildcards) > 1
    assert work_ratio(rehearsal.PLAN, "bbo_pile_train", paper, block, wildcards) == 1e9 / rehearsal.TOKENS
    # the trials count: more than runs x trials, since a later trial's prompt is longer
    runs = paper["evaluate"]["boxes"] * len(paper["evaluate"]["seeds"])
    optimize = work_ratio(rehearsal.PLAN, "bbo_pile_optimize", paper, block, wildcards)
    assert optimize > runs * paper["budget"] / block["budget"]
    free = work_ratio(rehearsal.PLAN, "bbo_pile_optimize", paper, block, {**wildcards, "decoding": "free"})
    assert free != optimize


def test_micro_batches_accumulate_the_gradient_of_the_whole_batch():
    """The rehearsal counted 4.9 GB of tensors per 4,096-token row of the 30M model: the paper's 32 rows a step in one
    forward (145 GB) cannot fit an 80 GB GPU, so a step accumulates `micro_batch` rows at a time."""
    import numpy as np
    import torch

    from neurips26.bbo_pile.model import DecoderConfig
    from neurips26.bbo_pile.training import TrainSettings, pack_sequences, train_decoder

    rng = np.random.default_rng(0)
    seqs = [np.concatenate([[1], 2 + (rng.integers(0, 9) + np.arange(rng.integers(4, 9))) % 9]) for _ in range(40)]
    train, valid = pack_sequences(seqs[:32], 16, pad=0), pack_sequences(seqs[32:], 16, pad=0)
    config = DecoderConfig(
        vocab_size=11, d_model=16, n_layers=1, n_heads=2, n_query_groups=1, head_size=8, mlp_hidden=32, context=32
    )
    whole = TrainSettings(tokens_budget=400, batch=4, lr=3e-3, min_lr=3e-4, warmup=2, eval_every=3, seed=1)
    parts = TrainSettings(**{**whole.__dict__, "micro_batch": 1})
    a, a_rows = train_decoder(train, valid, config, whole, pad=0, device="cpu")
    b, b_rows = train_decoder(train, valid, config, parts, pad=0, device="cpu")
    for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True):
        torch.testing.assert_close(x, y, rtol=1e-4, atol=1e-5)
    assert [r["tokens"] for r in a_rows] == [r["tokens"] for r in b_rows]
    assert [r["val_loss"] for r in a_rows] == pytest.approx([r["val_loss"] for r in b_rows], rel=1e-4)
    with pytest.raises(ValueError, match="micro_batch"):
        TrainSettings(tokens_budget=1, micro_batch=0)
