"""Paper 01's data: 16x16 digits in [-1, 1], JiT's toy (a 2-D manifold embedded in D dimensions) and, at paper
scale, CIFAR-10 and Imagenette from their archives; `make_dataset` builds one by its config entry."""

from __future__ import annotations

import numpy as np

from neurips26.common.digits import digits16
from neurips26.common.image_archives import cifar10_from_archive

TOY_LATENT_DIM = 2
TOY_MAX_NORM = 0.9
TOY_LATENTS = ("moons", "spiral")


def spiral(n: int, rng: np.random.Generator, turns: float = 1.5, noise: float = 0.05) -> np.ndarray:
    """A 2-D Archimedean spiral (radius proportional to angle) with Gaussian noise, as (n, 2)."""
    angle = np.sqrt(rng.uniform(size=n)) * turns * 2 * np.pi
    points = angle[:, None] * np.stack([np.cos(angle), np.sin(angle)], axis=1) / (turns * 2 * np.pi)
    return points + noise * rng.normal(size=(n, 2))


def toy_manifold(dim: int, n_train: int, n_test: int, seed: int = 0, latent: str = "moons") -> dict:
    """JiT's toy: 2-D data (moons or a spiral) embedded in `dim` dimensions by a column-orthonormal P.

    The latent points are standardised per coordinate and scaled so that every point (train and test) has norm
    <= 0.9; P (dim x 2) is the QR factor of a Gaussian matrix drawn from the seed, and x = latent @ P.T.
    Returns x_train, x_test (float32, (n, dim)), projection (P, float64), latent_train and latent_test.
    """
    if dim < TOY_LATENT_DIM:
        raise ValueError(
            f"toy manifold: the ambient dim={dim} is smaller than the latent dimension d={TOY_LATENT_DIM} (D < d)"
        )
    if latent not in TOY_LATENTS:
        raise ValueError(f"toy latent {latent!r} is not one of {TOY_LATENTS}")
    if n_train < 1 or n_test < 1:
        raise ValueError(f"toy manifold needs n_train >= 1 and n_test >= 1, got {n_train} and {n_test}")
    rng = np.random.default_rng(seed)
    projection, upper = np.linalg.qr(rng.normal(size=(dim, TOY_LATENT_DIM)))
    projection = projection * np.sign(np.diag(upper))  # a unique QR: positive diagonal of R
    n = n_train + n_test
    if latent == "moons":
        from sklearn.datasets import make_moons

        points, _ = make_moons(n_samples=n, noise=0.05, random_state=int(rng.integers(2**31)))
    else:
        points = spiral(n, rng)
    points = (points - points.mean(0)) / points.std(0)
    points = points * (TOY_MAX_NORM / np.linalg.norm(points, axis=1).max())
    x = (points @ projection.T).astype(np.float32)
    return {
        "x_train": x[:n_train],
        "x_test": x[n_train:],
        "projection": projection,
        "latent_train": points[:n_train],
        "latent_test": points[n_train:],
    }


def check_images(x: np.ndarray, name: str) -> None:
    """Reject data with NaN/inf or values outside [-1, 1], naming the array and the range found."""
    x = np.asarray(x)
    if x.size == 0:
        raise ValueError(f"{name}: the array is empty")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name}: contains {int((~np.isfinite(x)).sum())} NaN or infinite values")
    low, high = float(x.min()), float(x.max())
    if low < -1.0 or high > 1.0:
        raise ValueError(f"{name}: values must lie in [-1, 1], found min {low:g} and max {high:g}")


def off_manifold_norm(x: np.ndarray, projection: np.ndarray) -> np.ndarray:
    """Per-sample ||(I - P P^T) x||: how far each point lies from the span of the embedding P (D x d)."""
    x = np.asarray(x, dtype=np.float64).reshape(len(x), -1)
    projection = np.asarray(projection, dtype=np.float64)
    residual = x - (x @ projection) @ projection.T
    return np.linalg.norm(residual, axis=1)


def imagenette_from_archive(path: str, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Imagenette (fast.ai's 10 ImageNet classes) from its .tgz, read in place: every JPEG centre-cropped to a
    square, resized to `size` (bilinear), as float32 (N, 3, size, size) in [-1, 1]; the archive's train and
    val folders are the split, labels index the sorted class folders."""
    import io
    import tarfile

    from PIL import Image

    splits: dict[str, tuple[list, list]] = {"train": ([], []), "val": ([], [])}
    with tarfile.open(path, "r:gz") as archive:
        members = [m for m in archive.getmembers() if m.isfile() and m.name.lower().endswith((".jpeg", ".jpg"))]
        classes = sorted({m.name.split("/")[-2] for m in members})
        for member in members:
            parts = member.name.split("/")
            if len(parts) < 3 or parts[-3] not in splits:
                continue
            with Image.open(io.BytesIO(archive.extractfile(member).read())) as image:
                image = image.convert("RGB")
                side = min(image.size)
                left, top = (image.width - side) // 2, (image.height - side) // 2
                image = image.crop((left, top, left + side, top + side)).resize((size, size), Image.BILINEAR)
                array = np.asarray(image, dtype=np.float32).transpose(2, 0, 1) / 127.5 - 1.0
            splits[parts[-3]][0].append(array)
            splits[parts[-3]][1].append(classes.index(parts[-2]))
    if not splits["train"][0] or not splits["val"][0]:
        raise ValueError(f"{path} has no train/ and val/ JPEG folders: not the Imagenette archive")
    out = []
    for split in ("train", "val"):
        out += [np.stack(splits[split][0]).astype(np.float32), np.asarray(splits[split][1], dtype=np.int64)]
    return tuple(out)


DATA_SEED = 0  # the split and the toy embedding are fixed, whatever the training seed


def make_dataset(cfg: dict, archives: list[str] = ()) -> dict[str, np.ndarray]:
    """The arrays of one dataset by its config entry's `kind`: the toy manifold, digits16, or (paper scale)
    CIFAR-10 / Imagenette from their archive, of which a fixed subset of `n_train` training images is kept.
    Image sets hold x_train, y_train, x_test, y_test, the toy also its embedding and latents; both checked."""
    if cfg["kind"] == "toy":
        toy = toy_manifold(cfg["dim"], cfg["n_train"], cfg["n_test"], seed=DATA_SEED)
        arrays = {key: np.asarray(value) for key, value in toy.items()}
    else:
        if cfg["kind"] == "digits16":
            x_train, y_train, x_test, y_test = digits16(seed=DATA_SEED, n_train=cfg["n_train"])
        else:
            if cfg["kind"] == "cifar10":
                x_train, y_train, x_test, y_test = cifar10_from_archive(archives[0])
            else:
                x_train, y_train, x_test, y_test = imagenette_from_archive(archives[0], cfg["image_size"])
            if len(x_train) < cfg["n_train"]:
                raise ValueError(f"n_train = {cfg['n_train']}, but the archive's training split has {len(x_train)}")
            keep = np.sort(np.random.default_rng(DATA_SEED).permutation(len(x_train))[: cfg["n_train"]])
            x_train, y_train = x_train[keep], y_train[keep]  # a fixed subset of the archive's training split
        arrays = {"x_train": x_train, "y_train": y_train, "x_test": x_test, "y_test": y_test}
    return arrays
