"""Paper 04's claims: every claim holds, fails and is inconclusive on a scenario built from synthetic experiment
outputs (posterior entropies, samples, network calibrations) run through the paper's own table builders, and
decided against the real config/claims/bird.yaml."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from neurips26.bird import claims, experiment, memorization, summary
from neurips26.common.claims import decide, load_definitions, verdict

ROOT = Path(__file__).resolve().parents[1]
DEFINITIONS = load_definitions(ROOT / "config/claims/bird.yaml")
SNRS = tuple(np.logspace(-2, 2, 23))  # quick's grid: the authors' 12 points and their midpoints
COARSE_SNRS = tuple(np.logspace(-2, 2, 12))
WINDOWS = ("1", "3", "5", "7", "9", "full")
SIZE = 16  # the full window's k in the synthetic channel
NATS, FRACTION, CALIBRATION_FRACTION = 0.1, 0.1, 0.8


# --- the phase diagram: a synthetic Gaussian channel I_G(k, SNR) = k / 2 log(1 + SNR) ----------------------------
# (a correlated field: a k x k window carries the information of k independent pixels, not k^2, so C3b's null, k^2
# independent pixels of the k = 1 channel's variance, sits far from the theory)


def i_gauss(k: int, snr: float) -> float:
    return 0.5 * (k or SIZE) * np.log1p(snr)


def snr_crit(k: int, n: int) -> float:
    return float(np.expm1(2 * np.log(n) / (k or SIZE)))


def exact_entropy(k, snr, n):
    """A BIRD model exactly at the theory: entropy = max(0, log N - I_G)."""
    return max(0.0, np.log(n) - i_gauss(k, snr))


@dataclass(frozen=True)
class Phase:
    """How the measured posterior entropy depends on (window k, SNR, N), and the grids it is measured on."""

    entropy: object = exact_entropy
    datasets: tuple = ("toeplitz16", "digits16")
    n_values: tuple = (64, 256, 1024)
    snrs: tuple = SNRS
    windows: tuple = WINDOWS


def phase_tables(spec: Phase):
    info, theory = [], []
    for dataset in spec.datasets:
        for w in spec.windows:
            k = experiment.window_k(w)
            theory += [
                {
                    "dataset": dataset,
                    "window": w,
                    "k": k,
                    "n_train": 0,
                    "snr": s,
                    "quantity": "i_gauss",
                    "value": i_gauss(k, s),
                }
                for s in spec.snrs
            ]
            theory += [
                {
                    "dataset": dataset,
                    "window": w,
                    "k": k,
                    "n_train": n,
                    "snr": np.nan,
                    "quantity": "snr_crit",
                    "value": snr_crit(k, n),
                }
                for n in spec.n_values
            ]
            for n in spec.n_values:
                info += [
                    {
                        "dataset": dataset,
                        "n_train": n,
                        "snr": s,
                        "t": 0.5,
                        "window": w,
                        "k": k,
                        "mi_central": np.log(n) - spec.entropy(k, s, n),
                        "log_n": np.log(n),
                    }
                    for s in spec.snrs
                ]
    info, theory = pd.DataFrame(info), pd.DataFrame(theory)
    phase = summary.phase_table(theory, info, FRACTION)
    return phase, summary.boundary_table(phase, theory, NATS), summary.kmem_table(phase, FRACTION)


# --- samples: copies of training images or new images -------------------------------------------------------------


def memorization_row(dataset, n, window, copies: float, rng) -> dict:
    """The memorization row of 32 samples of which a share `copies` are (slightly perturbed) training images."""
    train = rng.standard_normal((n, 1, 4, 4))
    n_copies = int(round(32 * copies))
    samples = np.concatenate(
        [
            train[rng.integers(0, n, n_copies)] + 1e-3 * rng.standard_normal((n_copies, 1, 4, 4)),
            rng.standard_normal((32 - n_copies, 1, 4, 4)),
        ]
    )
    ratio = memorization.nearest_distances(samples, train).ratio
    return {
        "dataset": dataset,
        "n_train": n,
        "window": window,
        "k": experiment.window_k(window),
        "fraction_memorized": memorization.fraction_memorized(ratio),
        "n_samples": 32,
    }


def memorization_table(
    full_small=1.0,
    local_big=0.0,
    cells=(
        ("toeplitz16", 64),
        ("toeplitz16", 256),
        ("toeplitz16", 1024),
        ("digits16", 64),
        ("digits16", 256),
        ("digits16", 1024),
    ),
):
    rng = np.random.default_rng(0)
    rows = []
    for dataset, n in cells:
        rows.append(memorization_row(dataset, n, "full", full_small if n <= 64 else 1.0, rng))
        rows.append(memorization_row(dataset, n, "3", local_big if n >= 256 else 0.5, rng))
    return pd.DataFrame(rows)


# --- networks: their eps is closest to BIRD with window k_target(t) --------------------------------------------


def rising_window(t, seed):
    """The window the network matches: large at high noise, small near the data (1 + 8 t, odd)."""
    return 2 * int(round(4 * t)) + 1


@dataclass(frozen=True)
class Networks:
    seeds: tuple = (0, 1, 2)
    archs: tuple = ("unet_tiny", "dit_tiny")
    target: object = rising_window  # (t, seed) -> the window the network's eps is closest to
    best_cos: float = 0.95
    ideal_cos: float = 0.5
    linear_cos: float = 0.3
    windows: tuple = ("1", "3", "5", "7", "9", "full", "linear")
    seed_spread: float = 0.01  # cosines shift by this per seed
    memorization_edge: object = None  # (k, k_target) -> entropy / log N; None: the edge sits at k_target (0.8 log N)


def edge_at_target(k, k_target):
    return 1 - 0.2 * k / k_target


def calibration_table(spec: Networks, n=256, steps=4):
    rows = []
    edge = spec.memorization_edge or edge_at_target
    for seed in spec.seeds:
        for arch in spec.archs:
            for epoch in (1, 2):
                for step in range(steps):
                    t = 1 - step / steps
                    k_target = spec.target(t, seed)
                    for w in spec.windows:
                        k = experiment.window_k(w)
                        if w == "full":
                            cos = spec.ideal_cos
                        elif w == "linear":
                            cos = spec.linear_cos
                        else:
                            cos = spec.best_cos - 0.05 * abs(k - k_target)
                        rows.append(
                            {
                                "dataset": "digits16",
                                "arch": arch,
                                "n_train": n,
                                "seed": seed,
                                "epoch": epoch,
                                "step": step,
                                "t": t,
                                "window": w,
                                "k": k,
                                "cos": cos + spec.seed_spread * seed,
                                "entropy_central": np.nan if w == "linear" else np.log(n) * edge(k, k_target),
                            }
                        )
    return pd.DataFrame(rows)


# --- one scenario: all inputs of measure_claims ---------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    phase: Phase = field(default_factory=Phase)
    networks: Networks = field(default_factory=Networks)
    memorization: tuple = ()  # (name, value) keyword arguments of memorization_table


@functools.cache
def claims_of(scenario: Scenario) -> pd.DataFrame:
    """The claims table of a scenario, decided against the real claims file (cached: scenarios repeat)."""
    phase, boundary, kmem = phase_tables(scenario.phase)
    calibration = calibration_table(scenario.networks)
    kcal = summary.kcal_table(calibration, NATS, CALIBRATION_FRACTION)
    measured = claims.measure_claims(
        phase,
        boundary,
        kmem,
        memorization_table(**dict(scenario.memorization)),
        kcal,
        summary.best_entropy_fraction(calibration, kcal),
        batch=32,
        early_steps=940,
        nats=NATS,
        fraction_of_log_n=FRACTION,
        local=claims.local_best(calibration),
    )
    return decide(DEFINITIONS, measured).set_index("claim_id")


BASE = Scenario()


def never_memorizes(k, snr, n):
    return np.log(n)


def memorizes_100x_late(k, snr, n):
    """The transition sits two decades of SNR above the theory's."""
    return exact_entropy(k, snr / 100, n)


