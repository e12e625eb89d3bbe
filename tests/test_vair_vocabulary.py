"""The small model's vocabulary and sequence encoding (neurips26.vair.vocabulary, .sequences) on hand-written
rendered items with known positions."""

from __future__ import annotations

import pytest
import torch

from neurips26.vair.sequences import Sequences, encode_grade, encode_solve, first_error_labels, solve_prompts
from neurips26.vair.vocabulary import PAD, VERDICTS, Vocabulary

VALID = "Tom has 3 apples . Ann gives him 4 . How many now ? SOLUTION 3 + 4 = 7 7 * 2 = 14 ANSWER 14"
SLIP = "Tom has 3 apples . Ann gives him 4 . How many now ? SOLUTION 3 + 4 = 8 8 * 2 = 16 ANSWER 16"
SHORT = "Sue has 5 . How many ? SOLUTION 5 - 2 = 3 ANSWER 3"


@pytest.fixture(scope="module")
def vocab() -> Vocabulary:
    return Vocabulary.from_texts([VALID, SLIP, SHORT])


def test_vocabulary_orders_specials_then_numbers_then_words(vocab):
    assert vocab.id(PAD) == 0
    words = vocab.words
    numbers = [w for w in words if w.lstrip("-").isdigit()]
    assert numbers == ["2", "3", "4", "5", "7", "8", "14", "16"]  # numeric, not lexicographic, order
    assert words.index("2") < words.index("+") < words.index("ANSWER")  # ascii order after the numbers
    assert vocab.verdict_ids.tolist() == [vocab.id(v) for v in VERDICTS]
    assert vocab.id("<G3>") != vocab.id("3")  # verdict tokens are not number tokens


def test_vocabulary_rejects_unknown_words_by_name(vocab):
    with pytest.raises(ValueError, match=r"\['banana', 'pears'\]"):
        vocab.encode(["Tom has banana . pears SOLUTION"])
    with pytest.raises(ValueError, match="'99' is not in the vocabulary"):
        vocab.id("99")
    with pytest.raises(ValueError, match="special tokens"):
        Vocabulary.from_texts(["a <G1> b"])


def test_vocabulary_round_trips_and_reads_integers(vocab):
    assert Vocabulary.from_json(vocab.to_json()) == vocab
    assert "17" in Vocabulary.from_texts([SLIP], successors=True) and "17" not in vocab
    successor = vocab.successor_ids()
    assert successor[vocab.id("7")] == vocab.id("8") and successor[vocab.id("8")] == -1  # no "9"
    assert successor[vocab.id("Tom")] == -1
    ids = vocab.encode([SHORT])[0]
    assert vocab.decode(ids) == SHORT
    values = vocab.integer_value(torch.tensor(ids)).tolist()
    assert values[SHORT.split().index("5")] == 5 and values[0] < -(10**18)  # "Sue" is not an integer


def test_solve_sequences_teacher_force_the_solution_only(vocab):
    seq = encode_solve(vocab, [VALID, SHORT])
    words = ["<bos>", "<solve>", *VALID.split()]
    assert seq.tokens[0, : len(words)].tolist() == [vocab.id(w) for w in words]
    assert seq.lengths.tolist() == [len(words), len(SHORT.split()) + 2]
    solution = words.index("SOLUTION")
    on = seq.weights[0] > 0
    assert on.nonzero().flatten().tolist() == list(range(solution, len(words)))
    assert seq.targets[0, len(words) - 1] == vocab.id("<eos>")
    assert seq.targets[0, solution] == vocab.id("3")  # SOLUTION predicts the first step's first word
    assert torch.allclose(seq.weights.sum(1), torch.ones(2))  # each sequence weighs 1
    assert seq.tokens[1, seq.lengths[1] :].eq(0).all()  # right-padded
    assert seq.answer.tolist() == [len(words) - 1, seq.lengths[1] - 1]
    assert (seq.verdict == -1).all()


def test_grade_sequences_put_the_verdict_and_step_labels_where_they_belong(vocab):
    seq = encode_grade(vocab, [VALID, SLIP, SHORT], [3, 0, 1], step_labels=[(1, 1), (0, -1), (1,)], step_weight=0.5)
    words = ["<bos>", "<grade>", *SLIP.split(), "<verdict>"]
    assert seq.verdict[1] == len(words) - 1 and seq.tokens[1, seq.verdict[1]] == vocab.id("<verdict>")
    assert seq.targets[:, :].gather(1, seq.verdict[:, None]).flatten().tolist() == [
        vocab.id("<G3>"),
        vocab.id("<G0>"),
        vocab.id("<G1>"),
    ]
    first_result = words.index("=") + 1
    assert seq.step_ends[1].tolist() == [first_result, words.index("=", first_result) + 1]
    assert seq.step_ends[2].tolist() == [seq.step_ends[2, 0].item(), -1]  # one step, padded with -1
    assert seq.targets[1, first_result] == vocab.id("<bad>") and seq.weights[1, first_result] == 0.5
    assert seq.weights[1, seq.step_ends[1, 1]] == 0  # after the first error: unlabelled
    assert seq.targets[0, seq.step_ends[0]].tolist() == [vocab.id("<ok>")] * 2
    assert seq.weights[0].sum() == pytest.approx(1.5)  # verdict 1 + the steps' 0.5
    assert seq.answer[1] == seq.last_solution[1] == len(words) - 2
    assert seq.tokens[1, seq.answer[1]] == vocab.id("16")
    plain = encode_grade(vocab, [VALID], [3])
    assert plain.weights.sum() == 1 and plain.weights[0, plain.verdict[0]] == 1


def test_grade_encoding_rejects_mismatched_labels_and_grades(vocab):
    with pytest.raises(ValueError, match="text 0 has 2 steps"):
        encode_grade(vocab, [VALID], [3], step_labels=[(1,)])
    with pytest.raises(ValueError, match="one grade in 0..3"):
        encode_grade(vocab, [VALID], [4])
    with pytest.raises(ValueError, match="ANSWER"):
        encode_grade(vocab, ["Tom has 3 . SOLUTION 3 + 4 = 7"], [3])


def test_first_error_labels_follow_the_first_error_convention():
    assert first_error_labels(3, -1) == (1, 1, 1)
    assert first_error_labels(4, 1) == (1, 0, -1, -1)
    assert first_error_labels(2, 2) == (1, 1)  # only the stated answer disagrees with the last step
    with pytest.raises(ValueError):
        first_error_labels(2, 3)


def test_prompts_cut_after_solution_and_sequences_combine(vocab):
    tokens, lengths = solve_prompts(vocab, [VALID, SHORT])
    assert vocab.decode(tokens[1].tolist()) == "<bos> <solve> Sue has 5 . How many ? SOLUTION"
    assert lengths.tolist() == [VALID.split().index("SOLUTION") + 3, SHORT.split().index("SOLUTION") + 3]
    both = Sequences.concatenate([encode_solve(vocab, [SHORT]), encode_grade(vocab, [VALID], [3])])
    assert both.tokens.shape == (2, len(VALID.split()) + 3)
    assert both.select(torch.tensor([[1, 0]])).tokens.shape == (1, 2, both.width)
