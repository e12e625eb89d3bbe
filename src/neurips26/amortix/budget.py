"""Oracle budgets and PMO's top-k AUC (mol_opt's accounting of oracle calls); numpy only, so the report
tables import it without the chemistry stack."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neurips26.common.validation import integer, validate


class BudgetExceeded(RuntimeError):
    """A request for oracle calls would go past the budget (PMO, Gao et al. 2022: a hard stop at the budget)."""


@dataclass
class OracleBudget:
    """Counts oracle calls and stops a run before it exceeds its limit (PMO: 10k paper, 1k quick)."""

    limit: int = integer(0)
    calls: int = integer(0, default=0)

    def __post_init__(self) -> None:
        validate(self)

    @property
    def remaining(self) -> int:
        return self.limit - self.calls

    def spend(self, n: int) -> None:
        """Book `n` calls, or raise BudgetExceeded without booking any if they do not fit."""
        if n < 0:
            raise ValueError(f"cannot spend a negative number of oracle calls ({n})")
        if self.calls + n > self.limit:
            raise BudgetExceeded(
                f"oracle budget exceeded: limit {self.limit}, {self.calls} calls so far, "
                f"{n} more requested ({self.remaining} remain)"
            )
        self.calls += n


def top_k_auc(scores_in_call_order, budget: int, k: int = 10, freq: int = 100, finish: bool = True) -> float:
    """PMO's AUC of the top-k average against oracle calls, normalised by budget (mol_opt main/optimizer.py `top_auc`).

    The top-k mean of the first t calls is read every `freq` calls and after the last call, joined by trapezoids
    starting from 0 at t = 0, and (when `finish`) held flat from the last call up to `budget`. Calls past the budget
    are ignored. As in mol_opt, each entry is one unique molecule: deduplicate before calling. Note the first
    trapezoid starts at 0, so a constant score c gives c * (1 - freq / (2 * budget)), not c.
    """
    scores = np.asarray(scores_in_call_order, dtype=np.float64)[:budget]
    n = len(scores)
    if n == 0 or budget <= 0 or k <= 0 or freq <= 0:
        raise ValueError(f"top_k_auc needs scores, budget, k and freq > 0 (got {n} scores, {budget}, {k}, {freq})")
    if not np.isfinite(scores).all():
        raise ValueError("top_k_auc scores must be finite")
    ends = np.append(np.arange(freq, n, freq), n)  # readings: every freq calls strictly before n, then at n
    prefixes = np.where(np.arange(n)[None, :] < ends[:, None], scores[None, :], -np.inf)
    kk = min(k, n)
    top = -np.partition(-prefixes, kk - 1, axis=1)[:, :kk]
    counted = np.isfinite(top)
    means = np.where(counted, top, 0.0).sum(axis=1) / counted.sum(axis=1)
    widths = np.diff(ends, prepend=0)
    area = float(np.sum(widths * (means + np.concatenate([[0.0], means[:-1]])) / 2.0))
    if finish:
        area += (budget - n) * means[-1]
    return area / budget
