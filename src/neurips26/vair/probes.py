r"""Linear probes on the small model's hidden states, per layer, following the paper's protocol (arXiv 2606.01462:
a logistic probe on the hidden state at the last solution token, trained on valid-graded-valid against
invalid-graded-invalid solutions, reaches about 89% at its best layer, gpt-oss-20b layer 18, but falls below 50% on
the VAIR solutions the model was fooled by).

For one member: the items it graded correctly are the controls, valid-and-graded-3 (label valid) against
invalid-and-graded-below-3 (label invalid); a share ``test_share`` of them is held out (grouped by problem when
``groups`` is given, so that no problem sits on both sides), a standardised L2 logistic regression (scikit-learn) is
fitted per layer on the rest, and it is scored by its AUROC and accuracy on the held-out controls and, on the fooled
items (VAIR graded 3), by the share it flags as invalid (``fooled_flagged``; the paper's "below 50%" is this share).
The layer is chosen on ``cv_accuracy``, the accuracy of a :data:`CV_FOLDS`-fold cross-validation within the probe's
TRAINING controls (grouped by problem when ``groups`` is given), never on the held-out controls it reports.
A probe whose training items hold one class is an error: it would measure nothing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold, GroupShuffleSplit, StratifiedKFold, StratifiedShuffleSplit
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

__all__ = ["CV_FOLDS", "PAPER_PROBE", "PROBE_COLUMNS", "control_split", "cv_accuracy", "fit_probe", "probe_layers"]

FULL = 3  # the rubric's top score: graded valid
PROBE_COLUMNS = (
    "layer",
    "n_train",
    "n_test",
    "cv_accuracy",
    "auroc_controls",
    "accuracy_controls",
    "n_fooled",
    "fooled_flagged",
)
CV_FOLDS = 3  # folds of the cross-validation within the training controls that picks the layer
# arXiv 2606.01462: the best layer's probe accuracy on controls (gpt-oss-20b, layer 18), and the fooled-item bound
PAPER_PROBE = {"controls_accuracy": 0.89, "fooled_flagged_below": 0.5, "model": "gpt-oss-20b", "layer": 18}


def fit_probe(features: np.ndarray, invalid: np.ndarray, C: float = 1.0):
    """A standardised logistic regression predicting ``invalid`` (bool) from ``features`` (n, d); ValueError when the
    labels hold one class."""
    classes = np.unique(invalid)
    if len(classes) < 2:
        raise ValueError(
            f"a probe needs both classes, got only {'invalid' if classes.size and classes[0] else 'valid'} "
            f"({len(invalid)} items)"
        )
    return make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=2000)).fit(features, invalid)


def control_split(
    invalid: np.ndarray, test_share: float, seed: int, groups: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Indices (train, test) of the controls: stratified by label, or grouped (no group on both sides)."""
    splitter = (
        GroupShuffleSplit(n_splits=1, test_size=test_share, random_state=seed)
        if groups is not None
        else StratifiedShuffleSplit(n_splits=1, test_size=test_share, random_state=seed)
    )
    placeholder = np.zeros((len(invalid), 1))
    train, test = next(splitter.split(placeholder, invalid, groups))
    return train, test


def cv_accuracy(
    features: np.ndarray, invalid: np.ndarray, groups: np.ndarray | None = None, folds: int = CV_FOLDS, C: float = 1.0
) -> float:
    """Mean held-out-fold accuracy of :func:`fit_probe` over a ``folds``-fold cross-validation of (``features``,
    ``invalid``): stratified, or grouped (no group in two folds); NaN when a class or a group count is too small for
    the folds, or a training fold holds one class."""
    invalid = np.asarray(invalid, dtype=bool)
    if groups is not None:
        if len(np.unique(groups)) < folds:
            return np.nan
        splits = GroupKFold(n_splits=folds).split(features, invalid, groups)
    else:
        if min(int(invalid.sum()), int((~invalid).sum())) < folds:
            return np.nan
        splits = StratifiedKFold(n_splits=folds, shuffle=True, random_state=0).split(features, invalid)
    right = []
    for train, test in splits:
        if len(np.unique(invalid[train])) < 2:
            return np.nan
        right.append(fit_probe(features[train], invalid[train], C).predict(features[test]) == invalid[test])
    return float(np.concatenate(right).mean())


def probe_layers(
    hidden: np.ndarray,
    reasoning_valid: np.ndarray,
    grades: np.ndarray,
    is_vair: np.ndarray,
    groups: np.ndarray | None = None,
    test_share: float = 0.3,
    seed: int = 0,
    C: float = 1.0,
    is_iair: np.ndarray | None = None,
) -> pd.DataFrame:
    """One row per layer (:data:`PROBE_COLUMNS`) of the protocol of the module docstring, for one member:
    ``hidden`` (N, L+1, d) at the last solution word, the items' ``reasoning_valid`` (N,) and categories (``is_vair``),
    the member's ``grades`` (N,) in 0..3; ``groups`` (N,) problem ids or None. With ``is_iair`` (N,) a further column
    ``iair_flagged``: the share of the held-out controls that are IAIR items flagged invalid by the layer's probe (NaN
    where none is held out)."""
    hidden = np.asarray(hidden, dtype=np.float64)
    valid = np.asarray(reasoning_valid, dtype=bool)
    grades = np.asarray(grades)
    is_vair = np.asarray(is_vair, dtype=bool)
    if not (hidden.ndim == 3 and len(valid) == len(grades) == len(is_vair) == hidden.shape[0]):
        raise ValueError(
            f"need hidden (N, L+1, d) and N labels, got {hidden.shape}, {len(valid)}, {len(grades)}, {len(is_vair)}"
        )
    controls = np.flatnonzero((valid & (grades == FULL)) | (~valid & (grades < FULL)))
    fooled = np.flatnonzero(is_vair & (grades == FULL))
    invalid = ~valid[controls]
    for label, name in ((True, "invalid-graded-invalid"), (False, "valid-graded-valid")):
        if not (invalid == label).any():
            raise ValueError(f"a probe needs both classes of controls: no {name} item among {len(controls)} controls")
    control_groups = None if groups is None else np.asarray(groups)[controls]
    train, test = control_split(invalid, test_share, seed, control_groups)
    train_groups = None if control_groups is None else control_groups[train]
    iair_test = None if is_iair is None else controls[test][np.asarray(is_iair, dtype=bool)[controls[test]]]
    rows = []
    for layer in range(hidden.shape[1]):
        features = hidden[:, layer]
        probe = fit_probe(features[controls[train]], invalid[train], C)
        test_invalid = invalid[test]
        score = probe.predict_proba(features[controls[test]])[:, 1]
        both = len(np.unique(test_invalid)) == 2
        rows.append(
            {
                "layer": layer,
                "n_train": len(train),
                "n_test": len(test),
                "cv_accuracy": cv_accuracy(features[controls[train]], invalid[train], train_groups, C=C),
                "auroc_controls": roc_auc_score(test_invalid, score) if both else np.nan,
                "accuracy_controls": float(((score > 0.5) == test_invalid).mean()) if len(test) else np.nan,
                "n_fooled": len(fooled),
                "fooled_flagged": float(probe.predict(features[fooled]).mean()) if len(fooled) else np.nan,
            }
        )
        if iair_test is not None:
            rows[-1]["iair_flagged"] = float(probe.predict(features[iair_test]).mean()) if len(iair_test) else np.nan
    return pd.DataFrame(rows, columns=[*PROBE_COLUMNS, *(["iair_flagged"] if is_iair is not None else [])])
