"""Paper 01's rehearsal: what it cuts from the paper block, and fixture files in the real formats of its sources
(the CIFAR-10 python archive, shared with paper 04; Imagenette's 160 px JPEG archive; the FID Inception-v3
weights of pytorch-fid, at their real shapes)."""

from __future__ import annotations

import gzip
import io
import pickle
import tarfile

import numpy as np

from neurips26.common.rehearsal import Plan, largest

CIFAR_BATCHES = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
CIFAR_BASE = 64  # images per batch file at items=1: 320 training images (paper 04's N) and 64 test images
CIFAR_CLASSES = [b"airplane", b"automobile", b"bird", b"cat", b"deer", b"dog", b"frog", b"horse", b"ship", b"truck"]
IMAGENETTE_CLASSES = [
    "n01440764",
    "n02102040",
    "n02979186",
    "n03000684",
    "n03028079",
    "n03394916",
    "n03417042",
    "n03425413",
    "n03445777",
    "n03888605",
]
IMAGENETTE_BASE = {"train": 13, "val": 2}  # images per class and split at items=1 (130 train: n_train is 128)
# the representative regimes: one per architecture class and per downloaded reader: the U-Net on CIFAR-10, the
# patch-16 transformer on the largest images (Imagenette at 64 px) and the MLP on the widest toy (D = 512); the
# patch-4 transformer on CIFAR-10 is the same JiT class at the same image size as the U-Net's
REGIMES = (("cifar10", "unet_tiny"), ("imagenette64", "jit_tiny_bn"), ("toy_D512", "mlp_toy"))


def representative_regimes(regimes: list[dict]) -> list[dict]:
    return [r for r in regimes if (r["dataset"], r["arch"]) in REGIMES]


def _group(wc: dict) -> int:
    """The seeds of the job's group (its `seeds` wildcard: 2, or 0-1-2)."""
    return len(str(wc["seeds"]).split("-"))


def _toy(cfg: dict, wc: dict, work) -> float:
    data = cfg["datasets"][wc["dataset"]]
    return work(data) if data["kind"] == "toy" else 1


def _evaluate_work(cfg: dict, wc: dict) -> float:
    """Forward passes per seed of the job's group: the cell's model on n_test images at every t of the grid, and
    for an image set the feature net on the samples and the n_train training images (FD proxy), plus, where true
    FID is configured, Inception-v3 on the samples. Each forward counts one unit, so with true FID on at paper
    scale (an Inception forward at 299 px is far heavier than the tiny models') the ratio is a lower bound."""
    from neurips26.pred_loss_space.experiment import uses_inception

    data = cfg["datasets"][wc["dataset"]]
    forwards = cfg["evaluate"]["n_test"] * len(cfg["evaluate"]["t_grid"])
    if data["kind"] != "toy":
        forwards += cfg["sample"]["n"] + data["n_train"]
    if uses_inception(cfg, wc["dataset"]):
        forwards += cfg["sample"]["n"]
    return _group(wc) * forwards


