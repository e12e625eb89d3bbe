"""Paper 09's inject step streams (issue 38): noising the stream in chunks of whole documents, written into memory
maps of the output files, gives the bytes of noising it whole (tokens, mask, documents table) for every chunk
size, and the statistics counted chunk by chunk equal those of the whole stream."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from numpy.lib.format import open_memmap

from neurips26.common.token_files import read_tokens, write_tokens
from neurips26.noisy_divergence.artifacts import TokenStream, open_token_file
from neurips26.noisy_divergence.noise import (
    NoiseSetting,
    inject_chunks,
    inject_stream,
    injection_stats,
    injection_stats_chunked,
    noise_vocabulary,
    plan_injection,
)


def stream(n_docs=80, vocab=64, seed=0, dtype=np.uint16):
    rng = np.random.default_rng(seed)
    docs = [np.concatenate([[0], rng.integers(1, vocab, size=rng.integers(0, 150))]) for _ in range(n_docs)]
    return np.concatenate(docs).astype(dtype)


def chunked(clean, setting, vocab, seed, chunk, tokens_path, mask_path):
    plan = plan_injection(clean, setting, seed, chunk_tokens=chunk)
    tokens = open_token_file(tokens_path, plan.length, clean.dtype, 0)
    mask = open_memmap(mask_path, mode="w+", dtype=bool, shape=(plan.length,))
    rows = []
    for d0, _, t, m, r in inject_chunks(clean, setting, vocab, plan, chunk_tokens=chunk):
        at = int(plan.out_starts[d0])
        tokens[at : at + len(t)], mask[at : at + len(m)] = t, m
        rows += r
    tokens.flush()
    mask.flush()
    del tokens, mask
    return pd.DataFrame(rows)


@pytest.mark.parametrize("chunk", [1, 7, 100, 1000, 10**6])
@pytest.mark.parametrize(
    "setting",
    [NoiseSetting("insert", "k5", 0.55, 1.0), NoiseSetting("overwrite", "full", 0.5, 0.5)],
    ids=lambda s: s.name,
)
def test_chunked_injection_writes_the_bytes_of_the_whole_one(tmp_path, setting, chunk):
    clean = stream()
    vocab = noise_vocabulary(64, setting.vocab)
    tokens, mask, docs = inject_stream(clean, setting, vocab, seed=5)
    whole_tokens, whole_mask = tmp_path / "whole.bin", io.BytesIO()
    write_tokens(whole_tokens, tokens.astype(clean.dtype), delimiter_id=0)
    np.save(whole_mask, mask)
    table = chunked(clean, setting, vocab, 5, chunk, tmp_path / "chunked.bin", tmp_path / "mask.npy")
    assert (tmp_path / "chunked.bin").read_bytes() == whole_tokens.read_bytes()
    assert (tmp_path / "mask.npy").read_bytes() == whole_mask.getvalue()
    pd.testing.assert_frame_equal(table, docs)
    written, written_mask = read_tokens(tmp_path / "chunked.bin"), np.load(tmp_path / "mask.npy", mmap_mode="r")
    expected = injection_stats(clean, tokens, mask, setting, vocab, docs["noised"])
    counted = injection_stats_chunked(clean, written, written_mask, setting, vocab, docs["noised"], chunk_tokens=chunk)
    assert str(counted) == str(expected)  # str: NaN == NaN


@pytest.mark.parametrize("chunk", [3, 50, 10**6])
def test_chunked_statistics_still_see_a_broken_output(chunk):
    clean = stream()
    setting, vocab = NoiseSetting("insert", "k5", 0.5, 0.5), noise_vocabulary(64, "k5")
    tokens, mask, docs = inject_stream(clean, setting, vocab, seed=1)
    changed = tokens.copy()
    changed[np.flatnonzero(~mask)[40]] += 1  # one clean token altered
    stats = injection_stats_chunked(clean, changed, mask, setting, vocab, docs["noised"], chunk_tokens=chunk)
    assert stats["recovered_mismatches"] == 1


def test_shards_read_as_one_stream_and_written_token_files_match_write_tokens(tmp_path):
    clean = stream(dtype=np.uint32)
    parts = [clean[:100], clean[100:101], clean[101:]]
    joined = TokenStream(parts)
    assert len(joined) == len(clean) and joined.dtype == clean.dtype
    for a, b in [(0, len(clean)), (95, 130), (100, 101), (5, 5), (len(clean) - 3, len(clean) + 9)]:
        np.testing.assert_array_equal(joined[a:b], clean[a:b])
    assert int(joined[100]) == int(clean[100])
    memmap = open_token_file(tmp_path / "a.bin", len(clean), np.uint32, 7)
    memmap[:] = clean
    memmap.flush()
    write_tokens(tmp_path / "b.bin", clean, delimiter_id=7)
    assert (tmp_path / "a.bin").read_bytes() == (tmp_path / "b.bin").read_bytes()
