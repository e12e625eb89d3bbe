"""Write results/{scale}/amortized_ot/report.md: what ran, tables, figures, claims, runtimes, deviations."""

import pandas as pd

from neurips26.amortized_ot import summary
from neurips26.common.io import read_provenance, write_text
from neurips26.common.provenance import provenance_line
from neurips26.common.report import claims_markdown, closing_sections, markdown_table
from neurips26.common.runtime import start_job

log = start_job(snakemake)
scale, params = snakemake.wildcards.scale, snakemake.params
all_seeds, claims = pd.read_parquet(snakemake.input.metrics), pd.read_parquet(snakemake.input.claims)
metrics = all_seeds[all_seeds["seed"] == params.seed]  # the tables below: the base fit seed
L = params.main_projections
res_by_task = dict(params.res_by_task)

text = f"""# Paper 18: amortized OT from sliced potentials (scale `{scale}`)

RA-OT (least squares) and OA-OT (entropic semi-dual) fit one functional linear model of the Sinkhorn
potential f on exact 1-D Kantorovich potentials along {L} fixed directions (K = {params.n_basis} RBF
coefficient functions); the plan is recovered with g = c-transform of f. Tasks: digits as grid measures
({params.digits_source}, {params.digits_train_pairs} training pairs at {res_by_task["digits"]}x{res_by_task["digits"]}),
colour transfer ({res_by_task["colour"]} colours), supply-demand on the sphere ({res_by_task["sphere"]} points),
minibatch OT-CFM (8 Gaussians to moons). Rerun: `snakemake -c2 results/{scale}/amortized_ot/report.md`.

## Claims

{claims_markdown(claims)}

Claims comparing fitted methods rest on {len(params.fit_seeds)} fit seed(s) {list(params.fit_seeds)} (RA-OT, OA-OT
and Meta-OT refitted on the same training pairs) and the CFM claim on {len(params.cfm_seeds)} training seed(s);
each is decided on the hull of a t interval over seeds and a paired bootstrap over test pairs (`low`, `high`).

## Accuracy and speed (median over test pairs; L = {L}; training resolution; fit seed {params.seed})

{markdown_table(summary.accuracy_table(metrics, L, res_by_task))}

RMSE of f and g are a-/b-weighted after centering (<f, a> = <g, b>); marginal error is the L1 error
of both marginals of the recovered plan; cost error is relative to the Sinkhorn plan's transport cost;
warm/cold iterations count Sinkhorn iterations to marginal error {params.warm_tol:g};
t_pred_ms is wall time per instance on this machine (batch time / pairs), plan recovery included.

## Median RMSE of f per fit seed (training resolution, L = {L})

{markdown_table(summary.seeds_table(all_seeds, L, res_by_task))}

## Error against the number of projections (digits, RMSE of f, fit seed {params.seed})

{markdown_table(summary.projections_table(metrics, res_by_task["digits"]))}

## Atom-count independence (digits; fitted at {res_by_task["digits"]}x{res_by_task["digits"]})

{markdown_table(summary.resolution_table(metrics, L))}

Meta-OT has no row here: its MLP takes the weights on the training grid as input and cannot be applied to another atom count.

## Minibatch OT conditional flow matching (mean over training seeds {list(params.cfm_seeds)})

{markdown_table(summary.cfm_table(all_seeds))}

{
    closing_sections(
        snakemake.input.figures,
        snakemake.output[0],
        snakemake.input.captions,
        params.benchmarks,
        snakemake.input.deviations,
        provenance_line(read_provenance(snakemake.input.metrics)),
    )
}"""
write_text(snakemake.output[0], text)
log.info("report written, %d claims", len(claims))
