"""The symm_optim optimizers: descent on least squares, state, refusals and build_optimizer."""

from __future__ import annotations

import pytest
import torch

from neurips26.symm_optim import optimizers as so

# optimizer name -> constructor arguments that descend on the least-squares problem below
SETTINGS = {
    "adamw": dict(lr=0.05, weight_decay=0.0),
    "muon": dict(lr=0.05),
    "spectral": dict(lr=0.05),
    "row_norm": dict(lr=0.05),
    "centered_row_norm": dict(lr=0.05),
    "right_polar": dict(lr=0.05),
    "left_polar": dict(lr=0.05),
    "centered_left_polar": dict(lr=0.05),
    "hybrid": dict(lr=0.02),
}


def _problem(seed=0, rows=8, cols=6):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(64, rows, generator=gen)
    target = torch.randn(rows, cols, generator=gen)
    y = x @ target
    w = torch.nn.Parameter(torch.zeros(rows, cols))
    return w, (lambda: 0.5 * ((x @ w - y) ** 2).mean())


def test_registry_names_every_optimizer():
    assert set(so.OPTIMIZERS) == set(SETTINGS)
    assert so.MATRIX_OPTIMIZERS == frozenset(SETTINGS) - {"adamw"}


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_each_optimizer_reduces_least_squares(name):
    w, loss_fn = _problem()
    opt = so.OPTIMIZERS[name]([w], **SETTINGS[name])
    first = float(loss_fn().detach())
    for _ in range(60):
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        opt.step()
    assert float(loss_fn().detach()) < 0.5 * first, name
    state = opt.state[w]
    assert state["step"] == 60
    for value in state.values():
        if torch.is_tensor(value):
            assert value.shape == w.shape and bool(torch.isfinite(value).all())


def test_centered_router_descends_on_a_softmax_problem():
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(128, 6, generator=gen)
    labels = (x @ torch.randn(6, 4, generator=gen)).argmax(1)
    for cls in (so.CenteredRowNorm, so.CenteredLeftPolarGrad):
        w = torch.nn.Parameter(torch.zeros(4, 6))
        opt = cls([w], lr=0.05)
        first = float(torch.nn.functional.cross_entropy(x @ w.T, labels).detach())
        for _ in range(40):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(x @ w.T, labels).backward()
            opt.step()
        assert float(torch.nn.functional.cross_entropy(x @ w.T, labels).detach()) < 0.7 * first
        if cls is so.CenteredLeftPolarGrad:  # (C + eps)^{-1/2} M_c keeps the expert mean of W at zero
            assert float(w.detach().sum(0).abs().max()) < 1e-4


def test_adamw_matches_torch_adamw():
    gen = torch.Generator().manual_seed(2)
    a = torch.nn.Parameter(torch.randn(5, 3, generator=gen))
    b = torch.nn.Parameter(a.detach().clone())
    mine = so.AdamW([a], lr=0.01, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)
    ref = torch.optim.AdamW([b], lr=0.01, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1, foreach=True)
    for _ in range(5):
        grad = torch.randn(5, 3, generator=gen)
        a.grad, b.grad = grad.clone(), grad.clone()
        mine.step()
        ref.step()
    assert torch.equal(a, b)


def _muon_pair(shape, nesterov, weight_decay, monkeypatch):
    """Our Muon and torch.optim.Muon on copies of one parameter, torch's orthogonalisation replaced by ours
    (in the parameter's dtype) so that only the update rule around it is compared."""
    from torch.optim import _muon

    monkeypatch.setattr(_muon, "_zeropower_via_newtonschulz", lambda g, coefficients, steps, eps: so.newton_schulz(g))
    gen = torch.Generator().manual_seed(4)
    a = torch.nn.Parameter(torch.randn(*shape, generator=gen))
    b = torch.nn.Parameter(a.detach().clone())
    kwargs = dict(lr=0.02, momentum=0.95, nesterov=nesterov, weight_decay=weight_decay)
    mine, ref = so.Muon([a], **kwargs), torch.optim.Muon([b], **kwargs, eps=1e-7, adjust_lr_fn="original")
    for _ in range(6):
        grad = torch.randn(*shape, generator=gen)
        a.grad, b.grad = grad.clone(), grad.clone()
        mine.step()
        ref.step()
    return a, b


@pytest.mark.parametrize("nesterov", [True, False])
@pytest.mark.parametrize("weight_decay", [0.0, 0.1])
@pytest.mark.parametrize("shape", [(6, 6), (4, 9)])
def test_muon_equals_torch_muon_where_the_scale_is_one(shape, nesterov, weight_decay, monkeypatch):
    """Square and wide matrices: ``sqrt(max(1, rows / cols)) = 1``, so multiplying the direction (ours) or
    the learning rate (torch) by it is the same: bitwise equal steps."""
    a, b = _muon_pair(shape, nesterov, weight_decay, monkeypatch)
    assert torch.equal(a, b)


