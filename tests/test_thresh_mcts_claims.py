"""Paper 12's summaries and claims: Clopper-Pearson, slopes, and claim checks that can fail."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from neurips26.thresh_mcts import claims, evaluation, experiment

ROOT = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((ROOT / "config/thresh_mcts.yaml").read_text())


def test_clopper_pearson_matches_known_values():
    low, high = evaluation.clopper_pearson(0, 100)
    assert low == 0.0 and high == pytest.approx(0.0362, abs=1e-4)  # the "rule of three" region
    low, high = evaluation.clopper_pearson(5, 10)
    assert low == pytest.approx(0.1871, abs=1e-4) and high == pytest.approx(0.8129, abs=1e-4)


def test_loglog_slope_recovers_powers():
    k = np.array([9, 27, 81, 243, 729])
    assert evaluation.loglog_slope(k, 3 * k) == pytest.approx(1.0)
    assert evaluation.loglog_slope(k, np.log(k)) < 0.35


def runs_frame(rule, instance, delta, taus, correct, censored=None):
    n = len(taus)
    return pd.DataFrame({"rule": rule, "instance": instance, "delta": delta, "run": np.arange(n), "tau": taus,
                         "correct": correct, "censored": np.zeros(n, bool) if censored is None else censored})


def test_summarise_counts_errors_among_stopped_runs_only():
    runs = runs_frame("ratio", "I1", 0.1, [10, 20, 30, 40], [True, False, True, False], [False, False, False, True])
    theory = pd.DataFrame({"instance": ["I1"], "t_star": [5.0]})
    row = evaluation.summarise(runs, theory).iloc[0]
    assert row["errors"] == 1 and row["error_rate"] == pytest.approx(1 / 3) and row["censored"] == 0.25
    assert row["mean_tau"] == pytest.approx(20.0)
    assert row["tau_over_tstar_log"] == pytest.approx(20 / (5 * np.log(10)))
    assert row["lower_bound"] == pytest.approx(5 * evaluation.kl_bernoulli(0.1, 0.9))


def tables(ratio_tau=100.0, d_tau=200.0, errors=0, d_slope=1.0, r_slope=0.2, identical=True, lp_err=1e-12):
    rows = []
    for instance in ("I1", "I2", "I3"):
        for rule, tau in (("ratio", ratio_tau), ("d_tracking", d_tau), ("uniform", 400.0)):
            for delta, factor in ((0.1, 1.0), (0.01, 1.5)):
                rows.append({"rule": rule, "instance": instance, "delta": delta, "runs": 100, "errors": errors,
                             "error_rate": errors / 100, "cp_low": evaluation.clopper_pearson(errors, 100)[0],
                             "mean_tau": tau * factor, "t_star": 10.0,
                             "tau_over_tstar_log": tau * factor / (10 * np.log(1 / delta))})
    summary = pd.DataFrame(rows)
    slopes = pd.DataFrame({"rule": ["d_tracking", "ratio_incremental"], "ops_slope": [d_slope, r_slope]})
    equivalence = pd.DataFrame({"identical": [identical, True]})
    lp_check = pd.DataFrame({"relative_error": [lp_err, 0.0]})
    return summary, slopes, equivalence, lp_check


def test_the_claims_hold_on_good_tables_and_fail_on_bad_ones():
    good = {c.claim_id: c for c in claims.check_claims(*tables())}
    assert all(good[i].holds for i in ("M1", "M2a", "M2b", "M3", "M4", "M5a", "M5b", "M6", "M7"))
    bad = {c.claim_id: c for c in claims.check_claims(*tables(ratio_tau=300.0, errors=30, d_slope=0.5, r_slope=0.9,
                                                                identical=False, lp_err=1e-3))}
    assert not any(bad[i].holds for i in ("M1", "M2a", "M2b", "M5a", "M5b", "M6", "M7"))


@pytest.mark.parametrize("scale", ["smoke", "quick", "paper"])
def test_the_shipped_config_passes_every_check(scale):
    experiment.check_config(CONFIG[scale], ROOT)


def with_user_file(tmp_path, records):
    path = tmp_path / "trees.json"
    path.write_text(json.dumps(records))
    cfg = json.loads(json.dumps(CONFIG["quick"]))
    cfg["instances"]["user_file"] = str(path)
    return cfg


@pytest.mark.parametrize("tree, mu, theta, message", [
    ({"children": [[1, 2], [0], []], "labels": ["MAX", "MIN", "LEAF"]}, [0.3], 0.5, "cycle"),
    ({"children": [[1, 2], [3], [3], []], "labels": ["MAX", "MIN", "MIN", "LEAF"]}, [0.3], 0.5, "shared"),
    ({"children": [[1, 2], [], []], "labels": ["MAX", "LEAF", "LEAF"]}, [0.3, 1.4], 0.5, r"\[0, 1\]"),
    ({"children": [[1, 2], [], []], "labels": ["MAX", "LEAF", "LEAF"]}, [0.3, 0.5], 0.5, "not identifiable"),
    ({"children": [[1, 2], [], []], "labels": ["AVG", "LEAF", "LEAF"]}, [0.3, 0.6], 0.5, "AVG"),
])
def test_a_bad_user_tree_is_rejected_naming_the_problem(tmp_path, tree, mu, theta, message):
    cfg = with_user_file(tmp_path, [{"id": "U1", "tree": tree, "mu": mu, "theta": theta, "kind": "bernoulli"}])
    with pytest.raises(ValueError, match=message):
        experiment.check_config(cfg, ROOT)


def test_duplicate_instance_ids_are_rejected():
    cfg = json.loads(json.dumps(CONFIG["quick"]))
    cfg["instances"]["random"].append({"id": "I1", "depth": 2, "branching": 2, "gap": 0.1})
    with pytest.raises(ValueError, match="duplicate instance ids"):
        experiment.check_config(cfg, ROOT)
