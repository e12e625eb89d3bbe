"""Paper 05's claims against config/claims/bbo_pile.yaml: for every claim and check a scenario where it holds, one
where it fails and one where its evidence is too thin or too noisy to decide. Scenarios build the claims' inputs
the way the pipeline does: training logs -> scaling.scaling_summary, trials -> regret.normalized_regret,
decoded rows -> summary.validity_table, and per-trajectory NLLs as imitation.py writes them."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pandas as pd
import pytest

from conftest import ROOT
from neurips26.bbo_pile import scaling as scaling_module
from neurips26.bbo_pile.claims import (
    derangements,
    imitation_margins,
    imitation_null,
    measure_claims,
    measure_imitation,
    seed_differences,
    spearman_permutation_p,
)
from neurips26.bbo_pile.regret import normalized_regret, seed_method
from neurips26.bbo_pile.scaling import scaling_summary
from neurips26.bbo_pile.summary import validity_table
from neurips26.common.claims import decide, load_definitions

DEFINITIONS = load_definitions(ROOT / "config/claims/bbo_pile.yaml")
OPTIMIZERS = ("RS", "REA", "CMA", "LS")
MODEL = "model:CMA:constrained"  # the evaluation run (not used by B3)
SEEDS = [seed_method("CMA", "d64_t2", k) for k in range(3)]  # B3's model seeds

# ---------------------------------------------------------------- training logs (B1a, B1b, B5)
RUNS = {
    "d32_t1": (25_000, 300_000),
    "d64_t1": (80_000, 300_000),
    "d64_t2": (80_000, 600_000),
    "d96_t2": (320_000, 600_000),
}  # non-embedding parameters, training tokens


def training_logs(runs=RUNS, factor=None, drift=0.0, seed=0) -> pd.DataFrame:
    """Evaluation rows of each run every 1/6 of its tokens, the loss on L = 40 C^-0.08 (C = 6 N D) times 1 + 0.2%
    noise; `factor[run]` scales a run's losses, `drift` makes each run's loss rise by that share over training."""
    rng = np.random.default_rng(seed)
    rows = []
    for run, (n, tokens) in runs.items():
        for step in range(1, 7):
            d = tokens * step / 6
            loss = 40 * (6 * n * d) ** -0.08 * (1 + 0.002 * rng.standard_normal()) * (factor or {}).get(run, 1.0)
            rows.append(
                {
                    "run": run,
                    "model": run.split("_")[0],
                    "parameters": n,
                    "tokens": d,
                    "flops": 6 * n * d,
                    "val_loss": loss * (1 + drift * step / 6),
                    "tokens_per_s": 1e4,
                }
            )
    return pd.DataFrame(rows)


def summary(training: pd.DataFrame) -> pd.DataFrame:
    return scaling_summary(training)[1]


def broken_frontier_summary() -> pd.DataFrame:
    """A broken implementation: the 'frontier' keeps every point (not a running minimum), and the runs' losses
    rise over training, so the fit's exponent is positive."""
    with mock.patch.object(
        scaling_module,
        "compute_frontier",
        lambda rows, points="all": scaling_module.long_rows(rows).sort_values("flops"),
    ):
        return summary(training_logs(drift=2.0))


# ---------------------------------------------------------------- imitation (B2)
def imitation(
    own_margin=None, noise=0.05, optimizers=OPTIMIZERS, trajectories=20, seed=0, seeds=(0, 1, 2), seed_shift=None
) -> pd.DataFrame:
    """Per-trajectory NLLs of each model seed: each trajectory's NLL under a token is 2.0 + noise, minus
    `own_margin[true]` (default 0.3) under its own optimizer's token, plus `seed_shift[(seed, true)]` under it."""
    rng = np.random.default_rng(seed)
    rows = []
    for k in seeds:
        for true in optimizers:
            for j in range(trajectories):
                base = 2.0 + 0.2 * rng.standard_normal()
                for cond in optimizers:
                    own = (own_margin or {}).get(true, 0.3) if cond == true else 0.0
                    own -= (seed_shift or {}).get((k, true), 0.0) if cond == true else 0.0
                    rows.append(
                        {
                            "true_algo": true,
                            "cond_algo": cond,
                            "trajectory": j,
                            "model_seed": k,
                            "nll": base - own + noise * rng.standard_normal(),
                            "n_tokens": 72,
                        }
                    )
    return pd.DataFrame(rows)


