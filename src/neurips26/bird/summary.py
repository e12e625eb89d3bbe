"""Paper 04's tables from the jobs' outputs: the phase diagram against theory, the critical SNRs, k_mem vs the
theory's k*, and k_cal vs k_mem along network trajectories (paper Figs. 2 and 3; the authors'
`k_cal_vs_k_mem_sweep.py`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from neurips26.bird import information

KEYS = ["dataset", "n_train", "window", "k"]
FRACTIONS = np.linspace(0.05, 0.95, 19)  # the grid of best_entropy_fraction


def _log_snr(values) -> np.ndarray:
    return np.round(np.log10(np.asarray(values, dtype=np.float64)), 9)


def phase_table(theory: pd.DataFrame, info: pd.DataFrame, fraction_of_log_n: float) -> pd.DataFrame:
    """One row per (dataset, N, window, SNR): the measured I (central pixels) beside the theory's I_G.

    memorize_emp: I >= (1 - fraction) log N (posterior entropy at most `fraction` log N, claim C2);
    memorize_theory: I_G >= log N. The full window's I_G is the whole-image Gaussian channel.
    """
    curve = theory[theory["quantity"] == "i_gauss"].assign(key=lambda f: _log_snr(f["snr"]))
    frame = info.assign(key=_log_snr(info["snr"])).merge(
        curve[["dataset", "window", "key", "value"]].rename(columns={"value": "i_gauss"}),
        on=["dataset", "window", "key"],
        how="left",
        validate="many_to_one",
    )
    if frame["i_gauss"].isna().any():
        raise ValueError("the theory table lacks the SNR grid of the information runs: rerun the theory step")
    frame = frame.drop(columns="key").rename(columns={"mi_central": "i_hat"})
    frame["memorize_emp"] = frame["i_hat"] >= (1 - fraction_of_log_n) * frame["log_n"]
    frame["memorize_theory"] = frame["i_gauss"] >= frame["log_n"]
    return frame


def entropy_crossing(snr: np.ndarray, entropy: np.ndarray, threshold: float) -> float:
    """The SNR where the mean entropy first falls to `threshold`, interpolated in log SNR; NaN if never
    (or if it is already below it at the smallest SNR)."""
    order = np.argsort(snr)
    s, h = np.log10(np.asarray(snr, float)[order]), np.asarray(entropy, float)[order]
    below = np.nonzero(h <= threshold)[0]
    if len(below) == 0 or below[0] == 0:
        return float("nan")
    i = below[0]
    w = (h[i - 1] - threshold) / (h[i - 1] - h[i])
    return float(10 ** (s[i - 1] + w * (s[i] - s[i - 1])))


def boundary_table(phase: pd.DataFrame, theory: pd.DataFrame, nats: float) -> pd.DataFrame:
    """Per (dataset, N, window): the theory's critical SNR (I_G = log N) and the SNR where the measured
    central-pixel entropy falls to `nats` (the authors' Fig. 3(c) marker, 0.1 nats)."""
    crit = theory[theory["quantity"] == "snr_crit"].rename(columns={"value": "snr_crit_theory"})
    rows = []
    for key, group in phase.groupby(KEYS):
        entropy = group["log_n"] - group["i_hat"]
        rows.append(
            dict(zip(KEYS, key), snr_crit_emp=entropy_crossing(group["snr"].to_numpy(), entropy.to_numpy(), nats))
        )
    frame = pd.DataFrame(rows)
    return frame.merge(
        crit[["dataset", "n_train", "window", "snr_crit_theory"]], on=["dataset", "n_train", "window"], how="left"
    )


def kmem_table(phase: pd.DataFrame, fraction_of_log_n: float) -> pd.DataFrame:
    """Per (dataset, N, SNR): k_mem (the window where the central entropy falls to fraction log N,
    interpolated) and the theory's k* = min{k : I_G >= log N}, both over the local windows; NaN where none."""
    local = phase[phase["k"] > 0]
    rows = []
    for (dataset, n, snr), group in local.groupby(["dataset", "n_train", "snr"]):
        group = group.sort_values("k")
        ks, log_n = group["k"].to_numpy(float), float(group["log_n"].iloc[0])
        entropy = (group["log_n"] - group["i_hat"]).to_numpy()
        reached = group["i_gauss"].to_numpy() >= log_n
        rows.append(
            {
                "dataset": dataset,
                "n_train": n,
                "snr": snr,
                "t": float(group["t"].iloc[0]),
                "k_mem_emp": information.k_at_entropy_threshold(ks, entropy, fraction_of_log_n * log_n),
                "k_star_theory": float(ks[reached][0]) if reached.any() else float("nan"),
            }
        )
    return pd.DataFrame(rows)


def kcal_table(calibration: pd.DataFrame, nats: float, calibration_fraction: float) -> pd.DataFrame:
    """Per (network, epoch, step): k_cal = the local window whose BIRD eps is most similar to the network's,
    the best, ideal and linear similarities, and k_mem at two thresholds: `nats` (absolute) and
    `calibration_fraction` log N (the authors' best-matching fraction)."""
    rows = []
    keys = ["dataset", "arch", "n_train", "seed", "epoch", "step"]
    for key, group in calibration.groupby(keys):
        local = group[group["k"] > 0].sort_values("k")
        by_window = group.set_index("window")["cos"]
        ks, entropy, log_n = local["k"].to_numpy(float), local["entropy_central"].to_numpy(), np.log(key[2])
        best = local.loc[local["cos"].idxmax()]
        rows.append(
            {
                **dict(zip(keys, key)),
                "t": float(group["t"].iloc[0]),
                "k_cal": float(best["k"]),
                "best_cos": float(best["cos"]),
                "ideal_cos": float(by_window.get("full", np.nan)),
                "linear_cos": float(by_window.get("linear", np.nan)),
                "k_mem_nats": information.k_at_entropy_threshold(ks, entropy, nats),
                "k_mem_frac": information.k_at_entropy_threshold(ks, entropy, calibration_fraction * log_n),
            }
        )
    return pd.DataFrame(rows)


def best_entropy_fraction(
    calibration: pd.DataFrame, kcal: pd.DataFrame, fractions: np.ndarray = FRACTIONS
) -> tuple[float, float]:
    """The threshold fraction f of log N whose k_mem best matches k_cal (mean |k_mem - k_cal| over the steps
    where k_mem exists), as the authors' grid search (`MatchingCalbratedScaleAndCollapseScale.ipynb`); returns (f,
    that mean gap)."""
    best = (float("nan"), float("inf"))
    keys = ["dataset", "arch", "n_train", "seed", "epoch", "step"]
    local = calibration[calibration["k"] > 0].sort_values("k")
    groups = {key: g for key, g in local.groupby(keys)}
    k_cal = kcal.set_index(keys)["k_cal"]
    for f in fractions:
        gaps = []
        for key, group in groups.items():
            k_mem = information.k_at_entropy_threshold(
                group["k"].to_numpy(float), group["entropy_central"].to_numpy(), f * np.log(key[2])
            )
            if np.isfinite(k_mem):
                gaps.append(abs(k_mem - k_cal[key]))
        if len(gaps) >= max(1, len(groups) // 2) and np.mean(gaps) < best[1]:
            best = (float(f), float(np.mean(gaps)))
    return best


# --------------------------------------------------------------------------- the report's tables

PROVENANCE = ["git_commit", "config_hash"]


def agreement_table(phase: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, N): the cells of the phase diagram, the fraction where measurement and theory agree on
    memorization, and the fraction memorizing by each."""
    return (
        phase.assign(agree=phase["memorize_emp"] == phase["memorize_theory"])
        .groupby(["dataset", "n_train"], as_index=False)
        .agg(
            cells=("agree", "size"),
            agreement=("agree", "mean"),
            memorizing_measured=("memorize_emp", "mean"),
            memorizing_theory=("memorize_theory", "mean"),
        )
    )


def critical_snr_table(boundary: pd.DataFrame) -> pd.DataFrame:
    """The local windows' critical SNRs, measured and theory's, with log10 of their ratio."""
    return (
        boundary[boundary["k"] > 0]
        .sort_values(["dataset", "n_train", "k"])
        .assign(log10_ratio=lambda f: np.log10(f["snr_crit_emp"] / f["snr_crit_theory"]))
        .drop(columns="window")
    )


def kmem_pivot(kmem: pd.DataFrame) -> pd.DataFrame:
    """ "k_mem / k*" per SNR (rows) and N (columns); "none" where no window memorizes."""
    cells = [f"{m:.2g} / {s:.0f}".replace("nan", "none") for m, s in zip(kmem["k_mem_emp"], kmem["k_star_theory"])]
    return (
        kmem.assign(cell=cells)
        .pivot_table(index=["dataset", "snr"], columns="n_train", values="cell", aggfunc="first")
        .reset_index()
    )


def memorization_pivot(memorization: pd.DataFrame) -> pd.DataFrame:
    """The fraction of memorized samples per (dataset, N) and window (local windows by k, then the full one)."""
    memo = memorization.pivot_table(index=["dataset", "n_train"], columns="window", values="fraction_memorized")
    return memo[sorted(memo.columns, key=lambda w: (w == "full", int(w) if w != "full" else 0))].reset_index()


def kcal_summary(kcal: pd.DataFrame) -> pd.DataFrame:
    """Per (network, epoch): the similarities and k values of kcal_table, averaged over seeds and DDIM steps."""
    return kcal.groupby(["arch", "epoch"], as_index=False).agg(
        best_cos=("best_cos", "mean"),
        ideal_cos=("ideal_cos", "mean"),
        linear_cos=("linear_cos", "mean"),
        k_cal=("k_cal", "mean"),
        k_mem_frac=("k_mem_frac", "mean"),
        k_mem_nats=("k_mem_nats", "mean"),
    )


def cost_tables(cost: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(BIRD's seconds per image per method and N, the networks' seconds per image); networks have no N."""
    bird = cost[cost["n_train"].notna()].astype({"n_train": int})
    per_n = bird.pivot_table(index=["dataset", "method"], columns="n_train", values="seconds_per_image").reset_index()
    return per_n, cost[cost["n_train"].isna()][["dataset", "method", "seconds_per_image"]]


def datasets_list(datasets: dict) -> str:
    """The report's Markdown list of datasets: name, kind and N values."""
    return "\n".join(f"- `{name}`: {d['kind']}, N in {d['n_values']}" for name, d in datasets.items())


def report_tables(inputs, params) -> dict:
    """The tables of report.md from the report rule's inputs (phase, boundary, kmem, kcal, memorization, cost)
    and the list of datasets from its params."""
    phase, boundary, kmem, kcal = (
        pd.read_parquet(p).drop(columns=PROVENANCE, errors="ignore")
        for p in (inputs.phase, inputs.boundary, inputs.kmem, inputs.kcal)
    )
    memorization = pd.concat([pd.read_parquet(p) for p in inputs.memorization], ignore_index=True)
    per_n, networks = cost_tables(pd.concat([pd.read_parquet(p) for p in inputs.cost], ignore_index=True))
    return {
        "datasets": datasets_list(params.datasets),
        "agreement": agreement_table(phase),
        "critical_snr": critical_snr_table(boundary),
        "kmem": kmem_pivot(kmem),
        "memorization": memorization_pivot(memorization),
        "kcal": kcal_summary(kcal),
        "cost": per_n,
        "network_cost": networks,
    }
