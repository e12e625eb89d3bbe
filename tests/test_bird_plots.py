"""The paper-04 (BIRD) figure functions render small synthetic tables, including NaN boundaries, one
dataset, a missing arch and empty tables, and save_figure writes a PNG."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import QuadMesh
from matplotlib.figure import Figure

from neurips26.bird import plots

WINDOWS = [("1", 1), ("3", 3), ("5", 5), ("full", 0)]
SNRS = np.logspace(-2, 3, 6)
EPOCHS = [1, 2, 5, 10]
T_GRID = [0.9, 0.7, 0.5, 0.3, 0.1]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _texts(fig: Figure) -> list[str]:
    return [t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text"))]


def _is_no_data(fig: Figure) -> bool:
    return any("no " in t for t in _texts(fig)) and len(fig.axes) == 1


def _is_axhline(line) -> bool:
    x = np.atleast_1d(line.get_xdata())
    return len(x) == 2 and np.allclose(x, [0, 1])


def _phase(datasets=(("grf16", (16, 64)), ("digits16", (64,)))) -> pd.DataFrame:
    rows = []
    for dataset, ns in datasets:
        for n in ns:
            for window, k in WINDOWS:
                for snr in SNRS:
                    i_gauss = 0.5 * max(k, 8) ** 2 * np.log1p(snr * 0.05)
                    rows.append(
                        dict(
                            dataset=dataset,
                            n_train=n,
                            window=window,
                            k=k,
                            snr=snr,
                            t=float(np.arctan(1 / np.sqrt(snr)) * 2 / np.pi),
                            i_hat=min(i_gauss, np.log(n)) * 0.95,
                            i_gauss=i_gauss,
                            log_n=np.log(n),
                        )
                    )
    return pd.DataFrame(rows)


def _boundary(phase: pd.DataFrame) -> pd.DataFrame:
    rows = phase[["dataset", "n_train", "window", "k"]].drop_duplicates().reset_index(drop=True)
    rows["snr_crit_theory"] = 10.0 ** np.linspace(-1, 4, len(rows))  # the last ones beyond the grid
    rows["snr_crit_emp"] = rows["snr_crit_theory"] * 1.5
    rows.loc[rows["window"] == "1", ["snr_crit_theory", "snr_crit_emp"]] = np.nan  # never memorizes
    return rows


def _kcal(archs=("unet_tiny", "dit_tiny"), settings=(("grf16", 64),)) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for dataset, n in settings:
        for arch in archs:
            for seed in (0, 1):
                for epoch in EPOCHS:
                    for step, t in enumerate(T_GRID):
                        rows.append(
                            dict(
                                dataset=dataset,
                                arch=arch,
                                n_train=n,
                                seed=seed,
                                epoch=epoch,
                                step=step,
                                t=t,
                                k_cal=1 + 10 * t + rng.normal(),
                                k_mem_nats=2 + 8 * t,
                                k_mem_frac=np.nan if t > 0.8 else 1 + 6 * t,  # never reached at high noise
                                best_cos=0.9 - 0.01 * epoch,
                                ideal_cos=0.5 + 0.3 * t,
                                linear_cos=0.7,
                            )
                        )
    return pd.DataFrame(rows)


def test_window_order():
    windows = ["full", "11", "3", "linear", "1", 5]
    assert plots.ordered_windows(windows) == ["1", "3", "5", "11", "full", "linear"]


def test_phase_diagram_panels_and_boundary():
    phase = _phase()
    fig = plots.phase_diagram(phase, _boundary(phase))
    assert isinstance(fig, Figure)
    # 2 datasets x 2 N columns + 1 colour bar; digits16 has no N=16 and says so
    assert len(fig.axes) == 5
    panels = fig.axes[:4]
    assert sum(bool(ax.findobj(QuadMesh)) for ax in panels) == 3
    assert any(t.get_text() == "no data" for t in panels[2].texts)
    assert fig.axes[4].get_ylabel() == "I / log N"
    assert "memorizes where I \u2265 log N" in fig._suptitle.get_text()
    ax = panels[0]
    # theory line skips the NaN window "1": 3 points; empirical markers likewise
    lines = ax.get_lines()
    assert len(lines[0].get_xdata()) == 3 and len(lines[0].get_ydata()) == 3
    assert ax.get_yticklabels()[-1].get_text() == "full"  # full on top
    mesh = ax.findobj(QuadMesh)[0]
    values = mesh.get_array()
    assert values.shape == (len(WINDOWS), len(SNRS))
    assert np.nanmin(values) >= 0.0 and np.nanmax(values) <= 1.0


def test_phase_diagram_without_boundary_and_all_nan():
    phase = _phase((("grf16", (16,)),))
    boundary = _boundary(phase)
    boundary[["snr_crit_theory", "snr_crit_emp"]] = np.nan
    for b in (None, boundary, boundary.iloc[0:0]):
        fig = plots.phase_diagram(phase, b)
        assert len(fig.axes) == 2
        assert fig.axes[0].findobj(QuadMesh)


def test_information_curves_lines():
    fig = plots.information_curves(_phase(), window=5)
    assert len(fig.axes) == 2
    grf = fig.axes[0]
    assert grf.get_xscale() == "log"
    # per N: measured, theory (dashed), log N (dotted) -> 2 N values x 3
    assert len(grf.get_lines()) == 6
    assert sum(line.get_linestyle() == "--" for line in grf.get_lines()) == 2
    assert sum(line.get_linestyle() == ":" for line in grf.get_lines()) == 2
    assert len(fig.axes[1].get_lines()) == 3
    missing = plots.information_curves(_phase(), window="7")
    assert all(any("no data" in t.get_text() for t in ax.texts) for ax in missing.axes)


def test_kcal_vs_kmem_reversed_time_and_lines():
    fig = plots.kcal_vs_kmem(_kcal())
    assert len(fig.axes) == 2
    for ax in fig.axes:
        assert ax.xaxis_inverted()
        assert ax.get_xlim() == (1.0, 0.0)
        lines = ax.get_lines()
        assert len(lines) == len(EPOCHS) + 2
        assert sum(line.get_color() == "black" for line in lines) == 2
    assert "UNet" in fig.axes[0].get_title() and "DiT" in fig.axes[1].get_title()


def test_kcal_missing_arch():
    only_unet = _kcal(archs=("unet_tiny",))
    assert len(plots.kcal_vs_kmem(only_unet).axes) == 1
    fig = plots.kcal_vs_kmem(only_unet, archs=("unet_tiny", "dit_tiny"))
    assert len(fig.axes) == 2
    assert any(t.get_text() == "no data" for t in fig.axes[1].texts)
    assert fig.axes[1].xaxis_inverted()
    # two settings, one arch missing in the second -> a 2 x 2 grid with one 'no data' panel
    mixed = pd.concat([_kcal(), _kcal(archs=("unet_tiny",), settings=(("digits16", 256),))])
    fig = plots.similarity_over_training(mixed)
    assert len(fig.axes) == 4
    no_data = [any(t.get_text() == "no data" for t in ax.texts) for ax in fig.axes]
    assert no_data == [False, False, False, True]


def test_similarity_over_training_lines():
    fig = plots.similarity_over_training(_kcal())
    assert len(fig.axes) == 2
    for ax in fig.axes:
        lines = ax.get_lines()
        assert len(lines) == 6  # 3 similarities x (high, low noise)
        assert sum(line.get_linestyle() == "--" for line in lines) == 3
        assert list(lines[0].get_xdata()) == EPOCHS
        assert ax.get_xscale() == "symlog"
    # only high-noise steps: 3 lines
    high = _kcal()
    fig = plots.similarity_over_training(high[high["t"] >= 0.5])
    assert len(fig.axes[0].get_lines()) == 3


def test_memorization_curves():
    rows = []
    for n in (16, 64, 256):
        for window, k in [("full", 0), ("3", 3), ("7", 7), ("11", 11)]:
            rows.append(
                dict(
                    dataset="grf16",
                    n_train=n,
                    window=window,
                    k=k,
                    fraction_memorized=1.0 if window == "full" else k / (k + n),
                    median_ratio=0.5,
                )
            )
    fig = plots.memorization_curves(pd.DataFrame(rows))
    assert len(fig.axes) == 1
    ax = fig.axes[0]
    lines = ax.get_lines()
    assert len(lines) == 3 + 2  # 3 N values + the 0.9 and 0.1 reference lines
    assert [t.get_text() for t in ax.get_xticklabels()][-1] == "full"
    assert list(lines[0].get_ydata())[-1] == 1.0  # full last
    assert sorted(float(line.get_ydata()[0]) for line in lines[3:]) == [0.1, 0.9]


def test_step_cost():
    rows = [
        dict(dataset="grf16", method=m, n_train=n, seconds_per_image=1e-3 * n * (1 + (m == "ideal (full)")))
        for m in ("bird k=5", "ideal (full)")
        for n in (16, 64, 256)
    ]
    rows += [
        dict(dataset="grf16", method="unet_tiny", n_train=np.nan, seconds_per_image=0.05),
        dict(dataset="grf16", method="dit_tiny", n_train=np.nan, seconds_per_image=0.08),
        dict(dataset="digits16", method="bird k=5", n_train=64, seconds_per_image=0.1),
    ]
    fig = plots.step_cost(pd.DataFrame(rows))
    assert len(fig.axes) == 2
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    lines = ax.get_lines()
    assert len(lines) == 4
    flat = [line for line in lines if _is_axhline(line)]
    assert sorted(float(line.get_ydata()[0]) for line in flat) == [0.05, 0.08]
    # networks only: horizontal lines, no crash
    nets = plots.step_cost(pd.DataFrame(rows[6:8]))
    assert len(nets.axes[0].get_lines()) == 2


def test_sample_grid_rows_clip_and_bound():
    rng = np.random.default_rng(1)
    samples = {
        ("digits16", 64, "5"): rng.uniform(-1, 1, (8, 1, 16, 16)),
        ("toeplitz16", 64, "full"): rng.normal(size=(3, 1, 16, 16)) * 2,
    }
    nearest = {k: v + 0.01 for k, v in samples.items() if k[0] == "digits16"}
    fig = plots.sample_grid(samples, nearest)
    assert len(fig.axes) == 4 * plots.SAMPLES_PER_ROW
    images = [im for ax in fig.axes for im in ax.get_images()]
    assert len(images) == 6 + 6 + 3  # the toeplitz setting has 3 samples and no nearest images
    # digits16 sorts first: on [-1, 1]; the toeplitz field is clipped to [-2.5, 2.5] and says so
    assert images[0].get_clim() == (-1.0, 1.0)
    assert images[-1].get_clim() == (-2.5, 2.5)
    assert np.abs(images[-1].get_array()).max() <= 2.5
    assert "clipped" in fig.axes[2 * plots.SAMPLES_PER_ROW].get_ylabel()
    assert "missing" in [t.get_text() for t in fig.axes[3 * plots.SAMPLES_PER_ROW].texts]
    many = {("grf16", n, w): rng.uniform(-1, 1, (2, 1, 8, 8)) for n in (16, 64) for w in ("1", "3", "5", "full")}
    fig = plots.sample_grid(many, many)
    assert len(fig.axes) == plots.MAX_SAMPLE_ROWS * plots.SAMPLES_PER_ROW
    assert "showing 6 of 8" in fig._suptitle.get_text()
    assert fig.get_size_inches()[1] < 20


def test_sample_grid_rgb():
    rng = np.random.default_rng(2)
    samples = {("cifar", 16, "3"): rng.uniform(-1, 1, (2, 3, 8, 8))}
    fig = plots.sample_grid(samples, samples)
    images = [im for ax in fig.axes for im in ax.get_images()]
    assert len(images) == 4 and images[0].get_array().shape == (8, 8, 3)


@pytest.mark.parametrize(
    "call",
    [
        lambda: plots.phase_diagram(pd.DataFrame(), pd.DataFrame()),
        lambda: plots.phase_diagram(_phase().iloc[0:0], None),
        lambda: plots.information_curves(pd.DataFrame()),
        lambda: plots.kcal_vs_kmem(pd.DataFrame()),
        lambda: plots.kcal_vs_kmem(_kcal().iloc[0:0]),
        lambda: plots.similarity_over_training(pd.DataFrame()),
        lambda: plots.memorization_curves(pd.DataFrame(columns=["dataset", "n_train", "window", "fraction_memorized"])),
        lambda: plots.step_cost(pd.DataFrame()),
        lambda: plots.sample_grid({}, {}),
    ],
)
def test_empty_input_gives_no_data_figure(call):
    fig = call()
    assert isinstance(fig, Figure)
    assert _is_no_data(fig)


def test_save_figure_writes_png(tmp_path):
    phase = _phase((("grf16", (16,)),))
    path = tmp_path / "sub" / "phase.png"
    plots.save_figure(plots.phase_diagram(phase, _boundary(phase)), path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in path.parent.iterdir()] == ["phase.png"]  # no temporary file left
    cost = pd.DataFrame([dict(dataset="grf16", method="unet_tiny", n_train=np.nan, seconds_per_image=np.nan)])
    fig = plots.step_cost(cost)  # all non-finite: a 'no data' panel, still savable
    assert any("no data" in t.get_text() for t in fig.axes[0].texts)
    plots.save_figure(fig, tmp_path / "cost.png")
    assert (tmp_path / "cost.png").stat().st_size > 0
