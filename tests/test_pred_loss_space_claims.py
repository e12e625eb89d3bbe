"""Paper 01's claims and checks on built scenarios: each holds, fails and is inconclusive in a case of its own,
decided with the definitions of the real config/claims/pred_loss_space.yaml."""

import itertools

import numpy as np
import pandas as pd
import pytest
import torch

from conftest import ROOT
from neurips26.common.claims import decide, load_definitions
from neurips26.pred_loss_space import claims as claims_module
from neurips26.pred_loss_space import models, sampling, spaces
from neurips26.pred_loss_space.claims import measure_claims
from neurips26.pred_loss_space.evaluation import metrics_frame

SPACES = ("x", "eps", "v")
DEFINITIONS = load_definitions(ROOT / "config/claims/pred_loss_space.yaml")
T_EPS = 0.05
NO_BN = ("digits16", "jit_tiny", False)
BN_TOY = ("toy_D512", "mlp_toy", True)
BN_IMG = ("digits16", "jit_tiny_bn", True)
NO_BN_TOY = ("toy_D16", "mlp_toy", False)
NO_BN_CIFAR = ("cifar10", "jit_tiny", False)  # a no-bottleneck image regime on other data (paper scale's CIFAR-10)
RANKS = {"digits16/jit_tiny_bn": [256, 32], "toy_D512/mlp_toy": [512, 64]}
T_MIN = 0.05


def table(regimes: dict[tuple, callable], seeds=(0, 1, 2), jitter: float = 0.002) -> pd.DataFrame:
    """Metrics of every cell of each regime and seed; `regimes` maps (dataset, arch, bottleneck) to
    f(pred, loss) -> (mse, fd). Each seed multiplies both by its own exp(jitter * N(0, 1)) per cell (seed noise)."""
    frames = []
    for (dataset, arch, bottleneck), cell in regimes.items():
        for pred, loss, seed in itertools.product(SPACES, SPACES, seeds):
            rng = np.random.default_rng([seed, SPACES.index(pred), SPACES.index(loss), len(dataset) + len(arch)])
            mse, fd = cell(pred, loss)
            mse, fd = mse * np.exp(jitter * rng.standard_normal()), fd * np.exp(jitter * rng.standard_normal())
            t = np.array([0.25, 0.75])
            w_eps, w_v = t**2 / (1 - t) ** 2, 1 / (1 - t) ** 2
            theory = {"x": np.ones(2), "eps": (1 - t) / t, "v": 1 - t}[pred]
            per_t = pd.DataFrame(
                {
                    "t": t,
                    "mse_x": [mse, mse],
                    "mse_eps": w_eps * mse,
                    "mse_v": w_v * mse,
                    "amp_x_emp": theory,
                    "amp_x_theory": theory,
                }
            )
            frames.append(
                metrics_frame(
                    per_t,
                    {"mse": mse, "fd": fd},
                    dataset=dataset,
                    arch=arch,
                    bottleneck=bottleneck,
                    pred=pred,
                    loss=loss,
                    seed=seed,
                )
            )
    return pd.concat(frames, ignore_index=True)


LOSS_EFFECT = {"x": 1.0, "eps": 1.5, "v": 0.8}
PRED_EFFECT = {"x": 1.0, "eps": 4.0, "v": 2.0}
NO_BN_PRED_EFFECT = {"x": 2.0, "eps": 4.0, "v": 1.0}  # without a bottleneck x is not the best on FD


def paper_like(pred, loss):  # no bottleneck: loss drives MSE (small pred gaps), pred drives FD (large), v best
    return 0.1 * LOSS_EFFECT[loss] * (1 + 0.01 * PRED_EFFECT[pred]), 10 * NO_BN_PRED_EFFECT[pred] * (
        1 + 0.01 * LOSS_EFFECT[loss]
    )


def x_best_anyway(pred, loss):  # no bottleneck, shaped as the paper says, but x wins FD here too (the audit's case)
    return 0.1 * LOSS_EFFECT[loss] * (1 + 0.01 * PRED_EFFECT[pred]), 10 * PRED_EFFECT[pred] * (
        1 + 0.01 * LOSS_EFFECT[loss]
    )


def fd_only(pred, loss):  # a bottleneck regime where x wins FD but not MSE (the MSE half no longer decides C5)
    return 0.1 * {"x": 3.0, "eps": 1.0, "v": 2.0}[pred], 10 * PRED_EFFECT[pred] * LOSS_EFFECT[loss] ** 0.1


