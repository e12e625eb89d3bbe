"""Paper 16's rehearsal: what it cuts from the paper block. The model is analytic and simulated in code (our
reconstruction, the skill-chain model), so it downloads nothing and has no fixtures."""

from __future__ import annotations

from neurips26.common.rehearsal import Plan, largest


def _ends(values: list) -> list:
    """The smallest and the largest of a grid (a fit or a comparison needs two ends)."""
    return [min(values), max(values)]


def _fit(values: list) -> list:
    """The smallest, middle and largest of a grid a power law is fitted over (a fit needs three points)."""
    ordered = sorted(values)
    return [ordered[0], ordered[len(ordered) // 2], ordered[-1]]


REFINE = 20  # success evaluations of the bounded Brent refinement within one grid step (xatol 1e-4), about


def _optimum(n_grid: int) -> int:
    """Success evaluations of one optimal allocation of post-training: the n_grid + 1 shares, then the refinement."""
    return n_grid + 1 + REFINE


def _phenomenon_work(block: dict, name: str) -> float:
    """Mean-field evaluations of one phenomenon's table (each of the n_skills skills; the skills are the paper's
    at both scales), from the job's own block only."""
    if name == "complementarity":
        return len(block["budgets"]) * len(block["base_computes"]) * _optimum(block["n_grid"])
    if name == "plateau":
        return 2 * len(block["chain_lengths"])  # one RL ODE to the success level per chain length, model and null
    if name == "ceiling":
        # the main table in the model and in the null without the pretraining gate, then the budget sweep in both (an
        # upper bound: the sweep reads only the computes inside the fit window, the null's at the main budget reused)
        return (2 + 2 * len(block["budgets"])) * len(block["base_computes"]) * _optimum(block["n_grid"])
    if name == "allocation":
        cells = len(block["base_computes"]) * len(block["demo_qualities"]) * len(block["reward_noises"])
        # each other number of rollouts k at the first reward noise
        swept = (len(set(block["rollouts"])) - 1) * len(block["base_computes"]) * len(block["demo_qualities"])
        return 2 * (cells + swept) * _optimum(block["n_grid"])  # in the model and in the null, every setting
    if name == "amplification":
        # the RL ODE's horizon (RK45, adaptive): an upper bound, its steps grow at most linearly with it
        return block["rl_updates"]
    if name == "pretraining":
        return len(block["base_computes"])  # closed forms per compute
    raise ValueError(f"unknown phenomenon {name!r}")


PLAN = Plan(
    budgets={
        "complementarity.n_grid": 2,
        "complementarity.budgets": _ends,
        "complementarity.base_computes": _ends,
        "plateau.chain_lengths": _ends,  # L = 2 and 12, the longest chain
        "ceiling.n_grid": 2,
        "ceiling.budgets": _ends,  # the budget exponent's fit needs two budgets
        "allocation.n_grid": 2,
        # one cell of the allocation table (each costs about 2 s at 10,000 skills): the largest compute, the best
        # demonstrations and the noisiest reward
        "allocation.base_computes": largest,
        "allocation.demo_qualities": largest,
        "allocation.reward_noises": largest,
        "allocation.rollouts": _ends,  # k = 1 and 16: the model's own k (4) is always computed beside them
        "amplification.rl_updates": 10,
        "pretraining.base_computes": _fit,
        "simulation.runs": 2,
    },
    sweeps={"simulation.seeds": lambda seeds: seeds[:1]},  # the three configurations (SFT and RL, RL, SFT) all run
    micro_batch=(),
    shapes={},
    fixture_paths={},
    work={
        "multistage_training_phenomenon": lambda cfg, wc: _phenomenon_work(cfg[wc["phenomenon"]], wc["phenomenon"]),
        # independent runs x updates of the job's configuration (its budget, the paper's at both scales)
        "multistage_training_simulate": lambda cfg, wc: (
            cfg["simulation"]["runs"] * cfg["simulation"]["configs"][wc["config"]]["budget"]
        ),
        # reads the cut budgets as numbers to print: its cost is reading small tables
        "multistage_training_report": lambda cfg, wc: 1,
    },
    note=(
        "grids of 2 allocations, one allocation cell (the largest compute, quality and noise), the two ends of the"
        " complementarity's computes and budgets, of the ceiling's budget sweep, of the rollouts swept and of the"
        " chain lengths,"
        " 10 RL updates in the amplification table, 2 simulated runs of seed 0 per configuration; the number of"
        " skills (10,000), the ceiling's computes and window, and every simulated configuration are the paper's"
    ),
)
DATA_GROWTH: dict[str, int] = {}


def fixtures(items: int = 1) -> dict[str, bytes]:
    """No downloads."""
    return {}
