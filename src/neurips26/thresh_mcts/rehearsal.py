"""Paper 12's rehearsal: what it cuts from the paper block. The paper's instances are built in code (fixed trees
I1..I3 and seeded random trees), so it downloads nothing and has no fixtures."""

from __future__ import annotations

from neurips26.common.rehearsal import Plan


def _leaves(spec: dict) -> int:
    return spec["branching"] ** spec["depth"]


PLAN = Plan(
    budgets={
        "runs": 2,
        "t_max": 2000,  # runs still going then are censored, as at paper scale
        "deltas": lambda deltas: [min(deltas)],  # the hardest: the most samples before the stopping rule fires
        "instances.fixed": lambda names: names[-1:],  # I3, the largest fixed tree (27 leaves)
        "instances.random": lambda specs: [max(specs, key=_leaves)],  # R7: depth 4, branching 3, 81 leaves
        "equivalence.instances": 2,
        "equivalence.seeds": 1,
        # the per-round cost fits a slope over tree sizes: the smallest and the largest (3^10 = 59,049 leaves)
        "cost.depths": lambda depths: [min(depths), max(depths)],
        "cost.rounds": 2,
        "cost.repeats": 1,
    },
    sweeps={},  # every rule of `rules` is its own algorithm (its own code path): all six simulate
    micro_batch=(),
    shapes={},
    fixture_paths={},
    note=(
        "2 runs to t_max 2,000 at delta 0.001, instances I3 and R7 (81 leaves) in both kinds, 2 equivalence"
        " instances x 1 seed, per-round cost at depths 2 and 10 over 2 rounds; every algorithm, tree size and the"
        " LP check's limit are the paper's"
    ),
)
DATA_GROWTH: dict[str, int] = {}


def fixtures(items: int = 1) -> dict[str, bytes]:
    """No downloads."""
    return {}
