"""Paper 04's tables: the phase diagram against theory, k_mem, k_cal, and the checks of the config (the claims' verdicts
are tested in test_bird_claims.py)."""

import copy
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import snakemake
from neurips26.bird import calibration, claims, experiment, summary

ROOT = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((ROOT / "config/bird.yaml").read_text())


def info_frame(entropy_of, windows=("1", "3", "5", "full"), snrs=(0.1, 1.0, 10.0), n=64, dataset="toeplitz16"):
    rows = []
    for snr in snrs:
        for w in windows:
            h = entropy_of(experiment.window_k(w), snr)
            rows.append(
                {
                    "dataset": dataset,
                    "n_train": n,
                    "snr": snr,
                    "t": 0.5,
                    "window": w,
                    "k": experiment.window_k(w),
                    "mi_central": np.log(n) - h,
                    "log_n": np.log(n),
                }
            )
    return pd.DataFrame(rows)


def theory_frame(i_gauss_of, windows=("1", "3", "5", "full"), snrs=(0.1, 1.0, 10.0), dataset="toeplitz16"):
    return pd.DataFrame(
        [
            {
                "dataset": dataset,
                "window": w,
                "k": experiment.window_k(w),
                "n_train": 0,
                "snr": s,
                "quantity": "i_gauss",
                "value": i_gauss_of(experiment.window_k(w), s),
            }
            for w in windows
            for s in snrs
        ]
    )


def test_phase_table_marks_memorization_by_measured_and_theoretical_information():
    log_n = np.log(64)
    info = info_frame(lambda k, snr: 0.0 if (k == 0 or k * snr >= 5) else log_n / 2)
    theory = theory_frame(lambda k, snr: 2 * log_n if (k == 0 or k * snr >= 5) else 0.1)
    phase = summary.phase_table(theory, info, fraction_of_log_n=0.1)
    assert len(phase) == len(info) and (phase["memorize_emp"] == phase["memorize_theory"]).all()
    assert phase.loc[(phase["window"] == "full"), "memorize_emp"].all()
    assert not phase.loc[(phase["window"] == "1") & (phase["snr"] == 0.1), "memorize_emp"].any()


def test_phase_table_refuses_a_theory_without_the_snr_grid():
    info = info_frame(lambda k, snr: 1.0)
    theory = theory_frame(lambda k, snr: 1.0, snrs=(0.5, 5.0))
    with pytest.raises(ValueError, match="SNR grid"):
        summary.phase_table(theory, info, 0.1)


def test_entropy_crossing_interpolates_in_log_snr_and_is_nan_when_never_reached():
    snr = np.array([0.01, 0.1, 1.0, 10.0])
    assert summary.entropy_crossing(snr, np.array([4.0, 2.0, 0.2, 0.0]), 0.1) == pytest.approx(10**0.5)
    assert np.isnan(summary.entropy_crossing(snr, np.array([4.0, 3.0, 2.0, 1.0]), 0.1))
    assert np.isnan(summary.entropy_crossing(snr, np.array([0.0, 0.0, 0.0, 0.0]), 0.1))  # below from the start


def test_kmem_and_kstar_grow_where_information_is_harder_to_get():
    log_n = np.log(64)
    # entropy falls with k and with SNR: the window needed to memorize shrinks as the SNR grows
    info = info_frame(lambda k, snr: 0.0 if k == 0 else log_n * max(0.0, 1 - k * snr / 10))
    theory = theory_frame(lambda k, snr: 99.0 if k == 0 else k * snr / 10 * log_n)
    kmem = summary.kmem_table(summary.phase_table(theory, info, 0.1), 0.1)
    by_snr = kmem.set_index("snr")
    assert by_snr.loc[10.0, "k_mem_emp"] <= 1.0 and np.isnan(by_snr.loc[0.1, "k_mem_emp"])
    assert by_snr.loc[10.0, "k_star_theory"] == 1 and np.isnan(by_snr.loc[0.1, "k_star_theory"])
    # k_mem is reached only at SNR 10: beyond the largest window at lower SNR, consistent with growth, but no pair
    # has both k_mem reached, so none decides the noise-direction check; one N only: no pair along N
    assert claims.monotone_pairs(kmem, "noise") == {
        "share": pytest.approx(np.nan, nan_ok=True),
        "decidable": 0,
        "both_missing": 1,
        "censored_growth": 1,
        "censored_shrink": 0,
    }
    assert claims.monotone_pairs(kmem, "n")["decidable"] == 0


