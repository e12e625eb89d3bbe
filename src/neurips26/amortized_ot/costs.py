"""Ground costs: squared Euclidean and squared geodesic on the unit sphere."""

from __future__ import annotations

import numpy as np
import torch


def squared_euclidean(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """C[p, j, l] = |x_pj - y_pl|^2 for batches (P, n, d), (P, m, d)."""
    sq = (x * x).sum(-1)[..., :, None] + (y * y).sum(-1)[..., None, :] - 2 * x @ y.transpose(-1, -2)
    return sq.clamp_min(0.0)


def squared_geodesic(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """C[p, j, l] = arccos(<x_pj, y_pl>)^2 for unit vectors."""
    inner = (x @ y.transpose(-1, -2)).clamp(-1.0, 1.0)
    return torch.arccos(inner) ** 2


COSTS = {"sqeuclidean": squared_euclidean, "sqgeodesic": squared_geodesic}


def cost_matrix(x: np.ndarray | torch.Tensor, y: np.ndarray | torch.Tensor, cost: str) -> torch.Tensor:
    if cost not in COSTS:
        raise ValueError(f"unknown cost '{cost}' (allowed values: {', '.join(COSTS)})")
    return COSTS[cost](torch.as_tensor(x, dtype=torch.float64), torch.as_tensor(y, dtype=torch.float64))
