"""The tokens of the serialisation format: special tokens, the ``Q`` value bins, punctuation, keywords,
header-float characters and one token per algorithm name (a fixed vocabulary instead of bbo-pile's
sentencepiece BPE; the format itself is in :mod:`.tokenizer`).

Parameter types: ``UNI`` (continuous) always; ``INT`` and ``CAT`` only when asked
(``parameter_types``), so that the layout of a vocabulary for continuous data stays exactly the same (same
tokens, same ids, same saved JSON, format ``/1``). ``INT`` adds the keyword ``INT``; ``CAT`` adds the keywords
``CAT`` and ``categories``, the brackets ``[`` ``]`` and one token per category index ``<0>`` ...
``<14>`` (bbo-pile's tokenizer has these :data:`MAX_CATEGORIES` = 15 user-defined pieces,
``generate_training_data/train_tokenizer.py``). These tokens sit after the header-float characters and
before the algorithm names; a vocabulary with them is saved as format ``/2``."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from neurips26.common.validation import check_int

__all__ = [
    "FLOAT_CHARS",
    "KEYWORDS",
    "MAX_CATEGORIES",
    "PARAMETER_TYPES",
    "PUNCTUATION",
    "SPECIALS",
    "Vocabulary",
    "make_vocabulary",
    "token_ids",
]

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
VOCABULARY_FORMAT = "neurips26.bbo_pile.vocabulary/1"  # UNI only: the layout of every vocabulary before INT/CAT
VOCABULARY_FORMAT_TYPED = "neurips26.bbo_pile.vocabulary/2"  # with INT and/or CAT tokens
PARAMETER_TYPES = ("UNI", "INT", "CAT")
MAX_CATEGORIES = 15
# the tokens each optional parameter type adds (symbols, in this order, after FLOAT_CHARS)
TYPE_SYMBOLS = {"INT": ("INT",), "CAT": ("CAT", "categories", "[", "]")}


def category_token(k: int) -> str:
    """The token of category index ``k`` (bbo-pile's ``<k>``)."""
    return f"<{int(k)}>"


@dataclass(frozen=True)
class Vocabulary:
    """Token ids: ``<pad> <bos> <eos>``, the ``Q`` value bins (contiguous), punctuation, keywords,
    header-float characters, the INT/CAT symbols and category tokens when ``parameter_types`` asks for them,
    then one token per algorithm name. Build it with :func:`make_vocabulary`."""

    algorithms: tuple[str, ...]
    q: int
    parameter_types: tuple[str, ...] = ("UNI",)
    tokens: tuple[str, ...] = field(init=False, repr=False)
    _symbols: dict[str, int] = field(init=False, repr=False, compare=False)
    _category_offset: int = field(init=False, repr=False, compare=False)

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
        types = _check_parameter_types(self.parameter_types)
        q = int(self.q)
        object.__setattr__(self, "algorithms", algorithms)
        object.__setattr__(self, "q", q)
        object.__setattr__(self, "parameter_types", types)
        fixed = PUNCTUATION + KEYWORDS + FLOAT_CHARS
        for kind in types[1:]:
            fixed += TYPE_SYMBOLS[kind]
        categories = tuple(category_token(k) for k in range(MAX_CATEGORIES)) if "CAT" in types else ()
        tokens = SPECIALS + tuple(str(k) for k in range(q)) + fixed + categories + algorithms
        object.__setattr__(self, "tokens", tokens)
        start = len(SPECIALS) + q
        object.__setattr__(self, "_symbols", {s: start + i for i, s in enumerate(fixed)})
        object.__setattr__(self, "_category_offset", start + len(fixed))

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

    # parameter types and categories
    @property
    def typed(self) -> bool:
        """Whether the vocabulary has INT or CAT tokens (the extended layout, saved as format ``/2``)."""
        return self.parameter_types != ("UNI",)

    def has_type(self, kind: str) -> bool:
        return kind in self.parameter_types

    @property
    def n_categories(self) -> int:
        """Category tokens ``<0>`` ... (:data:`MAX_CATEGORIES` with CAT, else none)."""
        return MAX_CATEGORIES if "CAT" in self.parameter_types else 0

    def category(self, k: int) -> int:
        """The token id of category index ``k`` (``<k>``)."""
        if not 0 <= k < self.n_categories or int(k) != k:
            if not self.n_categories:
                raise ValueError("this vocabulary has no CAT parameters (parameter_types has no 'CAT')")
            raise ValueError(f"category index {k!r} outside 0..{self.n_categories - 1}")
        return self._category_offset + int(k)

    @property
    def category_offset(self) -> int:
        """The id of ``<0>``; ``<k>`` is ``category_offset + k`` (contiguous)."""
        if not self.n_categories:
            raise ValueError("this vocabulary has no CAT parameters (parameter_types has no 'CAT')")
        return self._category_offset

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
        if not self.typed:  # the layout and the text of every vocabulary saved before INT/CAT
            return json.dumps(
                {
                    "format": VOCABULARY_FORMAT,
                    "q": self.q,
                    "algorithms": list(self.algorithms),
                    "size": self.size,
                    "tokens": list(self.tokens),
                }
            )
        return json.dumps(
            {
                "format": VOCABULARY_FORMAT_TYPED,
                "q": self.q,
                "parameter_types": list(self.parameter_types),
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
        if data.get("format") == VOCABULARY_FORMAT:
            types = ("UNI",)
        elif data.get("format") == VOCABULARY_FORMAT_TYPED:
            types = tuple(data["parameter_types"])
        else:
            raise ValueError(
                f"not a saved vocabulary: format {data.get('format')!r}, expected {VOCABULARY_FORMAT!r} or "
                f"{VOCABULARY_FORMAT_TYPED!r}"
            )
        vocab = cls(tuple(data["algorithms"]), data["q"], types)
        if list(vocab.tokens) != list(data["tokens"]):
            raise ValueError("saved vocabulary's token layout differs from this tokenizer's")
        return vocab


def make_vocabulary(algorithms: Sequence[str], q: int, parameter_types: Sequence[str] = ("UNI",)) -> Vocabulary:
    """The vocabulary for these algorithm names, ``Q`` value bins and parameter types (``UNI`` only by
    default: the layout of continuous data)."""
    types = parameter_types if isinstance(parameter_types, str) else tuple(parameter_types)
    return Vocabulary(tuple(algorithms), q, types)


def _check_parameter_types(types) -> tuple[str, ...]:
    """``types`` in the canonical order ``UNI, INT, CAT``; UNI is required, repeats and unknown types raise."""
    if isinstance(types, str):
        raise ValueError(f"parameter_types must be a list of types, got the string {types!r}")
    types = tuple(types)
    unknown = [t for t in types if t not in PARAMETER_TYPES]
    if unknown:
        raise ValueError(f"unknown parameter types {unknown}; known: {list(PARAMETER_TYPES)}")
    if len(set(types)) != len(types):
        raise ValueError(f"parameter types repeated: {list(types)}")
    if "UNI" not in types:
        raise ValueError(f"parameter_types must include 'UNI' (the generated data's type), got {list(types)}")
    return tuple(t for t in PARAMETER_TYPES if t in types)


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
