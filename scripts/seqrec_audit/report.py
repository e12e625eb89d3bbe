"""Write results/{scale}/seqrec_audit/report.md: the NDCG@10 table across datasets and methods with TGH's relative
gain, all metrics under the stated protocol, the shortcut diagnostics beside the gains, TGH's cost beside the
trained models', the preprocessing counts, claims, figures, runtimes and deviations."""

import pandas as pd

from neurips26.common.io import read_provenance, write_text
from neurips26.common.provenance import provenance_line
from neurips26.common.report import claims_markdown, closing_sections, markdown_table
from neurips26.common.runtime import start_job
from neurips26.seqrec_audit.claims import run_scores
from neurips26.seqrec_audit.metrics import PROTOCOL
from neurips26.seqrec_audit.summary import method_order

MODEL_NAMES = {
    "sasrec": "SASRec, cross-entropy over all items",
    "bert4rec": "BERT4Rec, Cloze task",
    "tiger": "TIGER-style generative retrieval of RQ-VAE semantic IDs",
}
inp, params = snakemake.input, snakemake.params
log = start_job(snakemake)
scale = snakemake.wildcards.scale
cfg = {
    key: params[key]
    for key in ("seed", "datasets", "trained", "replicates", "protocol", "tgh", "synthetic", "min_length")
} | params.models
DROP = ["git_commit", "config_hash", "seed"]
ndcg, seeds, gains, cost, data, claims = (
    pd.read_parquet(p).drop(columns=DROP, errors="ignore")
    for p in (inp.ndcg, inp.seeds, inp.gains, inp.cost, inp.data, inp.claims)
)
metrics = pd.read_parquet(inp.metrics)
full = metrics.pivot_table(index=["dataset", "method"], columns="metric", values="value", aggfunc="mean")
full = full[[f"{m}@{k}" for m in ("Recall", "NDCG") for k in (1, 5, 10)]].reset_index()
full["method"] = pd.Categorical(full["method"], method_order(full["method"]))
full["dataset"] = pd.Categorical(full["dataset"], cfg["datasets"])
full = full.sort_values(["dataset", "method"]).astype({"dataset": str, "method": str})
many = seeds[seeds["seeds"] > 1]
spread_text = (
    f"Seed spread of NDCG@10 (trained models; the training-free methods are deterministic):\n\n{markdown_table(many)}"
    if len(many)
    else f"One seed per trained model ({cfg['trained']['seeds']}): no seed spread to report."
)
runs = pd.read_parquet(inp.runs)
paired = [run_scores(runs, name).assign(dataset=name) for name in cfg["datasets"]]
paired = [table for table in paired if len(table) > 1]
per_run = pd.concat(paired).reset_index() if paired else pd.DataFrame()
if len(per_run):
    per_run = per_run[
        ["dataset", "data_seed", "seed", *method_order(per_run.columns.drop(["dataset", "data_seed", "seed"]))]
    ]
replicates = cfg["replicates"]
runs_text = (
    f"""## NDCG@10 per run (the claims' evidence)

A run is one data seed of a dataset with one trained seed (`seed`); the training-free methods are deterministic on a
data seed and paired with each of its trained seeds. The synthetic regimes {replicates["datasets"]} are
regenerated with data seeds {replicates["seeds"]} besides `seed` {cfg["seed"]}, and every method rerun on each; the
claims compare methods within a run and decide from the 95% t interval over runs. Datasets with more than one run:

{markdown_table(per_run)}"""
    if len(per_run)
    else "## NDCG@10 per run (the claims' evidence)\n\nOne run per dataset at this scale (one data seed, "
    "one trained seed): the claims that compare methods over runs are inconclusive here."
)
protocol, t = cfg["protocol"], cfg["tgh"]
models = []
for name in cfg["trained"]["models"]:
    m = cfg[name]
    layers = f"{m['n_blocks']} blocks" if "n_blocks" in m else f"{m.get('n_layers')} encoder and decoder layers"
    models.append(f"{MODEL_NAMES[name]} ({layers}, d = {m['d_model']}, {m['epochs']} epochs at lr {m['lr']:g})")
variants = "; ".join(f"{name}: budgets {budgets}" for name, budgets in t["variants"].items())
text = f"""# Paper 10: auditing sequential recommendation benchmarks with a transition-graph heuristic (`{scale}`)

TGH retrieves candidates from the rings (exact-hop neighbourhoods) of the item-transition graph around the last one
or two items of a user's history and ranks them by cosine of item features plus a transition-count bonus
(alpha {t["alpha"]}); {variants} (ring budgets per source item, last item first), padding `{t["pad"]}` with seed
{t["seed"]}. It is compared with popularity, Markov-1, item-kNN on the last item and on the recency-weighted
profile, and trained sequential models: {"; ".join(models)}; for each, the epoch with the best validation NDCG@10
is kept; seeds {cfg["trained"]["seeds"]}. Datasets: {", ".join(cfg["datasets"])}; synthetic regimes have
{cfg["synthetic"]["n_users"]} users and {cfg["synthetic"]["n_items"]} items.
Rerun: `snakemake -c2 results/{scale}/seqrec_audit/report.md`.

**Protocol.** Leave-two-out split by time (train = s[:-2], validation target s[-2], test history s[:-1], test
target s[-1]); history items {"removed from" if protocol["exclude_history"] else "kept among"} the candidates of
every method; ties in score matrices broken `{protocol["tie_break"]}`. {PROTOCOL}

## Claims

{claims_markdown(claims)}

## NDCG@10 across datasets and methods

`tgh_relative_gain` is the best TGH variant's NDCG@10 over the best other method's, minus 1.

{markdown_table(ndcg)}

{runs_text}

## All metrics (test targets; trained models: mean over seeds)

{markdown_table(full)}

{spread_text}

## Shortcut diagnostics and TGH's gain

Branching: mean out-degree and transition perplexity exp(H(next | last)) of the training graph; cov1 and cov2: the
share of test targets in ring 1 and in rings 1-2 of the last item. Density (ours): training transitions per
distinct edge; where edges recur, counts alone order the successors (Markov-1), where they are seen about once,
features must. Feature smoothness: FS (mean cosine of the
last item to the target minus to a random item) and FeatAUC (the target's percentile among all items by cosine to
the last item; 0.5 = none). History dependence: HD = NDCG@10(profile kNN) / NDCG@10(last-item kNN) - 1.

{markdown_table(gains)}

## Cost: TGH against the trained models

TGH needs no training: its time per 1,000 users is its whole cost (the transition counts, shared with Markov-1, are
built once per dataset and not counted). A trained model's total is training (with per-epoch validation) plus
inference on every test user.

{markdown_table(cost)}

## Data

Preprocessing counts per dataset (k-core rounds and drops for real data, users below the minimum length
{cfg["min_length"]}, targets whose item never occurs in training: cold):

{markdown_table(data)}

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
