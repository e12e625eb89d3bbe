"""Paper 08's figures drawn from hand-made tables (tests/vair_report_fixtures.py): the gap per flaw type and backend
with the paper's band, probes per layer with the paper's marks, patching per layer with the paper's rates."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest

from neurips26.common.figures import save_figure
from neurips26.vair import plots
from neurips26.vair.items import FLAWS
from neurips26.vair.summary import PAPER_FLIP_RATES, PAPER_GAP_RANGE, PAPER_PROBE
from vair_report_fixtures import evidence, patching_table, probes_table, report_tables


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_the_gap_figure_has_a_bar_per_backend_and_flaw_and_the_papers_band():
    external = {"solve": 0.95, "VAVR": 0.9, "IAIR": 0.9, **dict.fromkeys(FLAWS, 0.5)}
    _, gap, _ = report_tables(external={("gsm8k", "http"): external})
    fig = plots.gap_bars(gap, PAPER_GAP_RANGE)
    synthetic, gsm8k = fig.axes
    # synthetic: the outcome and process views (the hand tables have no seen view), 5 slots (four flaws and "all")
    assert len(synthetic.patches) == 2 * 5 and len(gsm8k.patches) == 5
    heights = sorted(p.get_height() for p in gsm8k.patches)
    assert heights == pytest.approx([0.45] * 5)  # 0.95 - 0.50
    labels = [t.get_text() for t in synthetic.get_legend().get_texts()]
    assert any(label.startswith("paper, frontier models") for label in labels)
    band = [c for c in synthetic.collections if c.get_label().startswith("paper")][0]
    ys = band.get_paths()[0].vertices[:, 1]
    assert (ys.min(), ys.max()) == pytest.approx(PAPER_GAP_RANGE)


def test_the_probe_figure_marks_the_papers_accuracy_and_bound(tmp_path):
    fig = plots.probe_lines(probes_table(), PAPER_PROBE)
    assert len(fig.axes) == 2  # outcome and process members
    levels = {line.get_ydata()[0] for line in fig.axes[0].get_lines() if line.get_linestyle() == ":"}
    assert levels == {0.89, 0.5}
    save_figure(fig, tmp_path / "probes.png")
    assert (tmp_path / "probes.png").read_bytes()[:4] == b"\x89PNG"


def test_the_patching_figure_shows_answer_and_control_and_the_papers_rates():
    fig = plots.patching_lines(patching_table(), PAPER_FLIP_RATES)
    (ax,) = fig.axes
    means = {line.get_label(): line for line in ax.get_lines() if line.get_label().endswith("(mean)")}
    assert set(means) == {"answer (mean)", "control (mean)"}
    assert np.allclose(means["answer (mean)"].get_ydata(), [0.3 * 0.8, 0.6 * 0.8, 0.9 * 0.8], atol=0.03)
    stars = [line for line in ax.get_lines() if line.get_marker() == "*"]
    assert sorted(float(s.get_ydata()[0]) for s in stars) == pytest.approx([0.522, 0.556, 0.805])
    assert [t.get_text() for t in ax.get_xticklabels()][-1] == "all"


def test_the_figures_draw_from_the_pipelines_own_tables(tmp_path):
    ev = evidence()
    for name, fig in {
        "gap": plots.gap_bars(ev.gap, PAPER_GAP_RANGE),
        "probes": plots.probe_lines(ev.probes, PAPER_PROBE),
        "patching": plots.patching_lines(ev.patching, PAPER_FLIP_RATES),
    }.items():
        save_figure(fig, tmp_path / f"{name}.png")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gap.png", "patching.png", "probes.png"]
