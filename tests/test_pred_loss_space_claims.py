"""Paper 01's claim checks on synthetic metric tables: each can hold and each can fail."""

import itertools

import numpy as np
import pandas as pd
import pytest

from neurips26.common.claims import claims_table
from neurips26.pred_loss_space.claims import check_claims, reweighting_identity_error
from neurips26.pred_loss_space.evaluation import metrics_frame

SPACES = ("x", "eps", "v")


def table(regimes: dict[tuple, callable]) -> pd.DataFrame:
    """Metrics for every cell of each regime; `regimes` maps (dataset, arch, bottleneck) to
    f(pred, loss) -> (mse, fd)."""
    frames = []
    for (dataset, arch, bottleneck), cell in regimes.items():
        for pred, loss in itertools.product(SPACES, SPACES):
            mse, fd = cell(pred, loss)
            t = np.array([0.25, 0.75])
            theory = {"x": np.ones(2), "eps": (1 - t) / t, "v": 1 - t}[pred]
            per_t = pd.DataFrame({"t": t, "mse_x": [mse, mse], "amp_x_emp": theory, "amp_x_theory": theory})
            frames.append(metrics_frame(per_t, {"mse": mse, "fd": fd}, dataset=dataset, arch=arch,
                                        bottleneck=bottleneck, pred=pred, loss=loss, seed=0))
    return pd.concat(frames, ignore_index=True)


LOSS_EFFECT = {"x": 1.0, "eps": 1.5, "v": 0.8}
PRED_EFFECT = {"x": 1.0, "eps": 4.0, "v": 2.0}


def paper_like(pred, loss):  # no bottleneck: loss drives MSE (small), pred drives FD (large)
    return 0.1 * LOSS_EFFECT[loss] * (1 + 0.01 * PRED_EFFECT[pred]), 10 * PRED_EFFECT[pred] * (1 + 0.01 * LOSS_EFFECT[loss])


def bottlenecked(pred, loss):  # x-prediction wins everything, pred explains most
    return 0.1 * PRED_EFFECT[pred] * LOSS_EFFECT[loss] ** 0.1, 10 * PRED_EFFECT[pred]


def verdicts(metrics: pd.DataFrame) -> dict[str, bool]:
    claims = claims_table(check_claims(metrics, t_eps=0.05))
    return dict(zip(claims["claim_id"], claims["holds"]))


def test_the_reweighting_identity_holds_to_rounding():
    assert reweighting_identity_error() < 1e-12


def test_every_claim_holds_on_a_table_shaped_like_the_paper():
    metrics = table({("digits16", "jit_tiny", False): paper_like, ("toy_D512", "mlp_toy", True): bottlenecked})
    assert verdicts(metrics) == {"C1": True, "C2": True, "C3": True, "C4a": True, "C4b": True, "C5": True, "C6": True}


def test_the_regime_claims_fail_when_the_factors_swap_roles():
    def swapped(pred, loss):  # pred drives MSE, loss drives FD
        return 0.1 * PRED_EFFECT[pred], 10 * LOSS_EFFECT[loss]

    def eps_wins(pred, loss):
        return 0.1 * {"x": 2.0, "eps": 1.0, "v": 3.0}[pred], 10.0 * {"x": 2.0, "eps": 1.0, "v": 3.0}[pred]

    verdict = verdicts(table({("digits16", "jit_tiny", False): swapped, ("toy_D512", "mlp_toy", True): eps_wins}))
    assert not verdict["C3"] and not verdict["C4a"] and not verdict["C4b"] and not verdict["C5"]
    assert verdict["C6"]  # pred still explains the bottleneck regime's variance


def test_a_wrong_amplification_fails_c2():
    metrics = table({("digits16", "jit_tiny", False): paper_like})
    wrong = metrics["metric"].eq("amp_x_emp") & metrics["pred"].eq("eps")
    metrics.loc[wrong, "value"] *= 1.01
    assert not verdicts(metrics)["C2"]


def test_claims_of_a_regime_absent_at_this_scale_are_not_evaluated():
    claims = claims_table(check_claims(table({("digits16", "jit_tiny", False): paper_like}), t_eps=0.05))
    absent = claims.set_index("claim_id").loc[["C5", "C6"]]
    assert absent["value"].isna().all() and not absent["holds"].any()
    assert absent["note"].str.contains("not evaluated").all()
