"""The tables a report shows, built from results: the trials every method evaluated on the held-out boxes and their
normalised regret, the regret table at a few horizons, each training run's final point and the scaling fit, the
validity of decoded trials, the dataset table, the model-seed table of claim B3 and the report's tables. Result
tables are read here without their provenance columns; the seed copies of claim B3's run are named by their path."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import pandas as pd

from .claims import imitation_margins, seed_differences
from .regret import evaluation_run, normalized_regret, seed_method
from .scaling import scaling_summary

PROVENANCE_COLUMNS = ("git_commit", "config_hash", "seed")
TRIAL_COLUMNS = ["bb_id", "method", "seed", "trial", "y"]
# claim B3's seed copies: results/{scale}/bbo_pile/seeds/{run}/seed{k}/...
SEED_PATH = re.compile(r"/seeds/(?P<run>[^/]+)/seed(?P<seed>\d+)/")


# reading results


def read_table(path) -> pd.DataFrame:
    """A result table without the provenance columns write_parquet adds (as a report shows it)."""
    return pd.read_parquet(path).drop(columns=list(PROVENANCE_COLUMNS), errors="ignore")


def read_tables(paths: Iterable, columns: list[str] | None = None) -> pd.DataFrame:
    """The tables at `paths` one after the other (a fresh index)."""
    return pd.concat([pd.read_parquet(p, columns=columns) for p in paths], ignore_index=True)


def model_seed_of(path) -> tuple[str, int]:
    """(run, model seed) of a file of one of claim B3's seed copies (`.../seeds/{run}/seed{k}/...`)."""
    match = SEED_PATH.search(str(path))
    if match is None:
        raise ValueError(f"{path} is not a file of a model seed copy (.../seeds/{{run}}/seed{{k}}/...)")
    return match["run"], int(match["seed"])


def final_val_loss(training: pd.DataFrame) -> float:
    """The validation loss of a training log's last evaluation (the one with the most compute)."""
    return float(training.sort_values("flops")["val_loss"].iloc[-1])


def seed_rows(training: pd.DataFrame, seed: int) -> pd.DataFrame:
    """The rows of model seed `seed` of training logs (a seed group's log holds every seed it trained, by
    `model_seed`): the scaling runs' rows, the scale's seed."""
    return training[training["model_seed"] == int(seed)].reset_index(drop=True)


def model_seed_losses(runs: pd.DataFrame, run: str, seed: int, seed_training: Iterable) -> dict[int, float]:
    """The final validation loss of claim B3's run per model seed: the first copy's (trained with the scale's
    `seed`) from the runs table, the further copies' from their training logs (paths, in the order given; a
    seed group's log gives each of its seeds, by `model_seed`, its path names the one seed of a log without it).
    """
    losses = {int(seed): float(runs.loc[runs["run"] == run, "val_loss"].iloc[0])}
    for path in seed_training:
        table = pd.read_parquet(path)
        if "model_seed" not in table:
            losses[model_seed_of(path)[1]] = final_val_loss(table)
            continue
        for k, rows in table.groupby("model_seed", sort=False):
            if int(k) != int(seed):  # the first copy's loss is the runs table's (the same log's rows)
                losses[int(k)] = final_val_loss(rows)
    return losses


# the tables step