def memorizes_10x_late(k, snr, n):
    """The transition sits one decade of SNR above the theory's (the reviewer's shifted boundary)."""
    return exact_entropy(k, snr / 10, n)


def memorizes_3x_late(k, snr, n):
    """The transition sits a factor 3 (0.48 decades) above the theory's: within a grid step of the tolerance."""
    return exact_entropy(k, snr / 3, n)


def ignores_n_3x_late(k, snr, n):
    """A boundary that ignores N and sits a factor 3 above the theory's in SNR: the offset alone does not make it
    follow the theory's N dependence."""
    return ignores_n(k, snr / 3, n)


def follows_theory_above_mid_only(k, snr, n):
    """The theory's boundary at N > 256, the N-independent one at N <= 256: only one side of N_mid moves with N."""
    return exact_entropy(k, snr, n) if n > 256 else ignores_n(k, snr, n)


def ranks_reversed(k, snr, n):
    """Larger windows need more SNR: the measured critical SNR's order over windows is the theory's reversed."""
    return exact_entropy(10 - k if k else k, snr, n)


def easier_at_large_n(k, snr, n):
    """A larger training set is memorized with smaller windows (information grows with N)."""
    return max(0.0, np.log(n) - i_gauss(k, snr) * n / 64)


def ignores_n(k, snr, n):
    """The measured information ignores N: I = min(log N, I_G log N / log 256), so memorization [I >= 0.9 log N]
    sits at I_G >= 0.9 log 256 for every N (the reviewer's N-independent boundary)."""
    return max(0.0, np.log(n) * (1 - i_gauss(k, snr) / np.log(256)))


