"""The image datasets of the BIRD experiments by kind (`DATASETS`, `load_dataset`): the Toeplitz field, scikit-learn
digits at 16 px, MNIST and CIFAR-10 at 32 px (paper scale), each with its normalisation record. The loaders
import torch (resizing) and the archive readers, which is why they are not in `data.py`."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field

import numpy as np

from neurips26.bird.data import check_standardised, toeplitz_field


@dataclass(frozen=True)
class ImageSet:
    """Train and held-out images (float32, (N, C, H, W)) and their metadata (parameters, normalisation)."""

    train: np.ndarray
    heldout: np.ndarray
    meta: dict = field(default_factory=dict)


def _toeplitz(
    n_train: int = 8192, n_heldout: int = 4096, size: int = 16, alpha: float = 1.7, sigma2: float = 1.0, seed: int = 0
) -> ImageSet:
    """n_train + n_heldout fields from one seed; the first n_train are the training set."""
    if n_train < 1 or n_heldout < 1:
        raise ValueError(f"need n_train >= 1 and n_heldout >= 1, got {n_train} and {n_heldout}")
    x = toeplitz_field(n_train + n_heldout, size=size, alpha=alpha, sigma2=sigma2, seed=seed)
    train, heldout = x[:n_train], x[n_train:]
    meta = {
        "kind": "toeplitz",
        "params": {
            "n_train": n_train,
            "n_heldout": n_heldout,
            "size": size,
            "alpha": alpha,
            "sigma2": sigma2,
            "seed": seed,
        },
        "normalisation": check_standardised(train, "toeplitz train", kind="field", sigma2=sigma2),
    }
    return ImageSet(train, heldout, meta)


def _digits16(n_train: int = 1500, seed: int = 0) -> ImageSet:
    """scikit-learn digits at 16x16 in [-1, 1] (neurips26.common.digits); the held-out set is the rest (297)."""
    from neurips26.common.digits import digits16

    train, _, heldout, _ = digits16(seed=seed, n_train=n_train)
    meta = {
        "kind": "digits16",
        "params": {"n_train": n_train, "seed": seed},
        "normalisation": check_standardised(train, "digits16 train", kind="image"),
    }
    return ImageSet(train, heldout, meta)


def _resize32(images: np.ndarray) -> np.ndarray:
    """Bilinear resize of (N, C, h, w) images to 32 x 32 (the authors' torchvision Resize(32))."""
    import torch
    import torch.nn.functional as F

    return F.interpolate(
        torch.from_numpy(np.ascontiguousarray(images, dtype=np.float32)),
        size=(32, 32),
        mode="bilinear",
        align_corners=False,
    ).numpy()


def _mnist(paths: list[str]) -> ImageSet:
    """MNIST resized to 32 x 32 in [-1, 1] (the authors' k_cal vs k_mem protocol): train 60000, held out the 10000
    test images."""
    from neurips26.common.image_archives import read_idx_images

    by_name = {str(p).rsplit("/", 1)[-1]: p for p in paths}
    split = {}
    for name, key in (("train-images-idx3-ubyte.gz", "train"), ("t10k-images-idx3-ubyte.gz", "heldout")):
        if name not in by_name:
            raise ValueError(f"MNIST file {name} is not among the inputs {paths}")
        images = read_idx_images(by_name[name])[:, None] / 127.5 - 1.0
        split[key] = np.clip(_resize32(images), -1.0, 1.0)
    meta = {
        "kind": "mnist",
        "params": {"size": 32},
        "normalisation": check_standardised(split["train"], "mnist train", kind="image"),
    }
    return ImageSet(split["train"], split["heldout"], meta)


def _cifar10(paths: list[str]) -> ImageSet:
    """CIFAR-10 in [-1, 1] (paper Fig. 2(e)): train 50000, held out the 10000 test images."""
    from neurips26.common.image_archives import cifar10_from_archive

    x_train, _, x_test, _ = cifar10_from_archive(str(paths[0]))
    meta = {
        "kind": "cifar10",
        "params": {"size": 32},
        "normalisation": check_standardised(x_train, "cifar10 train", kind="image"),
    }
    return ImageSet(x_train, x_test, meta)


DATASETS = {"toeplitz": _toeplitz, "digits16": _digits16, "mnist": _mnist, "cifar10": _cifar10}


def load_dataset(kind: str, **params) -> ImageSet:
    """The data set `kind` (a key of DATASETS) built with `params` (that loader's keywords; defaults otherwise)."""
    if kind not in DATASETS:
        raise ValueError(f"unknown dataset {kind!r}; allowed: {sorted(DATASETS)}")
    loader = DATASETS[kind]
    accepted = set(inspect.signature(loader).parameters)
    unknown = sorted(set(params) - accepted)
    if unknown:
        raise ValueError(f"unknown parameters {unknown} for dataset {kind!r}; it takes {sorted(accepted)}")
    return loader(**params)


def load_configured(dataset: dict, seed: int, archives: list[str]) -> ImageSet:
    """The data set of a config entry (`kind` plus that loader's settings; `n_values` is the experiment's, not
    the loader's): the Toeplitz field takes its settings and the seed, digits the seed, MNIST and CIFAR-10 the
    downloaded archives."""
    kind = dataset["kind"]
    if kind == "toeplitz":
        settings = {k: v for k, v in dataset.items() if k not in ("kind", "n_values")}
        return load_dataset(kind, seed=seed, **settings)
    if kind == "digits16":
        return load_dataset(kind, seed=seed)
    return load_dataset(kind, paths=list(archives))