def regret_horizons(budget: int) -> list[int]:
    """The horizons T of the regret table: 1, a quarter, half and all of the budget (none below 1)."""
    return sorted({1, budget // 4, budget // 2, budget} - {0})


def model_trials(optimized: pd.DataFrame, seed_optimized: Sequence[tuple[str, int, pd.DataFrame]]) -> pd.DataFrame:
    """The model's optimize rows with their method: ``model:{condition}:{decoding}`` for the evaluation run, and
    :func:`.regret.seed_method` for each (run, model seed, rows) of claim B3's seed copies."""
    models = optimized.copy()
    models["method"] = "model:" + models["condition"] + ":" + models["decoding"]
    for run, k, seeded in seed_optimized:
        seeded = seeded.copy()
        seeded["method"] = [seed_method(c, run, k) for c in seeded["condition"]]
        models = pd.concat([models, seeded], ignore_index=True)
    return models


def regret_trials(
    boxes: pd.DataFrame, trajectories: pd.DataFrame, optimized: pd.DataFrame, models: pd.DataFrame
) -> pd.DataFrame:
    """The trials (``bb_id``, ``method``, ``seed``, ``trial``, ``y``) of the real optimizers on the held-out boxes
    the evaluation run was evaluated on (``optimized``), then the model's (:func:`model_trials`)."""
    held = set(boxes.loc[boxes["split"] == "eval", "bb_id"])
    real = trajectories[trajectories["bb_id"].isin(held & set(optimized["bb_id"]))]
    real = real.rename(columns={"optimizer": "method"})
    return pd.concat([real[TRIAL_COLUMNS], models[TRIAL_COLUMNS]], ignore_index=True)


def regret_table(regret: pd.DataFrame, horizons=(1, 6, 12, 24)) -> pd.DataFrame:
    """Mean and median normalised regret per method at each horizon T (boxes x seeds), and the mean rank of the
    method among all methods per (box, seed) at the last horizon."""
    usable = regret[regret["scale"] > 0]
    horizons = [T for T in horizons if T <= usable["T"].max()]
    rows = usable[usable["T"].isin(horizons)]
    table = rows.groupby(["method", "T"])["norm_regret"].agg(mean="mean", median="median", runs="size")
    table = table.reset_index().pivot_table(index="method", columns="T", values=["mean", "median"])
    table.columns = [f"{stat}_T{T}" for stat, T in table.columns]
    last = usable[usable["T"] == usable["T"].max()].copy()
    last["rank"] = last.groupby(["bb_id", "seed"])["norm_regret"].rank(method="average")
    table["mean_rank_last"] = last.groupby("method")["rank"].mean()
    table["runs"] = last.groupby("method").size()
    return table.reset_index()


def validity_table(decoded: pd.DataFrame) -> pd.DataFrame:
    """Decoded trials and valid ones per (method, decoding) of the model's optimize rows (`valid_decode`)."""
    return decoded.groupby(["method", "decoding"], as_index=False).agg(
        trials=("valid_decode", "size"), valid=("valid_decode", "sum")
    )


def dataset_table(stats: pd.DataFrame, throughput: pd.DataFrame) -> pd.DataFrame:
    """The corpus counts per (split, family, optimizer) with the generation throughput (evaluations per second)."""
    return stats.merge(throughput[["family", "optimizer", "evaluations_per_s"]], on=["family", "optimizer"], how="left")


def result_tables(
    boxes: pd.DataFrame,
    reference: pd.DataFrame,
    trajectories: pd.DataFrame,
    optimized: pd.DataFrame,
    seed_optimized: Sequence[tuple[str, int, pd.DataFrame]],
    training: pd.DataFrame,
    stats: pd.DataFrame,
    throughput: pd.DataFrame,
    budget: int,
) -> dict[str, pd.DataFrame]:
    """Every table of the tables step, by the rule's output name: ``regret`` (every method, claim B3's model seeds
    included), ``table_regret`` (the evaluation run only), ``scaling`` and ``runs`` (:func:`.scaling.
    scaling_summary`), ``validity``, ``data`` and ``throughput``."""
    models = model_trials(optimized, seed_optimized)
    regret = normalized_regret(regret_trials(boxes, trajectories, optimized, models), reference)
    runs, scaling = scaling_summary(training)
    return {
        "regret": regret,
        "table_regret": regret_table(evaluation_run(regret), horizons=regret_horizons(budget)),
        "scaling": scaling,
        "runs": runs,
        "validity": validity_table(models),
        "data": dataset_table(stats, throughput),
        "throughput": throughput,
    }


# the report


def model_seed_table(losses: dict[int, float], regret: pd.DataFrame, condition: str, run: str) -> pd.DataFrame:
    """Claim B3's model seeds: each seed's final validation loss and mean normalised regret difference to RS at
    the last horizon over the (box, seed) pairs every seed has, and the number of pairs."""
    differences = seed_differences(regret, condition)
    mean_difference = differences.mean(axis=0)
    table = pd.DataFrame(
        [
            {
                "model_seed": k,
                "final_val_loss": loss,
                "mean_regret_difference": mean_difference.get(seed_method(condition, run, k), float("nan")),
            }
            for k, loss in sorted(losses.items())
        ]
    )
    table["pairs"] = len(differences)
    return table


def report_tables(inp, params) -> dict:
    """The names the report template shows, from the report rule's inputs and params: the dataset, models, runs,
    scaling fit (``fit``, a dict), imitation matrix and margins, regret, claim B3's seed table, validity and
    throughput."""
    seeds = params.model_seeds
    runs = read_table(inp.runs)
    imitation = read_table(inp.imitation)
    losses = model_seed_losses(runs, seeds["run"], params.seed, inp.seed_training)
    return {
        "data": read_table(inp.data),
        "throughput": read_table(inp.throughput),
        "runs": runs,
        "fit": read_table(inp.scaling).iloc[0].to_dict(),
        "table_regret": read_table(inp.table_regret),
        "validity": read_table(inp.validity),
        "models": pd.DataFrame([{"model": name, **m} for name, m in params.models.items()]),
        "matrix": imitation.pivot_table(index="true_algo", columns="cond_algo", values="nll").reset_index(),
        "margins": imitation_margins(pd.read_parquet(inp.imitation_trajectories)),
        "per_seed": model_seed_table(losses, pd.read_parquet(inp.regret), seeds["condition"], seeds["run"]),
    }