PLAN = Plan(
    budgets={
        # the least the FD proxy's reference set takes: 2 x its 64-d features (experiment.check_config)
        "datasets.cifar10.n_train": 128,
        "datasets.imagenette64.n_train": 128,
        "datasets.toy_D512.n_train": 256,
        "datasets.toy_D512.n_test": 64,
        "datasets.toy_D16.n_train": 256,
        "datasets.toy_D16.n_test": 64,
        "train.steps": 2,
        "train.batch": 8,
        "train.checkpoint_every": 1,
        "sample.n": 128,  # the least experiment.check_config accepts: 2 x the 64-d features of the FD proxy
        "sample.steps": 2,
        "evaluate.t_grid": lambda grid: [grid[0], grid[-1]],
        "evaluate.n_test": 32,
        # true FID needs sample.n >= 2 x 2048 samples through Inception-v3 at 299 px (the covariance's rank):
        # about 1,000 s of a 2-core CPU per evaluate job, 10x the rehearsal's budget for this paper; its weights
        # and reader are checked by tests/test_pred_loss_space_rehearsal.py on the fixture file instead
        "evaluate.inception_fid": False,
        "features.steps": 2,
        "features.batch": 8,
    },
    sweeps={
        "seeds": largest,
        "preds": largest,
        "losses": largest,
        "regimes": representative_regimes,
    },
    micro_batch=("train.batch", "features.batch"),
    shapes={},
    fixture_paths={},
    work={
        # the toy's generated points; an image set decodes its whole archive at both scales (the fixture archive
        # is smaller than the real one: its size is not a budget) and keeps n_train of it
        "pred_loss_space_data": lambda cfg, wc: _toy(cfg, wc, lambda d: d["n_train"] + d["n_test"]),
        # the feature classifier's examples through forward and backward
        "pred_loss_space_features": lambda cfg, wc: cfg["features"]["steps"] * cfg["features"]["batch"],
        # examples through forward and backward, per seed of the job's group (trained together)
        "pred_loss_space_train": lambda cfg, wc: _group(wc) * cfg["train"]["steps"] * cfg["train"]["batch"],
        # model evaluations of the Heun sampler (two per step, the last step Euler) per sample and seed
        "pred_loss_space_sample": lambda cfg, wc: _group(wc) * cfg["sample"]["n"] * (2 * cfg["sample"]["steps"] - 1),
        "pred_loss_space_evaluate": _evaluate_work,
        # reads the cut budgets as numbers to print: its cost is reading small tables
        "pred_loss_space_report": lambda cfg, wc: 1,
    },
    not_rehearsed={
        "pred_loss_space_fid_reference": (
            "true FID is off in the rehearsal (evaluate.inception_fid: false), so neither the Inception statistics"
            " of the training images nor the download of pytorch-fid's Inception-v3 weights runs: 4096 Inception"
            " forwards at 299 px take about 17 min on 2 cores; the weights (the fixture at the real file's shapes,"
            " loaded strictly) and their forward at 299 px are tested by tests/test_pred_loss_space_rehearsal.py"
        ),
    },
    note=(
        "2 steps of training and of the feature classifier (micro-batch 8), 2 sampling steps, the x-pred x-loss"
        " cell of seed 2 on CIFAR-10 (unet_tiny), Imagenette-64 (jit_tiny_bn) and the D = 512 toy, 128 samples"
        " and no true FID (4096 Inception-v3 forwards, about 1,000 s on 2 cores); every width, depth, patch,"
        " image size and feature dimension is the paper's"
    ),
)


DATA_GROWTH: dict[str, int] = {}  # data and fid_reference grow linearly with the images read


def cifar10_archive(items: int = 1, seed: int = 0) -> bytes:
    """The CIFAR-10 python archive (cifar-10-python.tar.gz): cifar-10-batches-py/ with data_batch_1..5 and
    test_batch (Python pickles of {b'batch_label', b'labels', b'data' (N, 3072) uint8, b'filenames'}),
    batches.meta and readme.html, `CIFAR_BASE * items` images per batch."""
    rng = np.random.default_rng(seed)
    n = CIFAR_BASE * items
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:

        def add(name: str, payload: bytes) -> None:
            info = tarfile.TarInfo(f"cifar-10-batches-py/{name}")
            info.size, info.mtime = len(payload), 0
            archive.addfile(info, io.BytesIO(payload))

        for index, name in enumerate(CIFAR_BATCHES):
            labels = [int(label) for label in rng.integers(0, 10, n)]
            # smooth colour fields (a low-resolution draw upsampled 4x) rather than white noise, as photos are
            coarse = rng.integers(0, 256, size=(n, 3, 8, 8), dtype=np.uint8)
            data = np.kron(coarse, np.ones((4, 4), dtype=np.uint8)).reshape(n, 3072)
            label = "testing batch 1 of 1" if name == "test_batch" else f"training batch {index + 1} of 5"
            batch = {
                b"batch_label": label.encode(),
                b"labels": labels,
                b"data": data,
                b"filenames": [f"fixture_{index}_{i}.png".encode() for i in range(n)],
            }
            add(name, pickle.dumps(batch, protocol=2))
        meta = {b"num_cases_per_batch": n, b"label_names": CIFAR_CLASSES, b"num_vis": 3072}
        add("batches.meta", pickle.dumps(meta, protocol=2))
        add("readme.html", b"<meta HTTP-EQUIV='REFRESH' content='0; url=http://www.cs.toronto.edu/~kriz/cifar.html'>")
    return gzip.compress(buffer.getvalue(), mtime=0)  # a fixed gzip header: the same bytes on every build