def test_muon_matches_torch_muon_on_tall_matrices_up_to_rounding(monkeypatch):
    """Tall matrices: ``(U s) lr`` against ``U (s lr)``, equal up to float rounding."""
    a, b = _muon_pair((9, 4), True, 0.1, monkeypatch)
    torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7)


def test_newton_schulz_matches_torch_muon_orthogonalisation_to_bfloat16_precision():
    """torch.optim.Muon orthogonalises in bfloat16 with fused addmm; ours runs in the input's dtype."""
    from torch.optim._muon import _zeropower_via_newtonschulz

    gen = torch.Generator().manual_seed(5)
    for shape in ((6, 6), (4, 9), (9, 4)):
        g = torch.randn(*shape, generator=gen)
        theirs = _zeropower_via_newtonschulz(g, so.NS_COEFFICIENTS, 5, 1e-7).float()
        torch.testing.assert_close(so.newton_schulz(g), theirs, rtol=0, atol=0.05)


def test_state_round_trip_resumes_bit_identically():
    def run(opt, w, gen, steps):
        for _ in range(steps):
            w.grad = torch.randn(6, 4, generator=gen)
            opt.step()

    for name in sorted(SETTINGS):
        gen = torch.Generator().manual_seed(6)
        w = torch.nn.Parameter(torch.randn(6, 4, generator=gen))
        straight = so.OPTIMIZERS[name]([{"params": [w], "name": "hidden"}], **SETTINGS[name])
        run(straight, w, gen, 8)
        gen = torch.Generator().manual_seed(6)
        v = torch.nn.Parameter(torch.randn(6, 4, generator=gen))
        first = so.OPTIMIZERS[name]([{"params": [v], "name": "hidden"}], **SETTINGS[name])
        run(first, v, gen, 4)
        state = first.state_dict()
        first.param_groups[0]["lr"] = 123.0  # the saved lr comes back
        again = so.OPTIMIZERS[name]([{"params": [v], "name": "hidden"}], **SETTINGS[name])
        again.load_state_dict(state)
        assert again.param_groups[0]["lr"] == SETTINGS[name]["lr"]
        run(again, v, gen, 4)
        assert torch.equal(w, v), name


def test_optimizers_do_not_import_torch_dynamo():
    import subprocess
    import sys

    code = (
        "import sys, torch\nfrom neurips26.symm_optim import optimizers as so\n"
        "w = torch.nn.Parameter(torch.ones(3, 2))\n"
        "for cls in so.OPTIMIZERS.values():\n    w.grad = torch.ones(3, 2)\n    cls([w], lr=0.01).step()\n"
        "print('torch._dynamo' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_one_step_equals_the_pure_direction():
    gen = torch.Generator().manual_seed(3)
    g = torch.randn(10, 4, generator=gen, dtype=torch.float64)
    cases = [
        (so.RowNorm, so.row_norm_direction),
        (so.RightPolarGrad, so.right_polar_direction),
        (so.HybridPolarGrad, so.hybrid_direction),
        (so.SpectralDescent, so.spectral_direction),
    ]
    for cls, fn in cases:
        w = torch.nn.Parameter(torch.zeros(10, 4, dtype=torch.float64))
        w.grad = g.clone()
        cls([w], lr=1.0, beta=0.0).step()
        assert torch.allclose(w, -fn(g), atol=1e-12), cls.__name__
    w = torch.nn.Parameter(torch.zeros(4, 10, dtype=torch.float64))
    w.grad = g.T.clone()
    so.Muon([w], lr=1.0, exact=True).step()
    assert torch.allclose(w, -so.polar(g.T), atol=1e-12)  # Nesterov first step: direction of G itself


def test_weight_decay_is_decoupled():
    w = torch.nn.Parameter(torch.ones(3, 2))
    w.grad = torch.zeros(3, 2)
    so.RowNorm([w], lr=0.1, weight_decay=0.5).step()
    assert torch.allclose(w, torch.full((3, 2), 0.95))


@pytest.mark.parametrize("name", sorted(so.MATRIX_OPTIMIZERS))
def test_matrix_optimizers_refuse_non_matrices(name):
    with pytest.raises(ValueError, match=rf"{so.OPTIMIZERS[name].__name__}.*\(4,\)"):
        so.OPTIMIZERS[name]([torch.nn.Parameter(torch.zeros(4))], lr=0.1)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(lr=0.0), "lr"),
        (dict(lr=float("nan")), "lr"),
        (dict(beta=1.0), "beta"),
        (dict(beta=-0.1), "beta"),
        (dict(eps=0.0), "eps"),
        (dict(weight_decay=-1.0), "weight_decay"),
        (dict(alpha=-1.0), "alpha"),
        (dict(order="sideways"), "order"),
        (dict(orientation="diag"), "orientation"),
    ],
)
def test_hyperparameters_out_of_range_are_refused(kwargs, field):
    with pytest.raises(ValueError, match=field):
        so.HybridPolarGrad([torch.nn.Parameter(torch.zeros(3, 2))], **kwargs)


