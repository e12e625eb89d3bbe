"""Paper 15's evaluation and report tables on a hand-made item set: accuracy, ECE, KL(human || model), seed
disagreement and cartography's rank correlations equal hand-computed values; the tables' spread is the t interval."""

import math

import numpy as np
import pandas as pd
import pytest

from neurips26.softlabel_audit import evaluation
from neurips26.softlabel_audit.evaluation import cartography_frame, evaluate
from neurips26.softlabel_audit.itemset import CLEAN, MORPH, ItemSet
from neurips26.softlabel_audit.members import Member
from neurips26.softlabel_audit.summary import data_summary, metric_table, paper_beside_ours

K = 10


def _rows(*probs: tuple[float, float]) -> np.ndarray:
    """Probability rows over K classes with mass on classes 0 and 1 only."""
    out = np.zeros((len(probs), K))
    out[:, :2] = probs
    return out


# train items 0-3 (votes 6:0, 5:1, 4:2, 3:3 for classes 0:1, entropy rising), test items 4-7
COUNTS = np.zeros((8, K), np.int64)
COUNTS[:, :2] = [[6, 0], [5, 1], [4, 2], [3, 3], [6, 0], [3, 3], [0, 6], [2, 4]]
ITEMS = ItemSet(
    images=np.zeros((8, 2, 2), np.float32),
    original=np.array([0, 0, 1, 1, 0, 0, 1, 1]),
    counts=COUNTS,
    split=np.array([0, 0, 0, 0, 2, 2, 2, 2], np.int8),
    kind=np.array([CLEAN, MORPH, MORPH, MORPH, CLEAN, MORPH, CLEAN, MORPH], np.int8),
    simulated=True,
)
QUANTILE = 0.5  # test entropies 0, ln 2, 0, H(1/3): the median is H(1/3) / 2, so items 5 and 7 are difficult
# test predictions of seed 0 (top-label confidences .9, .62, .7, .55 fall in four different of 15 bins) and seed 1
# (item 5 flipped to class 0: one disagreement in four)
P0 = _rows((0.9, 0.1), (0.38, 0.62), (0.3, 0.7), (0.45, 0.55))
P1 = _rows((0.9, 0.1), (0.62, 0.38), (0.3, 0.7), (0.45, 0.55))
MEMBERS = [Member("hard_orig", 0), Member("hard_orig", 1)]
# training dynamics over 2 epochs: gold-label probability c -+ d, so confidence c and variability d
CONF, VAR = np.array([0.9, 0.7, 0.5, 0.3]), np.array([0.0, 0.1, 0.2, 0.25])
GOLD_PROB = np.stack([CONF - VAR, CONF + VAR])[None].repeat(2, axis=0)  # (M, E, N_train)
CORRECT = GOLD_PROB > 0.5


def _kl(human, model) -> float:
    return sum(h * math.log(h / m) for h, m in zip(human, model) if h > 0)


@pytest.fixture(scope="module")
def metrics():
    table = evaluate(ITEMS, MEMBERS, np.stack([P0, P1]), GOLD_PROB, CORRECT, n_bins=15, quantile=QUANTILE)
    return table.set_index(["condition", "seed", "pair", "subset", "metric"])["value"].sort_index()


def test_test_subsets_are_all_difficult_and_each_kind():
    masks = evaluation.test_subsets(ITEMS, QUANTILE)  # a module attribute: pytest would collect test_subsets
    assert sorted(masks) == ["all", "clean", "difficult", "morph"]
    np.testing.assert_array_equal(masks["difficult"], [False, True, False, True])
    np.testing.assert_array_equal(masks["morph"], [False, True, False, True])
    assert masks["all"].all()


