"""Paper 12's rehearsal: what it cuts from the paper block. The paper's instances are built in code (fixed trees
I1..I3 and seeded random trees), so it downloads nothing and has no fixtures."""

from __future__ import annotations

from neurips26.common.rehearsal import Plan


def _leaves(spec: dict) -> int:
    return spec["branching"] ** spec["depth"]


def _fixed_names(cfg: dict) -> list[str]:
    """The fixed instances made (instances.make_instances): each fixed tree per kind, and its Gaussian variant."""
    inst = cfg["instances"]
    kinds = list(inst["kinds"]) + (["gaussian"] if inst["gaussian_fixed"] and "gaussian" not in inst["kinds"] else [])
    return [name for _ in kinds for name in inst["fixed"]]


def _instances(cfg: dict) -> int:
    return len(_fixed_names(cfg)) + len(cfg["instances"]["random"])


def _leaves_total(cfg: dict) -> int:
    """The leaves of every instance made: the fixed trees' per kind and the random trees'."""
    from .instances import FIXED_INSTANCES

    fixed = sum(_leaves(FIXED_INSTANCES[name]) for name in _fixed_names(cfg))
    return fixed + sum(_leaves(spec) for spec in cfg["instances"]["random"])


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
    work={
        # the tree DP (T*, w*) of every instance, linear in its leaves (a random tree redrawn until its T* is
        # below t_star_max costs more: not counted)
        "thresh_mcts_instances": lambda cfg, wc: _leaves_total(cfg),
        # the DP per instance and delta, and the LP check on the instances of at most lp_check.max_leaves leaves
        "thresh_mcts_theory": lambda cfg, wc: _leaves_total(cfg) * len(cfg["deltas"]),
        # rounds x leaves (d_tracking's per-round work; the incremental rules' is less) of every run on every
        # instance and delta: an upper bound, since a run stops at its stopping time, t_max only censors it
        "thresh_mcts_simulate": lambda cfg, wc: cfg["runs"] * cfg["t_max"] * len(cfg["deltas"]) * _leaves_total(cfg),
        # rounds of both ratio rules on each random tree and seed: an upper bound (they stop at delta 0.1)
        "thresh_mcts_equivalence": lambda cfg, wc: (
            cfg["equivalence"]["instances"] * cfg["equivalence"]["seeds"] * cfg["t_max"]
        ),
        # node operations: rounds x repeats x rules on complete trees of K = branching^depth leaves per depth
        # (d_tracking's O(K) per round; the incremental ratio's O(log K) is less: an upper bound)
        "thresh_mcts_cost": lambda cfg, wc: (
            cfg["cost"]["rounds"]
            * cfg["cost"]["repeats"]
            * len(cfg["cost"]["rules"])
            * sum(cfg["cost"]["branching"] ** depth for depth in cfg["cost"]["depths"])
        ),
        # rows of the run tables summarised: every rule's runs per instance and delta
        "thresh_mcts_evaluate": lambda cfg, wc: len(cfg["rules"]) * cfg["runs"] * len(cfg["deltas"]) * _instances(cfg),
        # reads the cut budgets as numbers to print: its cost is reading small tables
        "thresh_mcts_report": lambda cfg, wc: 1,
    },
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
