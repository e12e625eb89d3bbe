r"""Semantic IDs for a TIGER-style generative recommender (Rajput et al., NeurIPS 2023): an RQ-VAE
over item feature vectors (text embeddings) gives each item a tuple of ``levels`` codes, and a
collision index appended as a last token makes the tuples unique (TIGER section 3.1; the GRID
baseline of the paper under reproduction: 3 levels x 256 codes, plus the 4th token).

The RQ-VAE (:class:`RQVAE`, :func:`train_rqvae`):

* encoder: an MLP ``d -> hidden[0] -> ... -> latent_dim`` with ReLU between layers; the decoder
  mirrors it back to ``d``;
* residual quantisation: ``r_0 = z``; at level ``l`` the code is the nearest row of codebook ``l``
  (Euclidean), ``e_l = C_l[c_l]`` and ``r_{l+1} = r_l - e_l``. The decoder reads
  ``z_hat = sum_l e_l`` through the straight-through estimator (``z + sg(z_hat - z)``), so the
  reconstruction gradient reaches the encoder and the codebooks learn only from their own term;
* loss per item: ``||x - x_hat||^2 + sum_l (||sg(r_l) - e_l||^2 + beta ||r_l - sg(e_l)||^2)``
  (TIGER's RQ-VAE loss), squared errors summed over dimensions and averaged over the batch;
* k-means initialisation: before the first step, codebook ``l`` is set to the k-means centroids
  of the level-``l`` residuals of the first shuffled batch (enlarged to at least ``codebook_size``
  items), as TIGER and ``EdoardoBotta/RQ-VAE-Recommender`` do.

Deliberate differences from TIGER's setup (encoder 512-256-128, Adagrad lr 0.4, batch 1024, 20k
epochs): a smaller MLP (``hidden=(128, 64)``), Adam (``neurips26.common.optim``) and far fewer
epochs by default. No dead-code reset or codebook EMA is used (TIGER uses neither); collisions are
reported per epoch (``unique_share``) and resolved by :func:`unique_semantic_ids`. When the catalog
is smaller than ``codebook_size`` the codebooks are clipped to ``n_items`` codes (k-means cannot
place more centroids than points); the returned codes then lie in ``0..n_items-1``.

All randomness comes from ``config.seed`` (numpy for the shuffles, scikit-learn's KMeans
``random_state``, a forked torch RNG for the weights), so a CPU run with a fixed thread count is
reproducible and the caller's torch RNG state is untouched.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
import torch
from torch import nn

from neurips26.common.loop import LoopSettings
from neurips26.common.optim import Adam
from neurips26.common.validation import integer, is_int, number, validate
from neurips26.seqrec_audit.epochs import batch_loss, device_of, row_line, run_epochs

__all__ = ["RQVAE", "RQVAEConfig", "train_rqvae", "unique_semantic_ids"]


@dataclass(frozen=True)
class RQVAEConfig:
    """RQ-VAE settings: TIGER's quantiser (3 levels x 256 codes, latent 32, beta 0.25) with a
    smaller MLP and Adam; ``hidden`` (encoder widths; the decoder mirrors them) may be a list.
    ``epochs=0`` leaves the k-means-initialised codebooks over a random encoder (residual k-means on
    a random projection)."""

    levels: int = integer(1, default=3)
    codebook_size: int = integer(1, default=256)
    latent_dim: int = integer(1, default=32)
    hidden: tuple[int, ...] = (128, 64)
    beta: float = number(0.0, default=0.25)
    epochs: int = integer(0, default=100)
    lr: float = number(0.0, low_open=True, default=1e-3)
    batch: int = integer(1, default=1024)
    seed: int = integer(0, default=0)

    def __post_init__(self):
        validate(self)
        if not (isinstance(self.hidden, (tuple, list)) and all(is_int(h, 1) for h in self.hidden)):
            raise ValueError(f"RQVAEConfig.hidden must be a sequence of positive integers, got {self.hidden!r}")
        object.__setattr__(self, "hidden", tuple(int(h) for h in self.hidden))  # a YAML list too


def _mlp(sizes: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class RQVAE(nn.Module):
    """MLP autoencoder with ``levels`` residual codebooks of ``codebook_size`` rows each."""

    def __init__(self, in_dim: int, config: RQVAEConfig, codebook_size: int | None = None):
        super().__init__()
        self.config = config
        size = config.codebook_size if codebook_size is None else codebook_size
        self.encoder = _mlp([in_dim, *config.hidden, config.latent_dim])
        self.decoder = _mlp([config.latent_dim, *reversed(config.hidden), in_dim])
        self.codebooks = nn.Parameter(torch.randn(config.levels, size, config.latent_dim) * 0.1)

    def quantise(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Codes (B, levels), quantised latents ``sum_l e_l`` (B, latent) and the summed
        codebook + beta * commitment loss (mean over the batch)."""
        residual, quantised, codes = z, torch.zeros_like(z), []
        loss = z.new_zeros(())
        for book in self.codebooks:
            code = torch.cdist(residual.detach(), book.detach()).argmin(dim=1)
            e = book[code]
            loss = (
                loss
                + ((residual.detach() - e) ** 2).sum(-1).mean()
                + self.config.beta * ((residual - e.detach()) ** 2).sum(-1).mean()
            )
            quantised = quantised + e
            residual = residual - e.detach()
            codes.append(code)
        return torch.stack(codes, dim=1), quantised, loss

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Codes, reconstruction ``x_hat``, the reconstruction squared error and the quantisation
        loss (both means over the batch)."""
        z = self.encoder(x)
        codes, quantised, quantisation = self.quantise(z)
        x_hat = self.decoder(z + (quantised - z).detach())  # straight-through estimator
        reconstruction = ((x - x_hat) ** 2).sum(-1).mean()
        return codes, x_hat, reconstruction, quantisation

    @torch.no_grad()
    def kmeans_init(self, x: torch.Tensor, seed: int) -> None:
        """Set every codebook to the k-means centroids of its level's residuals of ``x``."""
        from sklearn.cluster import KMeans  # imported here: about 1 s, only for training

        residual = self.encoder(x)
        for level, book in enumerate(self.codebooks):
            with warnings.catch_warnings():  # fewer distinct points than codes: repeated centroids
                warnings.simplefilter("ignore")
                fit = KMeans(n_clusters=book.shape[0], n_init=1, random_state=seed + level)
                fit.fit(residual.double().cpu().numpy())
            book.copy_(torch.from_numpy(fit.cluster_centers_).to(book))
            residual = residual - book[torch.cdist(residual, book).argmin(dim=1)]