def test_accuracy_ece_and_kl_equal_hand_computed_values(metrics):
    m = metrics.loc[("hard_orig", 0, "")]
    assert m[("all", "accuracy")] == pytest.approx(0.75)  # item 5 (original 0) is predicted 1
    assert m[("difficult", "accuracy")] == pytest.approx(0.5)
    assert m[("clean", "accuracy")] == pytest.approx(1.0)
    # one item per bin: ECE = mean |correct - confidence|
    assert m[("all", "ece")] == pytest.approx((0.1 + 0.62 + 0.3 + 0.45) / 4)
    assert m[("difficult", "ece")] == pytest.approx((0.62 + 0.45) / 2)
    kls = [_kl([1, 0], [0.9, 0.1]), _kl([0.5, 0.5], [0.38, 0.62]), _kl([0, 1], [0.3, 0.7]),
           _kl([1 / 3, 2 / 3], [0.45, 0.55])]  # fmt: skip
    assert m[("all", "kl_human")] == pytest.approx(np.mean(kls), rel=1e-6)
    assert m[("difficult", "kl_human")] == pytest.approx((kls[1] + kls[3]) / 2, rel=1e-6)
    assert metrics.loc[("hard_orig", 1, "", "all", "accuracy")] == pytest.approx(1.0)  # seed 1 gets item 5 right


def test_seed_disagreement_is_per_pair_of_seeds_of_a_condition(metrics):
    assert metrics.loc[("hard_orig", -1, "0-1", "all", "seed_disagreement")] == pytest.approx(0.25)
    assert metrics.loc[("hard_orig", -1, "0-1", "clean", "seed_disagreement")] == 0.0
    assert metrics.loc[("hard_orig", -1, "0-1", "difficult", "seed_disagreement")] == pytest.approx(0.5)


def test_cartography_correlations_follow_the_ranks_of_human_entropy(metrics):
    m = metrics.loc[("hard_orig", 0, "", "train")]
    assert m["spearman_confidence"] == pytest.approx(-1.0)  # confidence falls as the votes split
    assert m["spearman_variability"] == pytest.approx(1.0)
    assert m["spearman_one_minus_confidence"] == pytest.approx(1.0)


def test_cartography_frame_has_one_row_per_member_and_training_item():
    frame = cartography_frame(ITEMS, MEMBERS, GOLD_PROB, CORRECT)
    assert len(frame) == 2 * 4 and list(frame["item"][:4]) == [0, 1, 2, 3]
    np.testing.assert_allclose(frame["confidence"][:4], CONF)
    np.testing.assert_allclose(frame["variability"][:4], VAR, atol=1e-12)
    assert frame["human_entropy"][0] == 0.0 and frame["human_entropy"][3] == pytest.approx(math.log(2))
    assert list(frame["kind"][:4]) == ["clean", "morph", "morph", "morph"]


def test_data_summary_counts_items_mode_shifts_and_entropy_per_split_and_kind():
    summary = data_summary(ITEMS).set_index(["split", "kind"])
    assert summary.loc[("train", "morph"), "items"] == 3
    assert summary.loc[("train", "morph"), "mode_shift_share"] == pytest.approx(
        1 / 3
    )  # item 2 (4:2 against its label 1); a tie (item 3) keeps the original
    h13 = -(1 / 3) * math.log(1 / 3) - (2 / 3) * math.log(2 / 3)
    assert summary.loc[("test", "morph"), "human_entropy"] == pytest.approx((math.log(2) + h13) / 2)
    assert (summary["annotators"] == "simulated").all() and ("val", "clean") not in summary.index


def test_metric_table_gives_the_mean_and_the_half_width_of_the_t_interval():
    rows = pd.DataFrame({"dataset": "d", "condition": "human_soft", "seed": [0, 1, 2, -1], "pair": ["", "", "", "0-1"],
                         "subset": "all", "metric": ["accuracy"] * 3 + ["seed_disagreement"],
                         "value": [1.0, 2.0, 3.0, 9.0]})  # fmt: skip
    table = metric_table(rows).set_index("condition")
    half = 4.302652729911275 / math.sqrt(3)  # t(0.975, 2 df) * s / sqrt(n), s = 1
    assert table.loc["human_soft", "accuracy (all)"] == f"2.0000 ± {half:.4f}"


