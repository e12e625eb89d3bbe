"""The probe memory bound (estimators.probe_memory): where a batched pass would pass it, every batched-probe estimator
runs its probes in chunks, from the same draws, and its estimate equals the one-pass estimate (same seed) up to float
rounding, on the MLP and on the ConvNet; within the bound the one pass runs unchanged."""

import pytest
import torch

from neurips26.spectral_zo import estimators
from neurips26.spectral_zo.estimators import probe_chunk, probe_memory, squared_error
from neurips26.spectral_zo.networks import MLP, ConvNet, estimate

DT = torch.float64
METHODS = {
    "wp_global": {},
    "wp_layerwise": {},
    "spsa": {},
    "node_perturbation": {},
    "forward_gradient": {},
    "agzo": {"rank": 3},
    "agzo_central": {"rank": 3, "differences": "central"},
    "szo": {"kappa": 1.0, "bias_correction": True},
    "szo_layerwise": {"kappa": 2.0, "schedule": "layerwise", "normalise": "top"},
}


def _mlp(seed=0):
    g = torch.Generator().manual_seed(seed)
    network = MLP((6, 9, 7, 3), activation="tanh")
    x = torch.randn(10, 6, generator=g, dtype=DT)
    return network, network.init(g, DT), (x, torch.randn(10, 3, generator=g, dtype=DT))


def _conv(seed=0):
    g = torch.Generator().manual_seed(seed)
    network = ConvNet(in_channels=1, side=5, channels=(2, 3), strides=(1, 2), classes=2, activation="tanh")
    x = torch.randn(4, 1, 5, 5, generator=g, dtype=DT)
    return network, network.init(g, DT), (x, torch.randn(4, 2, generator=g, dtype=DT))


def _run(problem, method, bound):
    network, params, batch = problem
    name = method.split("_central")[0].replace("szo_layerwise", "szo")
    generator = torch.Generator().manual_seed(7)
    with probe_memory(bound):
        return estimate(name, network, params, squared_error, batch, 5, 1e-3, generator, **METHODS[method])


@pytest.mark.parametrize("problem", [_mlp, _conv], ids=["mlp", "conv"])
@pytest.mark.parametrize("method", sorted(METHODS))
def test_chunked_probes_equal_the_one_pass_estimate(problem, method, monkeypatch):
    whole = _run(problem(), method, None)
    passes = []
    original = estimators._batch_loss

    def counting(params, *args, **kwargs):
        passes.append(max(w.shape[0] if w.dim() == 3 else 1 for w in params))
        return original(params, *args, **kwargs)

    monkeypatch.setattr(estimators, "_batch_loss", counting)
    chunked = _run(problem(), method, 1)  # a bound below one probe: one probe (pair) a pass
    for a, b in zip(whole, chunked):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-12)
    if problem is _mlp and method not in ("forward_gradient",):
        assert len(passes) >= 5 and max(passes) <= 2  # chunks of at most one pair


def test_within_the_bound_one_pass_runs_and_the_chunk_fits_the_bound():
    with probe_memory(10_000):
        assert probe_chunk(100, 50) == 50  # 5,000 bytes fit: one pass
        assert probe_chunk(300, 50) == 33  # 15,000 do not: 33 probes a pass
        assert probe_chunk(20_000, 50) == 1  # one probe passes the bound alone: one at a time
    with probe_memory(None):
        assert probe_chunk(10**12, 10**6) == 10**6
    assert estimators.probe_bound() == estimators.DEFAULT_PROBE_BYTES
    with pytest.raises(ValueError, match="probe bytes"):
        with probe_memory(0):
            pass