def grows_a_tenth(k, snr, n):
    """The measured boundary moves with N by a tenth of the theory's (in log N): I = I_G (log N / log 256)^0.9."""
    return max(0.0, np.log(n) - i_gauss(k, snr) * (np.log(n) / np.log(256)) ** 0.9)


def counts_pixels(k, snr, n):
    """The measured boundary sits where k^2 independent pixels put it, not where the field's information does."""
    return max(0.0, np.log(n) - 0.5 * (k or SIZE) ** 2 * np.log1p(snr))


def noise_helps(k, snr, n):
    """Memorization gets easier as the noise grows: k_mem shrinks with the noise level."""
    return exact_entropy(k, 1.0 / snr, n)


def narrow_grid(k, snr, n):
    return exact_entropy(k, snr, n)


def falling_window(t, seed):
    return 2 * int(round(4 * (1 - t))) + 1


def edge_far_below(k, k_target):
    """Entropy already below 0.8 log N at k = 1: k_mem = 1 whatever k_cal is."""
    return 0.5 - 0.01 * k


def edge_never(k, k_target):
    """Entropy stays at log N: no fraction of log N is reached at any window."""
    return 1.0


def edge_at_small_fraction(k, k_target):
    """The entropy at k_target is 0.1 log N: the best-matching fraction is small."""
    return 1 - 0.9 * k / k_target


ONE_SEED = replace(BASE, networks=Networks(seeds=(0,)))

