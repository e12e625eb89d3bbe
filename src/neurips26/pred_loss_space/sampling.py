"""ODE sampling from a trained denoiser, and its denoising errors and error amplification per noise level.

Every prediction space samples through velocity ("generator space", JiT): the output is converted to
v_hat and dz/dt = v_hat(z, t) is integrated from t = 0 (noise) to t = 1 (data).
"""

from __future__ import annotations

import pandas as pd
import torch
from torch import nn

from neurips26.pred_loss_space import spaces


class _eval_mode:
    """Puts a module in eval mode for a block and restores its previous mode afterwards."""

    def __init__(self, model: nn.Module):
        self.model, self.was_training = model, model.training

    def __enter__(self):
        self.model.eval()

    def __exit__(self, *exc):
        self.model.train(self.was_training)


def velocity(model: nn.Module, z: torch.Tensor, t: float, pred: str, t_eps: float, t_min: float) -> torch.Tensor:
    tt = torch.full((len(z),), float(t), dtype=z.dtype, device=z.device)
    return spaces.convert(model(z, tt), z, tt, pred, t_eps, t_min)["v"]


@torch.no_grad()
def heun_sample(
    model: nn.Module,
    n: int,
    shape: tuple,
    steps: int,
    pred: str,
    seed: int,
    t_eps: float = spaces.T_EPS,
    t_min: float = spaces.T_MIN,
    batch: int = 512,
) -> torch.Tensor:
    """n samples of shape `shape` by Heun's method on t_k = k / steps, the last step Euler (as JiT).

    The initial noise z_0 ~ N(0, I) is drawn at once from a generator seeded with `seed`, so the samples do
    not depend on `batch` other than through floating-point evaluation order.
    """
    spaces.check_space(pred, "prediction space")
    if steps < 1:
        raise ValueError(f"the sampler needs at least 1 step, got {steps}")
    if n < 1 or batch < 1:
        raise ValueError(f"need n >= 1 and batch >= 1, got n={n}, batch={batch}")
    generator = torch.Generator().manual_seed(seed)
    noise = torch.randn((n, *tuple(shape)), generator=generator)  # on the CPU: the same noise on any device
    device = next(model.parameters(), torch.empty(0)).device  # a model without parameters runs on the CPU
    grid = torch.linspace(0.0, 1.0, steps + 1, dtype=torch.float64).tolist()
    out = []
    with _eval_mode(model):
        for z in noise.split(batch):
            z = z.to(device)
            for k in range(steps):
                t0, t1 = grid[k], grid[k + 1]
                h = t1 - t0
                v0 = velocity(model, z, t0, pred, t_eps, t_min)
                if k < steps - 1:
                    v1 = velocity(model, z + h * v0, t1, pred, t_eps, t_min)
                    z = z + 0.5 * h * (v0 + v1)
                else:
                    z = z + h * v0
            out.append(z.cpu())
    return torch.cat(out)


@torch.no_grad()
def denoise_errors(
    model: nn.Module,
    x_test: torch.Tensor,
    pred: str,
    t_grid: list[float],
    seed: int,
    t_eps: float = spaces.T_EPS,
    t_min: float = spaces.T_MIN,
    batch: int = 1024,
) -> pd.DataFrame:
    """Per-pixel MSE of x_hat, eps_hat and v_hat on `x_test` at each t of `t_grid`, and the amplification.

    amp_{x,v}_emp is the mean measured |d estimate| / |d o| of the model's own outputs (in float64, so the
    finite difference is exact to ~1e-10); amp_{x,v}_theory is the analytic value.
    """
    spaces.check_space(pred, "prediction space")
    x_test = torch.as_tensor(x_test, dtype=torch.float32)
    if len(x_test) == 0:
        raise ValueError("empty test set")
    generator = torch.Generator().manual_seed(seed)  # draws on the CPU: the same noise on any device
    device = next(model.parameters(), torch.empty(0)).device  # a model without parameters runs on the CPU
    rows = []
    with _eval_mode(model):
        for t_value in t_grid:
            sums = {"mse_x": 0.0, "mse_eps": 0.0, "mse_v": 0.0, "amp_x_emp": 0.0, "amp_v_emp": 0.0}
            for x in x_test.split(batch):
                eps = torch.randn(x.shape, generator=generator).to(device)
                x = x.to(device)
                t = torch.full((len(x),), float(t_value), device=device)
                z = spaces.interpolate(x, eps, t)
                o = model(z, t)
                estimate = spaces.convert(o, z, t, pred, t_eps, t_min)
                truth = spaces.targets(x, eps)
                for space in spaces.SPACES:
                    sums[f"mse_{space}"] += (estimate[space] - truth[space]).pow(2).flatten(1).mean(1).sum().item()
                o64, z64, t64 = o.double(), z.double(), t.double()
                for space in ("x", "v"):
                    amp = spaces.measured_amplification(
                        o64, z64, t64, pred, space, generator=generator, t_eps=t_eps, t_min=t_min
                    )
                    sums[f"amp_{space}_emp"] += amp.sum().item()
            t_tensor = torch.tensor([float(t_value)], dtype=torch.float64)
            rows.append(
                {
                    "t": float(t_value),
                    **{k: v / len(x_test) for k, v in sums.items()},
                    "amp_x_theory": spaces.amplification(pred, t_tensor, t_eps, t_min).item(),
                    "amp_v_theory": spaces.velocity_amplification(pred, t_tensor, t_eps, t_min).item(),
                }
            )
    columns = ["t", "mse_x", "mse_eps", "mse_v", "amp_x_emp", "amp_x_theory", "amp_v_emp", "amp_v_theory"]
    return pd.DataFrame(rows)[columns]
