"""Write results/{scale}/thresh_mcts/report.md: instances, the sample-complexity table, error rates, per-round
cost and its slopes, the equivalence and LP checks, claims, figures, runtimes and deviations."""

import pandas as pd

from neurips26.common.io import read_provenance, write_text
from neurips26.common.provenance import provenance_line
from neurips26.common.report import claims_markdown, closing_sections, markdown_table
from neurips26.common.runtime import start_job

inp, params = snakemake.input, snakemake.params
log = start_job(snakemake)
scale = snakemake.wildcards.scale
DROP = ["git_commit", "config_hash", "seed"]
summary, slopes, cost, equivalence, lp_check, claims, table = (
    pd.read_parquet(p).drop(columns=DROP, errors="ignore")
    for p in (inp.summary, inp.slopes, inp.cost, inp.equivalence, inp.lp_check, inp.claims, inp.instances)
)
tau = summary.pivot_table(index=["instance", "delta"], columns="rule", values="mean_tau").reset_index()
errors = summary.pivot_table(index=["instance", "delta"], columns="rule", values="errors").reset_index()
t_star = summary.groupby("instance", as_index=False)["t_star"].first()
text = f"""# Paper 12: thresholding Monte Carlo tree search (scale `{scale}`)

Is the root value of a MAX/MIN tree with unknown leaf means at least theta? Every rule samples leaves until
the GLR statistic Z(root) exceeds beta(t, delta) = ln((1 + ln t) / delta){
    " (conservative: times K)" if params.conservative_beta else ""
},
then answers the empirical side. {params.runs} runs per (rule, instance, delta), each on its own seeded reward tape
shared by all rules; runs still going after {params.t_max} pulls are censored. Rules: {", ".join(params.rules)}.
Rerun: `snakemake -c2 results/{scale}/thresh_mcts/report.md`.

## Claims

{claims_markdown(claims)}

## Instances

{markdown_table(table[["id", "kind", "depth", "branching", "n_leaves", "theta", "value", "gap", "t_star"]])}

## Sample complexity: mean stopping time (pulls) per rule

{markdown_table(tau, digits=5)}

Errors (wrong answers among the runs that stopped, of {params.runs}):

{markdown_table(errors)}

## Per-round cost against the number of leaves K

{markdown_table(cost)}

Log-log slopes (1 = linear in K; log K gives about 0.2-0.3 over this range):

{markdown_table(slopes)}

## Checks

Incremental vs full ratio rule: {int(equivalence["identical"].sum())} of {len(equivalence)} runs pick identical
leaves ({int(equivalence["rounds"].sum())} pulls compared). DP vs LP: {len(lp_check)} trees, max relative error
{lp_check["relative_error"].max():.2e}.

## Full summary

{markdown_table(summary)}

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
