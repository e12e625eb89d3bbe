"""Paper 07's seeds as a batch dimension: each seed trained in a batched ensemble equals its run alone (weights,
losses, spectra, divergence), and every optimizer updates each member of a stack as it would the member alone,
whatever the other members hold."""

from __future__ import annotations

import logging
import math
from dataclasses import replace

import numpy as np
import pytest
import torch

from neurips26.common import faults, loop
from neurips26.symm_optim import optimizers as so
from neurips26.symm_optim.model import LM, LMConfig
from neurips26.symm_optim.training import TrainSettings, train_ensemble, train_lm

SEEDS = [0, 1, 2]
DENSE = LMConfig(vocab_size=32, d_model=16, n_layers=1, n_heads=2, n_kv_heads=1, head_dim=8, d_ff=24, context=16)
MOE = replace(DENSE, d_ff=12, n_experts=4, top_k=2)
BASE = {
    "hidden": {"name": "muon", "lr": 0.02, "exact": True},
    "mlp_gate_up": {"name": "hybrid", "lr": 0.02},
    "mlp_down": {"name": "hybrid", "lr": 0.02, "orientation": "col"},
    "vector": {"name": "adamw", "lr": 0.01, "weight_decay": 0.001},
    "embedding": {"name": "row_norm", "lr": 0.5},
    "lm_head": {"name": "right_polar", "lr": 0.05},
}
ROUTED = {**BASE, "hidden": {"name": "muon", "lr": 0.02}, "router": {"name": "centered_left_polar", "lr": 0.01}}
SETTINGS = TrainSettings(seq_len=16, batch_size=4, steps=12, eval_every=4, eval_tokens=64, vector_warmup=2)
TIMING = ("optimizer_seconds",)


