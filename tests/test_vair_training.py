"""Batched training of the small model's members (neurips26.vair.training) on hand-made items: who grades what, each
member of a batched run trained as it would be alone, the trace, resume, and the stored payload."""

from __future__ import annotations

import random

import pytest
import torch

from fake_gpu import fake_gpu
from neurips26.common.loop import LoopSettings, job_device
from neurips26.vair.items import Item, Step, render
from neurips26.vair.model import config_for
from neurips26.vair.training import (
    NO_FLAW,
    TRACE_COLUMNS,
    Member,
    TrainSettings,
    grade_pool,
    pack,
    standard_members,
    train_members,
    unpack,
)
from neurips26.vair.vocabulary import Vocabulary


def _item(pid, split, category, flaw, sentences, steps, gt, first_invalid):
    answer = gt if category == "VAIR" else steps[-1][3]  # a shuffled solution still states the right answer
    return Item(
        item_id=f"{pid}-{category}-{flaw}",
        problem_id=pid,
        category=category,
        flaw=flaw,
        problem_sentences=tuple(sentences),
        question="How many apples does Ava have now?",
        steps=tuple(Step(f"{a} {op} {b}", r, f"Ava has {a} {op} {b} = {r} apples.") for a, op, b, r in steps),
        answer=answer,
        gt_answer=gt,
        answer_valid=answer == gt,
        reasoning_valid=first_invalid == -1,
        first_invalid_step=first_invalid,
        split=split,
    )


def make_items(n_problems: int, seed: int = 0) -> list[Item]:
    """Per problem ("has a, buys b, multiplies by k"): the valid solution, an arithmetic slip, and the four flaws."""
    rng = random.Random(seed)
    items = []
    for p in range(n_problems):
        a, b, k = rng.randint(2, 9), rng.randint(2, 9), rng.randint(2, 3)
        c, d = a + b, (a + b) * k
        split = "eval" if p % 4 == 3 else "train"
        full = (f"Ava has {a} apples.", f"Ava buys {b} more apples.", f"Ava multiplies the apples by {k}.")
        add, mul = (a, "+", b, c), (c, "*", k, d)
        pid = f"p{p}"
        items += [
            _item(pid, split, "VAVR", "none", full, [add, mul], d, -1),
            _item(pid, split, "IAIR", "arithmetic_slip", full, [(a, "+", b, c + 1), (c + 1, "*", k, d + k)], d, 0),
            _item(pid, split, "VAIR", "missing_premise", full[::2], [add, mul], d, 0),
            _item(pid, split, "VAIR", "missing_step", full, [mul], d, 0),
            _item(pid, split, "VAIR", "shuffled", full, [mul, add], d, 0),
            _item(pid, split, "VAIR", "circular", full, [(d, "/", k, c), mul], d, 0),
        ]
    return items


@pytest.fixture(scope="module")
def data():
    items = make_items(12)
    texts = [render(item) for item in items]
    return items, texts, Vocabulary.from_texts(texts, successors=True)


def test_members_and_pools_keep_vair_out_of_outcome_and_the_heldout_flaw_out_of_process(data):
    items, _, _ = data
    members = standard_members([0, 1, 2])
    assert len(members) == 15 and sum(m.regime == "outcome" for m in members) == 3
    chosen, probs = grade_pool(items, Member("outcome", NO_FLAW, 0))
    assert {items[i].category for i in chosen} == {"VAVR", "IAIR"}
    assert all(items[i].split == "train" for i in chosen)
    chosen, probs = grade_pool(items, Member("process", "shuffled", 0))
    assert "shuffled" not in {items[i].flaw for i in chosen}
    assert {items[i].flaw for i in chosen} >= {"missing_step", "circular", "missing_premise", "none"}
    by_category = {c: probs[[items[i].category == c for i in chosen]].sum() for c in ("VAVR", "VAIR", "IAIR")}
    assert by_category == pytest.approx({"VAVR": 1 / 3, "VAIR": 1 / 3, "IAIR": 1 / 3})  # category-balanced
    with pytest.raises(ValueError, match="holds out one of"):
        Member("outcome", "shuffled", 0)
    with pytest.raises(ValueError, match="holds out one of"):
        Member("process", NO_FLAW, 0)