VERDICT_CASES = [
    ("C1a", "holds", BASE),
    ("C1a", "fails", replace(BASE, memorization=(("full_small", 0.5),))),
    ("C1a", "inconclusive", replace(BASE, memorization=(("cells", (("toeplitz16", 256),)),))),
    ("C1b", "holds", BASE),
    ("C1b", "fails", replace(BASE, memorization=(("local_big", 0.5),))),
    ("C1b", "inconclusive", replace(BASE, memorization=(("cells", (("toeplitz16", 64), ("toeplitz16", 256))),))),
    ("C2a", "holds", BASE),
    # the theory's N dependence with the boundary 3x late in SNR at every N (the quick field's C3b offset): C2a
    # removes the offset fitted at the middle N, so it tests the N dependence, not the location (C3b's subject)
    ("C2a", "holds", replace(BASE, phase=Phase(entropy=memorizes_3x_late))),
    # nothing memorizes: no boundary at the middle N to fit the offset on, nothing to compare
    ("C2a", "inconclusive", replace(BASE, phase=Phase(entropy=never_memorizes))),
    # a boundary 10x off in SNR follows the theory's N dependence once shifted, but the shift moves the cells where
    # theory and null disagree past the grid's edge: fewer than 10 are left (its location fails C3b)
    ("C2a", "inconclusive", replace(BASE, phase=Phase(entropy=memorizes_10x_late))),
    # a boundary that ignores N: it agreed with the measurement near the boundary as often as the theory did
    ("C2a", "fails", replace(BASE, phase=Phase(entropy=ignores_n))),
    ("C2a", "fails", replace(BASE, phase=Phase(entropy=ignores_n_3x_late))),
    # the theory's N dependence on one side of N_mid only: both sides are required
    ("C2a", "fails", replace(BASE, phase=Phase(entropy=follows_theory_above_mid_only))),
    ("C2a", "inconclusive", replace(BASE, phase=Phase(datasets=("digits16",)))),
    # the authors' 12-point grid alone leaves fewer than 10 cells where the theory and the null disagree
    ("C2a", "inconclusive", replace(BASE, phase=Phase(snrs=COARSE_SNRS, n_values=(64, 256)))),
    ("C2b", "holds", BASE),
    ("C2b", "holds", replace(BASE, phase=Phase(entropy=memorizes_3x_late))),
    ("C2b", "inconclusive", replace(BASE, phase=Phase(entropy=never_memorizes))),
    ("C2b", "fails", replace(BASE, phase=Phase(entropy=ignores_n_3x_late))),
    ("C2b", "fails", replace(BASE, phase=Phase(entropy=ignores_n))),
    ("C2b", "inconclusive", replace(BASE, phase=Phase(datasets=("toeplitz16",)))),
    ("C3a", "holds", BASE),
    ("C3a", "fails", replace(BASE, phase=Phase(entropy=ranks_reversed))),
    ("C3a", "inconclusive", replace(BASE, phase=Phase(snrs=(0.01, 0.02, 50.0, 100.0), n_values=(64,)))),
    ("C3b", "holds", BASE),
    ("C3b", "fails", replace(BASE, phase=Phase(entropy=memorizes_10x_late))),
    ("C3b", "fails", replace(BASE, phase=Phase(entropy=counts_pixels))),
    ("C3b", "inconclusive", replace(BASE, phase=Phase(snrs=(0.01, 0.02, 50.0, 100.0), n_values=(64,)))),
    ("C3b", "inconclusive", replace(BASE, phase=Phase(entropy=memorizes_3x_late))),
    # every measured transition lies beyond the SNR grid: the median's interval reaches infinity, so even a lower
    # bound far above the tolerance decides nothing (the verdict is conservative, never holds)
    ("C3b", "inconclusive", replace(BASE, phase=Phase(entropy=never_memorizes))),
    ("C4a", "holds", BASE),
    # no growth (a tie at every pair) and a growth of a tenth of the theory's both fail
    ("C4a", "fails", replace(BASE, phase=Phase(entropy=ignores_n))),
    ("C4a", "fails", replace(BASE, phase=Phase(entropy=grows_a_tenth))),
    ("C4a", "inconclusive", replace(BASE, phase=Phase(n_values=(64, 256), datasets=("toeplitz16",), snrs=COARSE_SNRS))),
    ("C4a", "inconclusive", replace(BASE, phase=Phase(entropy=never_memorizes))),
    ("C4b", "holds", BASE),
    ("C4b", "fails", replace(BASE, phase=Phase(entropy=noise_helps))),
    ("C4b", "inconclusive", replace(BASE, phase=Phase(entropy=never_memorizes))),
    ("C5a", "holds", BASE),
    # the linear denoiser is as close to the networks as the best local window: locality adds nothing
    ("C5a", "fails", replace(BASE, networks=Networks(linear_cos=0.95))),
    ("C5a", "inconclusive", ONE_SEED),
    # only near-full windows (k >= size - 3) were calibrated: no local window to compare
    ("C5a", "inconclusive", replace(BASE, networks=Networks(windows=("13", "15", "full", "linear")))),
    ("C5b", "holds", BASE),
    ("C5b", "fails", replace(BASE, networks=Networks(ideal_cos=0.99))),
    # local is better than the ideal denoiser, but by less than the 0.02 margin
    ("C5b", "fails", replace(BASE, networks=Networks(ideal_cos=0.94))),
    ("C5b", "inconclusive", ONE_SEED),
    ("C6a", "holds", BASE),
    ("C6a", "fails", replace(BASE, networks=Networks(memorization_edge=edge_far_below))),
    ("C6a", "inconclusive", replace(BASE, networks=Networks(memorization_edge=edge_never))),
    ("C6a", "inconclusive", ONE_SEED),
    ("C6b", "holds", BASE),
    ("C6b", "fails", replace(BASE, networks=Networks(target=falling_window))),
    ("C6b", "inconclusive", ONE_SEED),
    ("C6c", "holds", BASE),
    ("C6c", "fails", replace(BASE, networks=Networks(memorization_edge=edge_at_small_fraction))),
    ("C6c", "inconclusive", replace(BASE, networks=Networks(memorization_edge=edge_never))),
]


