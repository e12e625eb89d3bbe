"""PMO oracles by name, and the scorer every optimiser calls: it counts oracle calls, enforces a budget and,
for PMO runs, caches scores so a molecule proposed twice costs one call (mol_opt's convention)."""

from __future__ import annotations

import numpy as np
from rdkit import Chem

from neurips26.amortix import oracles
from neurips26.amortix.budget import OracleBudget


def make_oracle(name: str) -> oracles.Oracle:
    """A PMO-lite oracle by name (the kinase surrogate is fitted by its own step and stored as arrays)."""
    if name not in oracles.PMO_ORACLES:
        raise ValueError(f"unknown PMO oracle {name!r}; choose one of {sorted(oracles.PMO_ORACLES)}")
    return oracles.PMO_ORACLES[name]()


class Scorer:
    """Calls the oracle on canonical SMILES. `calls` counts molecules sent to the oracle; `log` keeps them in
    call order (for PMO's top-10 AUC). With `budget`, a request that would exceed it raises BudgetExceeded
    before any call is made."""

    def __init__(self, oracle: oracles.Oracle, budget: int | None = None, cache: bool = False) -> None:
        self.oracle = oracle
        self.budget = OracleBudget(budget) if budget is not None else None
        self.cache: dict[str, float] | None = {} if cache else None
        self.calls = 0
        self.log: list[tuple[str, float]] = []

    def new_molecules(self, smiles: list[str]) -> list[str]:
        """The molecules a call on `smiles` would send to the oracle (all of them without a cache)."""
        if self.cache is None:
            return list(smiles)
        return list(dict.fromkeys(s for s in smiles if s not in self.cache))

    def __call__(self, smiles: list[str]) -> np.ndarray:
        fresh = self.new_molecules(smiles)
        if self.budget is not None:
            self.budget.spend(len(fresh))
        scores = self.oracle([Chem.MolFromSmiles(s) for s in fresh]) if fresh else np.zeros(0)
        self.calls += len(fresh)
        self.log.extend(zip(fresh, scores.tolist()))
        if self.cache is None:
            return scores
        self.cache.update(zip(fresh, scores.tolist()))
        return np.array([self.cache[s] for s in smiles])
