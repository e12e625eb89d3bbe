"""Paper 05's rehearsal: what it cuts from the paper block, and fixture files in the real format of its source
(BBO-Pile's train.txt and valid.txt, Hugging Face ``synetune/bbo-pile``: one trajectory a line, as bbo-pile's
``History.get_prompt(remove_names=True)`` writes it, lines joined by newlines with none at the end, as
``generate_training_data/compile_data.py`` writes the files).

Shapes: the largest model (q30m: 30.3M non-embedding parameters) at the 4,096-token context fits easily; nothing
is cut but budgets and sweeps. Its two training rules are what the rehearsal's time is left in (a step of two
4,096-token rows of the 30M model forward and backward, 0.85-1.44 TFLOP, then one validation row: 2-4 minutes a
job on one thread of this CPU, in each of the rehearsal's two passes): they are kept at the real shapes, whose
tensor memory at micro-batches 1 and 2 is what the paper block's micro-batch of 8 rests on.

Budgets: the trials of a trajectory (`budget`, 100 -> 12: smoke's, so that CMA-ES tells once and TPE leaves its 10
start-up trials) cut the optimize jobs' decoding (100 trials of the 30M model took about 400 s a job, four jobs;
12 take 16-74 s), the imitation's scoring (137 s -> 84 s) and the generated data; the work functions of the
optimize and imitation jobs count it as the forward FLOPs of the prompts the decoder reads. The BBO-Pile
validation fixture has one line per algorithm, so that each training job evaluates one validation row (five
before, each as costly as a training row's forward pass).

Not counted by the rehearsal (reported, not fixed here): the optimize jobs decode on a GPU outside the training
loop. Counted by shape (meta device): at paper scale one job decodes the 360 runs of 72 held-out boxes x 5 seeds as
one batch, and at the last trials (2,388-token prompts at dimension 10) their key/value cache alone is 99.5 GB
(0.28 GB a run), over an 80 GB GPU.
"""

from __future__ import annotations

import re

import numpy as np

from neurips26.common.rehearsal import Plan, largest

FOLDER = "bbo_pile/pile"  # the registry's folder (config/sources.yaml)
PILE_ALGORITHMS = ("REA", "TPE", "BORE", "CQR", "RS", "HEBO")  # compile_data.py's methods (config pile.algorithms)
LINES = {"train.txt": 96, "valid.txt": 6}  # lines per file at items=1 (valid: one per algorithm, one validation row)
RUN = "q30m_t2"  # the largest run: the evaluation run and claim B3's run
TRIALS = 12  # `budget`: smoke's (CMA-ES tells once, TPE leaves its 10 start-up trials)
TOKENS = 4096  # the run's token budget: one step (2 rows of the 4,096-token context hold more non-pad targets)


def _boxes(cfg: dict, family: str | None = None, split: str | None = None) -> int:
    """Black boxes of the block's catalog (of one family, of one split)."""
    from neurips26.bbo_pile.experiment import blackbox_catalog

    rows = blackbox_catalog(cfg["blackboxes"], as_frame=False)
    return sum((family is None or r["family"] == family) and (split is None or r["split"] == split) for r in rows)


def _lengths(cfg: dict, imitation: bool = False) -> list[tuple[int, int]]:
    """(header tokens, tokens a trial) of each box an optimize job decodes on (the first `evaluate.boxes` held-out
    boxes), or of every held-out box (`imitation`: the boxes whose trajectories the imitation scores)."""
    from neurips26.bbo_pile.experiment import blackbox_catalog, corpus_vocabulary, eval_boxes, trajectory_length
    from neurips26.bbo_pile.grammar import trial_length

    catalog = blackbox_catalog(cfg["blackboxes"])
    boxes = catalog[catalog["split"] == "eval"] if imitation else eval_boxes(catalog, cfg["evaluate"]["boxes"])
    vocab = corpus_vocabulary(cfg["optimizers"], cfg["tokenizer"], cfg.get("pile"))
    found: dict[tuple, tuple[int, int]] = {}  # boxes of one search space serialise alike
    lengths = []
    for row in boxes.to_dict("records"):
        space = (row["dim"], tuple(row["lo"]), tuple(row["hi"]))
        if space not in found:
            found[space] = (trajectory_length(vocab, row, 0) - 1, trial_length(int(row["dim"])))
        lengths.append(found[space])
    return lengths


