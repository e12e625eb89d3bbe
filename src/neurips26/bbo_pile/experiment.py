"""Paper 05's config: the black-box catalog, vocabulary and model settings built from a scale's block, and the
checks the schema cannot express (run at parse time, before any job): unknown functions, runs naming missing
models, attention heads that do not group, conditioning on an optimizer absent from the data, model seeds that
repeat the scale's seed or name a missing run, trajectories longer than the model's context, and a BBO-Pile
corpus (`pile`) without the INT and CAT parameter types its lines use."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from neurips26.bbo_pile.catalog import catalog
from neurips26.bbo_pile.go_functions import GO_FUNCTIONS
from neurips26.bbo_pile.grammar import trial_length
from neurips26.bbo_pile.tokenizer import header_ids
from neurips26.bbo_pile.vocabulary import make_vocabulary
from neurips26.common.costs import decoder_params

REGRET_BASELINE = "RS"  # regret.normalized_regret's baseline: the regret is scaled by its median first value

if TYPE_CHECKING:  # the config checks run at parse time, without pandas
    import pandas as pd


def blackbox_catalog(b: dict, as_frame: bool = True) -> pd.DataFrame | list[dict]:
    """The black boxes of a scale's `blackboxes` block (as a frame, or as rows)."""
    return catalog(
        b["bbob"]["functions"],
        b["bbob"]["dims"],
        b["bbob"]["instances"],
        b["go"]["functions"],
        b["go"]["dims"],
        b["go"]["instances"],
        b["eval_functions"],
        as_frame=as_frame,
    )


def families(cfg: dict) -> list[str]:
    """The families with at least one function at this scale (one generation job per family and optimizer)."""
    return [f for f in ("bbob", "go") if cfg["blackboxes"][f]["functions"]]


def vocabulary(optimizers: list[str], q: int):
    """The vocabulary of the scale's `optimizers` with `tokenizer.q` bins (UNI parameters only)."""
    return make_vocabulary(optimizers, q)


def corpus_vocabulary(optimizers: list[str], tokenizer: dict, pile: dict | None = None):
    """The vocabulary the corpus is written with: the scale's `optimizers`, then BBO-Pile's `pile.algorithms`
    not among them (where the scale reads BBO-Pile), `tokenizer.q` bins and `tokenizer.parameter_types`
    (UNI only when absent: the layout of the generated data, unchanged)."""
    algorithms = list(optimizers)
    if pile:
        algorithms += [a for a in pile["algorithms"] if a not in algorithms]
    return make_vocabulary(algorithms, tokenizer["q"], tokenizer.get("parameter_types", ["UNI"]))


def trajectory_length(vocab, row, budget: int) -> int:
    """Tokens of one serialised trajectory of `budget` trials on the catalog row's box (BOS to EOS)."""
    header = header_ids(vocab, vocab_algorithm_for_length(vocab), row["lo"], row["hi"])
    return len(header) + budget * trial_length(int(row["dim"])) + 1


def _space(row) -> tuple:
    """A catalog row's search space: dimension and bounds."""
    return int(row["dim"]), tuple(np.asarray(row["lo"]).tolist()), tuple(np.asarray(row["hi"]).tolist())


def vocab_algorithm_for_length(vocab) -> str:
    """The algorithm with the longest name (its token is one token whatever the name, but be safe)."""
    return max(vocab.algorithms, key=len)


