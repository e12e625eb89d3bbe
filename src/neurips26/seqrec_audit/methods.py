"""The names of paper 10's method families: the trained sequential models and the TGH variants (named tgh*, which
the config check enforces), so tables, claims and figures tell them from the training-free baselines."""

from __future__ import annotations

import numpy as np
import pandas as pd

TRAINED = ("sasrec", "bert4rec", "tiger")
TGH_PREFIX = "tgh"


def is_tgh(methods) -> np.ndarray:
    return np.asarray(pd.Index(methods).astype(str).str.startswith(TGH_PREFIX), dtype=bool)
