"""Paper 05's rehearsal: what it cuts from the paper block, and fixture files in the real format of its source
(BBO-Pile's train.txt and valid.txt, Hugging Face ``synetune/bbo-pile``: one trajectory a line, as bbo-pile's
``History.get_prompt(remove_names=True)`` writes it, lines joined by newlines with none at the end, as
``generate_training_data/compile_data.py`` writes the files).

Shapes: the largest model (q30m: 30.3M non-embedding parameters) at the 4,096-token context fits easily; nothing
is cut but budgets and sweeps.
"""

from __future__ import annotations

import re

import numpy as np

from neurips26.common.rehearsal import Plan, largest

FOLDER = "bbo_pile/pile"  # the registry's folder (config/sources.yaml)
PILE_ALGORITHMS = ("REA", "TPE", "BORE", "CQR", "RS", "HEBO")  # compile_data.py's methods (config pile.algorithms)
LINES = {"train.txt": 96, "valid.txt": 24}  # lines per file at items=1
RUN = "q30m_t2"  # the largest run: the evaluation run and claim B3's run
TOKENS = 4096  # the run's token budget: one step (2 rows of the 4,096-token context hold more non-pad targets)


def _boxes(cfg: dict, family: str | None = None, split: str | None = None) -> int:
    """Black boxes of the block's catalog (of one family, of one split)."""
    from neurips26.bbo_pile.experiment import blackbox_catalog

    rows = blackbox_catalog(cfg["blackboxes"], as_frame=False)
    return sum((family is None or r["family"] == family) and (split is None or r["split"] == split) for r in rows)


def _largest_run(runs: dict) -> dict:
    """The largest run alone, with the rehearsal's token budget (the budget below names the same value: a sweep
    replaces the whole `runs` entry after the budgets are applied)."""
    return {RUN: {**runs[RUN], "tokens": TOKENS}}


PLAN = Plan(
    budgets={
        "reference_samples": 100,
        f"runs.{RUN}.tokens": TOKENS,
        "training.batch": 2,  # two micro-batches of one row a step: the accumulation runs
        "training.micro_batch": 1,
        "evaluate.boxes": 1,
    },
    sweeps={
        # one training black box (BBOB f1) and the largest held-out function (f24), at the largest dimension
        "blackboxes.bbob.functions": lambda functions: [min(functions), max(functions)],
        "blackboxes.bbob.dims": largest,
        "blackboxes.bbob.instances": lambda instances: instances[:1],
        "blackboxes.eval_functions": largest,
        "blackboxes.go.functions": lambda functions: functions[-1:],  # sum_powers: any dimension
        "blackboxes.go.dims": largest,
        "blackboxes.go.instances": lambda instances: instances[:1],
        # CMA (every conditioning's optimizer), TPE (the slowest generator: optuna) and RS (the regret's baseline:
        # the first rehearsal, without it, failed in the tables job)
        "optimizers": lambda optimizers: ["CMA", "TPE", "RS"],
        "seeds": lambda seeds: seeds[:1],
        "models": lambda models: {"q30m": models["q30m"]},
        "runs": _largest_run,
        "evaluate.conditions": lambda conditions: ["CMA"],
        "evaluate.free_conditions": lambda conditions: ["CMA"],
        "evaluate.seeds": lambda seeds: seeds[:1],
        "model_seeds.seeds": lambda seeds: seeds[:1],
    },
    micro_batch=("training.micro_batch",),
    shapes={},
    fixture_paths={},
    work={
        "bbo_pile_blackboxes": lambda cfg, wc: _boxes(cfg),
        "bbo_pile_reference": lambda cfg, wc: _boxes(cfg, split="eval") * cfg["reference_samples"],
        # trajectories of `budget` trials (the budget is the paper's)
        "bbo_pile_generate": lambda cfg, wc: _boxes(cfg, family=wc["family"]) * len(cfg["seeds"]),
        # generated trajectories serialised (BBO-Pile's lines are the fixture's: their real count is unknown)
        "bbo_pile_serialize": lambda cfg, wc: _boxes(cfg) * len(cfg["optimizers"]) * len(cfg["seeds"]),
        "bbo_pile_train": lambda cfg, wc: cfg["runs"][wc["run"]]["tokens"],
        "bbo_pile_train_seed": lambda cfg, wc: cfg["runs"][wc["run"]]["tokens"] * len(wc["seed_group"].split("-")),
        # held-out trajectories of every optimizer scored under every conditioning token
        "bbo_pile_imitation": lambda cfg, wc: (
            _boxes(cfg, split="eval") * len(cfg["seeds"]) * len(cfg["optimizers"]) ** 2
        ),
        "bbo_pile_optimize": lambda cfg, wc: cfg["evaluate"]["boxes"] * len(cfg["evaluate"]["seeds"]),
        "bbo_pile_optimize_seed": lambda cfg, wc: cfg["evaluate"]["boxes"] * len(cfg["evaluate"]["seeds"]),
    },
    note=(
        "3 black boxes at dimension 10 (BBOB f1 and held-out f24, GO sum_powers), generators CMA, TPE and RS, one seed,"
        " the 30M model alone for 4,096 tokens (one step of 2 rows of the real 4,096-token context, micro-batch 1"
        " and 2), one held-out box per optimize job, one further model seed; the 100-trial budget, tokenizer,"
        " context and model are the paper's"
    ),
)
DATA_GROWTH: dict[str, int] = {}  # the serialize job reads BBO-Pile line by line: linear in the file's size


