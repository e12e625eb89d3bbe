"""The shared text corpus: documents split by document, a deterministic BPE, token files with the reference's
shard header."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from neurips26.common import corpus
from neurips26.common.token_files import HEADER_WORDS, read_tokens, write_tokens

TEXTS = [
    f"The {w} of the quick brown fox {i} jumps over the lazy dog number {i * 7}." * 3
    for i, w in enumerate(["colour", "speed", "shape", "sound", "weight", "height"] * 5)
]


def test_documents_are_split_by_document_and_the_split_is_stable():
    docs = corpus.build_documents("pydoc_topics", 0.2)
    assert set(docs["split"]) == {"train", "val"} and not docs.duplicated(["source", "key"]).any()
    assert 0.05 < (docs["split"] == "val").mean() < 0.4
    again = corpus.build_documents("pydoc_topics", 0.2)
    assert docs[["key", "split"]].equals(again[["key", "split"]])
    # a document's split depends on its own key only: a smaller fraction moves documents to train, never back
    smaller = corpus.build_documents("pydoc_topics", 0.1).set_index("key")["split"]
    assert set(smaller[smaller == "val"].index) <= set(docs.loc[docs["split"] == "val", "key"])


def test_cpython_docs_adds_the_standard_librarys_docstrings():
    docs = corpus.build_documents("cpython_docs")
    assert set(docs["source"]) == {"pydoc_topics", "stdlib_docstrings"}
    assert (docs["source"] == "stdlib_docstrings").sum() > 50 and docs["n_chars"].sum() > 1_000_000


def test_bad_corpus_requests_are_refused():
    with pytest.raises(ValueError, match="unknown corpus 'wiki'"):
        corpus.build_documents("wiki")
    with pytest.raises(ValueError, match="validation_fraction"):
        corpus.build_documents("pydoc_topics", 1.5)
    with pytest.raises(ValueError, match="none fell in the val split"):
        corpus.build_documents("pydoc_topics", 1e-9)


def test_missing_debian_fortunes_say_how_to_install_them(monkeypatch, tmp_path):
    monkeypatch.setattr(corpus, "FORTUNES_DIR", tmp_path / "absent")
    with pytest.raises(FileNotFoundError, match="apt-get install fortunes"):
        corpus.build_documents("fortunes")


def test_bpe_training_is_deterministic_and_round_trips():
    first, second = corpus.train_tokenizer(TEXTS, 300), corpus.train_tokenizer(TEXTS, 300)
    digest = [hashlib.sha256(t.to_str().encode()).hexdigest() for t in (first, second)]
    assert digest[0] == digest[1]
    assert first.token_to_id(corpus.END_OF_TEXT) == 0 and first.get_vocab_size() <= 300
    tokens = corpus.encode_documents(first, TEXTS[:2])
    assert tokens.dtype == np.uint16 and tokens[0] == 0 and (tokens == 0).sum() == 2
    second_doc = tokens[np.flatnonzero(tokens == 0)[1] + 1 :]
    assert first.decode(second_doc.tolist()) == TEXTS[1]
    with pytest.raises(ValueError, match="vocab_size"):
        corpus.train_tokenizer(TEXTS, 100)


def test_token_files_round_trip_and_refuse_corrupt_headers(tmp_path):
    tokens = np.arange(1000, dtype=np.uint16)
    write_tokens(tmp_path / "a.bin", tokens)
    assert np.array_equal(read_tokens(tmp_path / "a.bin"), tokens)
    wide = np.array([70000, 1, 2], dtype=np.uint32)
    write_tokens(tmp_path / "w.bin", wide)
    assert read_tokens(tmp_path / "w.bin").tolist() == wide.tolist()
    raw = bytearray((tmp_path / "a.bin").read_bytes())
    (tmp_path / "short.bin").write_bytes(raw[:-2])
    with pytest.raises(ValueError, match="holds 999 tokens, its header says 1000"):
        read_tokens(tmp_path / "short.bin")
    raw[0] ^= 1
    (tmp_path / "magic.bin").write_bytes(raw)
    with pytest.raises(ValueError, match="magic/version"):
        read_tokens(tmp_path / "magic.bin")
    (tmp_path / "tiny.bin").write_bytes(raw[:HEADER_WORDS])
    with pytest.raises(ValueError, match="incomplete header"):
        read_tokens(tmp_path / "tiny.bin")
