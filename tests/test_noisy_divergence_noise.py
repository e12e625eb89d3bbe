"""Paper 09's noise injection: exact counts, the clean stream recovered, uniform ids, and refusals of bad inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from neurips26.noisy_divergence import noise
from neurips26.noisy_divergence.noise import NoiseSetting, inject_stream, injection_stats, noise_vocabulary


def stream(n_docs=60, vocab=64, seed=0):
    rng = np.random.default_rng(seed)
    docs = [np.concatenate([[0], rng.integers(1, vocab, size=rng.integers(1, 120))]) for _ in range(n_docs)]
    return np.concatenate(docs).astype(np.uint16)


@pytest.mark.parametrize("kind", ["insert", "overwrite"])
@pytest.mark.parametrize("alpha", [0.0, 0.1, 0.25, 0.5, 0.55, 0.9])
def test_every_noised_document_gets_exactly_its_count_and_the_clean_stream_comes_back(kind, alpha):
    clean = stream()
    setting = NoiseSetting(kind, "k5", alpha, 0.5)
    vocab = noise_vocabulary(64, "k5")
    tokens, mask, docs = inject_stream(clean, setting, vocab, seed=3)
    clean_docs = noise.documents(clean)
    for row in docs.itertuples():
        n = len(clean_docs[row.doc])
        expected = math.floor(alpha * n / (1 - alpha) + 0.5) if kind == "insert" else math.floor(alpha * n + 0.5)
        assert row.n_noise == (expected if row.noised else 0)
    assert docs["noised"].sum() == 30  # round(0.5 x 60)
    if kind == "insert":
        assert np.array_equal(tokens[~mask], clean)
    else:
        assert len(tokens) == len(clean) and np.array_equal(tokens[~mask], clean[~mask])
    stats = injection_stats(clean, tokens, mask, setting, vocab, docs["noised"])
    assert stats["recovered_mismatches"] == 0 and stats["outside_vocab"] == 0 and stats["eot_moved"] == 0
    assert stats["count_error_max"] == 0 and stats["docs_expected"] == 30
    assert stats["docs_noised"] == 30


def test_insert_share_of_a_noised_document_is_alpha():
    doc = np.arange(1, 1001, dtype=np.uint16)
    tokens, mask = noise.inject_document(doc, "insert", 0.55, np.arange(1, 6), np.random.default_rng(0))
    assert mask.sum() == 1222 and abs(mask.mean() - 0.55) < 1e-3  # 1000 x 0.55 / 0.45 = 1222.2
    assert np.array_equal(tokens[~mask], doc)


def test_end_of_text_never_noised_nor_moved_and_noise_ids_stay_in_the_vocabulary():
    clean = stream()
    setting = NoiseSetting("overwrite", "full", 0.9, 1.0)
    vocab = noise_vocabulary(64, "full")
    tokens, mask, _ = inject_stream(clean, setting, vocab, seed=1)
    assert np.array_equal(np.flatnonzero(tokens == 0), np.flatnonzero(clean == 0))
    assert not mask[clean == 0].any() and set(np.unique(tokens[mask])) <= set(range(1, 64))


def test_noise_ids_are_uniform_on_the_restricted_vocabulary():
    clean = stream(n_docs=200)
    setting = NoiseSetting("insert", "k5", 0.5, 1.0)
    vocab = noise_vocabulary(64, "k5")
    tokens, mask, docs = inject_stream(clean, setting, vocab, seed=0)
    counts = np.bincount(tokens[mask], minlength=6)[1:]
    assert counts.sum() > 5000 and counts.min() / counts.max() > 0.9
    assert injection_stats(clean, tokens, mask, setting, vocab, docs["noised"])["uniform_p"] > 1e-3
    # a sampler that favours one id fails the test
    skewed = tokens.copy()
    skewed[np.flatnonzero(mask)[::3]] = 1
    assert injection_stats(clean, skewed, mask, setting, vocab, docs["noised"])["uniform_p"] < 1e-6


def test_the_statistics_see_a_broken_stream():
    clean = stream()
    setting = NoiseSetting("insert", "k5", 0.5, 0.5)
    vocab = noise_vocabulary(64, "k5")
    tokens, mask, docs = inject_stream(clean, setting, vocab, seed=0)
    dropped = np.delete(np.arange(len(tokens)), np.flatnonzero(mask)[0])  # one noise token lost
    stats = injection_stats(clean, tokens[dropped], mask[dropped], setting, vocab, docs["noised"])
    assert stats["count_error_max"] == 1
    changed = tokens.copy()
    changed[np.flatnonzero(~mask & (tokens != 0))[5]] += 1  # one clean token altered
    assert injection_stats(clean, changed, mask, setting, vocab, docs["noised"])["recovered_mismatches"] == 1
    outside = tokens.copy()
    outside[np.flatnonzero(mask)[0]] = 40
    assert injection_stats(clean, outside, mask, setting, vocab, docs["noised"])["outside_vocab"] == 1


def test_same_seed_same_bytes_other_seed_other_noise():
    clean, setting, vocab = stream(), NoiseSetting("insert", "full", 0.3, 0.5), noise_vocabulary(64, "full")
    a, b, c = (inject_stream(clean, setting, vocab, seed=s)[0] for s in (7, 7, 8))
    assert a.tobytes() == b.tobytes() and a.tobytes() != c.tobytes()


def test_the_restricted_vocabulary_is_the_first_non_special_ids():
    assert noise_vocabulary(512, "k5").tolist() == [1, 2, 3, 4, 5]
    assert noise_vocabulary(512, "k5", allow_special=True).tolist() == [0, 1, 2, 3, 4]
    assert len(noise_vocabulary(512, "full")) == 511 and 0 not in noise_vocabulary(512, "full")
    assert noise_vocabulary(10, "full", special_ids=(0, 8, 9)).tolist() == list(range(1, 8))


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: NoiseSetting("insert", "k5", 1.0, 0.5), "alpha must lie in [0, 1)"),
        (lambda: NoiseSetting("insert", "k5", -0.1, 0.5), "alpha must lie in [0, 1)"),
        (lambda: NoiseSetting("insert", "k5", 0.5, 1.5), "doc_fraction must lie in [0, 1]"),
        (lambda: NoiseSetting("shuffle", "k5", 0.5, 0.5), "noise type must be one of"),
        (lambda: noise_vocabulary(512, "k512"), "restricted noise vocabulary k512 needs 1 <= k <= 511"),
        (lambda: noise_vocabulary(512, "k0"), "needs 1 <= k"),
        (lambda: noise_vocabulary(512, "top5"), "noise vocabulary must be k<n> or full"),
        (lambda: noise.parse_setting("insert-k5-0.5"), "is not <insert|overwrite>"),
        (
            lambda: inject_stream(stream(), NoiseSetting("insert", "k5", 0.5, 0.5), np.arange(0, 5), 0),
            "holds the end-of-text id",
        ),
        (lambda: noise.documents(np.array([3, 0, 4], dtype=np.uint16)), "must start with the end-of-text id"),
    ],
)
def test_bad_inputs_are_refused_with_their_name(make, message):
    with pytest.raises(
        ValueError, match=message.replace("[", r"\[").replace(")", r"\)").replace("(", r"\(").replace("|", r"\|")
    ):
        make()


def test_setting_names_round_trip():
    for name in ("insert-k5-a0.5-d0.5", "overwrite-full-a0.25-d1", "insert-k1-a0.75-d0.15"):
        assert noise.parse_setting(name).name == name