def _bound(rng: np.random.Generator, kind: str, log_scale: bool) -> tuple[str, str]:
    """A parameter's bounds as syne-tune prints them (Python's str of an int or a float: `8`, `0.0`, `1e-05`)."""
    if kind == "INT":
        lo = int(rng.choice([1, 2, 8, 16])) if log_scale else int(rng.integers(-4, 16))
        return str(lo), str(lo + int(rng.choice([4, 32, 100, 512])))
    if log_scale:
        lo = float(rng.choice([1e-6, 1e-05, 0.0001, 0.001]))
        return str(lo), str(float(rng.choice([0.1, 1.0, 10.0])))
    lo = float(rng.choice([0.0, -1.0, 0.5]))
    return str(lo), str(lo + float(rng.choice([0.6, 1.0, 5.0])))


def pile_line(rng: np.random.Generator, algorithm: str | None = None) -> str:
    """One trajectory line: ``algorithm:<name>,search-space:<blocks>,history:<trials>``, the UNI/INT blocks before
    the CAT ones, values as source bins 0..999 or ``<k>`` categories, the objective's bin after ``*``, each trial
    ended by ``|``."""
    algorithm = algorithm or str(rng.choice(PILE_ALGORITHMS))
    numeric = int(rng.integers(1, 7))
    kinds = [str(k) for k in rng.choice(["UNI", "INT"], size=numeric)] + ["CAT"] * int(rng.integers(0, 3))
    blocks, n_categories = [], []
    for kind in kinds:
        if kind == "CAT":
            n = int(rng.integers(2, 7))
            blocks.append(f"{{type:CAT,categories:[{','.join(str(k) for k in range(n))}]}}")
            n_categories.append(n)
            continue
        log_scale = bool(rng.uniform() < 0.3)
        lo, hi = _bound(rng, kind, log_scale)
        blocks.append(f"{{type:{kind},min_value:{lo},max_value:{hi},{'log_scale' if log_scale else 'linear_scale'}}}")
        n_categories.append(0)
    trials = []
    for _ in range(int(rng.integers(5, 60))):
        values = [f"<{rng.integers(0, n)}>" if n else str(rng.integers(0, 1000)) for n in n_categories]
        trials.append(f"{','.join(values)}*{rng.integers(0, 1000)}|")
    return f"algorithm:{algorithm},search-space:{''.join(blocks)},history:{''.join(trials)}"


def pile_text(lines: int, seed: int) -> str:
    """A BBO-Pile file of `lines` trajectories (every algorithm of the config's list), with one line written before
    bbo-pile's v0.5 fix (a bin of 1000: malformed, tolerated by `pile.max_malformed`), lines joined by newlines and
    none at the end."""
    rng = np.random.default_rng(seed)
    text = [pile_line(rng, PILE_ALGORITHMS[i % len(PILE_ALGORITHMS)]) for i in range(lines)]
    text[1] = re.sub(r"\*\d+\|", "*1000|", text[1], count=1)
    return "\n".join(text)


def fixtures(items: int = 1) -> dict[str, bytes]:
    """Registry path -> bytes: BBO-Pile's train.txt and valid.txt (UTF-8 text)."""
    return {
        f"{FOLDER}/{name}": pile_text(lines * items, seed).encode() for seed, (name, lines) in enumerate(LINES.items())
    }
