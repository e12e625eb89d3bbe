"""Figures of paper 15 (softlabel_audit): reliability diagrams and data maps are written as PNGs; empty or
mismatched inputs are refused."""

import numpy as np
import pytest

from neurips26.softlabel_audit import metrics, plots
from neurips26.softlabel_audit.cartography import Cartography

PNG = b"\x89PNG\r\n\x1a\n"


def _bins():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(3), 60)
    return metrics.reliability_bins(p, rng.integers(0, 3, 60), n_bins=5)


def test_reliability_diagrams_write_a_png(tmp_path):
    out = plots.reliability_diagrams({"hard_orig": _bins(), "human_soft": _bins()}, tmp_path / "rel.png", note="sim")
    assert out.read_bytes()[:8] == PNG


def test_cartography_maps_write_a_png(tmp_path):
    rng = np.random.default_rng(1)
    carto = Cartography(rng.random(40), rng.random(40) * 0.4, rng.random(40))
    out = plots.cartography_maps({"a": carto, "b": carto}, rng.random(40), tmp_path / "map.png", max_points=25)
    assert out.read_bytes()[:8] == PNG


def test_empty_or_mismatched_inputs_are_refused_and_leave_no_file(tmp_path):
    with pytest.raises(ValueError, match="at least one condition"):
        plots.reliability_diagrams({}, tmp_path / "rel.png")
    empty = metrics.ReliabilityBins(np.linspace(0, 1, 3), np.zeros(2, int), np.full(2, np.nan), np.full(2, np.nan))
    with pytest.raises(ValueError, match="no items"):
        plots.reliability_diagrams({"x": empty}, tmp_path / "rel.png")
    with pytest.raises(ValueError, match="at least one condition"):
        plots.cartography_maps({}, np.ones(3), tmp_path / "map.png")
    carto = Cartography(np.ones(4), np.zeros(4), np.ones(4))
    with pytest.raises(ValueError, match="3 items"):
        plots.cartography_maps({"a": carto}, np.ones(3), tmp_path / "map.png")
    with pytest.raises(ValueError, match="N >= 1"):
        plots.cartography_maps({"a": carto}, np.ones(0), tmp_path / "map.png")
    assert list(tmp_path.iterdir()) == []
