"""Paper 17's rehearsal: what it cuts from the paper block, and fixture files in the real format of its source.

The rehearsal keeps every shape of the paper block (the oil setting's 12 latent dimensions on 12 columns and 64
inducing points, the swiss roll's 1,000 points in 3-D with 2 latent dimensions, the encoder [256, 128, 64], the
summary of 32, 2 samples) and both datasets (the oil archive's reader and the manifold's generator are different
code paths), every compared method, and cuts the budgets: 2 optimizer steps at a minibatch of 64 points (and 128,
the paper's, for the memory extrapolation), 4 predictive and 4 bound samples, a 10 x 10 uncertainty map, 2 PPCA
iterations, the largest seed, and the ablation on the primary dataset (oil) only.

Fixture (`fixtures`): `oil_flow/3PhData.tar.gz`, the three-phase oil-flow archive as Neil Lawrence's group
distributes it: a gzip tar of plain-text matrices at the archive's root, `DataTrn.txt`, `DataTst.txt` and
`DataVdn.txt` (1,000 x 12 each: the 12 gamma-densitometry beams) and their one-hot class labels `DataTrnLbls.txt`,
`DataTstLbls.txt`, `DataVdnLbls.txt` (1,000 x 3: homogeneous, annular, stratified), written as MATLAB's `save
-ascii` writes them (space-separated, `%.7e` in 16 columns). The values are drawn (seeded) from three flow regimes
in [0, 1.2], not the real measurements; paper 17 reads only DataTrn and its labels (gplvm_assvi.data.OIL_FILES).
"""

from __future__ import annotations

import gzip
import io
import tarfile

import numpy as np

from neurips26.common.rehearsal import Plan, largest

from . import experiment
from .data import OIL_SHAPE

OIL_ARCHIVE = "oil_flow/3PhData.tar.gz"  # the registry's folder/name (config/sources.yaml)
OIL_SPLITS = ("DataTrn", "DataTst", "DataVdn")
OIL_CLASSES = 3

PLAN = Plan(
    budgets={
        "train.steps": 2,
        "train.batch": 64,  # points per step: 128 at paper scale, run at 64 and 128
        "evaluate.predictive_samples": 4,
        "evaluate.bound_samples": 4,
        "evaluate.psi_draws": 4,
        "evaluate.grid": 10,
        "pca.iterations": 2,
    },
    sweeps={
        "seeds": largest,
        "dataset_seeds": lambda seeds: {name: largest(s) for name, s in seeds.items()},  # one seed per dataset
        "ablation.datasets": lambda datasets: datasets[:1],  # the primary dataset's (oil) ablation
    },
    micro_batch=("train.batch",),
    shapes={},
    fixture_paths={},
    work={
        # points through the bound per step
        "gplvm_assvi_train": lambda cfg, wc: cfg["train"]["steps"] * cfg["train"]["batch"],
        # per run of the dataset: the predictive and bound samples over every point, plus the uncertainty map's
        # grid points (the cross-check and the dependence on U are a fixed cost per run)
        "gplvm_assvi_evaluate": lambda cfg, wc: (
            len(experiment.methods_of(cfg, wc["dataset"]))
            * len(experiment.seeds_of(cfg, wc["dataset"]))
            * (
                experiment.data_shape(cfg["datasets"][wc["dataset"]])[0]
                * (cfg["evaluate"]["predictive_samples"] + cfg["evaluate"]["bound_samples"])
                + cfg["evaluate"]["grid"] ** 2
            )
        ),
        # EM iterations over the dataset
        "gplvm_assvi_pca": lambda cfg, wc: cfg["pca"]["iterations"],
        # renders the tables and figures it is given: the same work whatever the budgets (it carries them as text)
        "gplvm_assvi_report": lambda cfg, wc: 1,
    },
    note=(
        "2 steps at 64 points (and 128), 4 predictive and bound samples, a 10 x 10 map, 2 PPCA iterations; seed 4,"
        " the ablation on oil only; both datasets, every method and every shape the paper's"
    ),
)
DATA_GROWTH: dict[str, tuple[int, int]] = {}  # the archive is read whole: linear, and the fixture has the real rows


def oil_matrices(rows: int = OIL_SHAPE[0], columns: int = OIL_SHAPE[1], seed: int = 0) -> tuple[np.ndarray, ...]:
    """(data (rows, columns), labels (rows, 3) one-hot): points of three flow regimes, each a smooth function of two
    flow fractions plus noise, in [0, 1.2] as the beams' readings are. Seeded."""
    rng = np.random.default_rng(seed)
    label = rng.integers(0, OIL_CLASSES, rows)
    fractions = rng.uniform(0, 1, size=(rows, 2))
    beams = np.linspace(0, 1, columns)
    shift = np.array([0.0, 0.35, 0.7])[label][:, None]  # each regime's profile across the beams
    data = 0.3 + 0.5 * fractions[:, :1] + 0.25 * fractions[:, 1:] * np.cos(np.pi * (beams[None] + shift))
    data = np.clip(data + 0.02 * rng.standard_normal((rows, columns)), 0.0, 1.2)
    return data, np.eye(OIL_CLASSES)[label]


def _matlab_ascii(array: np.ndarray) -> bytes:
    text = io.StringIO()
    np.savetxt(text, array, fmt="%16.7e", delimiter="")
    return text.getvalue().encode()


def oil_archive(rows: int = OIL_SHAPE[0], columns: int = OIL_SHAPE[1], labels: int = OIL_CLASSES,
                drop: str | None = None) -> bytes:  # fmt: skip
    """The archive's bytes (module docstring): `rows` points per split; `columns`, `labels` (one-hot columns kept)
    and `drop` (a file left out) make the malformed archives the reader must refuse."""
    files = {}
    for i, split in enumerate(OIL_SPLITS):
        data, onehot = oil_matrices(rows, columns if split == "DataTrn" else OIL_SHAPE[1], seed=i)
        files[f"{split}.txt"] = _matlab_ascii(data)
        files[f"{split}Lbls.txt"] = _matlab_ascii(onehot[:, :labels] if split == "DataTrn" else onehot)
    out = io.BytesIO()
    # mtime 0 in the gzip header and every member: the same bytes on every build
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as zipped, tarfile.open(fileobj=zipped, mode="w") as tar:
        for name in sorted(files):
            if name == drop:
                continue
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(files[name]), 0, 0o644
            tar.addfile(info, io.BytesIO(files[name]))
    return out.getvalue()


def fixtures(items: int = 1) -> dict[str, bytes]:
    """Registry path -> bytes: the oil-flow archive with OIL_SHAPE's 1,000 points per split (x `items`)."""
    return {OIL_ARCHIVE: oil_archive(rows=OIL_SHAPE[0] * items)}