def ignoring(seeds=(0, 1, 2), trajectories=20, seed=0) -> pd.DataFrame:
    """Per-trajectory NLLs of models that ignore the token: the same NLL under every token (plus noise)."""
    return imitation({a: 0.0 for a in OPTIMIZERS}, seeds=seeds, trajectories=trajectories, seed=seed)


# ---------------------------------------------------------------- regret on held-out boxes (B3)
def regret(model_scale=(0.3, 0.3, 0.3), boxes=12, seeds=(0, 1), budget=8, seed=0) -> pd.DataFrame:
    """Trials of RS (uniform values in [1, 10]), of the evaluation run (RS-like) and of each of B3's model seeds k
    (RS-like values times `model_scale[k]`: below 1 the model finds lower values) on `boxes` boxes with f* = 0,
    through the pipeline's normalised regret."""
    rng = np.random.default_rng(seed)
    rows = []
    methods = [MODEL] + [seed_method("CMA", "d64_t2", k) for k in range(len(model_scale))]
    model_scale = (1.0, *model_scale)
    for b in range(boxes):
        for s in seeds:
            for t in range(budget):
                rows.append({"bb_id": f"box{b}", "method": "RS", "seed": s, "trial": t, "y": rng.uniform(1, 10)})
                for method, factor in zip(methods, model_scale):
                    rows.append(
                        {"bb_id": f"box{b}", "method": method, "seed": s, "trial": t, "y": factor * rng.uniform(1, 10)}
                    )
    reference = pd.DataFrame({"bb_id": [f"box{b}" for b in range(boxes)], "random_min": 0.0})
    return normalized_regret(pd.DataFrame(rows), reference)


