"""Paper 04's experiment design from config/bird.yaml: windows, the SNR grid, the runs, and the checks of the
config that its schema cannot express (run when the workflow is parsed, before any job). Torch-free, and
numpy is imported only where an array is made, so that parsing the workflow does not pay for it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

FULL = "full"  # the window covering the whole image: the ideal empirical denoiser
LINEAR = "linear"  # the optimal linear (Wiener) denoiser, a baseline in the calibration tables
IMAGE_SIZE = {"digits16": 16, "mnist": 32, "cifar10": 32}
CHANNELS = {"toeplitz": 1, "digits16": 1, "mnist": 1, "cifar10": 3}
POOL_SIZE = {"digits16": 1500, "mnist": 60000, "cifar10": 50000}  # training images available per kind
DOWNLOADS = {  # kind -> files under resources/ (fetched by rule `download`, pinned in config/sources.yaml)
    "mnist": ["resources/mnist/train-images-idx3-ubyte.gz", "resources/mnist/t10k-images-idx3-ubyte.gz"],
    "cifar10": ["resources/cifar10/cifar-10-python.tar.gz"],
}
RESTRICTIONS = {"local": "k x k window around each pixel", "soft": "k x k window seen through Gaussian noise s"}


def image_size(data: dict) -> int:
    return int(data["size"]) if data["kind"] == "toeplitz" else IMAGE_SIZE[data["kind"]]


def pool_size(data: dict) -> int:
    return int(data["n_train"]) if data["kind"] == "toeplitz" else POOL_SIZE[data["kind"]]


def window_value(label: str) -> int | None:
    """The window of a label: None for "full" (the whole image), else the odd int k."""
    return None if str(label) == FULL else int(label)


def window_k(label: str) -> int:
    """k for tables: 0 stands for the full image (and the linear baseline)."""
    return 0 if str(label) in (FULL, LINEAR) else int(label)


def local_windows(labels: list) -> list[str]:
    """The local (not full) window labels in increasing k."""
    return sorted((str(w) for w in labels if str(w) != FULL), key=int)


def ordered_windows(labels: list) -> list[str]:
    """Window labels by increasing k, the full image last."""
    return local_windows(labels) + ([FULL] if FULL in [str(w) for w in labels] else [])


def snr_grid(grid: dict) -> np.ndarray:
    """The config's SNR grid (the `snr` block): log-spaced from min to max."""
    import numpy as np

    return np.logspace(np.log10(grid["min"]), np.log10(grid["max"]), int(grid["count"]))


def soft_noise(restriction: dict) -> float:
    """The soft channel's noise s (the `restriction` block), 0 for hard local windows."""
    return float(restriction.get("s", 0.0)) if restriction["type"] == "soft" else 0.0


def information_runs(cfg: dict) -> list[str]:
    """'{dataset}/N{n}' for every dataset and training-set size."""
    return [f"{name}/N{n}" for name, data in cfg["datasets"].items() for n in data["n_values"]]


def seed_groups(nets: dict) -> list[list[int]]:
    """The network seeds in groups of `seeds_per_job` (the `networks` block): one job trains a group as a
    batched ensemble (training.train_epsilon), in the config's order."""
    seeds, size = [int(s) for s in nets["seeds"]], int(nets["seeds_per_job"])
    return [seeds[i : i + size] for i in range(0, len(seeds), size)]


def seeds_label(seeds: list[int]) -> str:
    """A seed group's path label: '0' for seed 0, '0-1-2' for seeds 0, 1 and 2."""
    return "-".join(str(int(s)) for s in seeds)


def parse_seeds(label: str) -> list[int]:
    """The seeds of a group's label ('0-1-2' -> [0, 1, 2]); a repeated seed is an error."""
    seeds = [int(s) for s in str(label).split("-")]
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seed group {label!r} repeats a seed")
    return seeds


def network_runs(cfg: dict) -> list[str]:
    """'{dataset}/{arch}/N{n}/s{seeds}' for every job of networks trained to compare BIRD with (one job per
    arch and seed group, `seeds` its label: s0, or s0-1-2 for seeds 0, 1, 2 trained as one batched ensemble)."""
    nets = cfg["networks"]
    return [
        f"{nets['dataset']}/{arch}/N{nets['n_train']}/s{seeds_label(group)}"
        for arch in nets["archs"]
        for group in seed_groups(nets)
    ]


def check_config(cfg: dict) -> None:
    """Raise ValueError naming the first inconsistency the schema cannot see."""
    for name, data in cfg["datasets"].items():
        size, pool = image_size(data), pool_size(data)
        too_big = [n for n in data["n_values"] if n > pool]
        if too_big:
            raise ValueError(f"datasets.{name}: N = {too_big} exceeds the {pool} training images available")
        for key in ("windows", "sample_windows"):
            for label in cfg[key] if key == "windows" else cfg["sample"]["windows"]:
                k = window_value(label)
                if k is not None and (k % 2 == 0 or k < 1 or k > size):
                    raise ValueError(f"{key}: window k = {k} must be odd and at most the image size {size} of {name}")
        if data["kind"] == "toeplitz" and not 0 < data["alpha"] <= 2:
            raise ValueError(f"datasets.{name}.alpha = {data['alpha']} must lie in (0, 2]")
    if len(local_windows(cfg["windows"])) < 2:
        raise ValueError("windows: need at least two local windows to locate k_mem and k_cal")
    if cfg["snr"]["min"] >= cfg["snr"]["max"]:
        raise ValueError(f"snr.min = {cfg['snr']['min']} must be below snr.max = {cfg['snr']['max']}")
    unknown = [w for w in cfg["sample"]["windows"] if str(w) not in [str(v) for v in cfg["windows"]]]
    if unknown:
        raise ValueError(f"sample.windows {unknown} are not among windows {cfg['windows']}")
    nets = cfg["networks"]
    if nets["dataset"] not in cfg["datasets"]:
        raise ValueError(f"networks.dataset {nets['dataset']!r} is not under datasets")
    data = cfg["datasets"][nets["dataset"]]
    if nets["n_train"] > pool_size(data):
        raise ValueError(
            f"networks.n_train = {nets['n_train']} exceeds the {pool_size(data)} training images of {nets['dataset']}"
        )
    late = [e for e in nets["train"]["checkpoint_epochs"] if e > nets["train"]["epochs"]]
    if late:
        raise ValueError(f"networks.train.checkpoint_epochs {late} lie after the last epoch {nets['train']['epochs']}")
    if cfg["information"]["n_images"] > min(data_n for d in cfg["datasets"].values() for data_n in d["n_values"]):
        raise ValueError(
            "information.n_images exceeds the smallest N: the evaluation images are drawn from the "
            "training subset (MI is about the training index)"
        )
    too_big = [n for n in cfg["cost"]["n_values"] if n > min(pool_size(d) for d in cfg["datasets"].values())]
    if too_big:
        raise ValueError(f"cost.n_values {too_big} exceed the training images of a dataset")
