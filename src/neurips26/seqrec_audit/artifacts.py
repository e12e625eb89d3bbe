"""Reading a prepared dataset back from the files the prepare step writes (sequences, items, counts tables and
the features .npy)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from neurips26.seqrec_audit.prepare import PreparedDataset, from_frames


def load_prepared(paths) -> PreparedDataset:
    """`paths` has attributes sequences, item_table, counts, features (a Snakemake input, or any namespace)."""
    features = np.load(paths.features, allow_pickle=False)
    return from_frames(pd.read_parquet(paths.sequences), pd.read_parquet(paths.item_table), features,
                       pd.read_parquet(paths.counts))