# ---------------------------------------------------------------- validity of decoded trials (B4a, B4b)
def validity(constrained_invalid=0, free_valid=0.95, free=True, constrained=True, trials=480) -> pd.DataFrame:
    """Decoded trials of the model: constrained (all valid but `constrained_invalid`) and free (a share
    `free_valid` valid), aggregated as the tables job does."""
    rows = []
    if constrained:
        rows += [
            {"method": method, "decoding": "constrained", "valid_decode": i >= constrained_invalid}
            for method in (MODEL, SEEDS[1])
            for i in range(trials // 2)
        ]
    if free:
        rows += [
            {"method": "model:CMA:free", "decoding": "free", "valid_decode": i < free_valid * trials}
            for i in range(trials)
        ]
    return validity_table(pd.DataFrame(rows, columns=["method", "decoding", "valid_decode"]))


# ---------------------------------------------------------------- scenarios
def scenario(**changes):
    """Inputs of measure_claims where every claim holds, with `changes` (name -> builder) applied."""

    def build():
        training = training_logs()
        final = training.loc[training["run"] == "d96_t2", "val_loss"].iloc[-1]
        inputs = {
            "scaling": lambda: summary(training),
            "imitation_trajectories": imitation,
            "regret": regret,
            "validity": validity,
            "seed_losses": lambda: [final, final * 1.002, final * 0.998],
        }
        inputs |= changes
        return {name: make() for name, make in inputs.items()}

    return build


VERDICT_CASES = [
    ("B1a", "holds", scenario()),
    ("B1a", "fails", scenario(scaling=broken_frontier_summary)),
    ("B1a", "inconclusive", scenario(scaling=lambda: summary(training_logs({"d32_t1": RUNS["d32_t1"]}).head(1)))),
    ("B1b", "holds", scenario()),
    ("B1b", "fails", scenario(scaling=lambda: summary(training_logs(factor={"d96_t2": 1.3, "d64_t2": 1.2})))),
    (
        "B1b",
        "inconclusive",
        scenario(scaling=lambda: summary(training_logs({k: v for k, v in RUNS.items() if k != "d32_t1"}))),
    ),
    ("B2", "holds", scenario()),
    ("B2", "fails", scenario(imitation_trajectories=lambda: imitation({"RS": -0.3}))),
    ("B2", "inconclusive", scenario(imitation_trajectories=lambda: imitation(optimizers=("RS", "CMA")))),
    ("B2", "inconclusive", scenario(imitation_trajectories=lambda: imitation({"LS": 0.005}))),
    ("B2", "inconclusive", scenario(imitation_trajectories=lambda: imitation(seeds=(0,)))),  # one run
    # a seed whose own token is worse than the others (tight over trajectories, wide over seeds)
    ("B2", "inconclusive", scenario(imitation_trajectories=lambda: imitation(seed_shift={(1, "CMA"): 0.6}))),
    ("B3", "holds", scenario()),
    ("B3", "fails", scenario(regret=lambda: regret((2.0, 2.0, 2.0)))),
    ("B3", "inconclusive", scenario(regret=lambda: regret((0.3,)))),
    ("B3", "inconclusive", scenario(regret=lambda: regret((0.3, 1.2, 1.2)))),
    ("B3", "inconclusive", scenario(regret=lambda: regret((0.3, 0.3, 0.3), boxes=1, seeds=(0,)))),
    ("B4a", "holds", scenario()),
    ("B4a", "fails", scenario(validity=lambda: validity(constrained_invalid=3))),
    ("B4a", "inconclusive", scenario(validity=lambda: validity(constrained=False))),
    ("B4b", "holds", scenario()),
    ("B4b", "fails", scenario(validity=lambda: validity(free_valid=0.6))),
    ("B4b", "inconclusive", scenario(validity=lambda: validity(free=False))),
    ("B5", "holds", scenario()),
    ("B5", "fails", scenario(scaling=lambda: summary(training_logs(factor={"d96_t2": 1.4})))),
    (
        "B5",
        "inconclusive",
        scenario(scaling=lambda: summary(training_logs({k: v for k, v in RUNS.items() if k != "d32_t1"}))),
    ),
    ("B5", "inconclusive", scenario(seed_losses=lambda: [3.0, 2.3, 3.6])),
    ("B5", "inconclusive", scenario(seed_losses=lambda: [3.0])),
]


@pytest.mark.parametrize(
    "claim_id, expected, build", VERDICT_CASES, ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(VERDICT_CASES)]
)
def test_each_claim_holds_fails_or_is_inconclusive_in_its_scenario(claim_id, expected, build):
    table = decide(DEFINITIONS, measure_claims(**build(), condition="CMA")).set_index("claim_id")
    row = table.loc[claim_id]
    assert row["verdict"] == expected, f"{claim_id}: {row['value']} on {row['runs']} runs, note: {row['note']}"


def test_in_the_holding_scenario_every_claim_holds_on_the_evidence_it_needs():
    table = decide(DEFINITIONS, measure_claims(**scenario()(), condition="CMA")).set_index("claim_id")
    assert (table["verdict"] == "holds").all(), table[["value", "runs", "note"]]
    assert table.loc["B2", "runs"] == 3 and table.loc["B2", "value"] == 1.0  # a share of 4 optimizers, 3 seeds
    assert table.loc["B2", "null_value"] == 0.0  # under a wrong token every margin is negative
    assert table.loc["B3", "runs"] == 3 and table.loc["B3", "low"] <= table.loc["B3", "high"] < 0
    assert table.loc["B5", "runs"] == 3 and table.loc["B5", "noise"] > 0


