"""Paper 18: the OA-OT fit (rules amortized_ot_fit and amortized_ot_fit_seeded), a full-batch L-BFGS solve, runs on
the job's device. The profile gives these rules no GPU (tests/test_gpu_placement.py says why); run under a fake
accelerator (tests/fake_gpu.py), a tensor of the solve left on the CPU next to one on the device fails."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fake_gpu import fake_gpu
from neurips26.amortized_ot import costs, method, sinkhorn


def pairs(P: int = 6, n: int = 5, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(P, n, 2))
    y = rng.uniform(size=(P, n, 2))
    a = rng.dirichlet(np.ones(n), size=P)
    b = rng.dirichlet(np.ones(n), size=P)
    return x, a, y, b, costs.cost_matrix(x, y, "sqeuclidean")


@pytest.mark.gpu_rule("amortized_ot_fit")
@pytest.mark.gpu_rule("amortized_ot_fit_seeded")
def test_the_oa_ot_fit_runs_on_the_jobs_device(monkeypatch):
    x, a, y, b, _ = pairs()
    devices = []  # the solve has no module whose placement the fake device checks: its objective says where it runs

    def semi_dual(f, a, b, cost, eps):
        devices.append({t.device.type for t in (f, a, b, cost)})
        return sinkhorn.semi_dual(f, a, b, cost, eps)

    monkeypatch.setattr(method, "semi_dual", semi_dual)
    with fake_gpu():
        model, trace = method.fit_model("oa", x, a, y, b, None, "sqeuclidean", 4, 2, 1e-3, seed=0, eps=0.5, max_iter=1)
    assert devices and all(found == {"meta"} for found in devices), devices
    assert model.coef.shape == (2 * (4 + 1),) and isinstance(model.coef, np.ndarray) and len(trace) >= 1


def test_a_cost_left_on_the_cpu_fails_under_the_fake_device():
    """The check has teeth: the semi-dual of potentials on the device against a CPU cost fails."""
    _, a, _, b, cost = pairs()
    with fake_gpu() as device:
        f = torch.zeros(a.shape, dtype=torch.float64, device=device)
        with pytest.raises((RuntimeError, NotImplementedError)):
            sinkhorn.semi_dual(f, torch.as_tensor(a).to(device), torch.as_tensor(b).to(device), cost, 0.5)