def test_paper_numbers_stand_beside_our_means_and_nan_where_we_have_none():
    rows = pd.DataFrame({"dataset": "d", "condition": "human_soft", "seed": [0, 1], "pair": "", "subset": "difficult",
                         "metric": "kl_human", "value": [0.5, 0.7]})  # fmt: skip
    table = paper_beside_ours(rows, "d").set_index(["metric", "condition"])
    assert table.loc[("kl_high_variation", "human_soft"), "ours"] == pytest.approx(0.6)
    assert table.loc[("kl_high_variation", "human_soft"), "paper_value"] == 0.669
    assert np.isnan(table.loc[("kl_high_variation", "hard_orig"), "ours"])
    assert np.isnan(table.loc[("spearman_human_uncertainty", "human_soft"), "ours"])


def test_kl_and_difficult_items_use_the_panel_distribution_and_kl_votes_the_observed_votes():
    panel = _rows(*[(0.5, 0.5)] * 4, (0.9, 0.1), (0.95, 0.05), (0.2, 0.8), (0.5, 0.5))
    items = ItemSet(**{**ITEMS.__dict__, "panel_probs": panel})
    masks = evaluation.test_subsets(items, QUANTILE)  # panel entropies of test items 4-7: .33, .20, .50, .69
    np.testing.assert_array_equal(masks["difficult"], [False, False, True, True])
    table = evaluate(items, MEMBERS[:1], P0[None], GOLD_PROB[:1], CORRECT[:1], n_bins=15, quantile=QUANTILE)
    m = table.set_index(["subset", "metric"])["value"]
    assert m[("all", "kl_human")] == pytest.approx(np.mean([_kl(h[:2], p[:2]) for h, p in zip(panel[4:], P0)]))
    votes = COUNTS[4:, :2] / 6
    assert m[("all", "kl_votes")] == pytest.approx(np.mean([_kl(h, p[:2]) for h, p in zip(votes, P0)]), rel=1e-6)
    # the panel's modes 0, 0, 1 and a tie (item 7: the original label 1): P0 predicts 0, 1, 1, 1
    assert m[("all", "accuracy_majority")] == pytest.approx(0.75) and m[("difficult", "items")] == 2


def test_what_members_were_trained_on_is_reported_per_member():
    members = [Member("human_soft", 0), Member("human_soft_aligned", 0), Member("label_smooth", 0)]
    entropy = np.array([[0.1, 0.5], [0.1, 0.5 + 1e-3], [0.3, 0.3]])
    on_original = np.array([[True, False], [True, True], [True, True]])
    rows = evaluation.trained_on(members, entropy, on_original, np.array([np.nan, np.nan, 0.2]), None)
    got = {(c, metric): v for c, _, _, _, metric, v in rows}
    assert got[("human_soft_aligned", "target_entropy_gap")] == pytest.approx(1e-3)
    assert got[("human_soft", "target_mode_original")] == 0.5 and got[("label_smooth", "epsilon")] == 0.2
    assert ("human_soft", "target_entropy_gap") not in got and ("human_soft", "epsilon") not in got


def test_report_tables_say_simulated_annotators_only_for_simulated_votes(tmp_path):
    from types import SimpleNamespace

    from neurips26.softlabel_audit.summary import SIMULATED_NOTE, report_tables

    rows = pd.DataFrame({"dataset": "d", "condition": "human_soft", "seed": [0, 1], "pair": "", "subset": "all",
                         "metric": "accuracy", "value": [0.5, 0.7]})  # fmt: skip
    rows.to_parquet(tmp_path / "m.parquet")
    notes = {}
    for annotators in ("simulated", "human"):
        data_summary(ITEMS).assign(dataset="d", annotators=annotators).to_parquet(tmp_path / "d.parquet")
        inp = SimpleNamespace(metrics=tmp_path / "m.parquet", data=tmp_path / "d.parquet")
        notes[annotators] = report_tables(inp, SimpleNamespace(primary="d"))["annotators_note"]
    assert notes == {"simulated": SIMULATED_NOTE, "human": "real human annotators"}
