"""Baselines: a Meta-OT-style MLP amortiser (Amos et al. 2023), min-SWGG
(Mahey et al. 2023) and expected-sliced plans (Liu et al. 2025), exact OT."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from neurips26.amortized_ot.measures import MeasureError
from neurips26.amortized_ot.sinkhorn import semi_dual
from neurips26.common import loop
from neurips26.common.optim import Adam


class MetaOTPotential(nn.Module):
    """Meta-OT's discrete model (Amos et al. 2023): an MLP from the weights (a, b) to the potential f.

    It only exists for measures on one fixed support: its input layer is tied to the atom count.
    """

    def __init__(self, n_atoms: int, m_atoms: int, hidden: tuple[int, ...]):
        super().__init__()
        widths = (n_atoms + m_atoms, *hidden)
        layers: list[nn.Module] = []
        for w_in, w_out in zip(widths[:-1], widths[1:]):
            layers += [nn.Linear(w_in, w_out), nn.ELU()]
        layers.append(nn.Linear(widths[-1], n_atoms))
        self.net = nn.Sequential(*layers)
        self.n_atoms, self.m_atoms = n_atoms, m_atoms

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return self.net(torch.cat([a, b], dim=-1))


def check_fixed_support(x_train: np.ndarray, y_train: np.ndarray, x: np.ndarray, y: np.ndarray) -> None:
    """Meta-OT's MLP is defined on a fixed support: refuse variable-size or moving supports."""
    if x.shape[1] != x_train.shape[1] or y.shape[1] != y_train.shape[1]:
        raise MeasureError(
            f"Meta-OT needs measures on the fixed support it was trained on ({x_train.shape[1]} x "
            f"{y_train.shape[1]} atoms); got {x.shape[1]} x {y.shape[1]} atoms (variable-size measures)"
        )
    same = np.allclose(x, x_train[:1]) and np.allclose(y, y_train[:1]) and np.allclose(x_train, x_train[:1])
    if not same:
        raise MeasureError("Meta-OT needs every measure on one shared support; the supports here move between pairs")


def train_metaot(
    a: np.ndarray,
    b: np.ndarray,
    cost: torch.Tensor,
    eps: float,
    hidden: tuple[int, ...],
    steps: int,
    batch_size: int,
    lr: float,
    seed: int,
    settings: loop.LoopSettings | None = None,
) -> tuple[MetaOTPotential, list[float]]:
    """Fit by maximising the entropic semi-dual on minibatches of training pairs (Meta-OT's objective).

    One loop step (common.loop.run_loop) is one minibatch. `cost` is (P, n, m), one matrix per training pair,
    or (1, n, m): the support every pair shares (Meta-OT's case), broadcast over the minibatch. Model and
    batches live on the job's device (loop.job_device()); minibatch indices are drawn on the CPU by a seeded
    generator, so a GPU run draws the same minibatches. With `settings.checkpoint`, the model, the optimiser,
    the generator and the losses are checkpointed and a resumed run equals an uninterrupted one. Returns the
    model on the CPU and the loss of every step.
    """
    device = loop.job_device()
    torch.manual_seed(seed)
    model = MetaOTPotential(a.shape[1], b.shape[1], hidden).double().to(device)
    optimiser = Adam(model.parameters(), lr=lr)  # common.optim: torch.optim.Adam's arithmetic
    a_t, b_t = torch.as_tensor(a).to(device), torch.as_tensor(b).to(device)
    cost = torch.as_tensor(cost).to(device)
    shared = cost.shape[0] == 1
    generator = torch.Generator().manual_seed(seed)
    losses: list[float] = []
    state = {"model": model, "optimiser": optimiser, "generator": generator, "losses": losses}
    groups = loop.parameter_groups({"model": model})

    def step_fn(step: int) -> float:
        idx = torch.randint(0, a_t.shape[0], (batch_size,), generator=generator).to(device)
        f = model(a_t[idx], b_t[idx])
        loss = -semi_dual(f, a_t[idx], b_t[idx], cost if shared else cost[idx], eps).mean()
        optimiser.zero_grad()
        loss.backward()
        value = loss.item()
        loop.check_finite(value, step, groups)  # before the update, which would spoil every group
        optimiser.step()
        losses.append(value)
        return value

    loop.run_loop(step_fn, steps, state, settings or loop.LoopSettings(name="metaot"))
    return model.cpu(), losses


def min_swgg_plans(x: np.ndarray, a: np.ndarray, y: np.ndarray, b: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """min-SWGG (Mahey et al. 2023) via POT: the lifted 1-D plan of the best of the directions."""
    import ot  # POT loads torch, scikit-learn and scipy (seconds): only where it is called

    return np.stack(
        [
            np.asarray(ot.min_sliced_transport_plan(x[p], y[p], a[p], b[p], projections=theta.T, dense=True)[0])
            for p in range(len(x))
        ]
    )


def expected_sliced_plans(x: np.ndarray, a: np.ndarray, y: np.ndarray, b: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Expected sliced plan (Liu et al. 2025) via POT: the average of the lifted 1-D plans."""
    import ot  # POT loads torch, scikit-learn and scipy (seconds): only where it is called

    return np.stack(
        [
            np.asarray(ot.expected_sliced_plan(x[p], y[p], a[p], b[p], projections=theta.T, dense=True)[0])
            for p in range(len(x))
        ]
    )


def exact_plans(a: np.ndarray, b: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """Unregularised OT plans by the network simplex (ot.emd), one pair at a time."""
    import ot  # POT loads torch, scikit-learn and scipy (seconds): only where it is called

    return np.stack([ot.emd(a[p], b[p], np.ascontiguousarray(cost[p])) for p in range(len(a))])


class LoadedMetaOT:
    """A trained Meta-OT network ready to predict f for new weight pairs on its training support."""

    def __init__(self, net: MetaOTPotential):
        self.net = net.eval()

    def predict(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return self.net(torch.as_tensor(a), torch.as_tensor(b)).numpy()