def check_config(cfg: dict) -> None:
    """Raise ValueError naming the key (see the module docstring)."""
    unknown = [f for f in cfg["blackboxes"]["go"]["functions"] if f not in GO_FUNCTIONS]
    if unknown:
        raise ValueError(f"blackboxes.go.functions: unknown {unknown}; known: {sorted(GO_FUNCTIONS)}")
    missing_eval = sorted(set(cfg["blackboxes"]["eval_functions"]) - set(cfg["blackboxes"]["bbob"]["functions"]))
    if missing_eval:
        raise ValueError(
            f"blackboxes.eval_functions: {missing_eval} are not among blackboxes.bbob.functions, so "
            f"they hold no black box to evaluate on"
        )
    try:
        boxes = blackbox_catalog(cfg["blackboxes"], as_frame=False)
    except ValueError as error:
        raise ValueError(f"blackboxes: {error}") from None
    for name, model in cfg["models"].items():
        if model["n_heads"] % model["n_query_groups"]:
            raise ValueError(
                f"models.{name}: n_heads {model['n_heads']} is not a multiple of n_query_groups "
                f"{model['n_query_groups']}"
            )
    for name, run in cfg["runs"].items():
        if run["model"] not in cfg["models"]:
            raise ValueError(f"runs.{name}.model: {run['model']!r} is not one of models {sorted(cfg['models'])}")
    if REGRET_BASELINE not in cfg["optimizers"]:
        raise ValueError(
            f"optimizers: {cfg['optimizers']} lack {REGRET_BASELINE}, whose first trial normalises every regret "
            f"(regret.normalized_regret): the tables job would fail after every optimize job ran"
        )
    ev = cfg["evaluate"]
    if ev["run"] not in cfg["runs"]:
        raise ValueError(f"evaluate.run: {ev['run']!r} is not one of runs {sorted(cfg['runs'])}")
    for key in ("conditions", "free_conditions"):
        absent = [c for c in ev[key] if c not in cfg["optimizers"]]
        if absent:
            raise ValueError(
                f"evaluate.{key}: {absent} generate no training data (optimizers: "
                f"{cfg['optimizers']}), so the model has never seen their token"
            )
    seeds = cfg["model_seeds"]
    if seeds["run"] not in cfg["runs"]:
        raise ValueError(f"model_seeds.run: {seeds['run']!r} is not one of runs {sorted(cfg['runs'])}")
    if cfg["seed"] in seeds["seeds"]:
        raise ValueError(
            f"model_seeds.seeds: {cfg['seed']} is the scale's seed, which trains the first copy of "
            f"run {seeds['run']} already"
        )
    if seeds["condition"] not in cfg["optimizers"]:
        raise ValueError(
            f"model_seeds.condition: {seeds['condition']!r} generates no training data (optimizers: "
            f"{cfg['optimizers']}), so the model has never seen its token"
        )
    n_eval = sum(row["split"] == "eval" for row in boxes)
    if ev["boxes"] > n_eval:
        raise ValueError(f"evaluate.boxes: {ev['boxes']} held-out boxes asked for, the eval split has {n_eval}")
    pile = cfg.get("pile")
    if pile:
        lacking = [t for t in ("INT", "CAT") if t not in cfg["tokenizer"].get("parameter_types", ["UNI"])]
        if lacking:
            raise ValueError(
                f"tokenizer.parameter_types: BBO-Pile (pile) has {lacking} parameters; list them "
                f"(parameter_types: [UNI, INT, CAT])"
            )
        if pile["train"] == pile["valid"]:
            raise ValueError(f"pile: train and valid name the same file {pile['train']!r}")
    vocab = corpus_vocabulary(cfg["optimizers"], cfg["tokenizer"], pile)
    lengths_by_space: dict[tuple, int] = {}  # boxes of one search space serialise alike (paper scale: 2,024 boxes)
    for row in boxes:
        if _space(row) not in lengths_by_space:
            lengths_by_space[_space(row)] = trajectory_length(vocab, row, cfg["budget"])
    lengths = np.array([lengths_by_space[_space(row)] for row in boxes])
    if lengths.max() > cfg["context"]:
        worst = boxes[int(lengths.argmax())]
        raise ValueError(
            f"context: a {cfg['budget']}-trial trajectory on {worst['bb_id']} (dim {worst['dim']}) "
            f"takes {lengths.max()} tokens, more than the context of {cfg['context']}; raise context "
            f"or lower budget or the dimensions"
        )


def model_seeds(cfg: dict) -> list[int]:
    """Claim B3's model seeds: the scale's `seed` (the copy trained with the scaling runs) and the further ones."""
    return [cfg["seed"], *cfg["model_seeds"]["seeds"]]


def model_seed(cfg: dict, seed) -> int:
    """The seed of one copy of `model_seeds.run` (it seeds the initialisation, the data order and the sampling of
    the seed copies' training and optimize jobs), refused when it is not one of `model_seeds(cfg)`."""
    if int(seed) not in model_seeds(cfg):
        raise ValueError(f"model seed {seed} is not one of {model_seeds(cfg)} (seed and model_seeds.seeds)")
    return int(seed)


