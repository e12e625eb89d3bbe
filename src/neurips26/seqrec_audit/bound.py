"""C1's training-free bound (issue 41): one synthetic regime regenerated with many data seeds and ranked by the
training-free methods only (popularity, Markov-1, item-kNN, TGH; no trained model), NDCG@10 per (data seed, method).

Per data seed, best TGH / best training-free other method - 1 is at least C1's per-run gain (best TGH / best of
*every* other method, trained models included, - 1): the best of all others is at least the best of the
training-free ones. So when the bound's interval over data seeds lies below C1's threshold, so does the gain's, and
C1 fails without a trained model; a bound above the threshold decides nothing (the trained models may still win).
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

COLUMNS = ["dataset", "data_seed", "seed", "method", "value"]


def bound_seeds(block: dict | None) -> list[int]:
    """The data seeds of a scale's optional `bound` block ({regime, first_seed, n_seeds}); none without one."""
    if not block:
        return []
    return list(range(int(block["first_seed"]), int(block["first_seed"]) + int(block["n_seeds"])))


def training_free_runs(
    cfg: dict, regime: str, seeds: list[int], log: Callable[[str], None] | None = None
) -> pd.DataFrame:
    """NDCG@10 of the training-free methods on `regime` regenerated with each data seed of `seeds`, long form
    (dataset = the regime, data_seed, seed = -1, method, value). `cfg` holds the scale's `synthetic`, `min_length`,
    `methods`, `protocol` and `tgh` (as the prepare and rank rules read them)."""
    from neurips26.seqrec_audit import evaluation, experiment
    from neurips26.seqrec_audit.prepare import prepare_synthetic

    rows = []
    tgh = experiment.tgh_configs(cfg)
    for seed in seeds:
        spec = experiment.synthetic_spec(cfg, experiment.replicate_name(regime, seed))
        ready = prepare_synthetic(spec, cfg["min_length"])
        table = evaluation.evaluate_training_free(
            ready,
            experiment.training_free_methods(cfg),
            cfg["protocol"]["exclude_history"],
            cfg["protocol"]["tie_break"],
            tgh,
        )
        ndcg = table[table["metric"] == "NDCG@10"]
        rows += [
            {"dataset": regime, "data_seed": seed, "seed": -1, "method": m, "value": float(v)}
            for m, v in zip(ndcg["method"], ndcg["value"])
        ]
        if log is not None:
            log(
                f"{regime} data seed {seed}: "
                + ", ".join(f"{m} {v:.4f}" for m, v in zip(ndcg["method"], ndcg["value"]))
            )
    return pd.DataFrame(rows, columns=COLUMNS)