def test_other_field_refusals():
    p = [torch.nn.Parameter(torch.zeros(3, 2))]
    with pytest.raises(ValueError, match="momentum"):
        so.Muon(p, momentum=1.5)
    with pytest.raises(ValueError, match="ns_steps"):
        so.Muon(p, ns_steps=0)
    with pytest.raises(ValueError, match=r"betas\[1\]"):
        so.AdamW(p, betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="nu_mode"):
        so.RightPolarGrad(p, nu_mode="sum")


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_nonfinite_gradient_names_group_and_step(name):
    w = torch.nn.Parameter(torch.ones(3, 2))
    opt = so.OPTIMIZERS[name]([{"params": [w], "name": "embedding"}], **SETTINGS[name])
    w.grad = torch.ones(3, 2)
    opt.step()
    before = w.detach().clone()
    w.grad = torch.tensor([[1.0, float("nan")], [0, 0], [0, 0]])
    with pytest.raises(FloatingPointError, match=r"'embedding'.*step 2"):
        opt.step()
    assert torch.equal(w, before)  # nothing changed


class _Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(16, 4)
        self.hidden = torch.nn.Linear(4, 4, bias=True)
        self.router = torch.nn.Linear(4, 3, bias=False)
        self.lm_head = torch.nn.Linear(4, 16, bias=False)

    def forward(self, tokens):
        h = self.embed(tokens)
        h = h + torch.tanh(self.hidden(h)) * torch.softmax(self.router(h), -1).sum(-1, keepdim=True)
        return self.lm_head(h)


def _kind(name, p):
    if p.ndim == 1:
        return "vector"
    return {"embed.weight": "embedding", "lm_head.weight": "lm_head", "router.weight": "router"}.get(name, "hidden")


ASSIGN = {
    "hidden": {"name": "muon", "lr": 0.02},
    "embedding": {"name": "row_norm", "lr": 0.1},
    "lm_head": {"name": "hybrid", "lr": 0.01},
    "router": {"name": "centered_row_norm", "lr": 0.01},
    "vector": {"name": "adamw", "lr": 1e-3, "weight_decay": 0.0},
}


def test_build_optimizer_one_per_kind_and_trains():
    torch.manual_seed(0)
    model = _Tiny()
    opt = so.build_optimizer(model.named_parameters(), ASSIGN, _kind)
    assert set(opt.optimizers) == set(ASSIGN)
    assert type(opt.optimizers["lm_head"]) is so.HybridPolarGrad
    assert opt.names["vector"] == ["hidden.bias"] and opt.names["hidden"] == ["hidden.weight"]
    assert opt.optimizers["embedding"].param_groups[0]["name"] == "embedding"
    tokens = torch.randint(0, 16, (8, 5))
    losses = []
    for _ in range(20):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(tokens[:, :-1]).reshape(-1, 16), tokens[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    assert losses[-1] < losses[0]
    state = opt.state_dict()
    opt.load_state_dict(state)
    model.lm_head.weight.grad = torch.full_like(model.lm_head.weight, float("inf"))
    with pytest.raises(FloatingPointError, match="'lm_head'.*step 21"):
        opt.step()


def test_build_optimizer_refusals():
    model = _Tiny()
    with pytest.raises(ValueError, match="unknown optimizer 'lion'"):
        so.build_optimizer(model.named_parameters(), {**ASSIGN, "hidden": {"name": "lion", "lr": 1}}, _kind)
    with pytest.raises(ValueError, match="unknown kind 'attention'"):
        so.build_optimizer(model.named_parameters(), {**ASSIGN, "attention": {"name": "muon"}}, _kind)
    with pytest.raises(ValueError, match="kind_of.*'norm'"):
        so.build_optimizer(model.named_parameters(), ASSIGN, lambda n, p: "norm")
    missing = {k: v for k, v in ASSIGN.items() if k != "router"}
    with pytest.raises(ValueError, match="'router.weight'.*'router'.*does not cover"):
        so.build_optimizer(model.named_parameters(), missing, _kind)
    with pytest.raises(ValueError, match=r"'hidden.bias' of shape \(4,\).*'row_norm'"):
        so.build_optimizer(model.named_parameters(), {**ASSIGN, "vector": {"name": "row_norm", "lr": 1}}, _kind)
    with pytest.raises(ValueError, match="'name' key"):
        so.build_optimizer(model.named_parameters(), {**ASSIGN, "vector": {"lr": 1}}, _kind)


def test_build_optimizer_refuses_tied_weights_of_two_kinds():
    model = _Tiny()
    model.lm_head.weight = model.embed.weight  # tied (16 x 4)
    params = model.named_parameters(remove_duplicate=False)
    with pytest.raises(ValueError, match="tied"):
        so.build_optimizer(params, ASSIGN, _kind)
    same = so.build_optimizer(
        model.named_parameters(remove_duplicate=False),
        ASSIGN,
        lambda n, p: "embedding" if n in ("embed.weight", "lm_head.weight") else _kind(n, p),
    )
    assert "lm_head" not in same.optimizers and same.names["embedding"] == ["embed.weight"]