def calibration_frame(cos_of, entropy_of, steps=4, n=64):
    rows = []
    for step in range(steps):
        t = 1 - step / steps
        for w in ("1", "3", "5", "full", "linear"):
            k = experiment.window_k(w)
            rows.append(
                {
                    "dataset": "digits16",
                    "arch": "unet_tiny",
                    "n_train": n,
                    "seed": 0,
                    "epoch": 1,
                    "step": step,
                    "t": t,
                    "window": w,
                    "k": k,
                    "cos": cos_of(w, t),
                    "entropy_central": np.nan if w == "linear" else entropy_of(k, t),
                }
            )
    return pd.DataFrame(rows)


def test_kcal_is_the_most_similar_local_window_and_kmem_reads_the_entropy():
    log_n = np.log(64)
    frame = calibration_frame(
        lambda w, t: {"1": 0.2, "3": 0.9, "5": 0.5, "full": 0.3, "linear": 0.1}[w],
        lambda k, t: 0.0 if k in (0, 5) else (0.5 * log_n if k == 3 else log_n),
    )
    kcal = summary.kcal_table(frame, nats=0.1, calibration_fraction=0.8)
    assert (kcal["k_cal"] == 3).all() and (kcal["best_cos"] == 0.9).all()
    assert (kcal["ideal_cos"] == 0.3).all() and (kcal["linear_cos"] == 0.1).all()
    # 0.8 log N is reached between k = 1 (entropy log N) and k = 3 (0.5 log N): k = 1 + 2 * 0.2 / 0.5
    assert np.allclose(kcal["k_mem_frac"], 1.8)
    assert np.allclose(kcal["k_mem_nats"], 3 + 2 * (0.5 * log_n - 0.1) / (0.5 * log_n))


def test_checkpoint_of_another_subset_is_refused():
    saved = {"n_train": 64, "subset_indices": np.arange(64)}
    calibration.check_checkpoint_subset(saved, 64, np.arange(64), "ckpt")
    with pytest.raises(ValueError, match="N = 64 images, not the N = 32"):
        calibration.check_checkpoint_subset(saved, 32, np.arange(32), "ckpt")
    with pytest.raises(ValueError, match="another subset"):
        calibration.check_checkpoint_subset(saved, 64, np.arange(1, 65), "ckpt")


def test_cosine_is_the_mean_per_image_cosine():
    a = np.array([[1.0, 0.0], [1.0, 1.0]])
    b = np.array([[1.0, 0.0], [-1.0, -1.0]])
    assert calibration.cosine(a, b) == pytest.approx(0.0)


@pytest.mark.parametrize("scale", ["smoke", "quick", "paper"])
def test_the_shipped_config_passes_every_check(scale):
    experiment.check_config(CONFIG[scale])


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda c: c["windows"].append(4), "window k = 4 must be odd"),
        (lambda c: c["windows"].append(17), "window k = 17 must be odd and at most the image size 16"),
        (lambda c: c["datasets"]["digits16"]["n_values"].append(5000), "exceeds the 1500 training images"),
        (lambda c: c["snr"].update(min=200.0), "snr.min"),
        (lambda c: c["networks"]["train"].update(checkpoint_epochs=[1, 500]), "after the last epoch"),
        (lambda c: c["networks"].update(dataset="cifar"), "networks.dataset"),
        (lambda c: c["sample"].update(windows=[9, "full", 15]), "not among windows"),
        (lambda c: c["datasets"]["toeplitz16"].update(alpha=-1.0), "alpha"),
    ],
)
def test_an_inconsistent_config_is_rejected_naming_the_problem(change, message):
    cfg = copy.deepcopy(CONFIG["quick"])
    change(cfg)
    with pytest.raises(ValueError, match=message):
        experiment.check_config(cfg)


@pytest.mark.parametrize(
    "change, pieces",
    [
        (lambda d: d["quick"]["restriction"].update(type="lowpass"), ("quick.restriction.type", "local, soft")),
        (lambda d: d["smoke"]["windows"].append(4), ("config/bird.yaml", "smoke", "window k = 4 must be odd")),
        (lambda d: d["quick"]["datasets"]["digits16"]["n_values"].append(2000), ("quick", "N = [2000] exceeds")),
        (lambda d: d["smoke"]["snr"].update(min=-1.0), ("smoke.snr.min",)),
    ],
)
def test_a_bad_config_stops_snakemake_before_any_job(workflow_copy, change, pieces):
    path = workflow_copy / "config/bird.yaml"
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data))
    out = snakemake(workflow_copy, "-n", "results/smoke/bird/report.md", check=False)
    text = out.stdout + out.stderr
    assert out.returncode != 0 and "Select jobs to execute" not in text
    for piece in pieces:
        assert piece in text, text[-2000:]
