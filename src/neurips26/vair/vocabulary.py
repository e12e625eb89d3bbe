"""The small model's word-level vocabulary: every whitespace-separated word of the rendered items (``items.render``:
problem sentences, question, ``SOLUTION``, one ``<expr> = <result>`` line per step, ``ANSWER <n>``) plus the special
tokens the sequences add (padding, begin/end, the task markers, the verdict and step-label tokens).

A ``tokenizers`` WordLevel model with a whitespace-split pre-tokenizer: numbers and operators are whole words, so
``48 / 2 = 24`` is five tokens. The generator's vocabulary is closed, so a word outside it is an error naming the
word (never a silent unknown token). The verdict tokens ``<G0>`` .. ``<G3>`` (the rubric's 0-3 scores of the paper,
arXiv 2606.01462) are distinct from the number tokens ``0`` .. ``3``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import torch
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from tokenizers.pre_tokenizers import WhitespaceSplit

__all__ = [
    "ANSWER_WORD",
    "BOS",
    "EOS",
    "EQUALS",
    "GRADE",
    "NOT_AN_INTEGER",
    "PAD",
    "SOLUTION_WORD",
    "SOLVE",
    "SPECIALS",
    "STEP_BAD",
    "STEP_OK",
    "UNK",
    "VERDICT",
    "VERDICTS",
    "Vocabulary",
]

PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<bos>", "<eos>"
SOLVE = "<solve>"  # task marker opening a solve sequence (the model writes the solution)
GRADE = "<grade>"  # task marker opening a grade sequence (the model reads a solution)
VERDICT = "<verdict>"  # closes a grade sequence: the verdict is read at its position
VERDICTS = ("<G0>", "<G1>", "<G2>", "<G3>")  # the rubric scores 0-3
STEP_OK, STEP_BAD = "<ok>", "<bad>"  # process labels, predicted at each step's result token
SPECIALS = (PAD, UNK, BOS, EOS, SOLVE, GRADE, VERDICT, *VERDICTS, STEP_OK, STEP_BAD)
SOLUTION_WORD, ANSWER_WORD, EQUALS = "SOLUTION", "ANSWER", "="  # words of the rendered text the sequences look for

NOT_AN_INTEGER = torch.iinfo(torch.int64).min  # integer_value of a word that is not an integer
_INTEGER = re.compile(r"-?\d+")


def _word_order(word: str) -> tuple:
    """Integers first in numeric order, then the other words alphabetically (a deterministic id for each word)."""
    return (0, int(word), "") if _INTEGER.fullmatch(word) else (1, 0, word)


class Vocabulary:
    """Word <-> id for the small model; ``PAD`` is id 0. Build with :meth:`from_texts`, store with :meth:`to_json`."""

    def __init__(self, tokenizer: Tokenizer):
        vocab = tokenizer.get_vocab()
        missing = [t for t in SPECIALS if t not in vocab]
        if missing:
            raise ValueError(f"the tokenizer lacks the special tokens {missing}")
        if vocab[PAD] != 0:
            raise ValueError(f"{PAD} must have id 0, has {vocab[PAD]}")
        self.tokenizer = tokenizer
        self._words = [w for w, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
        self._ids = vocab

    @classmethod
    def from_texts(cls, texts: Iterable[str], extra_words: Iterable[str] = (), successors: bool = False) -> Vocabulary:
        """Every whitespace-separated word of ``texts`` and ``extra_words`` after the special tokens; with
        ``successors`` also ``n + 1`` for every integer word ``n`` (the patching's counterfactuals change a number by
        +1). A text that contains a special token is rejected (it would be read as a marker)."""
        words: set[str] = set(extra_words)
        for text in texts:
            words.update(text.split())
        if successors:
            words.update(str(int(w) + 1) for w in list(words) if _INTEGER.fullmatch(w))
        clash = sorted(words & set(SPECIALS))
        if clash:
            raise ValueError(f"rendered texts contain the special tokens {clash}")
        ordered = [*SPECIALS, *sorted(words, key=_word_order)]
        tokenizer = Tokenizer(WordLevel({w: i for i, w in enumerate(ordered)}, unk_token=UNK))
        tokenizer.pre_tokenizer = WhitespaceSplit()
        return cls(tokenizer)

    @classmethod
    def from_json(cls, text: str) -> Vocabulary:
        tokenizer = Tokenizer.from_str(text)
        return cls(tokenizer)

    def to_json(self) -> str:
        return self.tokenizer.to_str()

    def __len__(self) -> int:
        return len(self._words)

    def __contains__(self, word: str) -> bool:
        return word in self._ids

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocabulary) and self._words == other._words

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(self._words)

    def id(self, word: str) -> int:
        """The id of ``word``; ValueError naming it when it is not in the vocabulary."""
        try:
            return self._ids[word]
        except KeyError:
            raise ValueError(f"word {word!r} is not in the vocabulary of {len(self)} words") from None

    def word(self, index: int) -> str:
        return self._words[index]

    @property
    def verdict_ids(self) -> torch.Tensor:
        """Ids of ``<G0>`` .. ``<G3>`` (4,), in rubric order: index k of a verdict logit slice is score k."""
        return torch.tensor([self._ids[v] for v in VERDICTS])

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        """The word ids of each text; ValueError naming the words (and the first text holding them) that are not
        in the vocabulary (the generator's vocabulary is closed)."""
        encodings = self.tokenizer.encode_batch(list(texts))
        unk = self._ids[UNK]
        for text, enc in zip(texts, encodings):
            if unk in enc.ids:
                bad = sorted({text[a:b] for i, (a, b) in zip(enc.ids, enc.offsets) if i == unk})
                raise ValueError(f"words {bad} are not in the vocabulary (in text {text[:80]!r}...)")
        return [enc.ids for enc in encodings]

    def decode(self, ids: Iterable[int]) -> str:
        """The words of ``ids`` joined by spaces, padding left out."""
        return " ".join(self._words[i] for i in ids if i != 0)

    def integer_value(self, ids: torch.Tensor) -> torch.Tensor:
        """The integer each id names (int64, same shape), :data:`NOT_AN_INTEGER` for ids of words that are not
        integers: a vectorised read of decoded answers."""
        return self._integer_table().to(ids.device)[ids]

    def successor_ids(self) -> torch.Tensor:
        """(V,) the id of the word ``n + 1`` for each integer word ``n``, -1 where the word is not an integer or its
        successor is not in the vocabulary (the patching's counterfactual N -> N+1)."""
        values = self._integer_table()
        return torch.tensor(
            [self._ids.get(str(int(v) + 1), -1) if v != NOT_AN_INTEGER else -1 for v in values.tolist()]
        )

    def _integer_table(self) -> torch.Tensor:
        if not hasattr(self, "_integers"):
            self._integers = torch.tensor([int(w) if _INTEGER.fullmatch(w) else NOT_AN_INTEGER for w in self._words])
        return self._integers
