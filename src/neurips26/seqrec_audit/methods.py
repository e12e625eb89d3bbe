"""The names of paper 10's method families: the trained sequential models and the TGH variants (named tgh*, which
the config check enforces), so tables, claims and figures tell them from the training-free baselines."""

from __future__ import annotations

import numpy as np

TRAINED = ("sasrec", "bert4rec", "tiger")
TGH_PREFIX = "tgh"
BASELINE_NAMES = ("pop", "markov1", "itemknn_last", "itemknn_profile")  # baselines.BASELINES, for the config check


def is_tgh(methods) -> np.ndarray:
    import pandas as pd  # here: the workflow's parse reads this module's names without pandas

    return np.asarray(pd.Index(methods).astype(str).str.startswith(TGH_PREFIX), dtype=bool)
