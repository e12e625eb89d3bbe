"""Paper 04's rehearsal: what it cuts from the paper block, and fixture files in the real formats of its sources
(MNIST's IDX files, built by paper 18's rehearsal, and the CIFAR-10 python archive, built by paper 01's)."""

from __future__ import annotations

from neurips26.amortized_ot.rehearsal import mnist_files
from neurips26.common.rehearsal import Plan, largest
from neurips26.pred_loss_space.rehearsal import cifar10_archive

N_REHEARSAL = 256  # |D| of every information, sample and cost job: within the fixtures' 384 MNIST and 320 CIFAR-10

PLAN = Plan(
    budgets={
        "datasets.toeplitz32.n_train": N_REHEARSAL,
        "datasets.toeplitz32.n_heldout": 64,
        "datasets.toeplitz32.n_values": [N_REHEARSAL],
        "datasets.mnist.n_values": [N_REHEARSAL],
        "datasets.cifar10.n_values": [N_REHEARSAL],
        "snr.count": 3,
        "information.n_images": 8,
        "sample.n": 2,
        "sample.steps": 2,
        "networks.n_train": 64,
        "networks.train.epochs": 1,
        "networks.train.batch": 8,
        "networks.train.checkpoint_epochs": [1],
        "networks.calibrate.trajectories": 1,
        "networks.calibrate.steps": 2,
        "networks.early_steps": 2,
        "cost.n_values": [N_REHEARSAL],
        "cost.n_images": 2,
        "cost.repeats": 1,
    },
    sweeps={"networks.seeds": largest},
    micro_batch=("networks.train.batch",),
    shapes={},
    fixture_paths={},
    work={
        # generated Toeplitz fields (train and held out); MNIST and CIFAR-10 read their whole pool at both scales
        "bird_data": lambda cfg, wc: _toeplitz(cfg, wc, lambda d: d["n_train"] + d["n_heldout"]),
        # per window: the patch covariance's eigenvalues (the same at both scales, counted as 1) and I_G at the 241
        # curve SNRs, the config's grid and each N's critical SNR (so the ratio is close to 1)
        "bird_theory": lambda cfg, wc: (
            len(cfg["windows"]) * (1 + 241 + cfg["snr"]["count"] + len(cfg["datasets"][wc["dataset"]]["n_values"]))
        ),
        # posteriors of n_images noisy images over the N training images, at every SNR and window; N the dataset's
        # largest (the rehearsal's one N stands for the paper's heaviest job of the rule)
        "bird_information": lambda cfg, wc: (
            cfg["information"]["n_images"] * cfg["snr"]["count"] * len(cfg["windows"]) * _largest_n(cfg, wc)
        ),
        # n samples x (steps posteriors + the nearest-neighbour search) over the N training images, per window
        "bird_sample": lambda cfg, wc: (
            cfg["sample"]["n"] * (cfg["sample"]["steps"] + 1) * len(cfg["sample"]["windows"]) * _largest_n(cfg, wc)
        ),
        # examples through forward and backward: epochs x n_train per seed of the job's group
        "bird_train": lambda cfg, wc: _group(wc) * cfg["networks"]["train"]["epochs"] * cfg["networks"]["n_train"],
        # per seed and kept checkpoint: trajectories x DDIM steps, each comparing the network with BIRD's
        # posterior over the n_train training images at every window
        "bird_calibrate": lambda cfg, wc: (
            _group(wc)
            * len(set(cfg["networks"]["train"]["checkpoint_epochs"]))
            * cfg["networks"]["calibrate"]["trajectories"]
            * cfg["networks"]["calibrate"]["steps"]
            * len(cfg["windows"])
            * cfg["networks"]["n_train"]
        ),
        # BIRD (window and full image) over each N, repeats x n_images, plus the networks' forward passes (warm-up
        # and repeats, one unit per image: minor next to the sum of the N)
        "bird_cost": lambda cfg, wc: (
            cfg["cost"]["n_images"]
            * (
                2 * cfg["cost"]["repeats"] * sum(cfg["cost"]["n_values"])
                + (cfg["cost"]["repeats"] + 1) * len(cfg["networks"]["archs"])
            )
        ),
        # read the cut budgets as numbers only (thresholds, labels): their cost is reading small tables
        "bird_claims": lambda cfg, wc: 1,
        "bird_report": lambda cfg, wc: 1,
    },
    note=(
        f"|D| = {N_REHEARSAL} (networks 64, one epoch at micro-batch 8, seed 2), 8 evaluation images, 3 SNRs,"
        " 2 samples of 2 steps, one cost repeat; every window (1 to 31 and full), image size and width is the paper's"
    ),
)


def _toeplitz(cfg: dict, wc: dict, work) -> float:
    """`work` of the job's dataset entry for a generated Toeplitz field, 1 for downloaded images (read whole)."""
    data = cfg["datasets"][wc["dataset"]]
    return work(data) if data["kind"] == "toeplitz" else 1


def _largest_n(cfg: dict, wc: dict) -> int:
    return max(cfg["datasets"][wc["dataset"]]["n_values"])


def _group(wc: dict) -> int:
    """The seeds one network job trains or calibrates (its `seeds` wildcard: 2, or 0-1-2)."""
    return len(str(wc["seeds"]).split("-"))


DATA_GROWTH: dict[str, int] = {}  # the data step reads every image once (linear); |D| is a budget, not the file


def fixtures(items: int = 1) -> dict[str, bytes]:
    """Registry path -> bytes: MNIST's four IDX files and the CIFAR-10 archive, the same bytes as papers 18 and
    01 serve (one builder per source)."""
    return {
        **{f"mnist/{name}": payload for name, payload in mnist_files(items).items()},
        "cifar10/cifar-10-python.tar.gz": cifar10_archive(items),
    }
