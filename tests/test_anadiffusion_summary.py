"""Paper 03's report tables and template on evaluation tables shaped as the evaluation job writes them: ours beside the
paper's numbers only as comparable where the data and features are the paper's, seed intervals that are the t
intervals the claims use, the bootstrap shown beside, every table the report names."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from conftest import ROOT
from neurips26.anadiffusion import plots
from neurips26.anadiffusion.published import EDIT_COLUMNS, FD_REGIONS, PARTS, TABLE1, mean_over_parts
from neurips26.anadiffusion.summary import TABLES, published_table1, regional_long, report_tables
from neurips26.common.claims import t_interval
from neurips26.common.report import render
from test_anadiffusion_claims import cohen_table, conditioning_table, edit_table, fd_table, memorization_table


@pytest.fixture(scope="module")
def quick():
    return report_tables(fd_table(), cohen_table(), edit_table(), memorization_table(), "synthbrain", "quick", 200)


def test_every_table_the_report_names_is_built(quick):
    assert set(quick) == set(TABLES)
    assert all(len(table) for table in quick.values())


def test_the_regional_cells_are_the_seed_t_interval_and_the_mean_bootstrap_ends(quick):
    fd = fd_table()
    ana = fd[(fd["method"] == "ana") & (fd["region"] == "whole")]
    spread = t_interval(ana["value"].tolist())
    cell = quick["regional_fd"].set_index("method").loc["ana", "WB"]
    assert cell == f"{spread.mean:.4g} [{spread.low:.4g}, {spread.high:.4g}]"
    boot = quick["regional_fd_bootstrap"].set_index("method").loc["ana", "WB"]
    assert boot == f"{spread.mean:.4g} [{ana['low'].mean():.4g}, {ana['high'].mean():.4g}]"
    assert list(quick["regional_fd"].columns) == ["features", "method", "WB", "Brain", "LH", "RH", "CB", "Seam"]


def test_the_wide_fd_tables_show_the_brain_the_round_trip_and_the_real_reference_beside_ana(quick):
    """C1 decides on the brain too and against the round trip; the real-vs-real FD is the floor: all in the report."""
    fd = fd_table()
    for name in ("regional_fd", "regional_fd_bootstrap"):
        table = quick[name]
        assert list(table["method"]) == ["ldm", "paste", "ae_roundtrip", "ana", "ana_r7", "ana_r15", "real"]
        brain = fd[(fd["method"] == "real") & (fd["region"] == "brain")]["value"]
        assert table.set_index("method").loc["real", "Brain"].startswith(f"{brain.mean():.4g} [")


def test_at_quick_scale_ours_stand_beside_the_paper_as_raw_and_not_comparable(quick):
    table = quick["published_table1"]
    paper, ours = table[table["source"].str.startswith("paper")], table[table["source"].str.startswith("ours")]
    assert list(paper["method"]) == list(TABLE1) and paper.set_index("method").loc["AnaDiffusion", "WB"] == 36.16
    assert ours["source"].str.endswith("not comparable").all()
    assert ours.set_index("method").loc["ana", "WB"] == pytest.approx(0.80 + np.mean([-0.005, 0.005, 0.01]))
    assert quick["published_editing"]["source"].str.contains("not comparable|paper").all()


def test_at_paper_scale_medicalnet_fd_on_adni_is_scaled_to_the_pages_units():
    long = regional_long(fd_table(features=("medicalnet_resnet10",), scale=1e-4))
    table = published_table1(long, cohen_table(), "adni", "paper")
    ours = table[table["source"].str.startswith("ours")].set_index("method")
    assert not ours["source"].str.contains("not comparable").any()
    assert ours.loc["ldm", "WB"] == pytest.approx(1.00) and ours.loc["ana", "Seam"] == pytest.approx(0.1033, abs=1e-3)
    # the same features on the synthetic cohort stay raw and not comparable
    synthetic = published_table1(long, cohen_table(), "synthbrain", "paper")
    assert synthetic[synthetic["source"].str.startswith("ours")]["source"].str.endswith("not comparable").all()


def test_table_2_sets_alpha_0_beside_the_ldm_and_marks_what_the_scale_does_not_run(quick):
    table = quick["published_table2"].set_index("configuration")
    assert table.loc["w/o latent injection (alpha = 0)", "ours"] == "ldm"
    assert table.loc["separate hemisphere models (r_inj = 10)", "ours"] == "ana_separate (not run at quick)"
    assert table.loc["separate hemisphere models (r_inj = 10)", "ours WB (rand3d, raw)"] == "n/a"
    assert table.loc["r_inj = 15", "paper WB"] == 51.66


def with_baselines(frame, copies):
    """``frame`` with the rows of each method of `copies` (ours -> source) copied under its own name."""
    return pd.concat([frame, *(frame[frame["method"] == src].assign(method=ours) for ours, src in copies.items())])


def test_the_paper_scale_baselines_stand_in_every_table_beside_the_papers_rows():
    """The separate hemisphere models (Table 2's ablation) and the Seg. cLDM (Table 1, Fig. 4a) where they run."""
    fd = with_baselines(fd_table(), {"ana_separate": "ana", "seg_cldm": "ldm"})
    edits = with_baselines(edit_table(), {"seg_cldm": "ana"})
    cohen = with_baselines(cohen_table(), {"seg_cldm": "ldm"})
    tables = report_tables(
        fd, cohen, edits, memorization_table(), "synthbrain", "paper", 50, conditioning=conditioning_table()
    )  # the baseline follows its maps (C13)
    table2 = tables["published_table2"].set_index("configuration").loc["separate hemisphere models (r_inj = 10)"]
    ana = tables["published_table2"].set_index("configuration").loc["full injection alpha = 1 (Ours, r_inj = 10)"]
    assert table2["ours"] == "ana_separate" and table2["ours WB (rand3d, raw)"] == ana["ours WB (rand3d, raw)"]
    assert {"ana_separate", "seg_cldm"} <= set(tables["regional_fd"]["method"])
    editing = tables["published_editing"]
    assert set(editing.loc[editing["source"].str.startswith("paper"), "method"]) == {"Ours", "Seg. cLDM"}
    ours = editing[editing["source"].str.startswith("ours")]
    assert sorted(ours.loc[ours["part"] == "LH", "method"]) == ["ana", "seg_cldm"]
    assert list(tables["editing"]["method"].unique()) == ["ana", "seg_cldm"]
    table1 = tables["published_table1"]
    assert {"Seg. cLDM", "seg_cldm"} <= set(table1["method"])


def test_a_seg_cldm_that_ignores_its_conditioning_is_marked_untrained_in_every_table():
    fd = with_baselines(fd_table(), {"seg_cldm": "ldm"})
    edits = with_baselines(edit_table(), {"seg_cldm": "ana"})
    cohen = with_baselines(cohen_table(), {"seg_cldm": "ldm"})
    cases = ((conditioning_table(response=0.0), "seg_cldm (untrained: ignores its conditioning, C13)"),
             (None, "seg_cldm (conditioning not checked)"))  # fmt: skip
    for conditioning, label in cases:
        tables = report_tables(fd, cohen, edits, memorization_table(), "synthbrain", "paper", 20,
                               conditioning=conditioning)  # fmt: skip
        for name in ("regional_fd", "morphometry", "editing", "published_table1", "published_editing"):
            methods = set(tables[name]["method"])
            assert "seg_cldm" not in methods and label in methods, (name, methods)


def test_the_editing_table_averages_per_seed_means_and_shows_the_bootstrap(quick):
    table = quick["editing"].set_index("part")
    edits = edit_table()
    per_seed = edits[edits["part"] == "CB"].groupby("seed")["transfer_gain"].mean()
    assert table.loc["CB", "transfer_gain"].startswith(f"{per_seed.mean():.3g} [")
    assert table.loc["CB", "edits per seed"] == 4 and "transfer_gain bootstrap" in table.columns
    assert list(table.index) == list(PARTS)


def test_the_published_editing_means_are_fig_4as():
    assert mean_over_parts("off_target_preservation") == pytest.approx((0.9371 + 0.9363 + 0.9496) / 3)
    assert mean_over_parts("target_transfer") == pytest.approx((0.9427 + 0.9484 + 0.9618) / 3)
    assert EDIT_COLUMNS[:2] == ("target_transfer", "off_target_preservation")


def test_the_regions_are_the_feature_modules():
    source = (ROOT / "src/neurips26/anadiffusion/features.py").read_text()
    assert 'REGIONS = ("whole", "LH", "RH", "CB", "seam")' in source and FD_REGIONS == (
        "whole",
        "LH",
        "RH",
        "CB",
        "seam",
    )


QUICK_PARAMS = {
    "data": {"source": "synthbrain", "voxel_mm": 8.0, "shape": [24, 28, 24], "train": 64, "eval": 32},
    "autoencoder": {"steps": 150, "seed": 0},
    "denoiser": {"steps": 150, "part_model": "shared_side_cond"},
    "sampling": {"ddim_steps": 25, "samples": 32},
    "injections": {"ana": {"r_inj": 10, "alpha": 1.0}, "ana_r7": {"r_inj": 7, "alpha": 1.0}},
    "seeds": [0, 1, 2],
    "edit": {"pairs": [[0, 1], [2, 3]]},
    "evaluate": {"features": "rand3d", "bootstrap": 1000, "ms_ssim": {"n_scales": 2}},
    "seg_cldm": False,
}


def test_the_report_template_renders_every_table_and_says_what_is_not_comparable(quick):
    text = render(ROOT / "workflow/report/anadiffusion/report.md.j2", scale="quick", params=QUICK_PARAMS,
                  claims="CLAIMS", n_claims=0, reconstruction="", closing="CLOSING", **quick)  # fmt: skip
    assert "Not comparable at this scale" in text and "a **proxy** for MedicalNet" in text
    assert "`ana_r7` (r_inj = 7, alpha = 1.0)" in text and "2 (recipient, donor) pairs" in text
    assert "| Grid-based LDM |" in text and text.rstrip().endswith("CLOSING")
    assert "**Brain** inside the template brain only" in text  # the column the review found unexplained
    assert "paper-scale runs\n(not run at this scale)" in text and "not run at this scale):" in text
    injections = {**QUICK_PARAMS["injections"], "ana_separate": {"r_inj": 10, "alpha": 1.0, "part_model": "separate"}}
    adni = {**QUICK_PARAMS, "data": {**QUICK_PARAMS["data"], "source": "adni"}, "injections": injections,
            "evaluate": {**QUICK_PARAMS["evaluate"], "features": "medicalnet_resnet10"}, "seg_cldm": True}  # fmt: skip
    paper = render(ROOT / "workflow/report/anadiffusion/report.md.j2", scale="paper", params=adni, claims="",
                   n_claims=0, reconstruction="", closing="", **quick)  # fmt: skip
    assert "comparable (claims P1-P4 decide them)" in paper and "proxy" not in paper.split("## Claims")[0]
    assert "`ana_separate` (r_inj = 10, alpha = 1.0, assets from the separate part models" in paper
    assert "Baseline `seg_cldm`" in paper and "ours `seg_cldm`" in paper and "not run at this scale" not in paper


def test_the_figures_draw_and_refuse_a_volume_that_is_not_3d():
    long = regional_long(fd_table())
    fig = plots.regional_fd(long)
    assert len(fig.axes) == len(FD_REGIONS)
    with pytest.raises(ValueError, match=r"must be \(X, Y, Z\)"):
        plots.orthogonal_slices({"real": np.zeros((2, 4, 4, 4))})
