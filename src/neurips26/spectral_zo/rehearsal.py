"""Paper 13's rehearsal: what it cuts from the paper block, and fixture files in the real formats of its sources
(MNIST's and Fashion-MNIST's IDX files, built by paper 18's rehearsal, and the CIFAR-10 python archive, built by
paper 01's). Every width, probe count and network shape is the paper block's; repeats, draws, budgets and the
learning-rate grid shrink."""

from __future__ import annotations

from neurips26.amortized_ot.rehearsal import mnist_files
from neurips26.common.rehearsal import Plan
from neurips26.pred_loss_space.rehearsal import cifar10_archive


def _first(values: list) -> list:
    return values[:1]


def _ends(values: list) -> list:
    return [min(values), max(values)]


PLAN = Plan(
    budgets={
        "alignment.repeats": 1,
        "alignment.steps": lambda steps: [min(steps)],
        "alignment.seeds": _first,
        "bias_variance.draws": 2,
        "bias_variance.seeds": _first,
        "dimension.repeats": 1,
        "dimension.widths": _ends,
        "dimension.seeds": _first,
        "spectral.repeats": 1,
        "spectral.n_train": 256,
        "spectral.seeds": _first,
        "train.budget": 800,
        "train.evals": 1,
        "train.lr_grid": _first,
        "train.seeds": lambda seeds: seeds[-1:],
        "cost.repeats": 1,
        "checks.draws": 2,
    },
    sweeps={"spectral.alphas": _ends},  # Z6 compares the smallest decay with the largest
    micro_batch=(),
    shapes={},
    fixture_paths={},
    work={
        # estimator calls of the geometry job: its alignment section, the largest (seeds x repeats x steps x methods x
        # the summed probes), plus the bias-variance draws
        "spectral_zo_geometry": lambda cfg, wc: (
            len(cfg["alignment"]["seeds"])
            * cfg["alignment"]["repeats"]
            * len(cfg["alignment"]["steps"])
            * len(cfg["alignment"]["methods"])
            * sum(cfg["alignment"]["probes"])
            + len(cfg["bias_variance"]["seeds"]) * cfg["bias_variance"]["draws"] * len(cfg["bias_variance"]["methods"])
        ),
        # forward passes of one group's methods: the tuning runs and the seeded runs, each the whole budget
        "spectral_zo_train": lambda cfg, wc: (
            len(cfg["train"]["groups"][wc["group"]])
            * cfg["train"]["budget"]
            * (len(cfg["train"]["lr_grid"]) + len(cfg["train"]["seeds"]))
        ),
    },
    note=(
        "one repeat, draw pair or seed per measurement, 800 forward passes per training run at the grid's first lr,"
        " one seed; every width, probe count and dataset is the paper's"
    ),
)

DATA_GROWTH: dict[str, int] = {}  # the data step reads every image once (linear)


def fixtures(items: int = 1) -> dict[str, bytes]:
    """Registry path -> bytes: MNIST's and Fashion-MNIST's four IDX files and the CIFAR-10 archive."""
    idx = mnist_files(items)
    return {
        **{f"mnist/{name}": payload for name, payload in idx.items()},
        **{f"fashion_mnist/{name}": payload for name, payload in idx.items()},
        "cifar10/cifar-10-python.tar.gz": cifar10_archive(items),
    }