def floored(pred, loss):  # eps and v x errors far above the rank floors at t = 0.25 and 0.75
    return {"x": 0.1, "eps": 10.0, "v": 1.0}[pred] * LOSS_EFFECT[loss] ** 0.1, 10 * PRED_EFFECT[pred]


def no_loss_effect(pred, loss):  # no bottleneck: pred drives FD, but the MSE moves by no more than 2% with anything
    return 0.1 * (1 + 0.005 * PRED_EFFECT[pred]) * (1 + 0.005 * LOSS_EFFECT[loss]), 10 * NO_BN_PRED_EFFECT[pred]


def bottlenecked(pred, loss):  # x-prediction wins everything, pred explains most
    return 0.1 * PRED_EFFECT[pred] * LOSS_EFFECT[loss] ** 0.1, 10 * PRED_EFFECT[pred] * LOSS_EFFECT[loss] ** 0.1


def x_far_ahead(pred, loss):  # a bottleneck regime where x wins FD by 4x (log 4 = 1.39), 2x more than x_best_anyway
    return 0.1 * PRED_EFFECT[pred], 10 * {"x": 1.0, "eps": 8.0, "v": 4.0}[pred] * LOSS_EFFECT[loss] ** 0.1


def x_slightly_ahead(pred, loss):  # a bottleneck regime where x wins FD by 1.5x (log 1.5 = 0.41), less than without
    return 0.1 * PRED_EFFECT[pred], 10 * {"x": 1.0, "eps": 1.5, "v": 1.5}[pred] * LOSS_EFFECT[loss] ** 0.1


def swapped(pred, loss):  # no bottleneck with the roles swapped: pred drives MSE, loss drives FD
    return 0.1 * PRED_EFFECT[pred], 10 * LOSS_EFFECT[loss]


def loss_driven(pred, loss):  # a bottleneck regime where the loss matters most and eps wins
    order = {"x": 1.2, "eps": 1.0, "v": 1.1}
    return 0.1 * LOSS_EFFECT[loss] ** 4 * order[pred], 10 * LOSS_EFFECT[loss] ** 4 * order[pred]


def mse_by_pred_fd_by_loss(pred, loss):  # a bottleneck regime: the rank floors give pred the MSE, the loss drives FD
    return 0.1 * PRED_EFFECT[pred] * LOSS_EFFECT[loss] ** 0.1, 10 * LOSS_EFFECT[loss] ** 4 * (
        1 + 0.01 * PRED_EFFECT[pred]
    )


def mse_by_loss_fd_by_pred(pred, loss):  # a bottleneck regime where the loss drives MSE and pred drives FD
    return 0.1 * LOSS_EFFECT[loss] ** 4 * (1 + 0.01 * PRED_EFFECT[pred]), 10 * PRED_EFFECT[pred]


def paper_shaped(**kwargs) -> pd.DataFrame:
    return table({NO_BN: paper_like, BN_TOY: bottlenecked, BN_IMG: bottlenecked}, **kwargs)


def with_nonfinite_fd(metrics: pd.DataFrame, regime: tuple, pred: str = "eps") -> pd.DataFrame:
    """One FD cell of `regime` (seed 0) set to inf, as a sampler that diverged would leave it."""
    metrics = metrics.copy()
    cell = (
        (metrics["metric"] == "fd")
        & (metrics["dataset"] == regime[0])
        & (metrics["arch"] == regime[1])
        & (metrics["pred"] == pred)
        & (metrics["loss"] == "v")
        & (metrics["seed"] == 0)
    )
    metrics.loc[cell, "value"] = np.inf
    return metrics


# ------------------------------------------------------------------------- C1/C2: conversions on model outputs


