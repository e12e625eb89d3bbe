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
    note=(
        f"|D| = {N_REHEARSAL} (networks 64, one epoch at micro-batch 8, seed 2), 8 evaluation images, 3 SNRs,"
        " 2 samples of 2 steps, one cost repeat; every window (1 to 31 and full), image size and width is the paper's"
    ),
)
DATA_GROWTH: dict[str, int] = {}  # the data step reads every image once (linear); |D| is a budget, not the file


def fixtures(items: int = 1) -> dict[str, bytes]:
    """Registry path -> bytes: MNIST's four IDX files and the CIFAR-10 archive, the same bytes as papers 18 and
    01 serve (one builder per source)."""
    return {
        **{f"mnist/{name}": payload for name, payload in mnist_files(items).items()},
        "cifar10/cifar-10-python.tar.gz": cifar10_archive(items),
    }
