"""The report's published table: the paper's numbers beside ours only where the dataset matches."""

import pandas as pd

from neurips26.ecfr.claims import PUBLISHED
from neurips26.ecfr.summary import published_table


def _claims() -> pd.DataFrame:
    return pd.DataFrame({"claim_id": list(PUBLISHED), "paper_value": [0.9] * len(PUBLISHED),
                         "verdict": ["info"] * len(PUBLISHED)})  # fmt: skip


def _means(dataset: str, value: float) -> pd.DataFrame:
    row = {"dataset": dataset, "method": "ecfr", "setting": "unified", "name": "mean"}
    for metric in ("i_auroc", "p_auroc", "aupro"):
        row |= {metric: value, f"{metric}_sd": 0.01}
    return pd.DataFrame([row])


def test_at_paper_scale_eyecandies_rows_have_no_number_when_only_mvtec3d_runs():
    means = pd.concat([_means("mvtec3d", 0.8), _means("synthetic", 0.6)])
    sources = {"mvtec3d": "mvtec3d"}
    table = published_table(_claims(), means, sources, "mvtec3d", "ecfr", "paper")
    table.index = [c.split(":")[0] for c in table["claim"]]
    for claim_id in ("P1", "P2", "P3"):
        assert table.loc[claim_id, "ours"].startswith("0.8")
        assert table.loc[claim_id, "ours on"] == "mvtec3d (paper scale)"
    for claim_id in ("P4", "P5", "P6"):
        assert table.loc[claim_id, "published on"] == "Eyecandies"
        assert table.loc[claim_id, "ours"] == "n/a (not run)"
        assert "0.8" not in table.loc[claim_id, "ours"] and "mvtec3d" not in table.loc[claim_id, "ours on"]


def test_at_quick_scale_every_row_sets_the_synthetic_set_beside_the_paper_as_not_comparable():
    sources = {"synthetic": "synthetic"}
    table = published_table(_claims(), _means("synthetic", 0.6), sources, "synthetic", "ecfr", "quick")
    assert len(table) == len(PUBLISHED)
    assert table["ours"].str.startswith("0.6").all()
    assert (table["ours on"] == "synthetic (quick scale): not comparable").all()