@pytest.mark.parametrize(
    "claim_id, expected, scenario", VERDICT_CASES, ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(VERDICT_CASES)]
)
def test_each_claim_holds_fails_or_is_inconclusive_on_its_scenario(claim_id, expected, scenario):
    row = claims_of(scenario).loc[claim_id]
    assert row["verdict"] == expected, (row["value"], row["runs"], row["low"], row["high"], row["note"])


def test_a_kmem_never_reached_on_the_window_grid_does_not_count_as_growing():
    """The reviewed defect: two missing k_mem used to become +inf >= +inf, a pair that 'does not shrink'."""
    kmem = pd.DataFrame({"dataset": "d", "n_train": [16, 64, 256], "snr": 1.0, "k_mem_emp": [np.nan, np.nan, 5.0]})
    pairs = claims.monotone_pairs(kmem)
    assert np.isnan(pairs["share"]) and pairs["decidable"] == 0
    assert pairs["both_missing"] == 1 and pairs["censored_shrink"] == 1
    grows = pd.DataFrame({"dataset": "d", "n_train": [16, 64, 256], "snr": 1.0, "k_mem_emp": [3.0, 5.0, np.nan]})
    assert claims.monotone_pairs(grows) == {
        "share": 1.0,
        "decidable": 1,
        "both_missing": 0,
        "censored_growth": 1,
        "censored_shrink": 0,
    }


def test_monotone_pairs_count_a_shrinking_kmem_as_a_failure():
    kmem = pd.DataFrame({"dataset": "d", "n_train": [16, 64, 256], "snr": 1.0, "k_mem_emp": [5.0, 3.0, 7.0]})
    assert claims.monotone_pairs(kmem)["share"] == pytest.approx(0.5)


def test_a_censored_critical_snr_is_an_interval_from_the_grid_edge():
    phase, boundary, _ = phase_tables(Phase(entropy=never_memorizes, datasets=("toeplitz16",), n_values=(64,)))
    pairs = claims.boundary_pairs(boundary, phase, NATS)
    inside = pairs[pairs["in_grid"]]
    assert len(inside) and not inside["located"].any()
    expected = np.log10(100.0 / inside["snr_crit_theory"])
    assert np.allclose(inside["deviation_low"], expected) and np.isinf(inside["deviation_high"]).all()


def test_a_located_critical_snr_is_known_only_to_within_its_grid_step():
    low, high = claims.deviation_bounds([1.0, 1.0, 10.0, 0.0], [10.0, 10.0, np.inf, 1.0], [0.1, 3.0, 1.0, 10.0])
    assert np.allclose(low, [1.0, 0.0, 1.0, 1.0]) and np.allclose(high[:2], [2.0, np.log10(10 / 3)])
    assert np.isinf(high[2:]).all()


def test_the_network_claims_rest_on_seeds_and_a_missing_arch_voids_a_seed():
    calibration = calibration_table(Networks())
    calibration = calibration[~((calibration["seed"] == 2) & (calibration["arch"] == "dit_tiny"))]
    kcal = summary.kcal_table(calibration, NATS, CALIBRATION_FRACTION)
    per_seed = claims.per_seed_network_values(kcal, 32, 940, claims.local_best(calibration))
    assert list(per_seed["seed"]) == [0, 1, 2] and per_seed["C5a"].iloc[:2].notna().all()
    assert np.isnan(per_seed["C5a"].iloc[2])  # not the unet's value alone


def test_early_checkpoints_are_counted_in_optimiser_steps():
    kcal = pd.DataFrame({"epoch": [0, 1, 60, 120], "n_train": 256})
    # 256 images in batches of 32: 8 steps per epoch; 940 steps reach epoch 117
    assert list(claims.early_checkpoints(kcal, 32, 940)["epoch"]) == [1, 60]


def test_local_windows_that_nearly_cover_the_image_are_not_local():
    """The reviewed defect: a best over windows up to k = 13 at 16 px is nearly the full window, so 'best local -
    ideal' was a tiny positive number by construction."""
    calibration = calibration_table(Networks(windows=("3", "11", "13", "full", "linear"), target=lambda t, s: 13))
    local = claims.local_best(calibration)
    assert set(local["k_local"]) == {11.0}  # 13 >= 16 - 3 is left out although it matches best
    assert np.allclose(
        local["local_cos"]
        - calibration[calibration["k"] == 11]
        .groupby(["dataset", "arch", "n_train", "seed", "epoch", "step"])["cos"]
        .max()
        .to_numpy(),
        0,
    )