def evaluated(monkeypatch=None, broken: bool = False, t_grid=(0.05, 0.3, 0.7, 0.95)) -> pd.DataFrame:
    """The per-t test-set errors and amplification of a small (untrained) MLP in every prediction space, as
    denoise_errors measures them; `broken` swaps in a conversion whose eps-to-x formula drops the (1 - t) factor."""
    if broken:
        original = spaces.convert

        def convert(o, z, t, pred, t_eps=spaces.T_EPS, t_min=spaces.T_MIN):
            out = original(o, z, t, pred, t_eps, t_min)
            if pred == "eps":
                out = {**out, "x": (z - o) / spaces._expand(t, z).clamp_min(t_min)}
            return out

        monkeypatch.setattr(spaces, "convert", convert)
    torch.manual_seed(0)
    x_test = torch.rand(32, 8) * 2 - 1
    frames = []
    for pred, loss in itertools.product(SPACES, ("v",)):
        model = models.MLPToy(dim=8, width=16, depth=2)
        per_t = sampling.denoise_errors(model, x_test, pred, list(t_grid), seed=1, t_eps=T_EPS, t_min=0.05)
        frames.append(
            metrics_frame(
                per_t,
                {"mse": float(per_t["mse_x"].mean()), "fd": 1.0},
                dataset="toy_D8",
                arch="mlp_toy",
                bottleneck=False,
                pred=pred,
                loss=loss,
                seed=0,
            )
        )
    return pd.concat(frames, ignore_index=True)


def run_level_only(monkeypatch=None) -> pd.DataFrame:
    """A metrics table whose runs recorded only their run-level numbers: nothing per noise level to check."""
    metrics = evaluated()
    return metrics[metrics["t"].isna()]


def nonfinite_error(monkeypatch=None) -> pd.DataFrame:
    """A run whose evaluation produced a NaN error (and amplification) at one noise level."""
    metrics = evaluated()
    bad = metrics["t"].eq(0.7) & metrics["pred"].eq("v") & metrics["metric"].isin(["mse_eps", "amp_x_emp"])
    metrics.loc[bad, "value"] = np.nan
    return metrics


# ---------------------------------------------------------------------------------------------- the cases

