"""What every trainer of paper 10 does at the end of an epoch: log the epoch's row, keep a copy of the weights of
the epoch with the best validation NDCG@10 (the earliest among equals), and at the end restore them and mark
that row."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict

import numpy as np
from torch import nn


def row_line(row: dict) -> str:
    """One log line of an epoch's row: floats to 4 significant digits."""
    return " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items())


class BestEpoch:
    """The epoch with the best validation NDCG@10 so far and its weights; without any validation, the last."""

    def __init__(self, last_epoch: int, log: Callable[[str], None] | None = None):
        self.epoch, self.ndcg, self.state = last_epoch, -np.inf, None
        self.say = log or (lambda line: None)

    def offer(self, model: nn.Module, row: dict) -> None:
        """Log `row` (epoch, and valid_ndcg10 when validated) and copy the weights if it is the best so far."""
        ndcg = row.get("valid_ndcg10", np.nan)
        if np.isfinite(ndcg) and ndcg > self.ndcg:
            self.epoch, self.ndcg = row["epoch"], ndcg
            self.state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        self.say(row_line(row))

    def restore(self, model: nn.Module, rows: list[dict], config) -> tuple[nn.Module, list[dict]]:
        """Load the kept weights, mark the kept row `best`, return the model in eval mode and the rows."""
        if self.state is not None:
            model.load_state_dict(self.state)
        for row in rows:
            row["best"] = row["epoch"] == self.epoch
        self.say(f"kept epoch {self.epoch} of {config.epochs}; {asdict(config)}")
        return model.eval(), rows