def _jpeg(rng: np.random.Generator, size: tuple[int, int]) -> bytes:
    from PIL import Image

    coarse = rng.integers(0, 256, size=(size[1] // 16 + 1, size[0] // 16 + 1, 3), dtype=np.uint8)
    image = Image.fromarray(coarse).resize(size, Image.BILINEAR)
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=90)
    return buffer.getvalue()


def imagenette_archive(items: int = 1, seed: int = 0) -> bytes:
    """fast.ai's imagenette2-160.tgz: imagenette2-160/{train,val}/<wnid>/<name>.JPEG (RGB JPEGs with a 160 px
    shorter side, landscape and portrait) and noisy_imagenette.csv."""
    rng = np.random.default_rng(seed)
    rows = ["path,noisy_labels_0,noisy_labels_1,noisy_labels_5,noisy_labels_25,noisy_labels_50,is_valid"]
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:

        def add(name: str, payload: bytes) -> None:
            info = tarfile.TarInfo(f"imagenette2-160/{name}")
            info.size, info.mtime = len(payload), 0
            archive.addfile(info, io.BytesIO(payload))

        for split, per_class in IMAGENETTE_BASE.items():
            for wnid in IMAGENETTE_CLASSES:
                for i in range(per_class * items):
                    size = (int(rng.integers(160, 240)), 160) if i % 2 == 0 else (160, int(rng.integers(160, 240)))
                    name = f"{split}/{wnid}/{wnid}_{i:05d}.JPEG"
                    add(name, _jpeg(rng, size))
                    rows.append(f"{name},{wnid},{wnid},{wnid},{wnid},{wnid},{split == 'val'}")
        add("noisy_imagenette.csv", ("\n".join(rows) + "\n").encode())
    return gzip.compress(buffer.getvalue(), mtime=0)


def inception_weights(seed: int = 0) -> bytes:
    """pytorch-fid's pt_inception-2015-12-05-6726825d.pth in its format: the FID Inception-v3's state dict at its
    real shapes (about 95 MB of float32), in torch's legacy (pre-zip) serialization and without BatchNorm's
    num_batches_tracked, as the 2019 file; weights drawn from the seed (features are finite, not meaningful)."""
    import torch

    from neurips26.pred_loss_space.inception import FIDInceptionV3

    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = FIDInceptionV3()
    state = {k: v for k, v in model.state_dict().items() if not k.endswith("num_batches_tracked")}
    buffer = io.BytesIO()
    torch.save(state, buffer, _use_new_zipfile_serialization=False)
    return buffer.getvalue()


def fixtures(items: int = 1) -> dict[str, bytes]:
    """Registry path -> bytes: CIFAR-10 (folder `cifar10`, shared with paper 04), Imagenette and the Inception
    weights (folder `pred_loss_space`)."""
    from neurips26.pred_loss_space.experiment import DOWNLOADS, INCEPTION

    return {
        DOWNLOADS["cifar10"]: cifar10_archive(items),
        DOWNLOADS["imagenette"]: imagenette_archive(items),
        INCEPTION: inception_weights(),
    }