def test_phase_agreement_counts_only_cells_near_the_theorys_boundary():
    phase, boundary, _ = phase_tables(Phase(datasets=("toeplitz16",), n_values=(64,)))
    share, used, missing, far = claims.phase_agreement(phase, boundary, toeplitz=True)
    assert share > 0.8 and 0 < used < len(phase) and missing == 0 and used + far == len(phase)
    shifted, *_ = claims.phase_agreement(
        *phase_tables(Phase(entropy=memorizes_10x_late, datasets=("toeplitz16",), n_values=(64,)))[:2], toeplitz=True
    )
    assert shifted < 0.8


def test_the_share_near_the_boundary_cannot_tell_the_theory_from_a_boundary_that_ignores_n():
    """The reviewed defect (issue 41): C2a was the share of cells near the boundary, which a measurement that
    ignores N also scored; C2a now counts the cells where the theory and the N-independent null disagree."""
    ignoring = Scenario(phase=Phase(entropy=ignores_n))
    phase, boundary, _ = phase_tables(ignoring.phase)
    near, *_ = claims.phase_agreement(phase, boundary, toeplitz=True)
    assert near >= 0.8  # the old C2a held
    row = claims_of(ignoring).loc["C2a"]
    assert row["verdict"] == "fails" and row["value"] < 0.2 and row["null_value"] == pytest.approx(1 - row["value"])
    base = claims_of(BASE).loc["C2a"]
    assert base["value"] == pytest.approx(1.0) and base["null_value"] == pytest.approx(0.0) and base["runs"] >= 10


def white_channel_claims(**phase) -> dict:
    """The measured claims where the field's channel is white, I_G = k^2 / 2 log(1 + SNR) (k^2 independent
    pixels of variance 1), and BIRD sits exactly at that theory: the theory is then C3b's and C4a's null."""
    white = dict(
        i_gauss=lambda k, snr: 0.5 * (k or SIZE) ** 2 * np.log1p(snr),
        snr_crit=lambda k, n: float(np.expm1(2 * np.log(n) / (k or SIZE) ** 2)),
    )
    with pytest.MonkeyPatch.context() as patch:
        for name, function in white.items():
            patch.setitem(globals(), name, function)
        phase, boundary, kmem = phase_tables(Phase(**{"entropy": counts_pixels, "datasets": ("toeplitz16",), **phase}))
    return {
        m.claim_id: m
        for m in claims.measure_claims(
            phase,
            boundary,
            kmem,
            memorization_table(),
            summary.kcal_table(calibration_table(Networks()), NATS, 0.8),
            (0.8, 1.0),
            batch=32,
            early_steps=940,
            nats=NATS,
            fraction_of_log_n=FRACTION,
        )
    }


def test_every_hard_claim_is_measured_beside_its_null():
    """Each hard claim's null is computed, and it decides: C4a (issue 41's review, #7) holds where the growth of
    the independent-pixel channel's window fails the bar (the correlated synthetic field: a k x k window carries k
    pixels' information, so the theory's window grows as log N, the pixels' as sqrt(log N)) and is inconclusive
    where the two coincide (a white field). C2a's null is the complement of its value (1 - the larger side share),
    stated so in the claims file: it adds no gate to the 0.8 bar."""
    table = claims_of(BASE)
    hard = table[table["kind"] == "hard"]
    assert set(hard.index) == {"C2a", "C4a"}, "a new hard claim needs its null scenario here"
    assert np.isfinite(hard["null_value"].to_numpy(float)).all(), hard[["value", "null_value"]]
    c4a = DEFINITIONS[[d.claim_id for d in DEFINITIONS].index("C4a")]
    base = table.loc["C4a"]
    assert base["verdict"] == "holds" and 0 < base["null_value"] < c4a.threshold, base["note"]
    assert "independent pixels" in base["note"] and "(0 by construction)" in base["note"]
    # the white field on both datasets and four N, so that the interval alone clears the bar: the pixels' window is
    # the theory's here (its growth ratio 1, up to the theory's interpolation on the grid)
    white = white_channel_claims(datasets=("toeplitz16", "digits16"), n_values=(64, 256, 1024, 4096))["C4a"]
    assert white.low >= c4a.threshold and white.null == pytest.approx(1.0, abs=0.05), white.note
    assert verdict(c4a, replace(white, null=None))[0] == "holds"  # the null alone decides
    outcome, reason = verdict(c4a, white)
    assert outcome == "inconclusive" and "null" in reason
    # C2a: on its cells the measurement sides with exactly one of theory and null, so the null is the complement
    c2a = table.loc["C2a"]
    assert c2a["null_value"] <= 1 - c2a["value"] + 1e-12
    assert "complement" in next(d.statement for d in DEFINITIONS if d.claim_id == "C2a")


