r"""The shared English text corpus for small language-model experiments (papers 07 and 09): documents from
text that ships with the machine, a byte-level BPE tokenizer trained on the training documents only, and
token files split by document.

Sources (``SOURCES``), each yielding ``(key, text)`` documents in a fixed order:

* ``pydoc_topics``: CPython's bundled documentation text ``pydoc_data.topics`` (79 topics, ~465 KB), one
  document per topic; always present;
* ``stdlib_docstrings``: the docstrings of every top-level module of the running CPython's standard library
  (module, class and function docstrings in source order), one document per module; always present;
* ``debian_fortunes``: the Debian ``fortunes`` package (``/usr/share/games/fortunes``), one document per
  fortune file; needs ``apt-get install fortunes``.

Named corpora (``CORPORA``) combine sources. Documents go to the validation split by a hash of
``source/key`` (``validation_fraction`` of the hash space), so a document keeps its split when sources are
added, and train and validation never share a document.

Token files use the header of the reference's FineWeb-Edu shards (``timlautk/equivariant_optimizers``,
``train_qwen3.py``: 256 int32 words, magic 20260317, version 2, token count, bytes per token, delimiter id),
so quick-scale corpora and the paper's pre-tokenized shards are read by the same :func:`read_tokens`.
Documents are joined with the ``<|endoftext|>`` token (id 0) before each document.
"""

from __future__ import annotations

import ast
import hashlib
import json
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from .token_files import read_tokens, write_tokens
from .validation import check_number, is_int

__all__ = [
    "CORPORA",
    "END_OF_TEXT",
    "SOURCES",
    "build_documents",
    "corpus_meta",
    "dumps_meta",
    "encode_documents",
    "read_tokens",
    "split_texts",
    "train_tokenizer",
    "write_tokens",
]

END_OF_TEXT = "<|endoftext|>"
FORTUNES_DIR = Path("/usr/share/games/fortunes")


def _pydoc_topics() -> Iterator[tuple[str, str]]:
    from pydoc_data.topics import topics

    for key in sorted(topics):
        yield key, topics[key]


def _docstrings(source: str) -> str:
    tree = ast.parse(source)
    nodes = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return "\n\n".join(d for node in ast.walk(tree) if isinstance(node, nodes) and (d := ast.get_docstring(node)))


def _stdlib_docstrings() -> Iterator[tuple[str, str]]:
    root = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(root.glob("*.py")):
        try:
            text = _docstrings(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):  # a few stdlib files are Python 2 samples or latin-1
            continue
        if text:
            yield path.stem, text


def _debian_fortunes() -> Iterator[tuple[str, str]]:
    if not FORTUNES_DIR.is_dir():
        raise FileNotFoundError(
            f"source 'debian_fortunes' needs the Debian package 'fortunes' "
            f"({FORTUNES_DIR} is missing): apt-get install fortunes"
        )
    for path in sorted(FORTUNES_DIR.iterdir()):
        if path.is_file() and not path.suffix and not path.is_symlink():
            yield path.name, path.read_text(encoding="utf-8", errors="replace").replace("\n%\n", "\n\n")


SOURCES = {"pydoc_topics": _pydoc_topics, "stdlib_docstrings": _stdlib_docstrings, "debian_fortunes": _debian_fortunes}
CORPORA = {
    "cpython_docs": ("pydoc_topics", "stdlib_docstrings"),
    "pydoc_topics": ("pydoc_topics",),
    "fortunes": ("debian_fortunes",),
}


def _in_validation(source: str, key: str, fraction: float) -> bool:
    digest = hashlib.sha256(f"{source}/{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def build_documents(corpus: str, validation_fraction: float = 0.05):
    """The documents of a named corpus as a DataFrame (source, key, split, text, n_chars) in source order.
    Refuses an unknown corpus, a fraction outside (0, 1), and a split that leaves either side empty."""
    import pandas as pd

    if corpus not in CORPORA:
        raise ValueError(f"unknown corpus {corpus!r}, expected one of {sorted(CORPORA)}")
    check_number("validation_fraction", validation_fraction, 0.0, 1.0, low_open=True, high_open=True)
    rows = [
        {
            "source": source,
            "key": key,
            "text": text,
            "n_chars": len(text),
            "split": "val" if _in_validation(source, key, validation_fraction) else "train",
        }
        for source in CORPORA[corpus]
        for key, text in SOURCES[source]()
        if text.strip()
    ]
    frame = pd.DataFrame(rows, columns=["source", "key", "split", "text", "n_chars"])
    counts = frame["split"].value_counts()
    for split in ("train", "val"):
        if counts.get(split, 0) == 0:
            raise ValueError(
                f"corpus {corpus!r} has {len(frame)} documents and none fell in the {split} split "
                f"(validation_fraction={validation_fraction})"
            )
    return frame


def split_texts(documents) -> dict[str, list[str]]:
    """The texts of the ``train`` and ``val`` documents of :func:`build_documents`, each in document order."""
    return {split: documents.loc[documents["split"] == split, "text"].tolist() for split in ("train", "val")}


def train_tokenizer(texts: list[str], vocab_size: int, min_frequency: int = 2):
    """A byte-level BPE tokenizer (Hugging Face ``tokenizers``) with ``<|endoftext|>`` as id 0, trained on
    ``texts``. Training is deterministic for the same texts and settings (a test checks it)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    if not is_int(vocab_size) or not 257 <= vocab_size <= 65535:
        raise ValueError(
            f"vocab_size must be an integer in [257, 65535] (byte alphabet plus merges, uint16 "
            f"token files), got {vocab_size!r}"
        )
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=[END_OF_TEXT],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer)
    return tokenizer


def encode_documents(tokenizer, texts: list[str]) -> np.ndarray:
    """All documents as one uint16 token stream, each preceded by ``<|endoftext|>``."""
    eot = tokenizer.token_to_id(END_OF_TEXT)
    if eot is None:
        raise ValueError(f"the tokenizer has no {END_OF_TEXT!r} token")
    pieces = []
    for encoding in tokenizer.encode_batch(texts):
        pieces.append(np.asarray([eot, *encoding.ids], dtype=np.uint32))
    tokens = np.concatenate(pieces) if pieces else np.zeros(0, np.uint32)
    if tokens.size and int(tokens.max()) > np.iinfo(np.uint16).max:
        raise ValueError(f"token id {int(tokens.max())} does not fit uint16")
    return tokens.astype(np.uint16)


def corpus_meta(documents, tokenizer, train: np.ndarray, val: np.ndarray, corpus: str) -> dict:
    """What a corpus build was: sizes, hashes and the tokenizer library's version."""
    import tokenizers

    text_hash = hashlib.sha256("\x00".join(documents["text"]).encode()).hexdigest()
    return {
        "corpus": corpus,
        "sources": list(CORPORA[corpus]),
        "vocab_size": tokenizer.get_vocab_size(),
        "documents": {split: int((documents["split"] == split).sum()) for split in ("train", "val")},
        "tokens": {"train": int(train.size), "val": int(val.size)},
        "characters": int(documents["n_chars"].sum()),
        "text_sha256": text_hash,
        "tokenizer_sha256": hashlib.sha256(tokenizer.to_str().encode()).hexdigest(),
        "tokenizers_version": tokenizers.__version__,
    }


def dumps_meta(meta: dict) -> str:
    return json.dumps(meta, indent=2, sort_keys=True)