def _forward_flops(cfg: dict, tokens: int, past: int = 0) -> float:
    """FLOPs of a forward pass of the evaluation run's model over `tokens` new tokens after `past` cached ones: the
    weights each token passes through (experiment.token_weights) and causal attention."""
    from neurips26.bbo_pile.experiment import token_weights

    name = cfg["runs"][cfg["evaluate"]["run"]]["model"]
    model, weights = cfg["models"][name], token_weights(cfg, name)
    attended = tokens * past + tokens * (tokens + 1) / 2  # query-key pairs
    return 2.0 * tokens * weights + 4.0 * model["n_layers"] * model["n_heads"] * model["head_size"] * attended


def _optimize_work(cfg: dict, wildcards: dict) -> float:
    """FLOPs of one optimize job: its runs (boxes x seeds) decoded as one batch padded to the longest prompt, each
    trial a prefill of the header and the trials so far, then the proposal token by token (constrained: the d values
    and their commas; free: the whole trial)."""
    lengths = _lengths(cfg)
    header, trial = max(h for h, _ in lengths), max(t for _, t in lengths)
    steps = trial if wildcards.get("decoding") == "free" else trial - 3  # 2d - 1 of the 2d + 2 tokens
    per_run = 0.0
    for t in range(cfg["budget"]):
        prompt = header + t * trial
        per_run += _forward_flops(cfg, prompt) + sum(_forward_flops(cfg, 1, prompt + k) for k in range(steps - 1))
    return len(lengths) * len(cfg["evaluate"]["seeds"]) * per_run


def _imitation_work(cfg: dict, wildcards: dict) -> float:
    """FLOPs of the imitation: every held-out box's trajectory of each optimizer and seed (header, `budget` trials,
    EOS) re-encoded under every conditioning token and scored by every model seed of the run."""
    from neurips26.bbo_pile.experiment import model_seeds

    sequences = sum(_forward_flops(cfg, header + cfg["budget"] * trial + 1) for header, trial in _lengths(cfg, True))
    return len(model_seeds(cfg)) * len(cfg["optimizers"]) ** 2 * len(cfg["seeds"]) * sequences


def _tables_work(cfg: dict, wildcards: dict) -> float:
    """Trials the tables job reads and scores: the generated trajectories and every model run (optimize's
    conditions, constrained and free, and the model seeds' runs)."""
    from neurips26.bbo_pile.experiment import model_seeds

    ev = cfg["evaluate"]
    generated = _boxes(cfg) * len(cfg["optimizers"]) * len(cfg["seeds"])
    conditions = len(ev["conditions"]) + len(ev["free_conditions"]) + len(model_seeds(cfg))
    return (generated + ev["boxes"] * len(ev["seeds"]) * conditions) * cfg["budget"]


def _largest_run(runs: dict) -> dict:
    """The largest run alone, with the rehearsal's token budget (the budget below names the same value: a sweep
    replaces the whole `runs` entry after the budgets are applied)."""
    return {RUN: {**runs[RUN], "tokens": TOKENS}}


PLAN = Plan(
    budgets={
        "reference_samples": 100,
        "budget": TRIALS,
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
        # trajectories, not trials: at these sizes a job's time is the optimizer's import and each run's set-up
        # (CMA-ES: 200 trials in 1.0 s at the paper's 100 trials, 24 in 1.7 s at 12), so trials would scale that
        # set-up by the budget too (1,185 min for BBOB's CMA-ES job); TPE's per-trial cost, growing with its
        # history, is under-counted
        "bbo_pile_generate": lambda cfg, wc: _boxes(cfg, family=wc["family"]) * len(cfg["seeds"]),
        # generated trajectories serialised, per trajectory as generate (its time is BBO-Pile's lines, the
        # fixture's: their real count is unknown)
        "bbo_pile_serialize": lambda cfg, wc: _boxes(cfg) * len(cfg["optimizers"]) * len(cfg["seeds"]),
        "bbo_pile_train": lambda cfg, wc: cfg["runs"][wc["run"]]["tokens"],
        "bbo_pile_train_seed": lambda cfg, wc: cfg["runs"][wc["run"]]["tokens"] * len(wc["seed_group"].split("-")),
        "bbo_pile_imitation": _imitation_work,
        "bbo_pile_optimize": _optimize_work,
        "bbo_pile_optimize_seed": _optimize_work,
        "bbo_pile_tables": _tables_work,
        # renders the tables it is given: the same work whatever the budgets it carries as text
        "bbo_pile_report": lambda cfg, wc: 1,
    },
    note=(
        "3 black boxes at dimension 10 (BBOB f1 and held-out f24, GO sum_powers), generators CMA, TPE and RS, one seed,"
        " 12 trials a trajectory (smoke's budget; the paper's 100), the 30M model alone for 4,096 tokens (one step of"
        " 2 rows of the real 4,096-token context, micro-batch 1 and 2, one validation row), one held-out box per"
        " optimize job, one further model seed; the tokenizer, context and model are the paper's"
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