def _unique_share(codes: np.ndarray) -> float:
    return len(np.unique(codes, axis=0)) / max(len(codes), 1)


@torch.no_grad()
def _encode_all(model: RQVAE, x: torch.Tensor, batch: int = 65536) -> np.ndarray:
    model.eval()
    out = [model.quantise(model.encoder(x[s : s + batch]))[0] for s in range(0, len(x), batch)]
    return torch.cat(out).cpu().numpy().astype(np.int64)


def train_rqvae(
    features: np.ndarray,
    config: RQVAEConfig = RQVAEConfig(),
    log: Callable[[str], None] | None = None,
    device: str | torch.device | None = None,
    settings: LoopSettings | None = None,
) -> tuple[np.ndarray, list[dict]]:
    """Train the RQ-VAE on ``features`` (n_items, d) and return every item's codes
    (n_items, levels) int64 with one row per epoch.

    Codes lie in ``0..min(codebook_size, n_items) - 1`` (the codebooks are clipped to the catalog
    size, see the module docstring). Rows: ``epoch`` (1-based), ``loss`` (mean total loss per item
    over the epoch's batches), ``reconstruction`` and ``quantisation`` (its two parts), ``unique_share``
    (distinct code tuples / n_items, all items encoded after the epoch), ``seconds``. The codes come
    from the last epoch's weights. ``device`` defaults to the job's (``loop.job_device()``); each
    mini-batch is one step of the common training loop, whose checkpoint (``settings``) a killed run
    resumes from bit-identically. Raises FloatingPointError (``loop.Diverged``) naming the epoch and
    batch where the loss becomes non-finite.
    """
    x_np = np.asarray(features)
    if x_np.ndim != 2 or x_np.shape[0] < 1 or x_np.shape[1] < 1:
        raise ValueError(f"features must be a non-empty 2-D (n_items, d) array, got shape {x_np.shape}")
    if not np.issubdtype(x_np.dtype, np.number) or not np.isfinite(x_np).all():
        raise ValueError("features must be finite numbers")
    n_items = len(x_np)
    size = min(config.codebook_size, n_items)
    say = log or (lambda line: None)
    if size < config.codebook_size:
        say(f"codebook_size clipped from {config.codebook_size} to {size} (n_items={n_items})")
    device = device_of(device)
    x = torch.as_tensor(x_np, dtype=torch.float32).to(device)
    shuffle = np.random.default_rng(config.seed)
    hint = f"lower the learning rate (lr={config.lr}) or check the features"
    rows: list[dict] = []
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(config.seed)
        model = RQVAE(x.shape[1], config, size).to(device)
        first = torch.from_numpy(shuffle.permutation(n_items)[: max(config.batch, size)]).to(device)
        model.kmeans_init(x[first], config.seed)
        optimiser = Adam(model.parameters(), lr=config.lr)

        def begin_epoch(epoch: int) -> dict:
            order = torch.from_numpy(shuffle.permutation(n_items))  # on the CPU: checkpointed with the epoch
            return {"batches": list(order.split(config.batch)), "sums": np.zeros(2), "n_batches": 0}

        def train_batch(current: dict, epoch: int, batch: int, step: int) -> float:
            model.train()
            _, _, reconstruction, quantisation = model(x[current["batches"][batch - 1].to(device)])
            loss = reconstruction + quantisation
            value = batch_loss(loss, "RQ-VAE loss", epoch, batch, step, model, hint)
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
            current["sums"] = current["sums"] + (reconstruction.item(), quantisation.item())
            current["n_batches"] += 1
            return value

        def end_epoch(epoch: int, current: dict) -> None:
            codes = _encode_all(model, x)
            rec, quant = (float(v) for v in current["sums"] / current["n_batches"])
            row = {
                "epoch": epoch,
                "loss": rec + quant,
                "reconstruction": rec,
                "quantisation": quant,
                "unique_share": _unique_share(codes),
                "seconds": current["seconds"],
            }
            rows.append(row)
            say(row_line(row))

        run_epochs(
            "RQ-VAE",
            config.epochs,
            -(-n_items // config.batch),
            begin_epoch,
            train_batch,
            end_epoch,
            {"model": model, "optimiser": optimiser, "shuffle": shuffle, "rows": rows},
            settings,
        )
        codes = _encode_all(model, x)
    say(f"RQ-VAE: {_unique_share(codes):.4f} unique code tuples over {n_items} items; {asdict(config)}")
    return codes, rows


def unique_semantic_ids(codes: np.ndarray) -> np.ndarray:
    """Append a collision index to each code tuple: (n_items, levels + 1) int64 whose rows are
    unique. Items sharing a tuple get 0, 1, 2, ... in item order (TIGER's 4th token); an item
    with a unique tuple gets 0. The last column's range is therefore 0..(largest collision group
    - 1), which may exceed the codebook size."""
    codes = np.asarray(codes)
    if codes.ndim != 2 or codes.shape[1] < 1 or not np.issubdtype(codes.dtype, np.integer):
        raise ValueError(f"codes must be a 2-D integer array (n_items, levels), got {codes.dtype} {codes.shape}")
    if codes.size and codes.min() < 0:
        raise ValueError("codes must be non-negative")
    codes = codes.astype(np.int64)
    if len(codes) == 0:
        return np.zeros((0, codes.shape[1] + 1), dtype=np.int64)
    _, group = np.unique(codes, axis=0, return_inverse=True)
    group = group.ravel()
    order = np.argsort(group, kind="stable")  # items of a group in item order
    sorted_group = group[order]
    first = np.searchsorted(sorted_group, sorted_group)  # start of each item's group in `order`
    collision = np.empty(len(codes), dtype=np.int64)
    collision[order] = np.arange(len(codes)) - first
    return np.column_stack([codes, collision])
