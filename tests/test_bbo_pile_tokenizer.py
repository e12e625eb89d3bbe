"""Paper 05: the trajectory tokenizer reproduces bbo-pile's ``get_prompt`` text, round-trips
trajectories, quantises the objective as the source does, rejects bad inputs by name, fits prompts
to a context without losing the header, and its trial grammar accepts exactly well-formed trials."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.bbo_pile.grammar import TrialGrammar, allowed_next, fit_context, parse_trial, trial_length
from neurips26.bbo_pile.tokenizer import (
    decode_header,
    decode_trajectory,
    dequantise,
    encode_trajectory,
    header_ids,
    history_ids,
    quantise,
    quantise_y,
    too_many_invalid,
    trial_ids,
)
from neurips26.bbo_pile.vocabulary import Vocabulary, make_vocabulary

ALGORITHMS = ("RS", "REA", "CMA", "LS", "TPE")

# Printed by bbo-pile's own History(algorithm="RS", num_numeric_tokens=11, remove_names=True)
# .get_prompt() (syne-tune/bbo-pile@e3163a9, open_optformer/history.py, syne-tune's config-space
# classes stubbed) for the search space and trials of `hand_example` below.
BBO_PILE_TEXT = (
    "algorithm:RS,search-space:{type:UNI,min_value:0.0,max_value:1.0,linear_scale}"
    "{type:UNI,min_value:-5.0,max_value:5.0,linear_scale}"
    "{type:UNI,min_value:1e-05,max_value:10.0,log_scale},"
    "history:5,5,0*3|1,10,10*7|10,0,5*0|2,8,7*10|"
)


def hand_example():
    lo, hi, log = [0.0, -5.0, 1e-05], [1.0, 5.0, 10.0], [False, False, True]
    x = np.array([[0.5, 0.0, 1e-05], [0.1, 5.0, 10.0], [1.0, -5.0, 0.01], [0.25, 2.5, 0.1]])
    y = np.array([2.0, 3.0, 1.0, 4.0])
    return lo, hi, log, x, y


def random_trajectory(rng, d, n):
    lo = rng.uniform(-10, 1, d)
    hi = lo + rng.uniform(0.1, 20, d)
    log = rng.random(d) < 0.4
    lo = np.where(log, 10.0 ** rng.uniform(-6, 0, d), lo)
    hi = np.where(log, lo * 10.0 ** rng.uniform(0.5, 4, d), hi)
    u = rng.random((n, d))
    u[0] = 0.0  # the bounds themselves
    u[1] = 1.0
    linear = lo + u * (hi - lo)
    safe_lo, safe_hi = np.where(log, lo, 1.0), np.where(log, hi, 1.0)
    x = np.where(log, safe_lo * (safe_hi / safe_lo) ** u, linear)
    return lo, hi, log, np.clip(x, lo, hi), rng.normal(size=n) * 10.0 ** rng.uniform(-3, 3)


# text format and vocabulary


def test_text_matches_bbo_pile_get_prompt():
    vocab = make_vocabulary(ALGORITHMS, 11)
    lo, hi, log, x, y = hand_example()
    ids = encode_trajectory(vocab, "RS", lo, hi, x, y, log_scale=log)
    assert vocab.decode_text(ids) == BBO_PILE_TEXT
    assert ids[0] == vocab.bos and ids[-1] == vocab.eos
    assert vocab.decode_text(ids, skip_special=False) == "<bos>" + BBO_PILE_TEXT + "<eos>"


def test_vocabulary_layout_and_ids():
    vocab = make_vocabulary(ALGORITHMS, 100)
    assert vocab.size == 3 + 100 + 6 + 9 + 14 + 5 == len(vocab.tokens)
    assert len(set(vocab.tokens)) == vocab.size - 10  # only the digits print like bins 0..9
    assert len({vocab.pad, vocab.bos, vocab.eos}) == 3
    np.testing.assert_array_equal(np.diff(vocab.bin_ids), 1)
    assert [vocab.bin(k) for k in (0, 99)] == [vocab.bin_ids[0], vocab.bin_ids[-1]]
    assert [vocab.tokens[i] for i in (vocab.sep_x, vocab.sep_y, vocab.sep_trial)] == [",", "*", "|"]
    assert vocab.symbol("5") not in vocab.bin_ids  # a header digit is not the bin 5
    assert [vocab.algorithm_name(vocab.algorithm(a)) for a in ALGORITHMS] == list(ALGORITHMS)
    again = Vocabulary.from_json(vocab.to_json())
    assert again == vocab and again.tokens == vocab.tokens


def test_vocabulary_rejects_bad_names_q_and_unknown_algorithm():
    with pytest.raises(ValueError, match="Vocabulary.q must be an integer >= 2"):
        make_vocabulary(ALGORITHMS, 1)
    with pytest.raises(ValueError, match="repeated"):
        make_vocabulary(["RS", "RS"], 10)
    with pytest.raises(ValueError, match="algorithm name"):
        make_vocabulary(["R,S"], 10)
    vocab = make_vocabulary(ALGORITHMS, 10)
    with pytest.raises(ValueError, match=r"unknown algorithm 'BORE'.*'RS'"):
        vocab.algorithm("BORE")
    with pytest.raises(ValueError, match="outside 0..9"):
        vocab.bin(10)
    with pytest.raises(ValueError, match="layout differs"):
        Vocabulary.from_json(vocab.to_json().replace('"<pad>"', '"<PAD>"'))


# round trips


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize(("d", "q"), [(1, 2), (2, 11), (5, 100), (10, 1000)])
def test_encode_decode_round_trip(seed, d, q):
    rng = np.random.default_rng(1000 * seed + d)
    vocab = make_vocabulary(ALGORITHMS, q)
    lo, hi, log, x, y = random_trajectory(rng, d, n=int(rng.integers(2, 30)))
    algorithm = ALGORITHMS[seed % len(ALGORITHMS)]
    for y_norm in ("global", "prefix"):
        ids = encode_trajectory(vocab, algorithm, lo, hi, x, y, log_scale=log, y_norm=y_norm)
        assert len(ids) == len(header_ids(vocab, algorithm, lo, hi, log)) + len(y) * (2 * d + 2) + 1
        alg, lo2, hi2, x_bins, y_bins = decode_trajectory(vocab, ids)
        assert alg == algorithm
        np.testing.assert_array_equal(lo2, lo)  # exact: shortest round-trip digits
        np.testing.assert_array_equal(hi2, hi)
        np.testing.assert_array_equal(decode_header(vocab, ids)[0].log_scale, log)
        np.testing.assert_array_equal(x_bins, quantise(x, lo, hi, q, log))
        np.testing.assert_array_equal(y_bins, quantise_y(y, q, y_norm))
    # dequantised values lie within half a bin of the originals (in log space where log scale)
    x_hat = dequantise(x_bins, lo, hi, q, log)

    def warp(v):
        return np.where(log, np.log(np.where(log, v, 1.0)), v)

    half_bin = (warp(hi) - warp(lo)) / (2 * (q - 1))
    assert (np.abs(warp(x_hat) - warp(x)) <= half_bin * (1 + 1e-9) + 1e-12).all()
    np.testing.assert_array_equal(quantise(x_hat, lo, hi, q, log), x_bins)  # bin centres
    # a prompt: padding after <eos>, or no <eos> at all, decodes the same
    padded = np.concatenate([ids, [vocab.pad] * 3])
    np.testing.assert_array_equal(decode_trajectory(vocab, padded)[3], x_bins)
    np.testing.assert_array_equal(decode_trajectory(vocab, ids[:-1])[4], y_bins)


def test_header_floats_round_trip_exactly():
    vocab = make_vocabulary(ALGORITHMS, 10)
    lo = np.array([-0.1, 1e-05, 5e-324, -1.2345678901234567e20, 0.30000000000000004])
    hi = np.array([1 / 3, 1e16, 1.0, 7.0, 0.30000000000000010])
    header, end = decode_header(vocab, header_ids(vocab, "LS", lo, hi, [0, 1, 1, 0, 0]))
    assert end == len(header_ids(vocab, "LS", lo, hi, [0, 1, 1, 0, 0]))
    np.testing.assert_array_equal(header.lo, lo)
    np.testing.assert_array_equal(header.hi, hi)
    assert "min_value:1e-05,max_value:1e+16,log_scale" in vocab.decode_text(
        header_ids(vocab, "LS", lo, hi, [0, 1, 1, 0, 0])
    )


def test_quantisation_rounds_half_to_even_like_python_round():
    # bbo-pile quantises with int(round(.)): 2.5 -> 2, 7.5 -> 8
    u = np.array([[0.25], [0.75], [0.05], [0.15]])
    bins = quantise(u, [0.0], [1.0], 11)
    assert bins.ravel().tolist() == [int(round(v * 10)) for v in u.ravel()] == [2, 8, 0, 2]


def test_incremental_prompt_equals_encoded_prefix():
    vocab = make_vocabulary(ALGORITHMS, 100)
    lo, hi, log, x, y = random_trajectory(np.random.default_rng(7), 3, 6)
    x_bins, y_bins = quantise(x, lo, hi, 100, log), quantise_y(y, 100)
    pieces = [header_ids(vocab, "CMA", lo, hi, log)]
    pieces += [trial_ids(vocab, x_bins[t], y_bins[t]) for t in range(len(y))]
    full = encode_trajectory(vocab, "CMA", lo, hi, x, y, log_scale=log)
    np.testing.assert_array_equal(np.concatenate(pieces), full[:-1])
    np.testing.assert_array_equal(history_ids(vocab, x_bins, y_bins), np.concatenate(pieces[1:]))


# the objective's quantisation


def test_y_quantisation_by_hand_global_and_prefix():
    y = np.array([2.0, 3.0, 1.0, 4.0])
    # global: min 1, max 4 -> (y - 1) / 3 * 10 = 3.33, 6.67, 0, 10
    assert quantise_y(y, 11, "global").tolist() == [3, 7, 0, 10]
    # prefix: [2, 2+1] -> 0; [2, 3] -> 10; [1, 3] -> 0; [1, 4] -> 10
    assert quantise_y(y, 11, "prefix").tolist() == [0, 10, 0, 10]
    assert quantise_y([5.0, 1.0, 3.0], 5, "prefix").tolist() == [0, 0, 2]


def test_constant_objective_is_bin_zero():
    assert quantise_y(np.full(6, 3.5), 100).tolist() == [0] * 6
    assert quantise_y(np.full(3, 1e300), 100, "prefix").tolist() == [0] * 3  # max + 1 == max
    vocab = make_vocabulary(ALGORITHMS, 100)
    ids = encode_trajectory(vocab, "RS", [0.0], [1.0], [[0.2], [0.4]], [7.0, 7.0])
    assert vocab.decode_text(ids).endswith("history:20*0|40*0|")


def test_nonfinite_objectives_dropped_and_counted():
    vocab = make_vocabulary(ALGORITHMS, 11)
    x = np.linspace(0, 1, 10)[:, None]
    y = np.arange(10.0)
    y[[3, 7]] = [np.nan, np.inf]
    ids, n_dropped = encode_trajectory(vocab, "RS", [0.0], [1.0], x, y, return_n_dropped=True)
    assert n_dropped == 2
    _, _, _, x_bins, y_bins = decode_trajectory(vocab, ids)
    kept = np.delete(np.arange(10), [3, 7])
    np.testing.assert_array_equal(x_bins, quantise(x[kept], [0.0], [1.0], 11))
    np.testing.assert_array_equal(y_bins, quantise_y(y[kept], 11))
    x[3] = np.nan  # a failed trial's x is not checked; later trials keep their own numbers
    np.testing.assert_array_equal(encode_trajectory(vocab, "RS", [0.0], [1.0], x, y), ids)
    x[8] = 1.5
    with pytest.raises(ValueError, match="trial 8, coordinate 0"):
        encode_trajectory(vocab, "RS", [0.0], [1.0], x, y)
    y[[1, 5]] = -np.inf  # 4 of 10 invalid: above 20%
    with pytest.raises(ValueError, match="4 of 10 trials"):
        encode_trajectory(vocab, "RS", [0.0], [1.0], x, y)


# bad inputs


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"lo": [0.0, 1.0], "hi": [1.0, 1.0]}, "lo >= hi at coordinate 1"),
        ({"lo": [0.0, 2.0], "hi": [1.0, 1.0]}, "lo >= hi at coordinate 1"),
        ({"log_scale": [False, True], "lo": [0.0, 0.0]}, "log scale needs lo > 0, coordinate 1"),
        ({"lo": [0.0, -np.inf]}, "lo is not finite at coordinate 1"),
        ({"x": np.zeros((0, 2)), "y": np.zeros(0)}, "empty trajectory"),
        ({"x": np.full((1, 2), 0.5), "y": [1.0]}, "1 trial.*at least 2"),
        ({"x": np.full((2, 2), 0.5), "y": [1.0, np.nan]}, r"1 of 2 trials .*\(more than 20%\)"),
        (
            {"x": np.full((2, 2), 0.5), "y": [1.0, np.nan], "max_invalid_fraction": 1.0},
            r"1 trial\(s\) left after dropping 1 .* at least 2",
        ),
        ({"x": [[0.5, 0.5], [0.5, 1.5], [0.5, 0.5]]}, r"trial 1, coordinate 1: x=.*1\.5"),
        ({"x": [[0.5, 0.5], [-0.1, 0.5], [0.5, 0.5]]}, "trial 1, coordinate 0"),
        ({"x": [[0.5, 0.5], [np.nan, 0.5], [0.5, 0.5]]}, "trial 1, coordinate 0"),
        ({"algorithm": "BORE"}, "unknown algorithm 'BORE'"),
        ({"x": np.full((3, 3), 0.5)}, "d=2"),
        ({"y": [1.0, 2.0]}, "one value per trial"),
        ({"y_norm": "rank"}, "unknown y_norm"),
    ],
)
def test_bad_inputs_raise_naming_the_problem(kwargs, message):
    vocab = make_vocabulary(ALGORITHMS, 10)
    args = {
        "algorithm": "RS",
        "lo": [0.0, 0.0],
        "hi": [1.0, 1.0],
        "x": np.full((3, 2), 0.5),
        "y": [1.0, 2.0, 3.0],
    } | kwargs
    with pytest.raises(ValueError, match=message):
        encode_trajectory(vocab, **args)


def test_decoding_rejects_malformed_sequences_and_bins():
    vocab = make_vocabulary(ALGORITHMS, 10)
    x, y = np.full((3, 2), 0.5), [1.0, 2.0, 3.0]
    ids = encode_trajectory(vocab, "RS", [0.0, 0.0], [1.0, 1.0], x, y)
    with pytest.raises(ValueError, match="not a whole number of 6-token trials"):
        decode_trajectory(vocab, ids[:-2])
    broken = ids.copy()
    broken[-3] = vocab.sep_x  # the last trial's objective bin replaced by ','
    with pytest.raises(ValueError, match="malformed trial 2"):
        decode_trajectory(vocab, broken)
    with pytest.raises(ValueError, match="expected 'history'"):
        decode_trajectory(vocab, np.delete(ids, np.flatnonzero(ids == vocab.symbol("history"))))
    with pytest.raises(ValueError, match="bins outside 0..9"):
        dequantise([[10, 0]], [0.0, 0.0], [1.0, 1.0], 10)
    with pytest.raises(ValueError, match="outside 0..9"):
        trial_ids(vocab, [3, -1], 2)
    with pytest.raises(ValueError, match="token ids outside"):
        vocab.decode_text([0, vocab.size])


# prompts longer than the context


def test_fit_context_keeps_header_and_most_recent_whole_trials():
    vocab = make_vocabulary(ALGORITHMS, 100)
    d = 2
    header = header_ids(vocab, "RS", [0.0, 0.0], [1.0, 1.0])
    trials = [trial_ids(vocab, [t, t], t) for t in range(10)]
    length = trial_length(d)
    full = fit_context(header, trials, context=len(header) + 10 * length)
    np.testing.assert_array_equal(full, np.concatenate([header, *trials]))
    cut = fit_context(header, trials, context=len(header) + 3 * length + length - 1)
    np.testing.assert_array_equal(cut, np.concatenate([header, *trials[-3:]]))
    reserved = fit_context(header, trials, context=len(header) + 4 * length, reserve=length)
    np.testing.assert_array_equal(reserved, cut)
    np.testing.assert_array_equal(fit_context(header, trials, context=len(header)), header)
    _, _, _, x_bins, _ = decode_trajectory(vocab, cut)
    assert x_bins[:, 0].tolist() == [7, 8, 9]
    context = len(header) + 5 * length
    with pytest.raises(ValueError, match=rf"prompt of {len(full)} tokens .* context of {context}"):
        fit_context(header, trials, context=context, policy="reject")
    with pytest.raises(ValueError, match=f"header alone is {len(header)} tokens"):
        fit_context(header, trials, context=len(header) - 1)
    with pytest.raises(ValueError, match="unknown policy"):
        fit_context(header, trials, context=1000, policy="left")


# the trial grammar


def test_grammar_allows_bin_comma_alternation_then_star_bin_pipe():
    vocab = make_vocabulary(ALGORITHMS, 7)
    d = 3
    bins = set(vocab.bin_ids.tolist())
    comma, star, pipe = {vocab.sep_x}, {vocab.sep_y}, {vocab.sep_trial}
    expected = [bins, comma, bins, comma, bins, star, bins, pipe]
    assert [set(allowed_next(vocab, d, p).tolist()) for p in range(8)] == expected
    grammar = TrialGrammar(vocab, d)
    assert (grammar.masks.sum(axis=1) == [len(e) for e in expected]).all()
    state = grammar.initial_state
    for token in trial_ids(vocab, [1, 2, 3], 4):
        assert not grammar.is_complete(state)
        state = grammar.advance(state, token)
    assert grammar.is_complete(state)
    with pytest.raises(ValueError, match="position 1 of a trial: expected ','"):
        grammar.advance(1, vocab.bin(0))
    with pytest.raises(ValueError, match="position 0 of a trial: expected a value bin"):
        grammar.advance(0, vocab.sep_y)
    with pytest.raises(ValueError, match="complete trial"):
        grammar.allowed(grammar.length)
    one = TrialGrammar(vocab, 1)  # d = 1: bin * bin |
    assert one.accepts(trial_ids(vocab, [5], 6)) and one.length == 4


def test_parse_trial_accepts_well_formed_and_rejects_malformed():
    vocab = make_vocabulary(ALGORITHMS, 7)
    good = trial_ids(vocab, [1, 2, 3], 4)
    x_bins, y_bin = parse_trial(vocab, good, 3)
    assert x_bins.tolist() == [1, 2, 3] and y_bin == 4
    assert parse_trial(vocab, good[:-1], 3) is None  # no closing '|'
    assert parse_trial(vocab, good[:-1], 3, require_end=False)[1] == 4
    b, c, s, p = vocab.bin, vocab.sep_x, vocab.sep_y, vocab.sep_trial
    malformed = [
        [b(1), c, b(2), s, b(4), p],  # too few values
        [b(1), c, b(2), c, b(3), c, b(0), s, b(4), p],  # too many
        [b(1), c, b(2), c, b(3), c, b(4), p],  # ',' where '*' belongs
        [b(1), b(2), c, b(3), s, b(4), p, p],  # two bins in a row
        [b(1), c, b(2), c, b(3), s, vocab.symbol("7"), p],  # a header digit, not a bin
        [b(1), c, b(2), c, vocab.eos, s, b(4), p],
        [b(1), c, b(2), c, b(3), s, b(4), p, b(0)],  # trailing token
        [b(1), c, b(2), c, vocab.size, s, b(4), p],  # id outside the vocabulary
        [],
    ]
    for ids in malformed:
        assert parse_trial(vocab, np.array(ids, dtype=np.int64), 3) is None, vocab.tokens


def test_the_invalid_trial_rule_rejects_more_than_a_fifth():
    assert not too_many_invalid(0, 24) and not too_many_invalid(4, 24) and too_many_invalid(5, 24)
    assert not too_many_invalid(2, 10) and too_many_invalid(3, 10)  # exactly 20% is kept
    assert too_many_invalid(1, 2) and not too_many_invalid(1, 2, max_fraction=1.0)
    vocab = make_vocabulary(ALGORITHMS, 10)
    x, y = np.full((10, 2), 0.5), np.arange(10.0)
    encode_trajectory(vocab, "RS", [0.0, 0.0], [1.0, 1.0], x, np.where(np.arange(10) < 2, np.nan, y))
    with pytest.raises(ValueError, match="3 of 10 trials"):
        encode_trajectory(vocab, "RS", [0.0, 0.0], [1.0, 1.0], x, np.where(np.arange(10) < 3, np.nan, y))
