"""Write results/{scale}/bird/report.md: the phase diagram's agreement with theory, the critical SNRs, k_mem vs
k*, memorization, calibration against networks, step cost, claims, figures, runtimes and deviations."""

import numpy as np
import pandas as pd

from neurips26.common.io import read_provenance, write_text
from neurips26.common.provenance import provenance_line
from neurips26.common.report import claims_markdown, closing_sections, markdown_table
from neurips26.common.runtime import start_job

inp, params = snakemake.input, snakemake.params
log = start_job(snakemake)
scale = snakemake.wildcards.scale
PROVENANCE = ["git_commit", "config_hash"]
phase, boundary, kmem, kcal, claims = (
    pd.read_parquet(p).drop(columns=PROVENANCE, errors="ignore")
    for p in (inp.phase, inp.boundary, inp.kmem, inp.kcal, inp.claims)
)
memorization = pd.concat([pd.read_parquet(p) for p in inp.memorization], ignore_index=True)
cost = pd.concat([pd.read_parquet(p) for p in inp.cost], ignore_index=True)
agreement = (
    phase.assign(agree=phase["memorize_emp"] == phase["memorize_theory"])
    .groupby(["dataset", "n_train"], as_index=False)
    .agg(
        cells=("agree", "size"),
        agreement=("agree", "mean"),
        memorizing_measured=("memorize_emp", "mean"),
        memorizing_theory=("memorize_theory", "mean"),
    )
)
boundary_table = (
    boundary[boundary["k"] > 0]
    .sort_values(["dataset", "n_train", "k"])
    .assign(log10_ratio=lambda f: np.log10(f["snr_crit_emp"] / f["snr_crit_theory"]))
    .drop(columns="window")
)
kmem_table = (
    kmem.assign(
        cell=[f"{m:.2g} / {s:.0f}".replace("nan", "none") for m, s in zip(kmem["k_mem_emp"], kmem["k_star_theory"])]
    )
    .pivot_table(index=["dataset", "snr"], columns="n_train", values="cell", aggfunc="first")
    .reset_index()
)
memo = memorization.pivot_table(index=["dataset", "n_train"], columns="window", values="fraction_memorized")
memo = memo[sorted(memo.columns, key=lambda w: (w == "full", int(w) if w != "full" else 0))]
kcal_summary = kcal.groupby(["arch", "epoch"], as_index=False).agg(
    best_cos=("best_cos", "mean"),
    ideal_cos=("ideal_cos", "mean"),
    linear_cos=("linear_cos", "mean"),
    k_cal=("k_cal", "mean"),
    k_mem_frac=("k_mem_frac", "mean"),
    k_mem_nats=("k_mem_nats", "mean"),
)
bird_cost = cost[cost["n_train"].notna()].astype({"n_train": int})
cost_table = bird_cost.pivot_table(
    index=["dataset", "method"], columns="n_train", values="seconds_per_image"
).reset_index()
networks = cost[cost["n_train"].isna()][["dataset", "method", "seconds_per_image"]]
datasets = "\n".join(f"- `{name}`: {d['kind']}, N in {d['n_values']}" for name, d in params.datasets.items())
text = f"""# Paper 04: BIRD, Bayesian information restricted diffusion (scale `{scale}`)

Each pixel of a BIRD model sees a k x k window of the noisy image ({params.restriction} restriction),
infers the posterior over which of the N training images produced it, and denoises with the posterior mean
(the full window is the ideal empirical denoiser). Windows: {params.windows}; SNR grid: {params.snr["count"]}
values from {params.snr["min"]:g} to {params.snr["max"]:g} (legacy cosine schedule); MI = log N - mean posterior
entropy over {params.n_images} training images, central pixels. Data:

{datasets}

Networks ({", ".join(params.archs)}) are trained on {params.net_dataset} with N = {params.net_n_train} for
{params.epochs} epochs, seeds {params.net_seeds} (the claims on networks are decided from the spread over
seeds and need at least 3); checkpoints {params.checkpoint_epochs} are compared with BIRD along
{params.calibrate["trajectories"]} of their own DDIM trajectories ({params.calibrate["steps"]} steps).
Rerun: `snakemake -c2 results/{scale}/bird/report.md`.

## Claims

{claims_markdown(claims)}

## The phase diagram against theory

A cell (dataset, N, window, SNR) memorizes when I >= {1 - params.fraction_of_log_n:g} log N
(measured) or I_G >= log N (Gaussian channel theory).

{markdown_table(agreement)}

### Critical SNR per window: theory (I_G = log N) and measured ({params.nats:g}-nat crossing)

{markdown_table(boundary_table)}

### k_mem (measured, interpolated) / k* (theory) per SNR (rows) and N (columns); none: no window memorizes

{markdown_table(kmem_table)}

## Memorization of BIRD's samples (fraction with nearest / second-nearest distance < 1/3)

{markdown_table(memo.reset_index())}

## BIRD against trained networks (mean over the DDIM steps of each checkpoint)

{markdown_table(kcal_summary)}

## Cost of one denoising step (seconds per image, one CPU thread)

BIRD per N (its cost grows linearly with N) and the networks (independent of N):

{markdown_table(cost_table)}

{markdown_table(networks)}

{
    closing_sections(
        inp.figures,
        snakemake.output[0],
        inp.captions,
        params.benchmarks,
        inp.deviations,
        provenance_line(read_provenance(inp.claims)),
    )
}"""
write_text(snakemake.output[0], text)
log.info("report written, %d claims", len(claims))