VERDICT_CASES = [
    ("C1", "holds", lambda mp: evaluated()),
    ("C1", "fails", lambda mp: evaluated(mp, broken=True)),
    ("C1", "inconclusive", run_level_only),
    ("C1", "inconclusive", nonfinite_error),
    ("C2", "holds", lambda mp: evaluated()),
    ("C2", "fails", lambda mp: evaluated(mp, broken=True)),
    ("C2", "inconclusive", run_level_only),
    ("C2", "inconclusive", nonfinite_error),
    ("C3", "holds", lambda mp: paper_shaped()),
    ("C3", "fails", lambda mp: table({NO_BN: swapped, BN_TOY: bottlenecked})),
    ("C3", "inconclusive", lambda mp: paper_shaped(seeds=(0,))),  # one seed, min_runs 3
    ("C3", "inconclusive", lambda mp: with_nonfinite_fd(paper_shaped(), NO_BN)),
    ("C4a", "holds", lambda mp: paper_shaped()),
    ("C4a", "fails", lambda mp: table({NO_BN: swapped, BN_TOY: bottlenecked})),  # FD does not depend on pred
    ("C4a", "inconclusive", lambda mp: paper_shaped(seeds=(0, 1))),
    ("C4a", "inconclusive", lambda mp: with_nonfinite_fd(paper_shaped(), NO_BN)),
    ("C4b", "holds", lambda mp: paper_shaped()),
    ("C4b", "fails", lambda mp: table({NO_BN: swapped, BN_TOY: bottlenecked})),  # MSE spread 4x across preds
    ("C4b", "inconclusive", lambda mp: paper_shaped(seeds=(0,))),
    ("C4b", "inconclusive", lambda mp: table({NO_BN: paper_like, BN_TOY: bottlenecked}, jitter=0.02)),  # noise
    ("C4a", "inconclusive", lambda mp: paper_shaped(jitter=0.5)),  # its null: seeds alone spread FD 1.5-fold
    ("C4b", "inconclusive", lambda mp: table({NO_BN: no_loss_effect, BN_TOY: bottlenecked})),  # null: losses too
    # no null (issue 41's outside review, #8): the same statistic over the bottleneck regimes does not gate C3
    ("C3", "holds", lambda mp: table({NO_BN: paper_like, BN_TOY: paper_like})),
    ("C5", "holds", lambda mp: paper_shaped()),
    ("C5", "holds", lambda mp: table({NO_BN: paper_like, BN_TOY: bottlenecked, BN_IMG: fd_only})),  # x loses MSE
    ("C5", "fails", lambda mp: table({NO_BN: paper_like, BN_TOY: bottlenecked, BN_IMG: loss_driven})),
    ("C5", "inconclusive", lambda mp: paper_shaped(seeds=(0, 1))),
    ("C5", "inconclusive", lambda mp: with_nonfinite_fd(paper_shaped(), BN_IMG)),
    ("C5", "inconclusive", lambda mp: table({NO_BN: paper_like})),  # no bottleneck regime was run
    # x also wins FD without a bottleneck (the null passes, log 2), by log 4 with one: the bottleneck adds log 2
    ("C5", "holds", lambda mp: table({NO_BN: x_best_anyway, BN_TOY: bottlenecked, BN_IMG: x_far_ahead})),
    # x wins FD with a bottleneck (log 1.5) but by less than without one (log 2)
    ("C5", "fails", lambda mp: table({NO_BN: x_best_anyway, BN_TOY: bottlenecked, BN_IMG: x_slightly_ahead})),
    # x wins FD by the same log 2 with and without a bottleneck: the difference is seed noise
    ("C5", "inconclusive", lambda mp: table({NO_BN: x_best_anyway, BN_IMG: bottlenecked}, jitter=0.1)),
    ("C5", "inconclusive", lambda mp: table({BN_TOY: bottlenecked, BN_IMG: bottlenecked})),  # no null regime
    ("C5m", "holds", lambda mp: table({NO_BN: paper_like, BN_IMG: floored, BN_TOY: floored})),
    ("C5m", "fails", lambda mp: paper_shaped()),  # eps and v below the floor: a head of larger rank than stated
    ("C5m", "inconclusive", lambda mp: table({NO_BN: paper_like})),  # no bottleneck regime (smoke scale)
    ("C5b", "holds", lambda mp: table({NO_BN_TOY: paper_like, BN_TOY: bottlenecked, BN_IMG: bottlenecked})),
    ("C5b", "fails", lambda mp: table({NO_BN_TOY: paper_like, BN_TOY: loss_driven, BN_IMG: bottlenecked})),
    ("C5b", "inconclusive", lambda mp: paper_shaped()),  # no toy regime without a bottleneck: no null (quick)
    ("C5b", "inconclusive", lambda mp: table({NO_BN_TOY: x_best_anyway, BN_TOY: bottlenecked})),  # null passes
    ("C5b", "inconclusive", lambda mp: paper_shaped(seeds=(0, 1))),
    ("C5b", "inconclusive", lambda mp: with_nonfinite_fd(paper_shaped(), BN_TOY)),
    ("C6", "holds", lambda mp: table({NO_BN: swapped, BN_TOY: bottlenecked, BN_IMG: bottlenecked})),
    # FD only (#8): with a bottleneck the loss drives MSE, pred drives FD: holds (failed on min(MSE, FD) before)
    ("C6", "holds", lambda mp: table({NO_BN: swapped, BN_TOY: bottlenecked, BN_IMG: mse_by_loss_fd_by_pred})),
    # pred drives FD without a bottleneck too (as the paper says, C3): the null passes
    ("C6", "inconclusive", lambda mp: paper_shaped()),
    ("C6", "fails", lambda mp: table({NO_BN: paper_like, BN_TOY: bottlenecked, BN_IMG: loss_driven})),
    # pred drives MSE with a bottleneck (the rank floors) but the loss drives FD: FD decides, fails
    ("C6", "fails", lambda mp: table({NO_BN: swapped, BN_TOY: bottlenecked, BN_IMG: mse_by_pred_fd_by_loss})),
    ("C6", "inconclusive", lambda mp: paper_shaped(seeds=(0,))),
    ("C6", "inconclusive", lambda mp: with_nonfinite_fd(paper_shaped(), BN_TOY)),  # the defect: never dropped
    ("C6", "inconclusive", lambda mp: table({NO_BN: bottlenecked, BN_TOY: bottlenecked})),  # null: pred rules too
]


def decided(metrics: pd.DataFrame) -> pd.DataFrame:
    return decide(DEFINITIONS, measure_claims(metrics, t_eps=T_EPS, t_min=T_MIN, ranks=RANKS)).set_index("claim_id")


@pytest.mark.parametrize("claim_id, expected, scenario", VERDICT_CASES)
def test_verdict_cases(claim_id, expected, scenario, monkeypatch):
    row = decided(scenario(monkeypatch)).loc[claim_id]
    assert row["verdict"] == expected, f"{claim_id}: {row['verdict']} ({row['note']})"
    if expected == "inconclusive":
        assert row["note"]