def _stream(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    tokens = np.tile(np.arange(3, 11), n // 8 + 1)[:n]
    noise = rng.random(n) < 0.1
    tokens[noise] = rng.integers(0, 32, noise.sum())
    return tokens.astype(np.uint16)


def _poisoned(config: LMConfig, poison: int | None) -> LM:
    """The model of ``config``; seed ``poison``'s head holds an infinity from the start."""
    model = LM(config)
    if config.seed == poison:
        model.lm_head.weight.data[5, 2] = math.inf
    return model


def _batched(config, assignment, seeds, poison=None, **kwargs):
    models = [_poisoned(replace(config, seed=seed), poison) for seed in seeds]
    results = train_ensemble(
        models, seeds, assignment, _stream(2000, 0), _stream(300, 1), SETTINGS, log=lambda _: None, **kwargs
    )
    return models, results


def _alone(config, assignment, seed, poison=None, **kwargs):
    model = _poisoned(replace(config, seed=seed), poison)
    result = train_lm(
        model, assignment, _stream(2000, 0), _stream(300, 1), replace(SETTINGS, seed=seed), log=lambda _: None, **kwargs
    )
    return model, result


def _assert_same_run(batched, alone, where: str) -> None:
    (model, result), (model_alone, result_alone) = batched, alone
    for name, tensor in model_alone.state_dict().items():
        torch.testing.assert_close(model.state_dict()[name], tensor, rtol=1e-5, atol=1e-6, msg=f"{where}: {name}")
    assert (result.diverged, result.diverged_step, result.diverged_kind) == (
        result_alone.diverged,
        result_alone.diverged_step,
        result_alone.diverged_kind,
    ), where
    assert len(result.steps) == len(result_alone.steps), where
    for row, row_alone in zip(result.steps, result_alone.steps):
        assert set(row) == set(row_alone), where
        for key, value in row_alone.items():
            if key not in TIMING:
                np.testing.assert_allclose(row[key], value, rtol=1e-5, err_msg=f"{where}: step {row['step']} {key}")
    assert [(r["step"], r["kind"], r["matrix"], r["index"]) for r in result.spectra] == [
        (r["step"], r["kind"], r["matrix"], r["index"]) for r in result_alone.spectra
    ], where
    np.testing.assert_allclose(
        [r["sigma"] for r in result.spectra], [r["sigma"] for r in result_alone.spectra], rtol=1e-4, atol=1e-7
    )
    np.testing.assert_allclose(result.final_val_loss, result_alone.final_val_loss, rtol=1e-6)


@pytest.mark.parametrize("config, assignment", [(DENSE, BASE), (MOE, ROUTED)], ids=["dense", "moe"])
def test_each_seed_trained_in_the_ensemble_equals_its_run_alone(config, assignment):
    models, results = _batched(config, assignment, SEEDS, spectrum_steps=(6, 12), device="cpu")
    assert len({round(r.final_val_loss, 6) for r in results}) == len(SEEDS)  # three different runs, not one
    for i, seed in enumerate(SEEDS):
        alone = _alone(config, assignment, seed, spectrum_steps=(6, 12), device="cpu")
        assert not alone[1].diverged and alone[1].spectra
        _assert_same_run((models[i], results[i]), alone, f"seed {seed}")


def _same_outcome(a, b) -> bool:
    return (a.diverged, a.diverged_step, a.diverged_kind, a.diverged_detail) == (
        b.diverged,
        b.diverged_step,
        b.diverged_kind,
        b.diverged_detail,
    )


def test_a_member_that_diverges_is_recorded_as_alone_and_the_others_train_on_as_alone():
    models, results = _batched(DENSE, BASE, SEEDS, poison=1, device="cpu")
    assert results[1].diverged and (results[1].diverged_step, results[1].diverged_kind) == (1, "lm_head")
    assert len(results[1].steps) == 1 and math.isnan(results[1].final_val_loss)
    assert _same_outcome(results[1], _alone(DENSE, BASE, 1, poison=1, device="cpu")[1])
    for i in (0, 2):
        assert not results[i].diverged and len(results[i].steps) == SETTINGS.steps
        _assert_same_run((models[i], results[i]), _alone(DENSE, BASE, SEEDS[i], device="cpu"), f"seed {SEEDS[i]}")


def test_the_ensemble_stops_when_its_last_member_diverges():
    # every member's head overflows within the run (at 1e36 the step of the overflow differed between machines)
    overflowing = {**BASE, "lm_head": {"name": "row_norm", "lr": 1e38}}
    _, results = _batched(DENSE, overflowing, SEEDS, device="cpu")
    assert all(r.diverged for r in results)
    for seed, result in zip(SEEDS, results):
        alone = _alone(DENSE, overflowing, seed, device="cpu")[1]
        assert _same_outcome(result, alone) and len(result.steps) == len(alone.steps) < SETTINGS.steps


def _killer(after: int):
    done = []

    def kill():
        done.append(1)
        if len(done) == after:
            raise RuntimeError("killed")

    return kill


def test_an_ensemble_killed_after_a_checkpoint_resumes_to_the_uninterrupted_result(tmp_path, monkeypatch, caplog):
    """Seed 1 diverges at step 1 and stays frozen across the checkpoint; seeds 0 and 2 train on."""
    whole_models, whole = _batched(DENSE, BASE, SEEDS, poison=1, spectrum_steps=(6,), device="cpu")
    settings = loop.LoopSettings(checkpoint=tmp_path / ".summary.ckpt", fingerprint="job", every_steps=2)
    monkeypatch.setattr(faults, "step_done", _killer(after=3))
    with pytest.raises(RuntimeError, match="killed"):
        _batched(DENSE, BASE, SEEDS, poison=1, spectrum_steps=(6,), device="cpu", loop_settings=settings)
    monkeypatch.setattr(faults, "step_done", lambda: None)
    with caplog.at_level(logging.INFO, logger="neurips26.loop"):
        models, resumed = _batched(
            DENSE, BASE, SEEDS, poison=1, spectrum_steps=(6,), device="cpu", loop_settings=settings
        )
    assert any("resuming from checkpoint" in r.getMessage() and "at step 2" in r.getMessage() for r in caplog.records)
    for model, whole_model in zip(models, whole_models):
        for name, tensor in whole_model.state_dict().items():
            assert torch.equal(tensor, model.state_dict()[name]), name
    assert [r.diverged for r in whole] == [False, True, False]
    for a, b in zip(resumed, whole):
        assert _same_outcome(a, b)
        strip = [{k: v for k, v in r.items() if k not in TIMING} for r in a.steps]
        assert str(strip) == str([{k: v for k, v in r.items() if k not in TIMING} for r in b.steps])
        assert a.spectra == b.spectra


# ---------------------------------------------------------------- optimizers on stacks of members

# optimizer name -> settings covering its variants (Newton-Schulz and exact polar, orientations, centering)
VARIANTS = [
    ("adamw", dict(lr=0.05, weight_decay=0.01)),
    ("muon", dict(lr=0.05, weight_decay=0.01)),
    ("muon", dict(lr=0.05, exact=True, nesterov=False)),
    ("spectral", dict(lr=0.05)),
    ("spectral", dict(lr=0.05, exact=False)),
    ("row_norm", dict(lr=0.05, orientation="col", weight_decay=0.01)),
    ("centered_row_norm", dict(lr=0.05)),
    ("right_polar", dict(lr=0.05)),
    ("right_polar", dict(lr=0.05, nu_mode="repo")),
    ("left_polar", dict(lr=0.05)),
    ("centered_left_polar", dict(lr=0.05)),
    ("hybrid", dict(lr=0.02)),
    ("hybrid", dict(lr=0.02, order="polar_then_row", left=True, center=True, orientation="col")),
]


def _members(shape, seed: int, scale: float = 1.0) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """Stacked weights (3, *shape) and three steps of stacked gradients."""
    gen = torch.Generator().manual_seed(seed)
    weights = torch.randn(3, *shape, generator=gen) * scale
    return weights, [torch.randn(3, *shape, generator=gen) * scale for _ in range(3)]


def _steps(name: str, kwargs: dict, weights: torch.Tensor, grads: list[torch.Tensor], members: int | None):
    p = torch.nn.Parameter(weights.clone())
    group = {"params": [p]} | ({} if members is None else {"members": members})
    opt = so.OPTIMIZERS[name]([group], **kwargs)
    for grad in grads:
        p.grad = grad.clone()
        opt.step()
    return p.detach()


@pytest.mark.parametrize("shape", [(6, 4), (4, 6)], ids=["tall", "wide"])
@pytest.mark.parametrize("name, kwargs", VARIANTS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(VARIANTS)])
def test_a_members_update_does_not_depend_on_the_other_members(name, kwargs, shape):
    weights, grads = _members(shape, 0)
    batched = _steps(name, kwargs, weights, grads, members=3)
    # other members replaced by anything else (other values, a thousand times larger, zeros): member 0 is the same
    other_weights, other_grads = _members(shape, 1, scale=1e3)
    other_weights[2] = 0.0
    for g in other_grads:
        g[2] = 0.0
    weights_b = torch.cat([weights[:1], other_weights[1:]])
    grads_b = [torch.cat([g[:1], o[1:]]) for g, o in zip(grads, other_grads)]
    batched_b = _steps(name, kwargs, weights_b, grads_b, members=3)
    assert torch.equal(batched[0], batched_b[0])
    # and each member's update is the one it gets alone: as an ensemble of one (a single-seed job) bit for bit, and
    # as a 2-D matrix up to rounding; rounding that the one-sided polar steps of rank-deficient Gram matrices
    # (right polar on wide, left polar on tall matrices) amplify by up to 1/sqrt(eps) = 1e4, hence 1e-3
    for i in range(3):
        one = _steps(name, kwargs, weights[i : i + 1], [g[i : i + 1] for g in grads], members=1)
        assert torch.equal(batched[i], one[0]), i
        alone = _steps(name, kwargs, weights[i], [g[i] for g in grads], members=None)
        assert float((batched[i] - alone).abs().max()) <= 1e-3 * float(alone.abs().max()), i


def test_stacked_parameter_groups_are_checked():
    stack = torch.nn.Parameter(torch.zeros(3, 4, 5))
    so.RowNorm([{"params": [stack], "members": 3}])
    with pytest.raises(ValueError, match="RowNorm updates 2-D matrices only"):
        so.RowNorm([stack])
    with pytest.raises(ValueError, match="has 2 members, got a parameter of shape \\(3, 4, 5\\)"):
        so.RowNorm([{"params": [stack], "members": 2}])
    with pytest.raises(ValueError, match="updates stacks of 3 2-D matrices only"):
        so.Muon([{"params": [torch.nn.Parameter(torch.zeros(3, 4))], "members": 3}])
    vectors = torch.nn.Parameter(torch.zeros(3, 4))
    built = so.build_optimizer(
        [("w", stack), ("g", vectors)],
        {"hidden": {"name": "muon", "lr": 0.02}, "vector": {"name": "adamw", "lr": 0.01}},
        lambda name, p: "vector" if p.ndim < 2 else "hidden",
        members=3,
    )
    assert set(built.optimizers) == {"hidden", "vector"}  # kinds read off one member's slice
    assert built.optimizers["vector"].param_groups[0]["members"] == 3
