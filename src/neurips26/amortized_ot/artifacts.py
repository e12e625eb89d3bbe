"""Reading and writing paper 18's trained models: Meta-OT networks and CFM flows are saved as tensors and plain
values (weights, widths, the training support, timings) and read back with torch.load(..., weights_only=True);
no pickled object ties a stored model to a class layout. RA/OA models are arrays (method.FittedModel.as_dict).
"""

from __future__ import annotations

import numpy as np
import torch

from neurips26.amortized_ot.baselines import LoadedMetaOT, MetaOTPotential, check_fixed_support
from neurips26.amortized_ot.cfm import VectorField


def metaot_state(model: MetaOTPotential, hidden, x: np.ndarray, y: np.ndarray, fit_seconds: float) -> dict:
    """What a saved Meta-OT model holds: the weights, the settings (hidden widths) and the support it was trained
    on, as tensors and plain values only (torch.load(..., weights_only=True) reads it back)."""
    return {
        "state_dict": {k: v.cpu() for k, v in model.state_dict().items()},
        "hidden": [int(h) for h in hidden],
        "x": torch.as_tensor(x),
        "y": torch.as_tensor(y),
        "fit_seconds": float(fit_seconds),
    }


def load_metaot(path, x: np.ndarray, y: np.ndarray) -> LoadedMetaOT:
    """Load a saved Meta-OT model (metaot_state) and refuse measures off its training support."""
    saved = torch.load(path, weights_only=True)
    support_x, support_y = np.asarray(saved["x"]), np.asarray(saved["y"])
    check_fixed_support(support_x[None], support_y[None], x, y)
    net = MetaOTPotential(x.shape[1], y.shape[1], tuple(saved["hidden"])).double()
    net.load_state_dict(saved["state_dict"])
    return LoadedMetaOT(net)


def flow_state(flow: VectorField, width: int, losses: list[float], train_seconds: float) -> dict:
    """What a saved flow holds: the weights, its width, the training losses and time, as tensors and plain values
    only (torch.load(..., weights_only=True) reads it back)."""
    return {
        "state_dict": {k: v.cpu() for k, v in flow.state_dict().items()},
        "width": int(width),
        "losses": [float(v) for v in losses],
        "train_seconds": float(train_seconds),
    }


def load_flow(path) -> tuple[VectorField, dict]:
    """A saved flow (flow_state), in evaluation mode, and what was saved with it."""
    saved = torch.load(path, weights_only=True)
    flow = VectorField(width=saved["width"])
    flow.load_state_dict(saved["state_dict"])
    return flow.eval(), saved