def _train(data, members, steps=8, **kwargs):
    items, texts, vocab = data
    config = config_for("tiny", len(vocab), context=48)
    settings = TrainSettings(steps=steps, batch_size=6, lr=3e-3, warmup=2)
    return train_members(config, vocab, items, texts, members, settings, log=lambda _: None, device="cpu", **kwargs)


def test_each_member_of_a_batched_run_trains_as_it_would_alone(data):
    members = [Member("outcome", NO_FLAW, 0), Member("process", "circular", 0), Member("process", "shuffled", 1)]
    together = _train(data, members)
    alone = _train(data, members[1:2])
    assert together.ensemble.size == 3
    for name, stacked in together.ensemble.params.items():
        assert torch.allclose(stacked[1], alone.ensemble.params[name][0], atol=2e-5), name
    assert not torch.allclose(together.ensemble.params["embed.weight"][0], together.ensemble.params["embed.weight"][1])
    trace = together.trace
    assert tuple(trace.columns) == TRACE_COLUMNS and len(trace) == 3 * 8
    assert trace[trace.member == 1].heldout_flaw.unique().tolist() == ["circular"]
    assert trace.loss.tolist()[3:6] == pytest.approx(((trace.solve_loss * 3 + trace.grade_loss * 3) / 6).tolist()[3:6])


def test_the_fast_step_trains_as_the_vmap_reference(data):
    """The hand-batched forward is a pure refactor: same seeds, the same losses step by step and the same weights, to
    float rounding."""
    members = [Member("outcome", NO_FLAW, 0), Member("process", "shuffled", 1)]
    fast, reference = _train(data, members, steps=6), _train(data, members, steps=6, vmapped=True)
    assert fast.trace.loss.tolist() == pytest.approx(reference.trace.loss.tolist(), rel=1e-4, abs=1e-5)
    for name, stacked in fast.ensemble.params.items():
        assert torch.allclose(stacked, reference.ensemble.params[name], atol=1e-4), name


def test_training_lowers_the_loss(data):
    result = _train(data, [Member("outcome", NO_FLAW, 0)], steps=40)
    losses = result.trace.loss
    assert losses.iloc[-10:].mean() < 0.6 * losses.iloc[:5].mean()


def test_a_killed_run_resumes_to_the_same_weights_and_trace(data, tmp_path):
    members = [Member("outcome", NO_FLAW, 3), Member("process", "missing_step", 3)]
    whole = _train(data, members, steps=6)
    settings = LoopSettings(checkpoint=tmp_path / "ckpt", fingerprint="x", every_steps=2)

    class Killed(Exception):
        pass

    def killer(line):
        if line.startswith("step 5/"):
            raise Killed

    items, texts, vocab = data
    config = config_for("tiny", len(vocab), context=48)
    s = TrainSettings(steps=6, batch_size=6, lr=3e-3, warmup=2)
    with pytest.raises(Killed):
        train_members(config, vocab, items, texts, members, s, settings, device="cpu", log=killer)
    resumed = train_members(config, vocab, items, texts, members, s, settings, device="cpu", log=lambda _: None)
    for name, p in whole.ensemble.params.items():
        assert torch.equal(p, resumed.ensemble.params[name]), name
    assert resumed.trace.equals(whole.trace)
    ens, vocab_back, members_back = unpack(pack(resumed, vocab))
    assert members_back == members and vocab_back == vocab
    assert torch.equal(ens.params["lm_head.weight"], resumed.ensemble.params["lm_head.weight"])


@pytest.mark.gpu_rule("vair_train")
def test_every_member_trains_on_the_jobs_device(data):
    """The batched members train on the job's (fake) device: a batch or a model left on the CPU fails there."""
    items, texts, vocab = data
    config = config_for("tiny", len(vocab), context=48)
    settings = TrainSettings(steps=2, batch_size=4, lr=3e-3, warmup=1)
    members = [Member("outcome", NO_FLAW, 0), Member("process", "shuffled", 1)]
    with fake_gpu() as device:
        result = train_members(config, vocab, items, texts, members, settings, device=job_device(), log=lambda _: None)
        assert all(p.device == device for p in result.ensemble.params.values())