def seed_groups(cfg: dict) -> list[list[int]]:
    """The training jobs of `model_seeds.run`'s model seeds, each a list of seeds trained together: where
    `model_seeds.batch` holds, one job of every seed (the scale's `seed` first) trained as a batched ensemble;
    otherwise one job per further seed (the scale's `seed` is trained by the run's own job with the scaling runs).
    """
    if cfg["model_seeds"]["batch"]:
        return [model_seeds(cfg)]
    return [[k] for k in cfg["model_seeds"]["seeds"]]


def group_name(seeds) -> str:
    """A seed group's name in paths (`seeds/{run}/seed{name}/`): its seeds joined by '-' (`0-1-2`, or `1`)."""
    return "-".join(str(int(k)) for k in seeds)


def seed_group(cfg: dict, run: str, name: str) -> list[int]:
    """The seeds of the group `name` of run `run` (one of :func:`seed_groups`), refused otherwise."""
    groups = {group_name(g): g for g in seed_groups(cfg)}
    if run != cfg["model_seeds"]["run"] or name not in groups:
        known = [f"{cfg['model_seeds']['run']}/seed{n}" for n in groups]
        raise ValueError(f"seed group {run}/seed{name} is not one of the model seeds' jobs {known}")
    return groups[name]


def run_file(cfg: dict, run: str, seed: int, what: str) -> str:
    """Where seed `seed` of run `run` is stored, relative to `results/{scale}/bbo_pile/`: its model (`what` =
    "model") or its training log ("training"). A seed of a seed group is in the group's files (which hold every
    seed of the group); the scale's `seed` of any other run in the run's own (`models/{run}.pt`,
    `training/{run}.parquet`)."""
    if what not in ("model", "training"):
        raise ValueError(f"what must be 'model' or 'training', got {what!r}")
    name = "model.pt" if what == "model" else "training.parquet"
    if run == cfg["model_seeds"]["run"]:
        for group in seed_groups(cfg):
            if int(seed) in group:
                return f"seeds/{run}/seed{group_name(group)}/{name}"
    if int(seed) != cfg["seed"]:
        raise ValueError(f"run {run} is trained with seed {cfg['seed']} only, not {seed}")
    return f"models/{run}.pt" if what == "model" else f"training/{run}.parquet"


def decoder_config(model: dict, context: int, seed: int, vocab_size: int):
    """The DecoderConfig of a run: its model's sizes (an entry of `models`), the scale's context, seeded by `seed`."""
    from neurips26.bbo_pile.model import DecoderConfig

    return DecoderConfig(vocab_size=vocab_size, context=context, seed=seed, **model)


def token_weights(cfg: dict, model: str) -> int:
    """Weights a token passes through in the scale's model `model` (`models` entry; common.costs.decoder_params), the
    output head taken over the tokenizer's q value bins (the vocabulary's hundred-odd symbols left out)."""
    sizes = cfg["models"][model]
    return decoder_params(
        d_model=sizes["d_model"],
        n_layers=sizes["n_layers"],
        n_heads=sizes["n_heads"],
        n_kv_heads=sizes["n_query_groups"],
        head_dim=sizes["head_size"],
        d_ff=sizes["mlp_hidden"],
        vocab=cfg["tokenizer"]["q"],
    )


def train_settings(training: dict, tokens: int, seed: int):
    """The TrainSettings of a run: the scale's `training` block, the run's token budget, seeded by `seed`."""
    from neurips26.bbo_pile.training import TrainSettings

    t = training
    return TrainSettings(
        tokens_budget=tokens,
        batch=t["batch"],
        lr=t["lr"],
        weight_decay=t["weight_decay"],
        warmup=t["warmup"],
        min_lr=t["min_lr"],
        eval_every=t["eval_every"],
        seed=seed,
        micro_batch=t.get("micro_batch"),
    )


def eval_boxes(boxes: pd.DataFrame, n: int) -> pd.DataFrame:
    """The first `n` held-out boxes, spread over functions and dimensions (round-robin over (function, dim))."""
    held = boxes[boxes["split"] == "eval"].sort_values(["instance", "function", "dim"], kind="stable")
    return held.head(n)
