"""Paper 13's checks of what the construction guarantees (kind `check` in config/claims/spectral_zo.yaml): SZO at
kappa = 0 is weight perturbation with the same draws, MeZO equals two-sided perturbation along the directions its
seeds generate, forward gradients are unbiased. Measured in float64 on the alignment network at initialisation."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch

from neurips26.spectral_zo.alignment import bias_variance
from neurips26.spectral_zo.estimators import LOSSES, perturbation_gradient, szo, wp_global
from neurips26.spectral_zo.experiment import mlp_tensors
from neurips26.spectral_zo.forward_gradient import forward_gradient
from neurips26.spectral_zo.mezo import directions as mezo_directions
from neurips26.spectral_zo.mezo import mezo_gradient, probe_seeds
from neurips26.spectral_zo.networks import MLP, backprop


def construction_checks(data: Mapping[str, np.ndarray], block: Mapping, hidden: list[int]) -> list[dict]:
    """K1: SZO at kappa = 0 against global weight perturbation from the same generator state (max abs difference
    relative to the estimate's norm); K2: MeZO's estimate against two-sided perturbation along the directions its
    seeds generate (same); K3: forward gradients' relative bias over its chance floor from `draws` draws."""
    x, y = mlp_tensors(data["x_train"], data["y_train"])
    x = x.double()  # float64: the checks compare finite differences whose float32 rounding would blur them
    network = MLP((x.shape[1], *hidden, 10))
    generator = torch.Generator().manual_seed(0)
    params = network.init(generator, dtype=torch.float64)
    batch, loss_fn, k = (x[:32], y[:32]), LOSSES["cross_entropy"], block["probes"]

    def gap(a, b) -> float:
        flat_a, flat_b = torch.cat([t.flatten() for t in a]), torch.cat([t.flatten() for t in b])
        return float((flat_a - flat_b).abs().max() / flat_b.norm())

    k1 = gap(szo(params, loss_fn, batch, k, 1e-3, torch.Generator().manual_seed(7), kappa=0.0),
             wp_global(params, loss_fn, batch, k, 1e-3, torch.Generator().manual_seed(7)))  # fmt: skip
    seeds = probe_seeds(11, k)
    k2 = gap(mezo_gradient(params, loss_fn, batch, k, 1e-3, 11),
             perturbation_gradient(params, loss_fn, batch, mezo_directions(params, seeds), 1e-3))  # fmt: skip
    true = torch.cat([g.flatten() for g in backprop(network, params, loss_fn, batch)]).numpy()
    draws = np.stack([torch.cat([g.flatten() for g in forward_gradient(params, loss_fn, batch, k, None,
                                                                       torch.Generator().manual_seed(d))]).numpy()
                      for d in range(block["draws"])])  # fmt: skip
    stats = bias_variance(draws, true)
    return [
        {"check": "K1", "value": k1, "note": "max |szo(kappa=0) - wp_global| / ||wp_global||, same generator seed"},
        {"check": "K2", "value": k2, "note": "max |mezo - central differences along its seeds' directions| / norm"},
        {"check": "K3", "value": stats.bias / stats.bias_floor,
         "note": f"forward gradient: relative bias {stats.bias:.4f} / chance floor {stats.bias_floor:.4f} from "
                 f"{stats.n_draws} draws"},
    ]  # fmt: skip
