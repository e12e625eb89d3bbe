"""BIRD against a trained network along the network's own reverse trajectories (the authors'
`scripts/k_cal_vs_k_mem_sweep.py`, henhen724/convolutional_diffusion).

At each DDIM state x_t of a network-driven trajectory, the network's eps is compared by cosine similarity with
the eps of BIRD for every window, of the ideal (full-image) denoiser and of the optimal linear denoiser; BIRD's
posterior entropy on central pixels (a k // 2 border excluded) gives k_mem at the same states.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch
from torch import nn

from neurips26.bird import experiment, linear, posterior, sampling, schedule
from neurips26.bird.sampling import DDIMTrajectory


def check_checkpoint_subset(saved: dict, n_train: int, indices: np.ndarray, path: str) -> None:
    """A network is compared with BIRD on the images it was trained on: same N and the same subset (`saved`: the
    run's settings from artifacts.load_checkpoints, with n_train and subset_indices)."""
    if int(saved["n_train"]) != int(n_train):
        raise ValueError(f"{path} was trained on N = {saved['n_train']} images, not the N = {n_train} of this run")
    if not np.array_equal(np.asarray(saved["subset_indices"]), np.asarray(indices)):
        raise ValueError(
            f"{path} was trained on another subset of the training pool than this run's N = "
            f"{n_train} images (different subset indices): retrain it"
        )


def network_eps(model: nn.Module):
    """eps_fn(x, t) of a network for sampling.ddim_sample: float64 arrays in and out, no gradients."""
    device = next(model.parameters()).device
    model.eval()

    def eps_fn(x: np.ndarray, t: float) -> np.ndarray:
        with torch.no_grad():
            z = torch.from_numpy(np.asarray(x, dtype=np.float32)).to(device)
            out = model(z, torch.full((len(z),), float(t), device=device))
        return out.double().cpu().numpy()

    return eps_fn


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Mean over images of the cosine similarity of a[i] and b[i] (flattened)."""
    a, b = a.reshape(len(a), -1), b.reshape(len(b), -1)
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    return float(np.mean(np.sum(a * b, axis=1) / np.maximum(norms, 1e-300)))


def compare_along_trajectory(
    trajectory: DDIMTrajectory,
    train: np.ndarray,
    windows: list[str],
    mean: np.ndarray,
    covariance: np.ndarray,
    soft: float = 0.0,
) -> pd.DataFrame:
    """One row per (step, window) with the step's t, cos(eps_net, eps_window) and the mean central entropy;
    window "linear" is the optimal linear denoiser (its entropy is NaN)."""
    rows = []
    for step, (t, x, eps_net) in enumerate(zip(trajectory.t, trajectory.x, trajectory.eps)):
        a, b = float(schedule.a(t)), float(schedule.b(t))
        posteriors = posterior.bird_posteriors(x, train, a, b, [experiment.window_value(w) for w in windows], soft=soft)
        for window, post in zip(windows, posteriors):
            k = experiment.window_value(window)
            border = 0 if k is None else k // 2
            entropy = post.entropy[:, border : post.entropy.shape[1] - border, border : post.entropy.shape[2] - border]
            rows.append(
                {
                    "step": step,
                    "t": float(t),
                    "window": window,
                    "k": experiment.window_k(window),
                    "cos": cosine(post.eps_hat, eps_net),
                    "entropy_central": float(entropy.mean()),
                }
            )
        wiener = linear.wiener_denoiser(x, mean, covariance, a, b)
        rows.append(
            {
                "step": step,
                "t": float(t),
                "window": experiment.LINEAR,
                "k": 0,
                "cos": cosine(wiener.eps_hat, eps_net),
                "entropy_central": np.nan,
            }
        )
    return pd.DataFrame(rows)


def calibrate_checkpoints(
    model: nn.Module,
    kept: dict[int, dict[str, torch.Tensor]],
    x_T: np.ndarray,
    steps: int,
    train: np.ndarray,
    windows: list[str],
    soft: float = 0.0,
    log=None,
) -> pd.DataFrame:
    """`compare_along_trajectory` along the network's own DDIM trajectories from x_T (`steps` steps) for each of
    its kept weights (epoch -> state dict, loaded into `model`), with the optimal linear denoiser of `train`;
    one frame with an `epoch` column."""
    mean, covariance = linear.mean_covariance(train)
    frames = []
    for epoch, state in kept.items():
        model.load_state_dict(state)
        _, trajectory = sampling.ddim_sample(network_eps(model), x_T, steps, return_trajectory=True)
        frame = compare_along_trajectory(trajectory, train, windows, mean, covariance, soft=soft)
        frames.append(frame.assign(epoch=int(epoch)))
        if log:
            high = frame[(frame["t"] >= 0.5) & frame["window"].isin(experiment.local_windows(windows))]
            log.info("epoch %d: best local cos at high noise %.3f", epoch, high.groupby("step")["cos"].max().mean())
    return pd.concat(frames, ignore_index=True)


def start_noise(seed: int, n_train: int, trajectories: int, shape: tuple[int, ...]) -> np.ndarray:
    """x_T of a network seed's calibration trajectories: its own standard normal draws (seeded by seed and N)."""
    return np.random.default_rng([seed, n_train, 2]).standard_normal((trajectories, *shape))


def calibrate_seeds(
    model: nn.Module,
    kept: dict[int, dict[int, dict[str, torch.Tensor]]],
    n_train: int,
    trajectories: int,
    steps: int,
    train: np.ndarray,
    windows: list[str],
    soft: float = 0.0,
    log=None,
) -> pd.DataFrame:
    """`calibrate_checkpoints` for each seed of a job's group (kept: seed -> epoch -> state dict, loaded into
    `model`), each from its own x_T (`start_noise`); one frame with a `seed` column, a seed's rows those of its
    single-seed job."""
    frames = []
    for seed, by_epoch in kept.items():
        if log:
            log.info("seed %d", seed)
        x_T = start_noise(seed, n_train, trajectories, train.shape[1:])
        table = calibrate_checkpoints(model, by_epoch, x_T, steps, train, windows, soft, log)
        frames.append(table.assign(seed=int(seed)))
    return pd.concat(frames, ignore_index=True)