def test_b1b_is_info_with_the_exact_permutation_p_of_its_spearman_in_the_note():
    """Issue 41's review (#10): 4 single-seed nested runs decide nothing, so B1b is reported, not claimed; the note
    gives the chance that a random order of the runs correlates as well (one-sided, exact over the n! orders)."""
    b1b = next(d for d in DEFINITIONS if d.claim_id == "B1b")
    assert b1b.kind == "info" and b1b.threshold == -0.8  # the bar unchanged
    assert spearman_permutation_p(-1.0, 4) == pytest.approx(1 / 24)
    assert spearman_permutation_p(-0.8, 4) == pytest.approx(4 / 24)  # one swapped pair: 3 orders, plus the reverse
    assert spearman_permutation_p(-1.0, 5) == pytest.approx(1 / 120)
    assert spearman_permutation_p(1.0, 4) == 1.0 and np.isnan(spearman_permutation_p(np.nan, 4))
    # beyond the exact range: random orders, close to the t approximation's tail at rho = -0.6, n = 10
    assert spearman_permutation_p(-0.6, 10) == pytest.approx(0.034, abs=0.01)
    table = decide(DEFINITIONS, measure_claims(**scenario()(), condition="CMA")).set_index("claim_id")
    assert table.loc["B1b", "value"] == -1.0 and "permutation p" in table.loc["B1b", "note"]
    assert "0.0417" in table.loc["B1b", "note"]


def test_thin_evidence_gives_nan_values_not_stand_ins():
    empty = measure_claims(
        summary(training_logs({"d32_t1": RUNS["d32_t1"]}).head(1)),
        imitation(optimizers=("RS",)),
        regret((0.3,)).query("method != 'RS'"),
        validity(constrained=False, free=False),
        [],
        condition="CMA",
    )
    values = {m.claim_id: m.value for m in empty}
    assert all(np.isnan(values[c]) for c in ("B1a", "B1b", "B2", "B3", "B4a", "B4b", "B5")), values


def test_the_regret_difference_pairs_every_model_seed_with_random_search_on_the_same_box_and_seed():
    table = regret((0.3, 0.5))
    differences = seed_differences(table, "CMA")
    assert list(differences.columns) == SEEDS[:2] and len(differences) == 24  # the evaluation run is not a seed
    at = table[table["T"] == table["T"].max()].set_index(["bb_id", "seed", "method"])["norm_regret"]
    box, seed = differences.index[5]
    assert differences.loc[(box, seed), SEEDS[1]] == pytest.approx(at[(box, seed, SEEDS[1])] - at[(box, seed, "RS")])
    assert seed_differences(table, "RS").empty  # no model seed conditioned on RS


def test_b2_reads_every_model_seed_and_decides_on_the_union_of_the_seed_and_trajectory_intervals():
    one_bad_seed = imitation(seed_shift={(1, "CMA"): 0.6})  # seed 1: CMA's own token 0.3 worse than the others
    margins = imitation_margins(one_bad_seed).set_index("true_algo")
    assert (margins["seeds"] == 3).all() and (margins["trajectories"] == 20).all()
    cma = margins.loc["CMA"]
    assert cma["margin"] == pytest.approx(0.1, abs=0.02)  # (0.3 - 0.3 + 0.3) / 3
    assert cma["low"] == cma["seed_low"] < 0 < cma["high"] and cma["state"] == "undecided"
    assert (margins.drop("CMA")["state"] == "imitated").all()
    # without the model_seed column the table is one model's: the trajectories' interval alone
    single = imitation_margins(imitation(seeds=(0,)).drop(columns="model_seed")).set_index("true_algo")
    assert (single["seeds"] == 1).all() and single["seed_low"].isna().all() and (single["state"] == "imitated").all()


def test_b2_null_permutes_the_tokens_and_is_near_one_half_for_a_model_that_ignores_them():
    assert len(derangements(OPTIMIZERS)) == 9 and all(all(k != v for k, v in d.items()) for d in derangements("abc"))
    assert imitation_null(imitation()) == 0.0  # an imitating model: every wrong token is worse than the others
    assert 0.2 < imitation_null(ignoring(trajectories=200)) < 0.8
    measured = measure_imitation(ignoring())
    assert measured.null == imitation_null(ignoring()) and measured.runs == 3
    # the null can pass: a model whose own token is the worst makes every wrong token beat the others' mean
    anti = imitation({a: -0.3 for a in OPTIMIZERS})  # the own token worst: every wrong token beats the others' mean
    assert imitation_null(anti) == 1.0
