"""Token files with the header of the reference's FineWeb-Edu shards (``timlautk/equivariant_optimizers``,
``train_qwen3.py``): 256 little-endian int32 words (magic 20260317, version 2, token count, bytes per token,
delimiter id, tokens prepended and appended per document), then the tokens as uint16 or uint32."""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["HEADER_WORDS", "MAGIC", "VERSION", "read_tokens", "write_tokens"]

MAGIC, VERSION, HEADER_WORDS = 20260317, 2, 256


def write_tokens(path, tokens: np.ndarray, delimiter_id: int = 0) -> None:
    """A token file with the reference's 256-word header (magic, version, count, bytes per token, delimiter)."""
    tokens = np.asarray(tokens)
    if tokens.dtype not in (np.uint16, np.uint32):
        raise ValueError(f"tokens must be uint16 or uint32, got {tokens.dtype}")
    header = np.zeros(HEADER_WORDS, dtype=np.int32)
    header[:7] = (MAGIC, VERSION, tokens.size, tokens.dtype.itemsize, delimiter_id, 1, 0)
    with open(path, "wb") as handle:
        handle.write(header.tobytes())
        handle.write(tokens.astype(tokens.dtype.newbyteorder("<"), copy=False).tobytes())


def read_tokens(path) -> np.ndarray:
    """The tokens of a file written by :func:`write_tokens` or of one of the reference's shards (memory-mapped).
    A wrong magic or version, an unknown width or a length that disagrees with the header is an error
    naming the file."""
    path = Path(path)
    with open(path, "rb") as handle:
        header = np.frombuffer(handle.read(HEADER_WORDS * 4), dtype="<i4")
    if len(header) != HEADER_WORDS:
        raise ValueError(f"{path}: incomplete header ({len(header)} of {HEADER_WORDS} words)")
    if int(header[0]) != MAGIC or int(header[1]) != VERSION:
        raise ValueError(f"{path}: magic/version {int(header[0])}/{int(header[1])}, expected {MAGIC}/{VERSION}")
    width = int(header[3])
    if width not in (2, 4):
        raise ValueError(f"{path}: {width} bytes per token, expected 2 or 4")
    count = int(header[2])
    actual = (path.stat().st_size - HEADER_WORDS * 4) // width
    if actual != count:
        raise ValueError(f"{path}: holds {actual} tokens, its header says {count}")
    return np.memmap(path, dtype="<u2" if width == 2 else "<u4", mode="r", offset=HEADER_WORDS * 4, shape=(count,))