def test_a_failed_regime_is_named_not_dropped():
    rows = decided(with_nonfinite_fd(paper_shaped(), BN_TOY)).loc[["C5b", "C6"]]
    assert rows["value"].isna().all()
    assert rows["note"].str.contains("toy_D512/mlp_toy").all() and rows["note"].str.contains("seed 0").all()


def test_claims_rest_on_the_seeds_and_cells_they_read():
    table_ = decided(paper_shaped())
    assert (table_.loc[["C3", "C4a", "C4b", "C5", "C5b", "C6"], "runs"] == 3).all()
    assert table_.loc["C1", "runs"] == 81 and table_.loc["C2", "runs"] == 81  # 3 regimes x 9 cells x 3 seeds
    assert table_.loc["C5", "note"].count("x won every") == 1


def test_every_hard_and_soft_claim_is_measured_beside_its_null():
    """Issue 41: each claim carries the value of its null, computed by the same job, and the report shows it; C5
    carries it inside its value (the paired difference) and in its note; C3 has none (its would-be null cannot pass,
    the outside review's #8). On paper-shaped data pred drives FD without a bottleneck too, so C6's null passes."""
    table_ = decided(table({NO_BN: paper_like, NO_BN_TOY: paper_like, BN_TOY: bottlenecked, BN_IMG: bottlenecked}))
    claims = table_[table_["kind"].isin(["hard", "soft"]) & ~table_.index.isin(["C3", "C5"])]
    assert np.isfinite(claims["null_value"]).all(), claims["null_value"].to_dict()
    assert (table_.loc[["C3", "C4a", "C4b", "C5", "C5b"], "verdict"] == "holds").all(), table_["note"].to_dict()
    assert table_.loc["C6", "verdict"] == "inconclusive" and table_.loc["C6", "null_value"] > 0.5
    assert np.isnan(table_.loc["C5", "null_value"]) and np.isnan(table_.loc["C3", "null_value"])
    assert "null (image no-bottleneck regime on digits16)" in table_.loc["C5", "note"]


def test_c5_is_the_bottleneck_margin_minus_the_null_margin_seed_by_seed():
    """The audit's case: x wins FD with and without a bottleneck. C5 then is the margin with a bottleneck minus the
    margin without one, on the same seed, so it tests what the bottleneck adds."""
    metrics = table({NO_BN: x_best_anyway, BN_TOY: bottlenecked, BN_IMG: x_far_ahead})
    row = decided(metrics).loc["C5"]
    assert row["value"] == pytest.approx(np.log(2), abs=0.01) and row["runs"] == 3 and row["verdict"] == "holds"
    assert "former C5 (image bottleneck regime on digits16's margin alone)" in row["note"] and "per seed" in row["note"]
    assert claims_module.x_margin(metrics).value == pytest.approx(np.log(4), abs=0.01)  # the former value
    # where the null does not pass, the bar is 0: the value is the bottleneck margin itself
    assert decided(paper_shaped()).loc["C5", "value"] == pytest.approx(np.log(2), abs=0.01)


def test_c3_has_no_null_and_its_note_gives_the_bottleneck_statistic():
    """Issue 41's outside review (#8): C3's would-be null (its statistic over the bottleneck regimes) cannot pass, the
    rank floors give pred the bottleneck's log-MSE variance; so C3 has no null (NaN), the statement says so and the
    note gives that statistic. Verdicts: the null no longer gates (holds where the bottleneck regime is shaped like
    the no-bottleneck one), and C3 still fails where the roles are swapped."""
    row = decided(paper_shaped()).loc["C3"]
    assert row["verdict"] == "holds" and np.isnan(row["null_value"])
    assert "no null" in row["note"] and "the same statistic (bottleneck regime) -0.9" in row["note"]
    statement = next(d.statement for d in DEFINITIONS if d.claim_id == "C3")
    assert "No null" in statement
    ungated = decided(table({NO_BN: paper_like, BN_TOY: paper_like})).loc["C3"]
    assert ungated["verdict"] == "holds" and ungated["value"] > 0
    assert decided(table({NO_BN: swapped, BN_TOY: bottlenecked})).loc["C3", "verdict"] == "fails"


