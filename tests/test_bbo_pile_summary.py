"""Paper 05's steps between results and tables, on hand-made trajectories: the corpus (encoding, the invalid-trial
rule, shuffling and packing), the imitation test's selection of held-out trajectories, the trials the regret is
computed on and the method names of claim B3's model seeds, the model-seed losses and table, and the report
template rendered from the report's tables."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import yaml

from neurips26.bbo_pile.catalog import catalog, specs_from_catalog
from neurips26.bbo_pile.corpus import build_corpus
from neurips26.bbo_pile.imitation import held_out_trajectories
from neurips26.bbo_pile.optimizers import generate_trajectories
from neurips26.bbo_pile.summary import (
    dataset_table,
    final_val_loss,
    model_seed_losses,
    model_seed_of,
    model_seed_table,
    model_trials,
    regret_horizons,
    regret_trials,
    report_tables,
    result_tables,
)
from neurips26.bbo_pile.vocabulary import make_vocabulary
from neurips26.common.report import render

ROOT = Path(__file__).resolve().parents[1]
OPTIMIZERS = ["RS", "LS"]


@pytest.fixture(scope="module")
def data():
    """Two train boxes (BBOB f1, GO sphere) and a held-out one (BBOB f20), RS and LS with two seeds and 6 trials
    each; on the held-out box one LS run has 2 of 6 trials non-finite (more than 20%: rejected) and one RS run 1 of
    6 (kept, the trial dropped)."""
    boxes = catalog([1, 20], [2], [1], ["sphere"], [2], [0], [20])
    specs = specs_from_catalog(boxes)
    parts = [generate_trajectories(specs, name, [0, 1], 6, seed=0)[0] for name in OPTIMIZERS]
    trials = pd.concat(parts, ignore_index=True)
    held = boxes.loc[boxes["split"] == "eval", "bb_id"].iloc[0]
    bad = (trials["bb_id"] == held) & (trials["optimizer"] == "LS") & (trials["seed"] == 0) & (trials["trial"] < 2)
    drop = (trials["bb_id"] == held) & (trials["optimizer"] == "RS") & (trials["seed"] == 1) & (trials["trial"] == 3)
    trials.loc[bad | drop, "y"] = np.nan
    trials.loc[bad | drop, "valid"] = False
    return boxes, trials, held


def test_the_corpus_counts_drops_and_rejects_and_packs_deterministically(data):
    boxes, trials, held = data
    vocab = make_vocabulary(OPTIMIZERS, 16)
    warnings = []
    corpus = build_corpus(boxes, trials, vocab, "global", 256, seed=0, warn=warnings.append)
    stats = corpus.stats.set_index(["split", "family", "optimizer"])
    assert stats["trajectories"].sum() == 2 * 3 * 2  # runs = optimizers x boxes x seeds
    assert stats.loc[("eval", "bbob", "LS"), "rejected"] == 1 and stats["rejected"].sum() == 1
    assert stats.loc[("eval", "bbob", "RS"), "dropped_trials"] == 1
    assert stats.loc[("eval", "bbob", "LS"), "dropped_trials"] == 2  # counted, although the run is rejected
    assert len(warnings) == 1 and "LS seed 0 rejected" in warnings[0] and "2 of 6 trials" in warnings[0]
    assert corpus.sequences["eval"][0] == 3 and corpus.sequences["train"][0] == 8
    for split in ("train", "eval"):
        packed = corpus.packed[split]
        assert packed.shape[1] == 256 and (packed != vocab.pad).sum() == corpus.sequences[split][1]
    again = build_corpus(boxes, trials, vocab, "global", 256, seed=0)
    other = build_corpus(boxes, trials, vocab, "global", 256, seed=1)
    assert np.array_equal(again.packed["train"], corpus.packed["train"])
    assert not np.array_equal(other.packed["train"], corpus.packed["train"])  # the order is the seed's


def test_imitation_takes_the_held_out_runs_the_corpus_keeps(data):
    boxes, trials, held = data
    by_algo, keys = held_out_trajectories(boxes, trials)
    assert {k: len(v) for k, v in by_algo.items()} == {"LS": 1, "RS": 2}  # LS seed 0 rejected
    assert set(keys["bb_id"]) == {held} and keys.groupby("true_algo")["trajectory"].max().to_dict() == {
        "LS": 0,
        "RS": 1,
    }
    lo, hi, x, y = by_algo["RS"][1]  # seed 1: its non-finite trial dropped
    assert x.shape == (5, 2) and np.isfinite(y).all() and list(lo) == [-5.0, -5.0]
    assert keys.set_index(["true_algo", "trajectory"]).loc[("LS", 0), "seed"] == 1


def optimized_rows(bb_id):
    return pd.DataFrame(
        [
            {
                "bb_id": bb_id,
                "condition": "RS",
                "decoding": d,
                "seed": s,
                "trial": t,
                "y": 1.0 + t,
                "valid_decode": True,
            }
            for d in ("constrained", "free")
            for s in (0, 1)
            for t in range(6)
        ]
    )


def test_regret_trials_name_every_method_and_keep_the_evaluated_held_out_boxes(data):
    boxes, trials, held = data
    optimized = optimized_rows(held)
    seeded = optimized[optimized["decoding"] == "constrained"]
    models = model_trials(optimized, [("d64_t2", 0, seeded), ("d64_t2", 1, seeded)])
    assert set(models["method"]) == {
        "model:RS:constrained",
        "model:RS:free",
        "model:RS:constrained@d64_t2:seed0",
        "model:RS:constrained@d64_t2:seed1",
    }
    assert "method" not in optimized.columns and "method" not in seeded.columns  # inputs untouched
    rows = regret_trials(boxes, trials, optimized, models)
    real = rows[~rows["method"].str.startswith("model:")]
    assert set(real["bb_id"]) == {held} and set(real["method"]) == set(OPTIMIZERS)  # no train box
    assert list(rows.columns) == ["bb_id", "method", "seed", "trial", "y"]
    assert regret_horizons(24) == [1, 6, 12, 24] and regret_horizons(12) == [1, 3, 6, 12]
    assert regret_horizons(2) == [1, 2]


def test_the_tables_step_gives_every_table_of_the_rule(data):
    boxes, trials, held = data
    optimized = optimized_rows(held)
    reference = pd.DataFrame({"bb_id": [held], "random_min": [-1.0]})
    training = pd.DataFrame(
        {
            "run": ["a", "a", "b", "b"],
            "model": ["m", "m", "m", "m"],
            "parameters": [10, 10, 20, 20],
            "tokens": [1e3, 2e3, 1e3, 2e3],
            "flops": [6e4, 1.2e5, 1.2e5, 2.4e5],
            "val_loss": [3.0, 2.5, 2.7, 2.0],
            "tokens_per_s": [1.0] * 4,
        }
    )
    stats = pd.DataFrame([{"split": "train", "family": "go", "optimizer": "RS", "tokens": 10}])
    throughput = pd.DataFrame([{"family": "go", "optimizer": "RS", "evaluations_per_s": 5.0}])
    seeded = [("a", 1, optimized[optimized["decoding"] == "constrained"])]
    tables = result_tables(boxes, reference, trials, optimized, seeded, training, stats, throughput, 6)
    assert list(tables) == ["regret", "table_regret", "scaling", "runs", "validity", "data", "throughput"]
    assert "model:RS:constrained@a:seed1" in set(tables["regret"]["method"])
    assert not tables["table_regret"]["method"].str.contains("@").any()  # the evaluation run only
    assert set(tables["validity"]["method"]) == {
        "model:RS:constrained",
        "model:RS:free",
        "model:RS:constrained@a:seed1",
    }
    assert dataset_table(stats, throughput).loc[0, "evaluations_per_s"] == 5.0


def test_model_seeds_are_read_from_their_paths_and_tabled_by_seed(tmp_path):
    assert model_seed_of("results/quick/bbo_pile/seeds/d64_t2/seed2/optimize/CMA_constrained.parquet") == ("d64_t2", 2)
    with pytest.raises(ValueError, match="not a file of a model seed copy"):
        model_seed_of("results/quick/bbo_pile/training/d64_t2.parquet")
    paths = []
    for k, loss in ((2, 2.5), (1, 2.2)):
        path = tmp_path / f"seeds/d64_t2/seed{k}/training.parquet"
        path.parent.mkdir(parents=True)
        pd.DataFrame({"flops": [2.0, 1.0], "val_loss": [loss, 9.0]}).to_parquet(path)
        paths.append(str(path))
    assert final_val_loss(pd.read_parquet(paths[0])) == 2.5  # the row with the most compute, not the last row
    runs = pd.DataFrame({"run": ["d32_t1", "d64_t2"], "val_loss": [3.0, 2.0]})
    losses = model_seed_losses(runs, "d64_t2", 0, paths)
    assert losses == {0: 2.0, 2: 2.5, 1: 2.2} and list(losses) == [0, 2, 1]  # the first copy, then the paths' order
    regret = pd.DataFrame(
        [
            {"bb_id": "b", "seed": s, "T": 4, "scale": 1.0, "method": m, "norm_regret": v}
            for s in (0, 1)
            for m, v in (("RS", 0.5), *((f"model:CMA:constrained@d64_t2:seed{k}", 0.1 * (k + 1)) for k in range(3)))
        ]
    )
    table = model_seed_table(losses, regret, "CMA", "d64_t2")
    assert list(table["model_seed"]) == [0, 1, 2] and list(table["final_val_loss"]) == [2.0, 2.2, 2.5]
    np.testing.assert_allclose(table["mean_regret_difference"], [-0.4, -0.3, -0.2])
    assert (table["pairs"] == 2).all()


def test_the_report_template_renders_the_report_tables(tmp_path):
    cfg = yaml.safe_load((ROOT / "config/bbo_pile.yaml").read_text())["quick"]
    files = {}

    def table(name, frame):
        files[name] = str(tmp_path / f"{name}.parquet")
        frame.assign(git_commit="x", config_hash="y", seed=0).to_parquet(files[name])

    table("data", pd.DataFrame({"split": ["train"], "tokens": [10]}))
    table("throughput", pd.DataFrame({"family": ["go"], "evaluations_per_s": [5.0]}))
    table("runs", pd.DataFrame({"run": ["d64_t2"], "val_loss": [2.0]}))
    fit = {"a": 40.0, "b": -0.08, "r2": 0.9, "frontier": 5, "spearman": -1.0, "holdout_run": "d96_t2"}
    fit |= {"holdout_a": 41.0, "holdout_b": -0.07, "holdout_predicted": 1.9, "holdout_actual": 2.0}
    table("scaling", pd.DataFrame([fit | {"holdout_rel_error": 0.05}]))
    table("table_regret", pd.DataFrame({"method": ["RS"], "mean_T24": [0.5]}))
    table("validity", pd.DataFrame({"method": ["RS"], "trials": [4], "valid": [4]}))
    table("imitation", pd.DataFrame({"true_algo": ["RS", "RS"], "cond_algo": ["RS", "LS"], "nll": [1.0, 2.0]}))
    table("imitation_trajectories", pd.DataFrame(columns=["true_algo", "cond_algo", "trajectory", "nll"]))
    table("regret", pd.DataFrame(columns=["bb_id", "method", "seed", "T", "scale", "norm_regret"]))
    inp = SimpleNamespace(**files, seed_training=[])
    params = SimpleNamespace(**cfg)
    tables = report_tables(inp, params)
    assert "seed" not in tables["runs"].columns and tables["fit"]["holdout_run"] == "d96_t2"
    text = render(
        ROOT / "workflow/report/bbo_pile/report.md.j2",
        scale="quick",
        params=params,
        claims="CLAIMS",
        n_claims=0,
        closing="CLOSING\n",
        **tables,
    )
    assert text.startswith("# Paper 05: BBO-Pile") and text.endswith("CLOSING\n")
    assert "L = 40 C^-0.0800, R^2 0.900,\n5 points" in text and "(5.0% off)" in text
    assert "trained with seeds [0, 1, 2]" in text and "`...@{run}:seed{k}`" in text