def test_a_null_that_passes_makes_a_holding_claim_inconclusive():
    """C3b's null: k^2 independent pixels. Where the field's channel is white (I_G = k^2 / 2 log(1 + SNR)) the
    theory is the null, and a location that matches both tells nothing."""
    c3b = white_channel_claims()["C3b"]
    assert c3b.value <= 0.5 and c3b.null is not None and abs(c3b.null - c3b.value) < 1e-9
    outcome, reason = verdict(next(d for d in DEFINITIONS if d.claim_id == "C3b"), c3b)
    assert outcome == "inconclusive" and "null" in reason


def test_growth_pairs_leave_out_windows_censored_at_the_smallest_window():
    phase, boundary, kmem = phase_tables(Phase(datasets=("toeplitz16",)))
    pairs = claims.growth_pairs(kmem, phase, FRACTION, boundary)
    assert len(pairs) >= 10 and (pairs["growth_null"] == 0).all()
    ratio, low, high, flat, pixels = claims.growth_ratio(pairs)
    assert low <= ratio <= high and ratio == pytest.approx(1.0, abs=0.15) and flat == 0
    assert 0 < pixels < 0.5  # the pixels' window grows as sqrt(log N), the correlated field's as log N
    assert np.isnan(claims.growth_ratio(pairs.iloc[:0])[0])
    # without the boundary table there is no pixel variance: no null, never a 0 that lets the claim pass
    assert np.isnan(claims.growth_ratio(claims.growth_pairs(kmem, phase, FRACTION))[4])


def test_c2_removes_the_boundarys_offset_fitted_at_the_middle_n():
    """Review of issue 41 (item 1): a measured boundary 3x late in SNR at every N sided with the null below N_mid
    and with the theory above it, so C2a measured C3b's location error and how many cells fell on each side."""
    phase, _, _ = phase_tables(Phase(entropy=memorizes_3x_late, datasets=("toeplitz16",)))
    offset, windows = claims.snr_offset(phase, 1 - FRACTION)
    assert offset == pytest.approx(np.log10(3), abs=0.05) and windows >= 3
    agreement = claims.n_dependence_agreement(phase, True, FRACTION)
    assert agreement["below"] == 1.0 and agreement["above"] == 1.0 and agreement["null"] == 0.0
    assert claims.middle_n([64, 256, 1024]) == [256] and claims.middle_n([256, 1024, 4096, 16384]) == [1024, 4096]


def test_c2_is_decided_on_a_cluster_bootstrap_of_both_sides_of_n_mid():
    row = claims_of(replace(BASE, phase=Phase(entropy=follows_theory_above_mid_only))).loc["C2a"]
    assert row["value"] == 0.0 and row["null_value"] == 0.0 and np.isfinite([row["low"], row["high"]]).all()
    assert "below" in row["note"] and "cluster bootstrap" in row["note"]
    base = claims_of(BASE).loc["C2a"]
    assert base["low"] <= base["value"] <= base["high"] and np.isfinite(base["low"])


def test_c4a_bootstraps_blocks_of_snr_not_pairs():
    """Review of issue 41 (item 14): the pairs at one SNR share k_mem, so the bootstrap resamples (dataset, SNR
    band) blocks: copying every pair ten times within its block leaves the interval as it is."""
    phase, boundary, kmem = phase_tables(Phase(datasets=("toeplitz16",)))
    pairs = claims.growth_pairs(kmem, phase, FRACTION, boundary)
    noisy = pairs.assign(growth=pairs["growth"] * np.random.default_rng(1).uniform(0.2, 1.8, len(pairs)))
    copies = pd.concat([noisy] * 10, ignore_index=True)
    assert claims.growth_ratio(copies) == pytest.approx(claims.growth_ratio(noisy))