def test_c6_is_decided_on_fd_and_its_note_gives_the_mse_share():
    """Issue 41's outside review (#8): with a bottleneck the MSE's pred share is set by the rank floors, so C6 reads
    the FD share only; the MSE share is in the note. Where pred drives MSE but the loss drives FD, C6 fails (it held
    before only if both shares passed); where the loss drives MSE but pred drives FD, it holds (it failed before)."""
    held = decided(table({NO_BN: swapped, BN_TOY: bottlenecked, BN_IMG: mse_by_loss_fd_by_pred})).loc["C6"]
    assert held["verdict"] == "holds" and "the pred share of log-MSE, not deciding" in held["note"]
    failed = decided(table({NO_BN: swapped, BN_TOY: bottlenecked, BN_IMG: mse_by_pred_fd_by_loss})).loc["C6"]
    assert failed["verdict"] == "fails" and failed["value"] < 0.5
    statement = next(d.statement for d in DEFINITIONS if d.claim_id == "C6")
    assert "log FD" in statement and "log test MSE and" not in statement


def test_c5_pairs_each_bottleneck_dataset_with_the_no_bottleneck_regime_on_the_same_data():
    """Review of issue 41 (item 3): C5's null is the same data and training without the bottleneck. A no-bottleneck
    regime on other data (CIFAR-10 at paper scale, where x loses FD) is not that null: it must not lower the bar."""
    metrics = table({NO_BN: x_best_anyway, NO_BN_CIFAR: paper_like, BN_IMG: x_far_ahead})
    row = decided(metrics).loc["C5"]
    assert row["value"] == pytest.approx(np.log(2), abs=0.01) and row["verdict"] == "holds"  # log 4 - log 2, not log 4
    assert "null (image no-bottleneck regime on digits16)" in row["note"]
    # a bottleneck dataset without a no-bottleneck regime on the same data has no null: not measurable, named
    alone = decided(table({NO_BN_CIFAR: x_best_anyway, BN_IMG: x_far_ahead})).loc["C5"]
    assert np.isnan(alone["value"]) and alone["verdict"] == "inconclusive"
    assert "image no-bottleneck regime on digits16 not measurable" in alone["note"]


