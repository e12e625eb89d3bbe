"""Answer patching (neurips26.vair.patching): the N -> N+1 sources, the control positions, and flip rates that
agree with grading the counterfactual texts outright when every layer is patched."""

from __future__ import annotations

import random

import pytest
import torch

from neurips26.common.ensemble import Ensemble
from neurips26.vair.decoding import grade
from neurips26.vair.model import Decoder, config_for
from neurips26.vair.patching import (
    ALL_LAYERS,
    PATCH_COLUMNS,
    _control_positions,
    patch_flip_rates,
    plus_one_sources,
)
from neurips26.vair.sequences import encode_grade
from neurips26.vair.vocabulary import Vocabulary


def _texts(n: int = 32) -> list[str]:
    rng = random.Random(0)
    texts = []
    for _ in range(n):
        a, b = rng.randint(2, 20), rng.randint(2, 20)
        texts.append(
            f"ava has {a} pens . ava buys {b} more pens . how many pens ? SOLUTION {a} + {b} = {a + b} ANSWER {a + b}"
        )
    return texts


@pytest.fixture(scope="module")
def setup():
    texts = _texts()
    vocab = Vocabulary.from_texts(texts, successors=True)
    return texts, vocab, Decoder(config_for("tiny", len(vocab), context=32, seed=5)).eval()


def test_plus_one_sources_change_exactly_the_named_number(setup):
    texts, vocab, _ = setup
    seq = encode_grade(vocab, texts[:2], [0, 0])
    source = plus_one_sources(vocab, seq.tokens, seq.answer, seq.lengths)
    changed = (source != seq.tokens).nonzero().tolist()
    assert changed == [[0, int(seq.answer[0])], [1, int(seq.answer[1])]]
    value = int(vocab.word(int(seq.tokens[0, seq.answer[0]])))
    assert vocab.word(int(source[0, seq.answer[0]])) == str(value + 1)
    with pytest.raises(ValueError, match="not integers|no n\\+1 word"):
        plus_one_sources(vocab, seq.tokens, torch.tensor([2, 2]), seq.lengths)  # "ava"
    with pytest.raises(ValueError, match="outside the sequence"):
        plus_one_sources(vocab, seq.tokens, seq.lengths, seq.lengths)


def test_control_positions_are_premise_numbers_of_the_problem_only(setup):
    texts, vocab, _ = setup
    seq = encode_grade(vocab, texts, [0] * len(texts))
    at = _control_positions(vocab, seq, torch.Generator().manual_seed(0))
    words = [vocab.word(int(seq.tokens[i, p])) for i, p in enumerate(at)]
    premises = [t.split(" SOLUTION")[0].split() for t in texts]
    assert all(w.isdigit() and w in p for w, p in zip(words, premises, strict=True))
    assert (at < seq.solution_start).all() and (at > 1).all()  # never a number of the solution or the answer
    assert set(at.tolist()) == {2 + 2, 2 + 7}  # both premises ("ava has A", "buys B") drawn, after <bos> <grade>
    no_premise = ["how many pens ? SOLUTION 3 + 4 = 7 ANSWER 7"]
    with pytest.raises(ValueError, match="no premise number"):
        _control_positions(vocab, encode_grade(vocab, no_premise, [0]), torch.Generator().manual_seed(0))


def test_patching_every_layer_equals_grading_the_counterfactual(setup):
    texts, vocab, model = setup
    table, fooled = patch_flip_rates(model, vocab, texts, seed=3, chunk=12)
    assert tuple(table.columns) == PATCH_COLUMNS
    assert sorted(set(table.layer)) == [ALL_LAYERS, 0, 1]  # states 0 .. L-1 and all at once (L = 2)
    ens = Ensemble([model])
    direct = grade(ens, vocab, texts).grades[0]
    assert fooled.tolist() == (direct == 3).tolist() and fooled.sum() > 0
    seq = encode_grade(vocab, texts, [0] * len(texts))
    flipped = grade(ens, vocab, [_plus_one(t) for t in texts]).grades[0] < 3
    rows = table.set_index(["condition", "layer"])
    assert rows.loc[("answer", ALL_LAYERS), "flips"] == int((flipped & direct.eq(3)).sum())
    assert (table.n_items == int(fooled.sum())).all()
    assert rows.loc[("answer", ALL_LAYERS), "flip_rate"] == pytest.approx(
        int((flipped & direct.eq(3)).sum()) / fooled.sum()
    )
    assert seq.tokens.shape[0] == len(texts)
    assert rows.loc[("answer", 0), "flips"] == rows.loc[("answer", ALL_LAYERS), "flips"]  # state 0 is the word itself
    capped, patched = patch_flip_rates(model, vocab, texts, seed=3, chunk=12, max_items=3)
    assert patched.sum() == 3 and (capped.n_items == 3).all()
    assert patched.tolist() == (fooled & (fooled.cumsum() <= 3)).tolist()  # the first three fooled items


def _plus_one(text: str) -> str:
    head, answer = text.rsplit(" ", 1)
    return f"{head} {int(answer) + 1}"
