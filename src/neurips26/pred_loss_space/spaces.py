"""The three spaces of a denoiser and the exact conversions between them (JiT convention).

z_t = t x + (1 - t) eps with t in [0, 1] (t = 0 pure noise, t = 1 data); targets x, eps and v = x - eps.
A network outputs o in its prediction space P; the squared loss is computed in a loss space L after
converting o to L. For any P, the L-space error is the x-space error times a function of t only:
eps_hat - eps = -t/(1-t) (x_hat - x) and v_hat - v = (x_hat - x)/(1-t), so the loss space only reweights
noise levels: w_x = 1, w_eps = t^2/(1-t)^2, w_v = 1/(1-t)^2.

Numerics as in JiT: 1 - t is clamped at t_eps (0.05) and t at t_min (1e-3) in the divisions.
"""

from __future__ import annotations

import torch

from neurips26.pred_loss_space.names import SPACES

__all__ = ["SPACES"]
T_EPS = 0.05
T_MIN = 1e-3


def check_space(name: str, what: str = "space") -> str:
    if name not in SPACES:
        raise ValueError(f"{what} {name!r} is not one of {SPACES}")
    return name


def _expand(t: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """t of shape (B,) broadcast against a batch `like` of shape (B, ...)."""
    return t.reshape(t.shape[0], *([1] * (like.dim() - 1))).to(like.dtype)


def interpolate(x: torch.Tensor, eps: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """z_t = t x + (1 - t) eps."""
    tt = _expand(t, x)
    return tt * x + (1 - tt) * eps


def targets(x: torch.Tensor, eps: torch.Tensor) -> dict[str, torch.Tensor]:
    return {"x": x, "eps": eps, "v": x - eps}


def convert(
    o: torch.Tensor, z: torch.Tensor, t: torch.Tensor, pred: str, t_eps: float = T_EPS, t_min: float = T_MIN
) -> dict[str, torch.Tensor]:
    """{x_hat, eps_hat, v_hat} from an output `o` in prediction space `pred` (JiT Table 1)."""
    check_space(pred, "prediction space")
    tt = _expand(t, z)
    one_minus = (1 - tt).clamp_min(t_eps)
    t_c = tt.clamp_min(t_min)
    if pred == "x":
        x_hat = o
        eps_hat = (z - tt * o) / one_minus
        v_hat = (o - z) / one_minus
    elif pred == "eps":
        x_hat = (z - (1 - tt) * o) / t_c
        eps_hat = o
        v_hat = (z - o) / t_c
    else:
        x_hat = z + (1 - tt) * o
        eps_hat = z - tt * o
        v_hat = o
    return {"x": x_hat, "eps": eps_hat, "v": v_hat}


def per_sample_loss(
    o: torch.Tensor,
    x: torch.Tensor,
    eps: torch.Tensor,
    z: torch.Tensor,
    t: torch.Tensor,
    pred: str,
    loss: str,
    t_eps: float = T_EPS,
    t_min: float = T_MIN,
) -> torch.Tensor:
    """Mean squared error in loss space `loss` of each sample, shape (B,)."""
    check_space(loss, "loss space")
    estimate = convert(o, z, t, pred, t_eps, t_min)[loss]
    return (estimate - targets(x, eps)[loss]).pow(2).flatten(1).mean(1)


def loss_weight(loss: str, t: torch.Tensor, t_eps: float = T_EPS) -> torch.Tensor:
    """w_L(t): the L-space loss over the x-space loss, the same for every prediction space."""
    check_space(loss, "loss space")
    one_minus = (1 - t).clamp_min(t_eps)
    if loss == "x":
        return torch.ones_like(t)
    if loss == "eps":
        return t.pow(2) / one_minus.pow(2)
    return 1 / one_minus.pow(2)


def amplification(pred: str, t: torch.Tensor, t_eps: float = T_EPS, t_min: float = T_MIN) -> torch.Tensor:
    """Analytic |d x_hat| / |d o|: how an output error of prediction space `pred` reaches the clean image."""
    check_space(pred, "prediction space")
    if pred == "x":
        return torch.ones_like(t)
    if pred == "eps":
        return (1 - t) / t.clamp_min(t_min)
    return 1 - t


def velocity_amplification(pred: str, t: torch.Tensor, t_eps: float = T_EPS, t_min: float = T_MIN) -> torch.Tensor:
    """Analytic |d v_hat| / |d o|: the error the ODE sampler integrates."""
    check_space(pred, "prediction space")
    if pred == "x":
        return 1 / (1 - t).clamp_min(t_eps)
    if pred == "eps":
        return 1 / t.clamp_min(t_min)
    return torch.ones_like(t)


def measured_amplification(
    o: torch.Tensor,
    z: torch.Tensor,
    t: torch.Tensor,
    pred: str,
    space: str = "x",
    scale: float = 1e-3,
    generator: torch.Generator | None = None,
    t_eps: float = T_EPS,
    t_min: float = T_MIN,
) -> torch.Tensor:
    """|d estimate_space| / |d o| per sample, measured by perturbing `o` with a random direction."""
    delta = torch.randn(o.shape, generator=generator, dtype=o.dtype).to(o.device) * scale  # drawn on the CPU
    base = convert(o, z, t, pred, t_eps, t_min)[space]
    moved = convert(o + delta, z, t, pred, t_eps, t_min)[space]
    return (moved - base).flatten(1).norm(dim=1) / delta.flatten(1).norm(dim=1)


def sample_t(n: int, p_mean: float, p_std: float, generator: torch.Generator | None = None) -> torch.Tensor:
    """t = sigmoid(N(p_mean, p_std^2)), JiT's logit-normal noise-level distribution."""
    return torch.sigmoid(torch.randn(n, generator=generator) * p_std + p_mean)
