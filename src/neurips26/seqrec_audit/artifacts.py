"""Paper 10's stored data and models: a prepared dataset read back from the files the prepare step writes
(sequences, items, counts tables and the features .npy), the items' semantic IDs, and a trained model's result
tables and weights (each seed's state dict with its plain settings, loadable with ``weights_only=True``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from neurips26.seqrec_audit.prepare import PreparedDataset, from_frames


def load_prepared(paths) -> PreparedDataset:
    """`paths` has attributes sequences, item_table, counts, features (a Snakemake input, or any namespace)."""
    features = np.load(paths.features, allow_pickle=False)
    return from_frames(
        pd.read_parquet(paths.sequences), pd.read_parquet(paths.item_table), features, pd.read_parquet(paths.counts)
    )


def semantic_id_table(ids: np.ndarray) -> pd.DataFrame:
    """One row per item: `item` and one column per semantic-ID level (`level_0`, ...; the last one the collision
    index that makes the IDs unique)."""
    ids = np.asarray(ids, dtype=np.int64)
    return pd.DataFrame({"item": np.arange(len(ids)), **{f"level_{j}": ids[:, j] for j in range(ids.shape[1])}})


def load_semantic_ids(path, n_items: int) -> np.ndarray:
    """The (n_items, levels) semantic IDs written by `semantic_id_table`, checked: one row per item, in order,
    no two items with the same ID."""
    table = pd.read_parquet(path)
    if len(table) != n_items or not np.array_equal(table["item"].to_numpy(), np.arange(n_items)):
        raise ValueError(f"{path}: semantic IDs for {len(table)} items, expected items 0..{n_items - 1} in order")
    ids = table[[c for c in table.columns if c.startswith("level_")]].to_numpy(np.int64)
    if len(np.unique(ids, axis=0)) != n_items:
        raise ValueError(f"{path}: semantic IDs are not unique")
    return ids


def trained_tables(fitted, model: str, dataset: str, seed: int, users: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A trained model's (metrics, training) tables: one row per test metric with the inference time per 1,000
    users, and one row per epoch with the training and inference times."""
    per_1000 = fitted.inference_seconds / max(users, 1) * 1000
    metrics = pd.DataFrame(
        [
            {"method": model, "metric": k, "value": float(v), "seconds_per_1000_users": per_1000}
            for k, v in fitted.metrics.items()
        ]
    ).assign(dataset=dataset, seed=seed)
    training = pd.DataFrame(fitted.epochs).assign(
        model=model,
        dataset=dataset,
        seed=seed,
        train_seconds=fitted.train_seconds,
        inference_seconds=fitted.inference_seconds,
        users=users,
    )
    return metrics, training


def save_models(path, model: str, seeds, configs, n_items: int, modules) -> None:
    """The trained models of one job, each seed's weights (on the CPU) with its settings (``seed`` there is the
    scale's seed plus the trained seed), beside the model's name and item count, written atomically: ``seeds``,
    ``configs`` and ``states`` are lists in the job's seed order."""
    import torch

    from neurips26.common.io import atomic_path

    with atomic_path(path) as tmp:
        torch.save(
            {
                "model": model,
                "n_items": n_items,
                "seeds": [int(seed) for seed in seeds],
                "configs": [dict(config.__dict__) for config in configs],
                "states": [{k: v.cpu() for k, v in module.state_dict().items()} for module in modules],
            },
            tmp,
        )
