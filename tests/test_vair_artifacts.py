"""Paper 08's tables and back: problems with their gold steps, MATH-500 items, skipped records, the eval split; the
training items each member of the small model can draw (K4's evidence), its vocabulary and context."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from neurips26.vair.artifacts import (
    eval_split,
    item_tables,
    math_items_from_frame,
    math_items_to_frame,
    problems_from_frame,
    problems_to_frame,
    read_records,
    skipped_frame,
    with_dataset,
)
from neurips26.vair.dataset import build_items
from neurips26.vair.gsm8k import read_gsm8k
from neurips26.vair.items import items_to_frame, render
from neurips26.vair.math500 import MathItem
from neurips26.vair.problems import generate_problems
from neurips26.vair.sequences import encode_grade
from neurips26.vair.small_model import member_draws, vocabulary_and_context
from neurips26.vair.training import Member, standard_members


@pytest.fixture(scope="module")
def problems():
    return generate_problems(12, seed=3, max_steps=3, bound=20, max_premise=6)


@pytest.fixture(scope="module")
def items(problems):
    return build_items(problems, np.random.default_rng(0), eval_fraction=0.25)


def test_problems_round_trip_with_their_gold_steps(problems):
    frame = problems_to_frame(problems)
    assert list(frame["n_steps"]) == [len(p.steps) for p in problems] and frame["answer"].dtype == np.int64
    assert problems_from_frame(frame) == problems
    with pytest.raises(ValueError, match=r"needs the columns \['steps'\]"):
        problems_from_frame(frame.drop(columns="steps"))


def test_a_source_with_no_record_kept_is_refused_naming_the_reasons(tmp_path):
    path = tmp_path / "test.jsonl"
    path.write_text('{"question": "Ann has 7 cakes. How many?", "answer": "7/2=<<7/2=3.5>>3.5\\n#### 3.5"}\n')
    with pytest.raises(
        ValueError, match=r"no GSM8K record was kept \(skipped by reason: \{'no_integer_final_answer': 1"
    ):
        read_records(path, read_gsm8k, "GSM8K")


def test_skipped_records_are_listed_by_reason_with_the_kept_count():
    frame = skipped_frame({"undefined_operand": 3, "answer_mismatch": 1}, kept=40)
    assert frame.values.tolist() == [["answer_mismatch", 1], ["undefined_operand", 3], ["kept", 40]]


def test_math_items_round_trip_with_their_reasoning_unverified():
    items = [MathItem("test/1.json/none/0", "test/1.json", "What is $1+1$?", "$\\boxed{2}$", "2", "Algebra", 1)]
    frame = math_items_to_frame(items)
    assert frame["reasoning_valid"].isna().all()
    assert math_items_from_frame(frame) == items


def test_the_eval_split_is_what_graders_read_and_must_not_be_empty(items):
    chosen = eval_split(items)
    assert chosen and all(item.split == "eval" for item in chosen)
    assert len(chosen) == sum(item.split == "eval" for item in items)
    with pytest.raises(ValueError, match="none of the 2 items"):
        eval_split([item for item in items if item.split == "train"][:2])
    framed = with_dataset(pd.DataFrame({"a": [1]}), "gsm8k")
    assert list(framed.columns) == ["dataset", "a"] and framed["dataset"].tolist() == ["gsm8k"]


def test_each_member_draws_no_vair_item_it_must_not_see(items):
    members = standard_members([0])
    table = member_draws(items, members)
    train = [item for item in items if item.split == "train"]
    n = {key: sum((i.category, i.flaw) == key for i in train) for key in {(i.category, i.flaw) for i in train}}
    assert len(table) == 5 * 6 and list(table["member"].unique()) == list(range(5))
    for (held_out, category, flaw), row in table.set_index(["heldout_flaw", "category", "flaw"]).iterrows():
        excluded = category == "VAIR" and (row["regime"] == "outcome" or flaw == held_out)
        assert row["n_items"] == (0 if excluded else n.get((category, flaw), 0)), (held_out, category, flaw)
        assert (row["draw_share"] == 0) == (row["n_items"] == 0)
    shares = table.groupby(["member", "category"])["draw_share"].sum().unstack()
    assert np.allclose(shares.loc[0, ["VAVR", "IAIR"]], 0.5) and shares.loc[0, "VAIR"] == 0  # category-balanced
    assert np.allclose(shares.loc[1], 1 / 3)  # a process member: VAVR, VAIR (three flaws), IAIR


def test_a_member_whose_pool_lacks_a_category_is_refused(items):
    with pytest.raises(ValueError, match="no training items of the categories"):
        member_draws([item for item in items if item.category != "IAIR"], [Member("outcome", "none", 0)])


def test_the_vocabulary_holds_every_word_and_n_plus_one_and_the_context_the_longest_grade_sequence(items):
    texts = [render(item) for item in items]
    vocab, context = vocabulary_and_context(texts)
    numbers = {int(w) for text in texts for w in text.split() if w.isdigit()}
    assert all(str(n + 1) in vocab for n in numbers)
    lengths = encode_grade(vocab, texts, [0] * len(texts)).lengths
    assert context == int(lengths.max()) == max(len(text.split()) for text in texts) + 3  # <bos> <grade> <verdict>


def test_the_item_tables_hold_every_certified_item_and_its_counts(problems):
    settings = {"seed": 0, "per_flaw": 1, "iair_per_problem": 1, "eval_fraction": 0.25}
    frame, table = item_tables(problems, settings, "synthetic")
    assert frame.equals(items_to_frame(build_items(problems, np.random.default_rng(0), eval_fraction=0.25)))
    assert table["dataset"].eq("synthetic").all() and table["total"].sum() == len(frame)
    assert settings["seed"] == 0  # the caller's settings are left as they were
