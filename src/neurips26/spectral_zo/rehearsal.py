"""Paper 13's rehearsal: what it cuts from the paper block, and fixture files in the real formats of its sources
(MNIST's and Fashion-MNIST's IDX files, built by paper 18's rehearsal, and the CIFAR-10 python archive, built by
paper 01's). Every network width, depth, probe count and batch of the measurements is the paper block's.

One representative job per rule and wildcard family, the largest: the training job of the CIFAR-10 network (3,073
inputs, 4.2 M weights against MNIST's 1.9 M) and of SPSA's group (the largest tensor peak of the twelve methods: 2,439
MB at CIFAR-10 in the rehearsal that ran all 36 jobs, SZO's 2,211, every other method's 1,515 MB or less; its
Rademacher draw is made as int64 before the float directions). MNIST's data job still runs (the geometry job reads it),
so both readers (IDX and the CIFAR archive) and the download rule run; Fashion-MNIST is MNIST's reader on other bytes.
The geometry job keeps each section's largest shapes (K = 256 for the alignment, the widest network of the dimension
sweep, MeZO's cost at its widest network and both ends of its K) and measures one method per section: SZO (kappa 1;
with the bias correction and its exact expectation in the bias-variance section), the paper's estimator and among the
costliest per probe (2K + 1 passes, shaping the probes by each layer's spectrum); the spectral sweep (seconds) keeps
every method. Training runs one step per run (tuning at the grid's first lr, one seed), at half the paper's batch and
at the paper's batch (the memory points).
"""

from __future__ import annotations

from neurips26.amortized_ot.rehearsal import mnist_files
from neurips26.common.rehearsal import Plan
from neurips26.pred_loss_space.rehearsal import cifar10_archive
from neurips26.spectral_zo.settings import PASSES, network_weights

# pixels of each source (the MLP adds a constant-1 input for its bias); mirrors rules/functions/spectral_zo.smk's
INPUTS = {"digits": 64, "mnist5k": 784, "mnist": 784, "fashion_mnist": 784, "cifar10": 3072}
TRAIN_GROUP = "spsa"  # the training group the rehearsal runs (see the module docstring)
GEOMETRY_METHOD = "szo_k1"
CORRECTED_METHOD = "szo_k1_bc"


def _first(values: list) -> list:
    return values[:1]


def _ends(values: list) -> list:
    return [min(values), max(values)]


def _largest(values: list) -> list:
    return [max(values)]


def _widest_dataset(names: list) -> list:
    return [max(names, key=lambda name: INPUTS.get(name, 0))]


def _only(name: str):
    def cut(names: list) -> list:
        if name not in names:
            raise ValueError(f"the rehearsal measures {name}, which the paper block no longer lists: {names}")
        return [name]

    return cut


def _train_group(groups: dict) -> dict:
    return {TRAIN_GROUP: groups[TRAIN_GROUP]}


def _one_step(cfg: dict) -> int:
    """Forward passes of one step of the most expensive method of the rehearsal's training group (at its probes and
    the deepest network it trains): the rehearsal's budget, so each run takes one step."""
    train = cfg["train"]
    layers = max(len(cfg["datasets"][name]["hidden"]) + 1 for name in train["datasets"])
    return max(
        PASSES[cfg["methods"][name]["estimator"]](train["probes"], layers) for name in train["groups"][TRAIN_GROUP]
    )


def _mlp(n_inputs: int, hidden: list[int], n_outputs: int = 10) -> int:
    return network_weights([n_inputs + 1, *hidden, n_outputs])


