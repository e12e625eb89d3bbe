"""Paper 13's experiment layer: bad configs are refused before any job with the key named (probes < 1, kappa out of
range, eps <= 0, an estimator on a layer type it does not support, too few seeds at quick), the stabilised SZO has
the same cosine as the mean-normalised one, and the measurements return the rows they promise."""

from __future__ import annotations

import copy

import pytest
import torch

from conftest import ROOT
from neurips26.common.config import load_yaml
from neurips26.spectral_zo import experiment
from neurips26.spectral_zo.estimators import LOSSES, spectral_power, szo, true_gradient

CONFIG = load_yaml(ROOT / "config/spectral_zo.yaml")


def _quick():
    return copy.deepcopy(CONFIG["quick"])


def test_every_scale_passes_its_checks():
    for scale in ("smoke", "quick", "paper"):
        experiment.check_config(CONFIG[scale], scale)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda c: c["alignment"].update(probes=[0, 4]), "alignment.probes"),
        (lambda c: c["train"].update(probes=0), "train.probes"),
        (lambda c: c["methods"]["szo_k1"].update(kappa=2.5), "methods.szo_k1.kappa"),
        (lambda c: c["methods"]["szo_k1"].update(kappa=-0.1), "methods.szo_k1.kappa"),
        (lambda c: c["spectral"].update(eps=0.0), "spectral.eps"),
        (lambda c: c["train"].update(seeds=[0, 1]), "train.seeds"),
        (lambda c: c["train"].update(methods=["nope"]), "train.methods"),
    ],
)
def test_bad_inputs_are_refused_naming_the_key(edit, message):
    cfg = _quick()
    edit(cfg)
    with pytest.raises(ValueError, match=message.replace(".", r"\.")):
        experiment.check_config(cfg, "quick")


def test_a_conv_network_is_accepted_for_every_estimator_since_they_read_its_patches():
    cfg = _quick()
    cfg["datasets"]["digits"]["network"] = "conv"
    experiment.check_config(cfg, "quick")  # the library's refusal of other layer kinds is tested in test_..._conv


def test_the_parse_time_tables_mirror_the_library():
    from neurips26.spectral_zo import estimators, networks, settings, training

    assert set(settings.ESTIMATORS) == set(training.METHODS)
    assert settings.SUPPORT == networks.SUPPORT and settings.NORMALISATIONS == estimators.NORMALISATIONS
    assert settings.MOMENTS == estimators.MOMENTS


def test_the_stabilised_szo_has_the_same_directions_and_a_smaller_update():
    generator = torch.Generator().manual_seed(0)
    params = [torch.randn(8, 6, generator=generator), torch.randn(3, 8, generator=generator)]
    x = torch.cat([torch.rand(16, 5, generator=generator), torch.ones(16, 1)], 1)
    batch = (x, torch.randint(0, 3, (16,), generator=generator))
    loss = LOSSES["cross_entropy"]
    mean = szo(params, loss, batch, 4, 1e-3, torch.Generator().manual_seed(1), kappa=1.0)
    top = szo(params, loss, batch, 4, 1e-3, torch.Generator().manual_seed(1), kappa=1.0, normalise="top")
    for a, b in zip(mean, top):
        # the same directions up to one scale per layer (which re-weights the layers in the joint difference)
        assert torch.nn.functional.cosine_similarity(a.flatten(), b.flatten(), dim=0) > 0.95
        assert b.norm() < a.norm()
    c = x.T @ x / len(x)
    assert torch.linalg.eigvalsh(spectral_power(c, 1.0, "top")).max() == pytest.approx(1.0, rel=1e-5)
    assert true_gradient(params, loss, batch)[0].shape == params[0].shape


def test_a_diverging_szo_stops_with_its_step_instead_of_failing_in_eigh():
    arrays = experiment.load_dataset(CONFIG["quick"]["datasets"]["digits"])
    network = experiment.network_for({"hidden": [16]}, 64)
    block = {"probes": 2, "eps": 1e-3, "batch": 32, "budget": 2000, "evals": 1}
    result = experiment.train_seed({"estimator": "szo", "kappa": 2.0}, network, arrays, block, 1e20, 0)
    assert result.diverged is not None and result.diverged_step is not None


def test_the_alignment_rows_cover_every_method_probe_step_and_layer():
    arrays = experiment.load_dataset(CONFIG["smoke"]["datasets"]["digits"])
    block = {**CONFIG["smoke"]["alignment"], "repeats": 1}
    methods = {m: CONFIG["smoke"]["methods"][m] for m in ("wp_global", "szo_k0", "szo_k1")}
    rows = experiment.alignment(methods, arrays, block, 0)
    assert len(rows) == len(methods) * len(block["probes"]) * len(block["steps"]) * (len(block["hidden"]) + 2)
    by = {(r["method"], r["probes"], r["step"], r["layer"]): r["cosine"] for r in rows}
    # kappa = 0: the same draws (up to the rounding of Z @ I)
    assert by[("wp_global", 4, 0, "overall")] == pytest.approx(by[("szo_k0", 4, 0, "overall")], rel=1e-4)


def test_the_runtime_model_mirrors_the_pass_counts_and_grows_with_the_config():
    from neurips26.spectral_zo import settings, training

    assert set(settings.PASSES) == set(training.FORWARD_PASSES)
    assert all(settings.PASSES[m](k, n) == training.FORWARD_PASSES[m](k, n)
               for m in settings.PASSES for k in (1, 8, 64) for n in (1, 3))  # fmt: skip
    paper = load_yaml(ROOT / "config/spectral_zo.yaml")["paper"]
    minutes = {(d, g): settings.train_minutes(paper, d, g, 3072 if d == "cifar10" else 784)
               for d in paper["train"]["datasets"] for g in paper["train"]["groups"]}  # fmt: skip
    assert all(settings.STARTUP_MIN < m <= 1440 for m in minutes.values())  # within one day of a GPU
    assert minutes["cifar10", "szo_k1"] > minutes["mnist", "szo_k1"]  # more weights
    # linear in the runs and the budget (up to the rounding of steps and minutes)
    doubled = {**paper, "train": {**paper["train"], "budget": 2 * paper["train"]["budget"]}}
    base = minutes["mnist", "szo_k1"] - settings.STARTUP_MIN
    assert abs(settings.train_minutes(doubled, "mnist", "szo_k1", 784) - settings.STARTUP_MIN - 2 * base) <= 1
    one_seed = {**paper, "train": {**paper["train"], "seeds": [0], "lr_grid": [0.1]}}
    assert abs(settings.train_minutes(one_seed, "mnist", "szo_k1", 784) - settings.STARTUP_MIN - base / 6) <= 1
    # one run's seconds by hand: szo at K = 64 on 785-1024-1024-10, batch 128, 2M passes
    weights = 785 * 1024 + 1024 * 1024 + 1024 * 10
    per_pass = 2 * 128 * weights / settings.GPU_FLOPS + settings.PROBE_BYTES * weights / settings.GPU_BANDWIDTH
    expected = (2_000_000 // 129) * (129 * per_pass + settings.STEP_S_DEFAULT)
    assert settings.run_seconds("szo", 64, 2_000_000, 128, [785, 1024, 1024, 10]) == pytest.approx(expected)