def test_the_quick_c5_null_regime_matches_the_bottleneck_regime_but_its_patch_changes_the_token_count():
    """Review of issue 41 (item 3): quick's no-bottleneck transformer trained 1000 steps against the bottleneck's 300;
    the null must match it in data, steps, batch, width, depth and heads. The patch still changes the token count
    with the bottleneck (the outside review, #3: one token without attention against sixteen), so C5 is soft and its
    statement names the confound. (Paper scale has no no-bottleneck transformer on a bottleneck regime's data, so C5
    is not measurable there: deviations.md.)"""
    import yaml

    from neurips26.pred_loss_space.architectures import has_bottleneck, token_dim

    config = yaml.safe_load((ROOT / "config/pred_loss_space.yaml").read_text())
    cfg = config["quick"]
    image = [r for r in cfg["regimes"] if r["arch"] != "mlp_toy"]
    for regime in (r for r in image if r["bottleneck"]):
        partners = [r for r in image if not r["bottleneck"] and r["dataset"] == regime["dataset"]]
        assert len(partners) == 1, regime
        null, arch = cfg["archs"][partners[0]["arch"]], cfg["archs"][regime["arch"]]
        assert {k: v for k, v in null.items() if k != "patch"} == {k: v for k, v in arch.items() if k != "patch"}
        assert partners[0].get("steps", cfg["train"]["steps"]) == regime.get("steps", cfg["train"]["steps"])
        size = 16  # digits16
        tokens = {name: (size // spec["patch"]) ** 2 for name, spec in (("null", null), ("bottleneck", arch))}
        assert tokens == {"null": 16, "bottleneck": 1}  # the confound C5's statement names
    c5 = next(d for d in DEFINITIONS if d.claim_id == "C5")
    assert c5.kind == "soft" and "token count" in c5.statement and "only the patch differs" not in c5.statement
    # the null that would remove the confound (measured once, deviations.md): one token, no bottleneck
    wide = {"image_size": 16, "channels": 1, "patch": 16, "width": 256, "depth": 2, "heads": 4}
    assert token_dim("jit_tiny_wide", wide) == 256 and not has_bottleneck("jit_tiny_wide", wide)
    assert has_bottleneck("jit_tiny_bn", {**wide, "width": 32})


def test_c5_is_decided_like_a_soft_claim_on_the_quick_regimes():
    """C5 soft (#3): the verdict logic is unchanged; it holds where x's margin with the bottleneck beats the null's,
    fails where it falls short of it, beside the same null regime."""
    assert decided(table({NO_BN: x_best_anyway, BN_IMG: x_far_ahead})).loc["C5", "verdict"] == "holds"
    assert decided(table({NO_BN: x_best_anyway, BN_IMG: x_slightly_ahead})).loc["C5", "verdict"] == "fails"


def test_c5_reads_fd_only_and_the_rank_floor_check_reports_the_mse_half():
    table_ = decided(table({NO_BN: paper_like, BN_TOY: floored, BN_IMG: fd_only}))
    assert table_.loc["C5", "verdict"] == "holds"  # x-prediction's MSE is the worst here: it no longer decides C5
    floors = claims_module.rank_floor(256, 32, "eps", np.array([0.05, 0.95]), T_MIN)
    assert floors == pytest.approx([(0.95 / 0.05) ** 2 * 224 / 256, (0.05 / 0.95) ** 2 * 224 / 256])
    assert claims_module.rank_floor(256, 32, "v", np.array([0.5]), T_MIN) == pytest.approx([0.25 * 224 / 256])
    checked = decided(table({NO_BN: paper_like, BN_TOY: floored, BN_IMG: floored})).loc["C5m"]
    assert checked["verdict"] == "holds" and checked["runs"] == 2 * 2 * 9  # 2 regimes x eps, v x 3 losses x 3 seeds
    assert "digits16/jit_tiny_bn (token 256, width 32)" in checked["note"] and "x-prediction 0.1" in checked["note"]


def test_the_rank_floor_of_the_quick_image_bottleneck_matches_the_audit():
    """The audit's floors: 35.7 (eps) and 0.29 (v) over quick's t grid for a rank-32 head on a 256-d token."""
    grid = np.arange(0.05, 1.0, 0.1)
    assert claims_module.rank_floor(256, 32, "eps", grid, T_MIN).mean() == pytest.approx(35.7, abs=0.05)
    assert claims_module.rank_floor(256, 32, "v", grid, T_MIN).mean() == pytest.approx(0.29, abs=0.005)


def test_output_ranks_name_every_bottleneck_regime_of_the_config():
    import yaml

    from neurips26.pred_loss_space.experiment import output_ranks

    config = yaml.safe_load((ROOT / "config/pred_loss_space.yaml").read_text())
    assert output_ranks(config["quick"]) == {"digits16/jit_tiny_bn": [256, 32], "toy_D512/mlp_toy": [512, 64]}
    assert output_ranks(config["smoke"]) == {}
    assert output_ranks(config["paper"])["imagenette64/jit_tiny_bn"] == [768, 192]  # 16 x 16 x 3 per token


def test_the_checks_are_identities_of_real_conversions():
    """The checks hold to float32 rounding on an untrained model: they test conversions, not learning."""
    measured = {m.claim_id: m for m in measure_claims(evaluated(), t_eps=T_EPS, t_min=T_MIN)}
    assert measured["C1"].value < 1e-5 and measured["C2"].value < 1e-5


def test_seeds_not_shared_by_every_regime_are_left_out_and_said_so():
    metrics = pd.concat(
        [table({NO_BN: swapped, BN_TOY: bottlenecked}), table({BN_IMG: bottlenecked}, seeds=(0, 1, 2, 3))]
    )
    row = decided(metrics).loc["C6"]
    assert row["runs"] == 3 and "seeds shared by all 2 regimes: [0, 1, 2]" in row["note"]
    assert row["verdict"] == "holds"


def test_the_image_and_toy_bottleneck_claims_read_only_their_own_regimes():
    measured = {m.claim_id: m for m in measure_claims(table({BN_IMG: bottlenecked, NO_BN: paper_like}), T_EPS)}
    assert measured["C5"].runs == 3 and np.isnan(measured["C5b"].value)
    assert "no toy bottleneck regime" in measured["C5b"].note


def test_the_library_names_every_defined_claim():
    assert {d.claim_id for d in DEFINITIONS} == {m.claim_id for m in measure_claims(paper_shaped(), T_EPS)}
    assert claims_module.NAN != claims_module.NAN
