"""The paper-01 figure functions and the figures script render on a tiny synthetic metrics table
and samples."""

import importlib
import runpy
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch
from matplotlib.figure import Figure

from neurips26.common.io import save_npz
from neurips26.pred_loss_space import evaluation, plots, spaces

ROOT = Path(__file__).resolve().parents[1]
REGIMES = [("digits16", "jit_tiny", False), ("toy_D512", "mlp_toy", True)]
T_GRID = [0.1, 0.3, 0.5, 0.7, 0.9]
TOY_DIM = 8
NOISE = {"p_mean": -0.8, "p_std": 0.8, "t_eps": 0.05, "t_min": 0.001}


def _metrics(rng, seeds=(0, 1)) -> pd.DataFrame:
    frames = []
    t = np.array(T_GRID)
    for dataset, arch, bottleneck in REGIMES:
        for pred in spaces.SPACES:
            for loss in spaces.SPACES:
                for seed in seeds:
                    amp = plots.amplification_curve(pred, t)
                    mse_x = 0.01 * amp**2 * (1 + rng.uniform(size=len(t)))
                    per_t = pd.DataFrame(
                        {
                            "t": t,
                            "mse_x": mse_x,
                            "mse_eps": mse_x * (t / (1 - t)) ** 2,
                            "mse_v": mse_x / (1 - t) ** 2,
                            "amp_x_emp": amp * (1 + 1e-4),
                            "amp_x_theory": amp,
                            "amp_v_emp": 1 / (1 - t),
                            "amp_v_theory": 1 / (1 - t),
                        }
                    )
                    fd = float(rng.uniform(0.5, 50.0))
                    if (dataset, pred, loss, seed) == ("toy_D512", "eps", "eps", 1):
                        fd = float("inf")  # a diverged seed
                    if (dataset, pred, loss) == ("digits16", "eps", "v"):
                        fd = float("nan")  # too few finite samples to score
                    run_level = {
                        "mse": float(mse_x.mean()),
                        "fd": fd,
                        "sw": 0.1,
                        "nonfinite": 0.0,
                        "loss_native_final": 0.1,
                        "loss_x_final": 0.1,
                        "train_seconds": 1.0,
                    }
                    if dataset.startswith("toy_"):
                        run_level["off_manifold"] = 0.01
                    frames.append(
                        evaluation.metrics_frame(
                            per_t,
                            run_level,
                            dataset=dataset,
                            arch=arch,
                            bottleneck=bottleneck,
                            pred=pred,
                            loss=loss,
                            seed=seed,
                        )
                    )
    frame = pd.concat(frames, ignore_index=True)
    frame["git_commit"] = "abc"
    frame["config_hash"] = "def"
    return frame


def _samples(rng, seeds=(0,)) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    projection, _ = np.linalg.qr(rng.normal(size=(TOY_DIM, 2)))
    samples = {}
    for dataset, arch, _ in REGIMES:
        for pred in spaces.SPACES:
            for loss in spaces.SPACES:
                for seed in seeds:
                    if dataset.startswith("toy_"):
                        x = (rng.uniform(-0.9, 0.9, size=(64, 2)) @ projection.T).astype(np.float32)
                    else:
                        x = rng.uniform(-1, 1, size=(20, 1, 16, 16)).astype(np.float32)
                    x[3] = np.nan  # one bad sample in every run
                    if dataset.startswith("toy_") and (pred, loss) == ("v", "v"):
                        x[:5] *= 100.0  # finite but far off the axes
                    if (pred, loss) == ("eps", "x"):
                        x[:] = np.inf  # a run that diverged altogether
                    samples[f"{dataset}/{arch}/{pred}x{loss}/s{seed}"] = x
    return samples, {"toy_D512": projection}


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture(scope="module")
def metrics():
    return _metrics(np.random.default_rng(1))


