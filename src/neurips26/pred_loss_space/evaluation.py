"""Scores of one trained cell: sample quality (Frechet distance on features), final training
losses, and the long-form metrics table."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import torch

from neurips26.pred_loss_space import data, fd, models

PER_T_METRICS = ("mse_x", "mse_eps", "mse_v", "amp_x_emp", "amp_x_theory", "amp_v_emp", "amp_v_theory")


def feature_embedder(
    state_dict: dict, feature_dim: int, channels: int = 1, n_classes: int = 10, device: str | torch.device = "cpu"
) -> Callable[[np.ndarray], np.ndarray]:
    """The trained image classifier's penultimate layer (run on `device`) as a function of images."""
    net = models.FeatureNet(channels=channels, n_classes=n_classes, feature_dim=feature_dim)
    net.load_state_dict(state_dict)
    net.to(device).eval()

    def embed(images: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            x = torch.from_numpy(np.ascontiguousarray(images, dtype=np.float32)).to(device)
            return net.features(x).cpu().numpy()

    return embed


def _finite_rows(samples: np.ndarray) -> np.ndarray:
    return np.isfinite(samples.reshape(len(samples), -1)).all(axis=1)


def _distances(sample_features: np.ndarray, reference_features: np.ndarray) -> dict[str, float]:
    if len(sample_features) < 2 * sample_features.shape[1]:  # too many samples were not finite
        return {"fd": float("nan")}
    return {"fd": fd.frechet_distance(sample_features, reference_features)}


def sample_quality_images(samples: np.ndarray, x_train: np.ndarray, embed) -> dict[str, float]:
    """FD between classifier features of the samples (clipped to [-1, 1], as images are
    displayed) and of the training images; the share of samples that are not finite is reported, and
    those samples are left out."""
    finite = _finite_rows(samples)
    clipped = np.clip(samples[finite], -1.0, 1.0)
    return {**_distances(embed(clipped), embed(x_train)), "nonfinite": float(1 - finite.mean())}


def inception_fid(samples: np.ndarray, features, reference_mu: np.ndarray, reference_sigma: np.ndarray) -> float:
    """True FID: Frechet distance between Inception-v3 pool3 statistics of the finite samples (clipped to
    [-1, 1]) and the training set's (`features` maps images in [-1, 1] to (n, 2048)); NaN when fewer finite
    samples are left than twice the feature dimension."""
    finite = _finite_rows(samples)
    if finite.sum() < 2 * len(reference_mu):
        return float("nan")
    mu, sigma = fd.gaussian_stats(features(np.clip(samples[finite], -1.0, 1.0)))
    return fd.frechet_from_stats(mu, sigma, reference_mu, reference_sigma)


def sample_quality_toy(samples: np.ndarray, x_train: np.ndarray, projection: np.ndarray) -> dict[str, float]:
    """FD on the 2-D manifold coordinates, and the mean distance off the manifold."""
    finite = _finite_rows(samples)
    kept = samples[finite].astype(np.float64)
    return {
        **_distances(kept @ projection, x_train.astype(np.float64) @ projection),
        "off_manifold": float(data.off_manifold_norm(kept, projection).mean()) if len(kept) else float("nan"),
        "nonfinite": float(1 - finite.mean()),
    }


def sample_quality(
    samples: np.ndarray, arrays: dict, features: tuple[dict, dict] | None, device: str | torch.device = "cpu"
) -> dict[str, float]:
    """The FD proxy of a cell's samples: on the feature network's features for images (`features` is its
    (state dict, settings) from artifacts.load_model), on the manifold coordinates for the toy (None)."""
    if features is None:
        return sample_quality_toy(samples, arrays["x_train"], arrays["projection"])
    state_dict, cfg = features
    embed = feature_embedder(state_dict, cfg["feature_dim"], cfg["channels"], cfg["n_classes"], device=device)
    return sample_quality_images(samples, arrays["x_train"], embed)


def inception_fid_from_files(
    samples: np.ndarray, weights: str, reference: str, device: str | torch.device = "cpu"
) -> tuple[float, int]:
    """(true FID of the samples against a dataset's Inception statistics file, that file's image count)."""
    from neurips26.common.io import load_npz
    from neurips26.pred_loss_space import inception

    net = inception.load_inception(weights, device=device)
    stats = load_npz(reference)
    fid = inception_fid(
        samples, lambda images: inception.inception_features(net, images, device=device), stats["mu"], stats["sigma"]
    )
    return fid, int(stats["n"])


def final_losses(train_log: pd.DataFrame, tail: float = 0.1) -> dict[str, float]:
    """Mean native-space and x-space training loss over the last `tail` of the logged steps."""
    last = train_log.tail(max(1, int(round(len(train_log) * tail))))
    return {"loss_native_final": float(last["loss_native"].mean()), "loss_x_final": float(last["loss_x"].mean())}


def metrics_frame(per_t: pd.DataFrame, run_level: dict[str, float], **columns) -> pd.DataFrame:
    """Long form: one row per (t, metric) for the per-t table and per run-level metric (t = NaN)."""
    rows = per_t.melt(id_vars="t", value_vars=[m for m in PER_T_METRICS if m in per_t], var_name="metric")
    run = pd.DataFrame({"t": np.nan, "metric": list(run_level), "value": list(run_level.values())})
    frame = pd.concat([rows, run], ignore_index=True)
    frame["value"] = frame["value"].astype("float64")
    for key, value in reversed(columns.items()):
        frame.insert(0, key, value)
    return frame
