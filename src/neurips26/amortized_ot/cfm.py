"""Minibatch OT conditional flow matching (Tong et al. 2024) with exchangeable coupling plans."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from neurips26.common import loop
from neurips26.common.optim import Adam

PlanFn = Callable[[np.ndarray, np.ndarray], np.ndarray]


class VectorField(nn.Module):
    """v_theta(x, t): an MLP on (x, t), as in torchcfm's 2-D examples."""

    def __init__(self, dim: int = 2, width: int = 64, depth: int = 3):
        super().__init__()
        layers: list[nn.Module] = [nn.Linear(dim + 1, width), nn.SiLU()]
        for _ in range(depth - 1):
            layers += [nn.Linear(width, width), nn.SiLU()]
        layers.append(nn.Linear(width, dim))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return self.net(torch.cat([x, t[:, None]], dim=-1))


def independent_plan(x0: np.ndarray, x1: np.ndarray) -> np.ndarray:
    return np.full((len(x0), len(x1)), 1.0 / (len(x0) * len(x1)))


def exact_plan(x0: np.ndarray, x1: np.ndarray) -> np.ndarray:
    import ot  # POT loads torch, scikit-learn and scipy (seconds): only where it is called

    cost = ot.dist(x0, x1)
    return ot.emd(ot.unif(len(x0)), ot.unif(len(x1)), cost)


def fitted_plan(model, eps: float) -> PlanFn:
    """The minibatch plan of a fitted RA/OA model (method.FittedModel): uniform weights, squared Euclidean cost,
    g recovered from the predicted f by the c-transform."""
    from neurips26.amortized_ot.costs import cost_matrix
    from neurips26.amortized_ot.method import predict_plan

    def plan_fn(x0: np.ndarray, x1: np.ndarray) -> np.ndarray:
        w = np.full((1, len(x0)), 1.0 / len(x0))
        return predict_plan(model, x0[None], w, x1[None], w, cost_matrix(x0[None], x1[None], "sqeuclidean"), eps)[0]

    return plan_fn


PLANS = {"exact": exact_plan, "indep": independent_plan}  # the plans that need no fitted model
FITTED_PLANS = ("ra", "oa")


def coupling_plan(name: str, model=None, eps: float | None = None) -> PlanFn:
    """A minibatch coupling plan by name: 'exact' (EMD), 'indep' (product), or 'ra'/'oa' from a fitted model."""
    if name in FITTED_PLANS:
        if model is None or eps is None:
            raise ValueError(f"the {name} plan needs a fitted model and eps")
        return fitted_plan(model, eps)
    if name not in PLANS:
        raise ValueError(f"unknown coupling plan {name!r}; choose one of {[*PLANS, *FITTED_PLANS]}")
    return PLANS[name]


def sample_from_plan(pi: np.ndarray, size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Draw (i, j) index pairs with probability pi_ij (torchcfm's OTPlanSampler.sample_map)."""
    flat = pi.ravel() / pi.sum()
    choice = rng.choice(flat.size, size=size, p=flat)
    return np.divmod(choice, pi.shape[1])


def train_flow(
    sample_source: Callable[[int, np.random.Generator], np.ndarray],
    sample_target: Callable[[int, np.random.Generator], np.ndarray],
    plan_fn: PlanFn,
    steps: int,
    batch_size: int,
    lr: float,
    width: int,
    seed: int,
    settings: loop.LoopSettings | None = None,
) -> tuple[VectorField, list[float]]:
    """Regress v(x_t, t) on x1 - x0 with x_t = (1 - t) x0 + t x1 and (x0, x1) drawn from the plan.

    One loop step (common.loop.run_loop) is one minibatch. The samples and the coupling plan are drawn and
    solved on the CPU (numpy, POT, or the RA/OA model); the times t come from the global torch generator on the
    CPU, so a GPU run sees the same batches; the vector field and its regression run on the job's device
    (loop.job_device()). With `settings.checkpoint`, the model, the optimiser, the numpy generator and the
    losses (and the global torch generator, which the loop saves) are checkpointed and a resumed run equals an
    uninterrupted one. Returns the model on the CPU and the loss of every step.
    """
    device = loop.job_device()
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = VectorField(width=width).to(device)
    optimiser = Adam(model.parameters(), lr=lr)  # common.optim: torch.optim.Adam's arithmetic
    losses: list[float] = []
    state = {"model": model, "optimiser": optimiser, "rng": rng, "losses": losses}
    groups = loop.parameter_groups({"model": model})

    def step_fn(step: int) -> float:
        x0, x1 = sample_source(batch_size, rng), sample_target(batch_size, rng)
        i, j = sample_from_plan(plan_fn(x0, x1), batch_size, rng)
        x0_t = torch.as_tensor(x0[i], dtype=torch.float32).to(device)
        x1_t = torch.as_tensor(x1[j], dtype=torch.float32).to(device)
        t = torch.rand(batch_size).to(device)
        xt = (1 - t[:, None]) * x0_t + t[:, None] * x1_t
        loss = ((model(xt, t) - (x1_t - x0_t)) ** 2).sum(-1).mean()
        optimiser.zero_grad()
        loss.backward()
        value = loss.item()
        loop.check_finite(value, step, groups)  # before the update, which would spoil every group
        optimiser.step()
        losses.append(value)
        return value

    loop.run_loop(step_fn, steps, state, settings or loop.LoopSettings(name="cfm"))
    return model.cpu(), losses


@torch.no_grad()
def integrate(model: VectorField, x0: np.ndarray, n_steps: int) -> tuple[np.ndarray, float]:
    """Euler integration of dx/dt = v(x, t) from t=0 to 1; also returns the mean path length ratio.

    The ratio is (length of the integrated path) / |x(1) - x(0)|: 1 for perfectly straight flows.
    """
    x = torch.as_tensor(x0, dtype=torch.float32)
    start = x.clone()
    length = torch.zeros(len(x))
    dt = 1.0 / n_steps
    for k in range(n_steps):
        t = torch.full((len(x),), k * dt)
        step = dt * model(x, t)
        length += step.norm(dim=-1)
        x = x + step
    chord = (x - start).norm(dim=-1).clamp_min(1e-8)
    return x.numpy().astype(np.float64), float((length / chord).mean())


def wasserstein2(x: np.ndarray, y: np.ndarray) -> float:
    """Exact W2 between two equal-weight samples (ot.emd2 on squared Euclidean cost)."""
    import ot  # POT loads torch, scikit-learn and scipy (seconds): only where it is called

    return float(np.sqrt(ot.emd2(ot.unif(len(x)), ot.unif(len(y)), ot.dist(x, y))))
