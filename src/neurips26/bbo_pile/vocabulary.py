"""The tokens of the serialisation format: special tokens, the ``Q`` value bins, punctuation, keywords,
header-float characters and one token per algorithm name (a fixed vocabulary instead of bbo-pile's
sentencepiece BPE; the format itself is in :mod:`.tokenizer`)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from neurips26.common.validation import check_int

__all__ = ["FLOAT_CHARS", "KEYWORDS", "PUNCTUATION", "SPECIALS", "Vocabulary", "make_vocabulary", "token_ids"]

SPECIALS = ("<pad>", "<bos>", "<eos>")
PUNCTUATION = (",", "*", "|", ":", "{", "}")
KEYWORDS = (
    "algorithm",
    "search-space",
    "type",
    "UNI",
    "min_value",
    "max_value",
    "linear_scale",
    "log_scale",
    "history",
)
FLOAT_CHARS = ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "-", "+", ".", "e")
# An algorithm name is one token, printed as is: nothing the format uses as punctuation, no spaces.
ALGORITHM_NAME = re.compile(r"[A-Za-z0-9_.+\-]+")
VOCABULARY_FORMAT = "neurips26.bbo_pile.vocabulary/1"


@dataclass(frozen=True)
class Vocabulary:
    """Token ids: ``<pad> <bos> <eos>``, the ``Q`` value bins (contiguous), punctuation, keywords,
    header-float characters, then one token per algorithm name. Build it with
    :func:`make_vocabulary`."""

    algorithms: tuple[str, ...]
    q: int
    tokens: tuple[str, ...] = field(init=False, repr=False)
    _symbols: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        algorithms = tuple(self.algorithms)
        check_int("q", self.q, 2, who="Vocabulary")  # Q value bins, at least two
        if not algorithms:
            raise ValueError("the vocabulary needs at least one algorithm name")
        for name in algorithms:
            if not isinstance(name, str) or not ALGORITHM_NAME.fullmatch(name):
                raise ValueError(
                    f"algorithm name {name!r} must be non-empty letters, digits or '_.+-' "
                    "(it is printed inside the format)"
                )
        if len(set(algorithms)) != len(algorithms):
            repeated = sorted({a for a in algorithms if algorithms.count(a) > 1})
            raise ValueError(f"algorithm names repeated: {repeated}")
        q = int(self.q)
        object.__setattr__(self, "algorithms", algorithms)
        object.__setattr__(self, "q", q)
        fixed = PUNCTUATION + KEYWORDS + FLOAT_CHARS
        tokens = SPECIALS + tuple(str(k) for k in range(q)) + fixed + algorithms
        object.__setattr__(self, "tokens", tokens)
        start = len(SPECIALS) + q
        object.__setattr__(self, "_symbols", {s: start + i for i, s in enumerate(fixed)})

    # special tokens and bins
    @property
    def size(self) -> int:
        return len(self.tokens)

    pad = 0
    bos = 1
    eos = 2
    bin_offset = len(SPECIALS)

    def bin(self, k: int) -> int:
        """The token id of value bin ``k`` in ``0..Q-1``."""
        if not 0 <= k < self.q or int(k) != k:
            raise ValueError(f"bin {k!r} outside 0..{self.q - 1}")
        return self.bin_offset + int(k)

    @property
    def bin_ids(self) -> np.ndarray:
        """The ``Q`` bin token ids, in bin order (contiguous)."""
        return np.arange(self.bin_offset, self.bin_offset + self.q, dtype=np.int64)

    # punctuation, keywords and header floats
    def symbol(self, text: str) -> int:
        """The id of a punctuation mark, keyword or header-float character (``","``, ``"history"``,
        ``"7"`` the digit, ...)."""
        try:
            return self._symbols[text]
        except KeyError:
            raise ValueError(f"{text!r} is not a symbol of the vocabulary (known: {sorted(self._symbols)})") from None

    @property
    def sep_x(self) -> int:
        """``,`` between values (and between header fields)."""
        return self._symbols[","]

    @property
    def sep_y(self) -> int:
        """``*`` before the objective's bin."""
        return self._symbols["*"]

    @property
    def sep_trial(self) -> int:
        """``|`` closing a trial."""
        return self._symbols["|"]

    @property
    def colon(self) -> int:
        return self._symbols[":"]

    @property
    def lbrace(self) -> int:
        return self._symbols["{"]

    @property
    def rbrace(self) -> int:
        return self._symbols["}"]

    @property
    def float_char_ids(self) -> np.ndarray:
        """Ids of the header-float characters ``0-9 - + . e``."""
        return np.array([self._symbols[c] for c in FLOAT_CHARS], dtype=np.int64)

    # algorithms
    def algorithm(self, name: str) -> int:
        """The token id of an algorithm name."""
        try:
            return self.size - len(self.algorithms) + self.algorithms.index(name)
        except ValueError:
            raise ValueError(f"unknown algorithm {name!r}; known: {list(self.algorithms)}") from None

    @property
    def algorithm_ids(self) -> np.ndarray:
        return np.arange(self.size - len(self.algorithms), self.size, dtype=np.int64)

    def algorithm_name(self, token: int) -> str:
        first = self.size - len(self.algorithms)
        if not first <= token < self.size:
            raise ValueError(f"token {token!r} is not an algorithm name")
        return self.algorithms[int(token) - first]

    # text
    def decode_text(self, ids, skip_special: bool = True) -> str:
        """The text of ``ids``; with ``skip_special`` the pad/bos/eos tokens are left out, so an
        encoded trajectory prints as bbo-pile's ``get_prompt`` string."""
        ids = token_ids(ids, self)
        if skip_special:
            ids = ids[ids >= len(SPECIALS)]
        return "".join(self.tokens[i] for i in ids.tolist())

    def to_json(self) -> str:
        return json.dumps(
            {
                "format": VOCABULARY_FORMAT,
                "q": self.q,
                "algorithms": list(self.algorithms),
                "size": self.size,
                "tokens": list(self.tokens),
            }
        )

    @classmethod
    def from_json(cls, text: str | Mapping) -> Vocabulary:
        """Rebuild a vocabulary saved by :meth:`to_json`; refuses one whose token layout differs
        from this code's (ids would silently mean other tokens)."""
        data = json.loads(text) if isinstance(text, str | bytes) else dict(text)
        if data.get("format") != VOCABULARY_FORMAT:
            raise ValueError(f"not a saved vocabulary: format {data.get('format')!r}, expected {VOCABULARY_FORMAT!r}")
        vocab = cls(tuple(data["algorithms"]), data["q"])
        if list(vocab.tokens) != list(data["tokens"]):
            raise ValueError("saved vocabulary's token layout differs from this tokenizer's")
        return vocab


def make_vocabulary(algorithms: Sequence[str], q: int) -> Vocabulary:
    """The vocabulary for these algorithm names and ``Q`` value bins."""
    return Vocabulary(tuple(algorithms), q)


def token_ids(ids, vocab: Vocabulary) -> np.ndarray:
    """``ids`` as a 1-D int64 array, refused when not integers of the vocabulary."""
    ids = np.asarray(ids)
    if ids.ndim != 1:
        raise ValueError(f"token ids must be 1-D, got shape {ids.shape}")
    if ids.size == 0:
        return ids.astype(np.int64)
    if not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"token ids must be integers, got dtype {ids.dtype}")
    if ids.min() < 0 or ids.max() >= vocab.size:
        raise ValueError(f"token ids outside 0..{vocab.size - 1}: found {ids.min()}..{ids.max()}")
    return ids.astype(np.int64)