def _saves(fig: Figure, tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.png"
    plots.save_figure(fig, path, dpi=40)  # the script's dpi 120 is exercised by test_figures_script
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_numpy_formulas_match_spaces():
    t = np.linspace(0.0, 1.0, 101)
    tt = torch.from_numpy(t)
    for space in spaces.SPACES:
        np.testing.assert_allclose(plots.loss_weight_curve(space, t, 0.05), spaces.loss_weight(space, tt, 0.05).numpy())
        np.testing.assert_allclose(
            plots.amplification_curve(space, t, 1e-3), spaces.amplification(space, tt, t_min=1e-3).numpy()
        )


def test_logit_normal_density_matches_sample_t():
    t = spaces.sample_t(200_000, -0.8, 0.8, generator=torch.Generator().manual_seed(0)).numpy()
    hist, edges = np.histogram(t, bins=20, range=(0, 1), density=True)
    centres = 0.5 * (edges[1:] + edges[:-1])
    np.testing.assert_allclose(hist, plots.logit_normal_density(centres, -0.8, 0.8), atol=0.05)
    grid = np.linspace(1e-4, 1 - 1e-4, 20001)
    assert np.trapezoid(plots.logit_normal_density(grid, -0.8, 0.8), grid) == pytest.approx(1.0, abs=1e-3)


def test_cell_matrix_averages_seeds(metrics):
    frame = metrics
    rows = plots.run_level(frame, "mse")
    rows = rows[rows["dataset"] == "digits16"]
    matrix = plots.cell_matrix(rows)
    expected = rows[(rows["pred"] == "eps") & (rows["loss"] == "v")]["value"].mean()
    assert matrix[1, 2] == pytest.approx(expected)
    fd = plots.cell_matrix(plots.run_level(frame, "fd")[lambda f: f["dataset"] == "toy_D512"])
    assert np.isinf(fd[1, 1])


@pytest.mark.parametrize("metric,label", [("mse", "denoising MSE (x-space)"), ("fd", "FD (proxy)")])
def test_heatmaps(metrics, tmp_path, metric, label):
    fig = plots.heatmaps(metrics, metric, label)
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 2 * len(REGIMES)  # a panel and a colour bar per regime
    titles = [ax.get_title() for ax in fig.axes]
    assert "digits16/jit_tiny, no bottleneck" in titles
    assert "toy_D512/mlp_toy, bottleneck" in titles
    assert len(fig.axes[0].texts) == 9
    _saves(fig, tmp_path, metric)


def test_heatmaps_without_rows(metrics):
    fig = plots.heatmaps(metrics.iloc[:0], "fd", "FD (proxy)")
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 1


def test_amplification(metrics, tmp_path):
    fig = plots.amplification(metrics, t_eps=0.05)
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 2
    assert all(ax.get_yscale() == "log" for ax in fig.axes)
    _saves(fig, tmp_path, "amplification")


def test_loss_weights(tmp_path):
    fig = plots.loss_weights(t_eps=0.05, p_mean=-0.8, p_std=0.8)
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 2  # the weights and the twin axis of the density
    _saves(fig, tmp_path, "loss_weights")


def test_sample_grid(rng, tmp_path):
    samples, projections = _samples(rng, seeds=(1, 0))
    fig = plots.sample_grid(samples, projections)
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 9 * len(REGIMES)
    toy_axes = [ax for ax in fig.axes if ax.collections]
    assert len(toy_axes) == 8  # the all-infinite cell draws nothing
    assert toy_axes[0].get_xlim() == pytest.approx((-1.2, 1.2))
    assert sum(1 for ax in fig.axes if ax.images) == 9
    notes = [text.get_text() for ax in fig.axes for text in ax.texts]
    assert notes.count("1 non-finite") == 15
    assert "1 non-finite, 4 outside" in notes
    assert "64 non-finite" in notes and "20 non-finite" in notes
    _saves(fig, tmp_path, "samples")


def test_image_mosaic_skips_nothing_it_is_not_given():
    images = np.arange(3 * 16 * 16, dtype=float).reshape(3, 1, 16, 16)
    mosaic = plots.image_mosaic(images)
    assert mosaic.shape == (64, 64)
    np.testing.assert_array_equal(mosaic[:16, 16:32], images[1, 0])
    assert np.isnan(mosaic[16:, :]).all()


def test_parse_run():
    assert plots.parse_run("toy_D512/mlp_toy/xxeps/s2") == {
        "dataset": "toy_D512",
        "arch": "mlp_toy",
        "pred": "x",
        "loss": "eps",
        "seeds": [2],
    }
    assert plots.parse_run("digits16/jit_tiny_bn/vxx/s0-1-2")["seeds"] == [0, 1, 2]
    assert plots.parse_run("digits16/jit_tiny_bn/vxx/s0")["pred"] == "v"
    with pytest.raises(ValueError):
        plots.parse_run("digits16/jit_tiny/yxx/s0")


def test_plots_do_not_import_torch(monkeypatch):
    """The figures job runs in the report environment, which has no torch: import the module afresh with
    torch made unimportable (a None entry in sys.modules makes `import torch` raise ImportError)."""
    for name in [m for m in sys.modules if m == "neurips26" or m.startswith("neurips26.")]:
        monkeypatch.delitem(sys.modules, name)
    for name in [m for m in sys.modules if m == "torch" or m.startswith("torch.")]:
        monkeypatch.setitem(sys.modules, name, None)
    fresh = importlib.import_module("neurips26.pred_loss_space.plots")
    assert fresh is not plots
    assert "neurips26.pred_loss_space.spaces" not in sys.modules


def test_figures_script(metrics, rng, tmp_path):
    frame = metrics
    results = tmp_path / "results" / "smoke" / "pred_loss_space"
    metrics_path = results / "metrics.parquet"
    results.mkdir(parents=True)
    frame.to_parquet(metrics_path)
    samples, projections = _samples(rng, seeds=(0, 1))
    save_npz(
        results / "data" / "toy_D512.npz",
        projection=projections["toy_D512"],
        x_train=np.zeros((4, TOY_DIM), dtype=np.float32),
    )
    runs, paths = [], []  # one job per cell holds both seeds (seeds_per_job 2), as the sample rule writes it
    for cell in sorted({run.rsplit("/", 1)[0] for run in samples}):
        path = results / "runs" / cell / "s0-1" / "samples.npz"
        save_npz(path, seeds=np.array([0, 1]), samples=np.stack([samples[f"{cell}/s0"], samples[f"{cell}/s1"]]))
        runs.append(f"{cell}/s0-1")
        paths.append(str(path))
    names = ("mse_heatmaps", "fd_heatmaps", "amplification", "loss_weights", "samples")
    outputs = {name: str(results / "figures" / f"{name}.png") for name in names}
    smk = SimpleNamespace(
        input=SimpleNamespace(metrics=str(metrics_path), samples=paths),
        output=SimpleNamespace(**outputs),
        params=SimpleNamespace(noise=NOISE, runs=runs),
        log=[str(tmp_path / "figures.log")],
        rule="pred_loss_space_figures",
        wildcards={},
        threads=1,
    )
    runpy.run_path(str(ROOT / "scripts" / "pred_loss_space" / "figures.py"), init_globals={"snakemake": smk})
    for path in outputs.values():
        assert Path(path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "wrote 5 figures (samples of 18 cells, from 18 jobs)" in (tmp_path / "figures.log").read_text()
