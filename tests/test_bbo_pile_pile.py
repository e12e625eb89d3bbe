"""BBO-Pile's text lines read into our tokens (neurips26.bbo_pile.pile), and the INT/CAT parameter types of the
vocabulary, header and trial grammar they need, with the layout of UNI-only vocabularies unchanged.

Reference lines are verbatim from syne-tune/bbo-pile (e3163a9): the README's v0.4 example line, and the
parameter blocks and trials asserted by tst/test_history.py::test_history (there with `name:` fields, i.e.
remove_names=False; the dataset is compiled with --remove_names, so the test's blocks are used both verbatim,
refused, and with the `name:x,` fields removed). The malformed lines are hand-made."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from neurips26.bbo_pile import experiment
from neurips26.bbo_pile.corpus import build_corpus
from neurips26.bbo_pile.grammar import TrialGrammar, parse_trial
from neurips26.bbo_pile.pile import (
    MalformedLine,
    SkippedLine,
    check_algorithms,
    encode_line,
    parse_line,
    read_pile,
    rebin,
)
from neurips26.bbo_pile.tokenizer import decode_header, decode_trajectory, encode_trajectory, history_ids
from neurips26.bbo_pile.vocabulary import MAX_CATEGORIES, Vocabulary, make_vocabulary
from neurips26.common.config import load_yaml

# README.md, "v0.4" (bins written as 0..1000 before the v0.5 fix), verbatim
README_V04 = (
    "algorithm:REA,search-space:{type:INT,min_value:8,max_value:64,log_scale}{type:INT,min_value:16,max_value:512,"
    "log_scale}{type:UNI,min_value:0.0,max_value:0.6,linear_scale}{type:UNI,min_value:0.0,max_value:0.6,"
    "linear_scale}{type:INT,min_value:16,max_value:512,log_scale}{type:CAT,categories:[0,1]}{type:CAT,"
    "categories:[0,1]}{type:CAT,categories:[0,1]}{type:CAT,categories:[0,1,2,3,4,5]},history:0,0,0,500,0,<1>,<1>,"
    "<1>,<3>*159|1000,800,500,0,1000,<1>,<0>,<0>,<1>*67|"
)
# the same line as v0.5+ would write it: the two values quantised to 1000 are 999 after the fix
README_FIXED = README_V04.replace("1000,800,500,0,1000", "999,800,500,0,999")
# tst/test_history.py::test_history: its asserted blocks and trials, names removed
TEST_HISTORY = (
    "algorithm:RS,search-space:{type:UNI,min_value:0,max_value:1,linear_scale}"
    "{type:INT,min_value:0,max_value:10,linear_scale}{type:CAT,categories:[0,1,2]},"
    "history:500,500,<0>*0|599,599,<1>*999|"
)
TEST_HISTORY_NAMED = (
    "algorithm:RS,search-space:{name:x,type:UNI,min_value:0,max_value:1,linear_scale}"
    "{name:y,type:INT,min_value:0,max_value:10,linear_scale}{name:z,type:CAT,categories:[0,1,2]},"
    "history:500,500,<0>*0|599,599,<1>*999|"
)
PILE_ALGORITHMS = ["REA", "TPE", "BORE", "CQR", "RS", "HEBO"]
TYPED = make_vocabulary(["RS", "REA", "CMA", "LS", "TPE", "BORE", "CQR", "HEBO"], 1000, ["UNI", "INT", "CAT"])


# vocabulary


def test_a_uni_only_vocabulary_keeps_its_layout_ids_and_saved_text():
    vocab = make_vocabulary(["RS", "CMA"], 32)
    assert vocab == Vocabulary(("RS", "CMA"), 32) == make_vocabulary(["RS", "CMA"], 32, ["UNI"])
    assert vocab.size == 3 + 32 + 6 + 9 + 14 + 2  # specials, bins, punctuation, keywords, float chars, names
    assert vocab.tokens[35:41] == (",", "*", "|", ":", "{", "}") and vocab.tokens[-2:] == ("RS", "CMA")
    assert not vocab.typed and vocab.n_categories == 0
    saved = json.loads(vocab.to_json())
    assert list(saved) == ["format", "q", "algorithms", "size", "tokens"]
    assert saved["format"] == "neurips26.bbo_pile.vocabulary/1"
    with pytest.raises(ValueError, match="no CAT"):
        vocab.category(0)
    with pytest.raises(ValueError, match="'INT'"):
        vocab.symbol("INT")


def test_the_typed_vocabulary_adds_its_tokens_between_the_float_chars_and_the_names():
    plain = make_vocabulary(["RS", "CMA"], 32)
    typed = make_vocabulary(["RS", "CMA"], 32, ["CAT", "INT", "UNI"])  # any order: stored as UNI, INT, CAT
    assert typed.parameter_types == ("UNI", "INT", "CAT")
    n_fixed = plain.size - 2
    assert typed.tokens[:n_fixed] == plain.tokens[:n_fixed]
    assert typed.tokens[n_fixed:] == (
        "INT",
        "CAT",
        "categories",
        "[",
        "]",
        *(f"<{k}>" for k in range(MAX_CATEGORIES)),
        "RS",
        "CMA",
    )
    assert typed.category(0) == typed.category_offset and typed.category(14) == typed.category_offset + 14
    assert typed.algorithm("CMA") == typed.size - 1
    saved = json.loads(typed.to_json())
    assert saved["format"] == "neurips26.bbo_pile.vocabulary/2" and saved["parameter_types"] == ["UNI", "INT", "CAT"]
    assert Vocabulary.from_json(typed.to_json()) == typed
    assert Vocabulary.from_json(plain.to_json()) == plain
    only_int = make_vocabulary(["RS"], 8, ["UNI", "INT"])
    assert only_int.tokens[-2:] == ("INT", "RS") and only_int.n_categories == 0
    with pytest.raises(ValueError, match="token layout differs"):
        Vocabulary.from_json({**saved, "tokens": saved["tokens"][::-1]})


@pytest.mark.parametrize(
    ("types", "message"),
    [
        (["INT", "CAT"], "must include 'UNI'"),
        (["UNI", "BOOL"], "unknown parameter types"),
        (["UNI", "UNI"], "repeated"),
        ("UNI", "a list"),
    ],
)
def test_bad_parameter_types_are_refused(types, message):
    with pytest.raises(ValueError, match=message):
        make_vocabulary(["RS"], 10, types)


def test_the_scales_vocabularies_are_the_generated_layout_below_paper_and_typed_at_paper():
    cfg = load_yaml("config/bbo_pile.yaml")
    for scale in ("smoke", "quick"):
        block = cfg[scale]
        assert "pile" not in block and "parameter_types" not in block["tokenizer"]
        vocab = experiment.corpus_vocabulary(block["optimizers"], block["tokenizer"], block.get("pile"))
        assert vocab.to_json() == experiment.vocabulary(block["optimizers"], block["tokenizer"]["q"]).to_json()
    paper = cfg["paper"]
    vocab = experiment.corpus_vocabulary(paper["optimizers"], paper["tokenizer"], paper["pile"])
    assert vocab.parameter_types == ("UNI", "INT", "CAT") and vocab.q == 1000
    assert vocab.algorithms[: len(paper["optimizers"])] == tuple(paper["optimizers"])
    assert set(vocab.algorithms) == set(paper["optimizers"]) | set(PILE_ALGORITHMS)
    experiment.check_config(paper)
    without = {**paper, "tokenizer": {"q": 1000, "y_norm": "global"}}
    with pytest.raises(ValueError, match=r"parameter_types.*\['INT', 'CAT'\]"):
        experiment.check_config(without)


# grammar


def test_the_trial_grammar_masks_each_value_by_its_parameters_kind():
    grammar = TrialGrammar(TYPED, 3, kinds=("UNI", "INT", "CAT"), n_categories=(0, 0, 3))
    bins = set(TYPED.bin_ids.tolist())
    assert set(grammar.allowed(0).tolist()) == bins and set(grammar.allowed(2).tolist()) == bins
    assert [TYPED.tokens[i] for i in grammar.allowed(4)] == ["<0>", "<1>", "<2>"]
    assert set(grammar.allowed(6).tolist()) == bins  # the objective is a bin
    good = [TYPED.bin(7), TYPED.sep_x, TYPED.bin(0), TYPED.sep_x, TYPED.category(2), TYPED.sep_y, TYPED.bin(3)]

    def parse(tokens):
        return parse_trial(TYPED, [*tokens, TYPED.sep_trial], 3, kinds=grammar.kinds, n_categories=grammar.n_categories)

    x, y = parse(good)
    assert x.tolist() == [7, 0, 2] and y == 3
    assert parse([*good[:4], TYPED.bin(2), *good[5:]]) is None  # a bin where a category belongs
    assert parse([TYPED.category(0), *good[1:]]) is None  # a category where a bin belongs
    assert parse([*good[:4], TYPED.category(3), *good[5:]]) is None  # <3> of a 3-category parameter
    with pytest.raises(ValueError, match=r"expected a category <0>..<2>"):
        grammar.advance(4, TYPED.bin(1))
    with pytest.raises(ValueError, match="parameter_types"):
        TrialGrammar(make_vocabulary(["RS"], 10), 2, kinds=("UNI", "CAT"), n_categories=(0, 2))
    with pytest.raises(ValueError, match=r"1 to 15 are allowed"):
        TrialGrammar(TYPED, 1, kinds=("CAT",), n_categories=(16,))


def test_uni_trajectories_encode_the_same_with_a_typed_vocabulary_up_to_the_ids():
    plain = make_vocabulary(["RS", "CMA"], 50)
    typed = make_vocabulary(["RS", "CMA"], 50, ["UNI", "INT", "CAT"])
    rng = np.random.default_rng(0)
    x, y = rng.uniform(-5, 5, size=(6, 3)), rng.normal(size=6)
    a = encode_trajectory(plain, "CMA", [-5.0] * 3, [5.0] * 3, x, y)
    b = encode_trajectory(typed, "CMA", [-5.0] * 3, [5.0] * 3, x, y)
    assert plain.decode_text(a) == typed.decode_text(b)
    assert np.array_equal(a[:-1][a[:-1] != plain.algorithm("CMA")], b[:-1][b[:-1] != typed.algorithm("CMA")])


# reader: reference lines


def test_the_readme_line_is_refused_for_its_pre_v05_bin_1000_and_read_once_fixed():
    with pytest.raises(MalformedLine, match="trial 1, parameter 0: bin 1000 outside 0..999"):
        parse_line(README_V04)
    line = parse_line(README_FIXED)
    assert line.algorithm == "REA"
    assert line.kinds == ("INT", "INT", "UNI", "UNI", "INT", "CAT", "CAT", "CAT", "CAT")
    assert line.lo_text[:5] == ("8", "16", "0.0", "0.0", "16") and line.hi_text[:5] == (
        "64",
        "512",
        "0.6",
        "0.6",
        "512",
    )
    assert line.log_scale == (True, True, False, False, True, False, False, False, False)
    assert line.n_categories == (0, 0, 0, 0, 0, 2, 2, 2, 6)
    assert line.x.tolist() == [[0, 0, 0, 500, 0, 1, 1, 1, 3], [999, 800, 500, 0, 999, 1, 0, 0, 1]]
    assert line.y.tolist() == [159, 67]
    ids = encode_line(TYPED, line)
    assert ids[0] == TYPED.bos and ids[-1] == TYPED.eos
    assert TYPED.decode_text(ids) == README_FIXED  # every character copied, bounds as printed ("8", "0.0")
    algorithm, lo, hi, x_bins, y_bins = decode_trajectory(TYPED, ids)
    header, _ = decode_header(TYPED, ids)
    assert algorithm == "REA" and header.kinds == line.kinds and header.n_categories.tolist() == list(line.n_categories)
    np.testing.assert_array_equal(lo[:5], [8, 16, 0, 0, 16])
    assert np.isnan(lo[5:]).all() and np.isnan(hi[5:]).all()
    assert x_bins.tolist() == line.x.tolist() and y_bins.tolist() == [159, 67]


def test_the_test_history_blocks_and_trials_are_read_verbatim_and_named_blocks_refused():
    line = parse_line(TEST_HISTORY)
    assert line.kinds == ("UNI", "INT", "CAT") and line.lo_text[:2] == ("0", "0") and line.hi_text[:2] == ("1", "10")
    assert line.x.tolist() == [[500, 500, 0], [599, 599, 1]] and line.y.tolist() == [0, 999]
    vocab = make_vocabulary(["RS"], 1000, ["UNI", "INT", "CAT"])
    assert vocab.decode_text(encode_line(vocab, line)) == TEST_HISTORY
    with pytest.raises(MalformedLine, match="remove_names"):
        parse_line(TEST_HISTORY_NAMED)


def test_bins_are_rebinned_to_a_smaller_q_and_categories_are_not():
    assert rebin(np.array([0, 500, 599, 999]), 1000).tolist() == [0, 500, 599, 999]
    assert rebin(np.array([0, 500, 599, 999]), 100).tolist() == [0, 50, 59, 99]  # round(b * 99 / 999)
    vocab = make_vocabulary(["RS"], 100, ["UNI", "INT", "CAT"])
    text = vocab.decode_text(encode_line(vocab, parse_line(TEST_HISTORY)))
    assert text.endswith("history:50,50,<0>*0|59,59,<1>*99|")


# reader: malformed and skipped lines

HEAD = "algorithm:RS,search-space:{type:UNI,min_value:0.0,max_value:1.0,linear_scale}"
MALFORMED = {
    "no history": (HEAD, "expected 'algorithm:"),
    "no trial": (HEAD + ",history:", "no trial"),
    "truncated trial": (HEAD + ",history:5*1|6*", "does not end with '|'"),
    "two values for one parameter": (HEAD + ",history:5,6*1|", "trial 0: '5,6\\*1' is not 1 value"),
    "category where a bin belongs": (HEAD + ",history:5*1|<1>*2|", "trial 1"),
    "objective bin 1000": (HEAD + ",history:5*1000|", "objective bin 1000"),
    "categories not 0..n-1": (
        "algorithm:RS,search-space:{type:CAT,categories:[0,2]},history:<0>*0|",
        r"categories \[0,2\] are not 0,1,...,n-1",
    ),
    "CAT before INT": (
        "algorithm:RS,search-space:{type:CAT,categories:[0,1]}{type:INT,min_value:1,max_value:5,linear_scale},"
        "history:<0>,3*0|",
        "INT block after a CAT block",
    ),
    "category index out of range": (
        "algorithm:RS,search-space:{type:CAT,categories:[0,1,2]},history:<3>*0|",
        "category <3> of a parameter with 3",
    ),
    "unknown block": (
        "algorithm:RS,search-space:{type:BOOL},history:0*0|",
        "parameter 0 is not a UNI/INT/CAT block",
    ),
    "bad bound": (
        "algorithm:RS,search-space:{type:UNI,min_value:1e,max_value:2,linear_scale},history:0*0|",
        "parameter 0 is not a UNI/INT/CAT block",
    ),
    "space in the algorithm name": (HEAD.replace("RS", "R S") + ",history:0*0|", "algorithm name 'R S'"),
    "leading zero": (HEAD + ",history:05*1|", "trial 0"),
}
SKIPPED = {
    "16 categories": (
        "algorithm:RS,search-space:{type:CAT,categories:[" + ",".join(map(str, range(16))) + "]},history:<15>*0|",
        "more than 15 categories",
    ),
    "empty range": (
        "algorithm:RS,search-space:{type:INT,min_value:3,max_value:3,linear_scale},history:0*0|",
        "empty range",
    ),
    "log scale from 0": (
        "algorithm:RS,search-space:{type:UNI,min_value:0.0,max_value:1.0,log_scale},history:0*0|",
        "log scale with min_value 0.0 <= 0",
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_lines_are_refused_with_their_reason(case):
    text, reason = MALFORMED[case]
    with pytest.raises(MalformedLine, match=reason):
        parse_line(text)


@pytest.mark.parametrize("case", sorted(SKIPPED))
def test_lines_our_tokenizer_cannot_hold_are_skipped_with_their_reason(case):
    text, reason = SKIPPED[case]
    with pytest.raises(SkippedLine, match=reason):
        parse_line(text)


def test_read_pile_counts_refused_lines_and_stops_past_the_tolerance_naming_lines_and_reasons():
    lines = [
        README_FIXED,
        MALFORMED["no trial"][0],
        TEST_HISTORY,
        "",
        SKIPPED["16 categories"][0],
        MALFORMED["objective bin 1000"][0],
        README_V04 + "\n",
    ]
    reading = read_pile(lines, TYPED, context=4096, max_malformed=3, source="train.txt")
    assert len(reading.sequences) == 2 and reading.lines == 7 and reading.blank == 1
    assert [n for n, _ in reading.malformed] == [2, 6, 7]
    assert reading.skipped == {"more than 15 categories": 1}
    assert dict(reading.kept) == {"REA": 1, "RS": 1}
    assert sum(reading.tokens.values()) == sum(s.size for s in reading.sequences)
    stats = reading.stats("train")
    assert stats.set_index("optimizer").loc["(refused)", "rejected"] == 4
    assert (stats["family"] == "bbo_pile").all()
    with pytest.raises(
        ValueError,
        match=r"train.txt: 3 malformed lines, more than the 2 tolerated.*line 2: history does not end with '\|'"
        r".*line 6: trial 0: objective bin 1000.*line 7: trial 1, parameter 0: bin 1000",
    ):
        read_pile(lines, TYPED, context=4096, max_malformed=2, source="train.txt")
    short = read_pile([README_FIXED, TEST_HISTORY], TYPED, context=100, source="valid.txt")
    assert len(short.sequences) == 1 and short.skipped == {"longer than the context of 100 tokens": 1}


def test_unknown_algorithms_are_counted_and_refused_with_their_counts():
    lines = [
        TEST_HISTORY,
        TEST_HISTORY.replace("algorithm:RS", "algorithm:BOTorch"),
        README_FIXED,
        TEST_HISTORY.replace("algorithm:RS", "algorithm:BOTorch"),
        TEST_HISTORY.replace("algorithm:RS", "algorithm:SMAC"),
    ]
    message = r"3 line\(s\) name algorithms outside the vocabulary \('BOTorch': 2 line\(s\), first at line 2; 'SMAC': 1"
    with pytest.raises(ValueError, match=message):
        check_algorithms(lines, TYPED, "train.txt")
    with pytest.raises(ValueError, match=message):
        read_pile(lines, TYPED, context=4096)
    collected = read_pile(lines, TYPED, context=4096, refuse_unknown=False)
    assert collected.unknown == {"BOTorch": 2, "SMAC": 1} and len(collected.sequences) == 2
    assert check_algorithms(lines[:1] + lines[2:3], TYPED) == {"RS": 1, "REA": 1}


def test_a_vocabulary_without_int_and_cat_refuses_typed_lines():
    uni = make_vocabulary(["RS", "REA"], 1000)
    with pytest.raises(ValueError, match=r"line 1: parameters of type \['CAT', 'INT'\]"):
        read_pile([TEST_HISTORY], uni, context=4096)
    with pytest.raises(ValueError, match="parameter_types"):
        history_ids(uni, [[1, 0]], [0], kinds=("UNI", "CAT"), n_categories=(0, 2))


# corpus


def test_pile_lines_join_their_split_of_the_corpus_and_its_counts():
    boxes = pd.DataFrame(
        {
            "bb_id": ["a", "b"],
            "split": ["train", "eval"],
            "family": ["go", "bbob"],
            "lo": [np.zeros(2), np.zeros(2)],
            "hi": [np.ones(2), np.ones(2)],
        }
    )
    rng = np.random.default_rng(1)
    trials = pd.DataFrame(
        [
            {
                "bb_id": b,
                "optimizer": "RS",
                "seed": 0,
                "trial": t,
                "x": rng.uniform(size=2),
                "y": float(rng.normal()),
                "valid": True,
            }
            for b in ("a", "b")
            for t in range(4)
        ]
    )
    vocab = make_vocabulary(["RS", "REA"], 1000, ["UNI", "INT", "CAT"])
    plain = build_corpus(boxes, trials, vocab, "global", 512, 0)
    pile = {
        "train": read_pile([TEST_HISTORY, README_FIXED], vocab, 512),
        "eval": read_pile([TEST_HISTORY.replace("RS", "REA", 1)], vocab, 512),
    }
    both = build_corpus(boxes, trials, vocab, "global", 512, 0, pile=pile)
    assert both.sequences["train"] == (3, plain.sequences["train"][1] + sum(s.size for s in pile["train"].sequences))
    assert both.sequences["eval"][0] == 2
    rows = both.stats[both.stats["family"] == "bbo_pile"].set_index(["split", "optimizer"])["trajectories"]
    assert rows.to_dict() == {("eval", "REA"): 1, ("train", "REA"): 1, ("train", "RS"): 1}
    texts = {vocab.decode_text(row) for row in both.packed["train"]}
    assert any(TEST_HISTORY in t for t in texts) and any(README_FIXED in t for t in texts)
    again = build_corpus(boxes, trials, vocab, "global", 512, 0, pile=None)
    assert all(np.array_equal(plain.packed[s], again.packed[s]) for s in plain.packed)


# the serialize step at a paper-like setting (BBO-Pile files beside the generated trajectories)


class _Params(dict):
    __getattr__ = dict.__getitem__


def test_the_serialize_step_writes_a_typed_vocabulary_and_packs_the_pile_lines_with_the_generated(tmp_path):
    import runpy
    from pathlib import Path
    from types import SimpleNamespace

    boxes = pd.DataFrame(
        {
            "bb_id": ["a", "b"],
            "split": ["train", "eval"],
            "family": ["go", "bbob"],
            "function": ["sphere", "f20"],
            "lo": [[-5.0, -5.0], [-5.0, -5.0]],
            "hi": [[5.0, 5.0], [5.0, 5.0]],
        }
    )
    rng = np.random.default_rng(0)
    trials = pd.DataFrame(
        [
            {
                "bb_id": b,
                "optimizer": "CMA",
                "seed": 0,
                "trial": t,
                "x": list(rng.uniform(-5, 5, 2)),
                "y": float(rng.normal()),
                "valid": True,
            }
            for b in ("a", "b")
            for t in range(5)
        ]
    )
    boxes.to_parquet(tmp_path / "blackboxes.parquet")
    trials.to_parquet(tmp_path / "CMA.parquet")
    # as compile_data.py writes them: lines joined by "\n", no newline at the end
    (tmp_path / "train.txt").write_text("\n".join([TEST_HISTORY, README_V04, README_FIXED]), encoding="utf-8")
    (tmp_path / "valid.txt").write_text(TEST_HISTORY.replace("algorithm:RS", "algorithm:HEBO"), encoding="utf-8")
    out = {name: tmp_path / f"{name}.out" for name in ("vocab", "train", "valid", "stats")}
    smk = SimpleNamespace(
        input=SimpleNamespace(
            blackboxes=str(tmp_path / "blackboxes.parquet"),
            trajectories=[str(tmp_path / "CMA.parquet")],
            pile_train=[str(tmp_path / "train.txt")],
            pile_valid=[str(tmp_path / "valid.txt")],
        ),
        output=SimpleNamespace(**{k: str(v) for k, v in out.items()}),
        params=_Params(
            seed=0,
            optimizers=["CMA"],
            tokenizer={"q": 1000, "y_norm": "global", "parameter_types": ["UNI", "INT", "CAT"]},
            context=512,
            pile={"train": "train.txt", "valid": "valid.txt", "algorithms": PILE_ALGORITHMS, "max_malformed": 1},
        ),
        log=[str(tmp_path / "serialize.log")],
        rule="bbo_pile_serialize",
        wildcards={},
        threads=1,
    )
    root = Path(__file__).resolve().parents[1]
    runpy.run_path(str(root / "scripts/bbo_pile/serialize.py"), init_globals={"snakemake": smk})

    vocab = Vocabulary.from_json(out["vocab"].read_text())
    assert vocab.parameter_types == ("UNI", "INT", "CAT") and vocab.algorithms == ("CMA", *PILE_ALGORITHMS)
    assert np.load(out["train"]).dtype == np.load(out["valid"]).dtype == np.int32  # 4 bytes a token at paper scale
    train = "".join(vocab.decode_text(row) for row in np.load(out["train"]))
    valid = "".join(vocab.decode_text(row) for row in np.load(out["valid"]))
    assert TEST_HISTORY in train and README_FIXED in train and train.count("algorithm:CMA") == 1
    assert "algorithm:HEBO" in valid and valid.count("algorithm:CMA") == 1
    stats = pd.read_parquet(out["stats"]).set_index(["split", "family", "optimizer"])
    assert stats.loc[("train", "bbo_pile", "(refused)"), "rejected"] == 1
    assert stats.loc[("eval", "bbo_pile", "HEBO"), "trajectories"] == 1
    assert "line 2 malformed: trial 1, parameter 0: bin 1000" in (tmp_path / "serialize.log").read_text()


def test_training_on_int32_rows_gives_the_model_and_losses_of_int64_rows():
    """Paper scale saves BBO-Pile's packed rows as int32 (half the memory); the training job widens each batch."""
    import torch

    from neurips26.bbo_pile.model import DecoderConfig
    from neurips26.bbo_pile.training import TrainSettings, pack_sequences, train_decoder

    rng = np.random.default_rng(0)
    seqs = [np.concatenate([[1], 2 + (rng.integers(0, 9) + np.arange(rng.integers(4, 9))) % 9]) for _ in range(40)]
    train, valid = pack_sequences(seqs[:32], 16, pad=0), pack_sequences(seqs[32:], 16, pad=0)
    config = DecoderConfig(
        vocab_size=11, d_model=16, n_layers=1, n_heads=2, n_query_groups=1, head_size=8, mlp_hidden=32, context=32
    )
    settings = TrainSettings(tokens_budget=600, batch=4, lr=3e-3, min_lr=3e-4, warmup=2, eval_every=3, seed=1)
    wide, wide_rows = train_decoder(train, valid, config, settings, pad=0, device="cpu")
    narrow, narrow_rows = train_decoder(
        train.astype(np.int32), valid.astype(np.int32), config, settings, pad=0, device="cpu"
    )
    assert all(torch.equal(a, b) for a, b in zip(wide.state_dict().values(), narrow.state_dict().values(), strict=True))
    drop = ("seconds", "tokens_per_s")
    assert [{k: v for k, v in r.items() if k not in drop} for r in wide_rows] == [
        {k: v for k, v in r.items() if k not in drop} for r in narrow_rows
    ]
