"""Write results/{scale}/pred_loss_space/report.md: the 3x3 tables per regime, shares, claims, figures."""

import pandas as pd

from neurips26.common.io import read_provenance, write_text
from neurips26.common.provenance import provenance_line
from neurips26.common.report import claims_markdown, closing_sections, markdown_table
from neurips26.common.runtime import start_job
from neurips26.pred_loss_space import summary

log = start_job(snakemake)
scale, params = snakemake.wildcards.scale, snakemake.params
metrics, claims = pd.read_parquet(snakemake.input.metrics), pd.read_parquet(snakemake.input.claims)
regimes = "\n".join(
    f"- `{r['dataset']}` with `{r['arch']}` ({'bottleneck' if r['bottleneck'] else 'no bottleneck'}), "
    f"{r.get('steps', params.steps)} steps, seeds {r.get('seeds', params.seeds)}"
    for r in params.regimes
)
matrices = "\n\n".join(
    f"### {name}\n\nDenoising MSE (x-space, mean over the t grid); rows: prediction space, columns: loss space\n\n"
    f"{markdown_table(summary.matrix(metrics, key, 'mse'))}\n\nFD (proxy)\n\n"
    f"{markdown_table(summary.matrix(metrics, key, 'fd'))}"
    + (
        f"\n\nFID (Inception-v3 pool3 features, against the training set; the claims use it)\n\n"
        f"{markdown_table(summary.matrix(metrics, key, 'fid'))}"
        if key in summary.fid_regimes(metrics)
        else ""
    )
    for key, name in summary.regimes(metrics)
)

text = f"""# Paper 01: prediction space vs loss space (scale `{scale}`)

Every cell of the 3x3 matrix (prediction space x loss space, each in x, eps, v) is trained once per seed of
its regime (the nine cells of a seed share it) with Adam (batch {params.batch}, lr {params.lr:g}, EMA {params.ema:g}),
t ~ logit-normal({params.p_mean:g}, {params.p_std:g}), then sampled with Heun ({params.sample["steps"]}
steps, {params.sample["n"]} samples) and scored on held-out data. Regimes:

{regimes}

Rerun: `snakemake -c2 results/{scale}/pred_loss_space/report.md`.

## Claims

{claims_markdown(claims)}

## The 3x3 matrices

FD is a Frechet distance on features of a classifier trained by the pipeline (digits) or on the toy's
2-D manifold coordinates: a proxy, not FID. Where a regime also shows an FID table (Inception-v3 pool3
features against the training set, `evaluate.inception_fid`), the claims and the variance shares use FID.

{matrices}

## Variance of log-MSE and log-FD explained by each factor (two-way ANOVA without interaction)

{markdown_table(summary.shares(summary.quality_view(metrics)))}

## Training losses and samples (per cell, mean over seeds)

{markdown_table(summary.run_table(metrics))}

{
    closing_sections(
        snakemake.input.figures,
        snakemake.output[0],
        snakemake.input.captions,
        snakemake.params.benchmarks,
        snakemake.input.deviations,
        provenance_line(read_provenance(snakemake.input.metrics)),
    )
}"""
write_text(snakemake.output[0], text)
log.info("report written, %d claims", len(claims))
