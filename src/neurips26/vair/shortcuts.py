"""A surface baseline for the VAIR flaws: can a classifier that does no reasoning tell a flawed solution from a valid
one? Per flaw type, a logistic regression (scikit-learn) on bag-of-words counts of an item's text plus its length
(words, lines: the steps, full stops: the sentences) is fitted on the train split's VAVR items and that flaw's VAIR
items and scored on the eval split's, by balanced accuracy (the mean of the two classes' recalls: 0.5 for a
classifier without a cue, whatever the class sizes).

The grader sees one item at a time, so an absolute count (how many steps, how many sentences) or a phrase only one
flaw type produces is a cue it can learn instead of checking the reasoning. A flaw type the surface baseline detects
near-perfectly tests shortcut learning, not reasoning evaluation (the benchmark's VAIR items: Sun, Yeo, Solar-Lezama
and Zhi-Xuan 2026, arXiv 2606.01462, were written to keep the answer right while breaking the reasoning).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from scipy.sparse import csr_matrix, hstack
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import balanced_accuracy_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler

from .items import FLAWS, Item, render, render_natural

__all__ = ["SHORTCUT_COLUMNS", "VIEWS", "length_features", "shortcut_table", "surface_accuracy"]

# the text a grader reads: the small model's word-level rendering, or the natural-language one external models read
VIEWS: dict[str, Callable[[Item], str]] = {"small_model": render, "natural": render_natural}
SHORTCUT_COLUMNS = ("view", "flaw", "n_train", "n_eval", "balanced_accuracy")


def length_features(texts: Sequence[str]) -> np.ndarray:
    """Per text: its number of words, of lines (a rendered item's steps) and of full stops (its sentences)."""
    rows = [[len(t.split()), t.count("\n") + 1, t.count(".")] for t in texts]
    return np.array(rows, dtype=float).reshape(len(texts), 3)


def _features(vectorizer: CountVectorizer, texts: Sequence[str], fit: bool) -> csr_matrix:
    words = vectorizer.fit_transform(texts) if fit else vectorizer.transform(texts)
    return hstack([words, csr_matrix(length_features(texts))]).tocsr()


def surface_accuracy(
    train_texts: Sequence[str], train_labels: Sequence[bool], test_texts: Sequence[str], test_labels: Sequence[bool]
) -> float:
    """Balanced accuracy on (``test_texts``, ``test_labels``) of the bag-of-words plus length logistic regression
    fitted on the training texts; ValueError when either side holds one class."""
    for name, labels in (("training", train_labels), ("test", test_labels)):
        if len(set(map(bool, labels))) < 2:
            raise ValueError(f"the surface baseline needs both classes in its {name} texts ({len(labels)} texts)")
    vectorizer = CountVectorizer(token_pattern=r"\S+", lowercase=True)
    model = make_pipeline(MaxAbsScaler(), LogisticRegression(solver="liblinear", class_weight="balanced"))
    model.fit(_features(vectorizer, train_texts, True), np.asarray(train_labels, dtype=bool))
    predicted = model.predict(_features(vectorizer, test_texts, False))
    return float(balanced_accuracy_score(np.asarray(test_labels, dtype=bool), predicted))


def shortcut_table(items: Sequence[Item], views: Sequence[str] = tuple(VIEWS)) -> pd.DataFrame:
    """Per view and VAIR flaw type (:data:`SHORTCUT_COLUMNS`): the surface baseline's balanced accuracy telling that
    flaw's items from VAVR items on the eval split, fitted on the train split; NaN where a side lacks a class."""
    unknown = sorted(set(views) - set(VIEWS))
    if unknown:
        raise ValueError(f"unknown views {unknown}; known: {list(VIEWS)}")
    rows = []
    for view in views:
        text = VIEWS[view]
        for flaw in FLAWS:
            chosen = {
                split: [i for i in items if i.split == split and i.flaw in ("none", flaw) and i.category != "IAIR"]
                for split in ("train", "eval")
            }
            texts = {split: [text(i) for i in part] for split, part in chosen.items()}
            labels = {split: [i.flaw == flaw for i in part] for split, part in chosen.items()}
            both = all(len(set(labels[s])) == 2 for s in labels)
            accuracy = (
                surface_accuracy(texts["train"], labels["train"], texts["eval"], labels["eval"]) if both else np.nan
            )
            rows.append(
                {
                    "view": view,
                    "flaw": flaw,
                    "n_train": len(texts["train"]),
                    "n_eval": len(texts["eval"]),
                    "balanced_accuracy": accuracy,
                }
            )
    return pd.DataFrame(rows, columns=list(SHORTCUT_COLUMNS))