def geometry_work(cfg: dict, wildcards: dict) -> float:
    """Probe passes x examples x weights of the geometry job (its arithmetic): every section's methods, seeds,
    repeats, steps or draws, probes and network; MeZO's cost at each width and K (three measurements)."""
    sections = ("alignment", "bias_variance", "dimension")
    n_in = {s: INPUTS[cfg["datasets"][cfg[s]["dataset"]]["source"]] for s in sections}
    a, bv, d, sp, c = (cfg[s] for s in ("alignment", "bias_variance", "dimension", "spectral", "cost"))
    alignment = (len(a["seeds"]) * a["repeats"] * len(a["steps"]) * len(a["methods"]) * sum(a["probes"])
                 * a["batch"] * _mlp(n_in["alignment"], a["hidden"]))  # fmt: skip
    bias_variance = (len(bv["seeds"]) * bv["draws"] * len(bv["methods"]) * bv["probes"] * bv["batch"]
                     * _mlp(n_in["bias_variance"], bv["hidden"]))  # fmt: skip
    dimension = (len(d["seeds"]) * d["repeats"] * len(d["methods"]) * d["probes"] * d["batch"]
                 * sum(_mlp(n_in["dimension"], [w] * d["depth"]) for w in d["widths"]))  # fmt: skip
    spectral = (len(sp["alphas"]) * len(sp["seeds"]) * sp["repeats"] * len(sp["methods"]) * sp["probes"]
                * sp["batch"] * network_weights([sp["dim"] + 1, sp["hidden"], 1]))  # fmt: skip
    cost = (3 * c["repeats"] * sum(c["probes"]) * c["batch"]
            * sum(_mlp(c["n_inputs"], [w, w]) for w in c["widths"]))  # fmt: skip
    return 2 * (alignment + bias_variance + dimension + spectral + cost)  # central differences: two passes a probe


def train_work(cfg: dict, wildcards: dict) -> float:
    """Forward passes x examples of one training job: its group's methods, the tuning runs and the seeded runs, each
    the whole budget at the micro-batch."""
    train = cfg["train"]
    return (len(train["groups"][wildcards["group"]]) * train["budget"] * train["batch"]
            * (len(train["lr_grid"]) + len(train["seeds"])))  # fmt: skip


PLAN = Plan(
    budgets={
        "alignment.repeats": 1,
        "alignment.steps": lambda steps: [min(steps)],
        "alignment.seeds": _first,
        "alignment.probes": _largest,
        "alignment.methods": _only(GEOMETRY_METHOD),
        "bias_variance.draws": 2,
        "bias_variance.seeds": _first,
        "bias_variance.methods": _only(CORRECTED_METHOD),
        "dimension.repeats": 1,
        "dimension.widths": _ends,  # the schema asks for two widths (a slope); the narrow one costs 1/30 of the wide
        "dimension.seeds": _first,
        "dimension.methods": _only(GEOMETRY_METHOD),
        "spectral.repeats": 1,
        "spectral.n_train": 256,
        "spectral.seeds": _first,
        "train.budget": 128,  # one step of the group's method (checked against _one_step by the tests)
        "train.batch": lambda batch: batch // 2,
        "train.evals": 1,
        "train.lr_grid": _first,
        "train.seeds": lambda seeds: seeds[-1:],
        "cost.repeats": 1,
        "cost.widths": _largest,
        "cost.probes": _ends,  # the schema asks for two K (MeZO's memory at the largest over the smallest)
        "checks.draws": 2,
    },
    sweeps={
        "spectral.alphas": _ends,  # Z6 compares the smallest decay with the largest
        "train.datasets": _widest_dataset,
        "train.groups": _train_group,
        "train.methods": _only(TRAIN_GROUP),  # the group's one method (check_config: methods == the groups' union)
    },
    micro_batch=("train.batch",),
    shapes={},
    fixture_paths={},
    work={
        "spectral_zo_geometry": geometry_work,
        "spectral_zo_train": train_work,
    },
    note=(
        "one job per rule: training on CIFAR-10 for SPSA's group (the largest), one step per run at half and at the"
        " full batch; the geometry job at every section's largest shapes with one method (SZO) per section, one"
        " repeat, draw pair or seed; every width, probe count and batch is the paper's"
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
