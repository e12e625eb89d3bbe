"""Write results/{scale}/amortix/report.md: data and split, the oracle and its self-test, pretraining, the
scaffold-decoration table, training per advantage variant, best-of-K, PMO-lite, throughput, claims, figures,
runtimes and deviations."""

import json

import pandas as pd

from neurips26.amortix.seeds import variant_seeds
from neurips26.common.io import read_provenance, write_text
from neurips26.common.provenance import provenance_line
from neurips26.common.report import claims_markdown, closing_sections, markdown_table
from neurips26.common.runtime import start_job

inp, params = snakemake.input, snakemake.params
log = start_job(snakemake)
scale = snakemake.wildcards.scale
DROP = ["git_commit", "config_hash", "seed"]
counts, split, demos, selftest, pretrain, decoration, best_of_k, pmo, training, throughput, claims = (
    pd.read_parquet(p).drop(columns=DROP, errors="ignore")
    for p in (
        inp.counts,
        inp.split,
        inp.demonstrations,
        inp.selftest,
        inp.pretrain,
        inp.decoration,
        inp.best_of_k,
        inp.pmo,
        inp.training,
        inp.throughput,
        inp.claims,
    )
)
oracle = json.loads(open(inp.oracle).read())
demos = demos.merge(split, on="scaffold")
split_sizes = (
    demos.groupby("split")
    .agg(molecules=("smiles", "size"), scaffolds=("scaffold", "nunique"), decisions=("n_actions", "sum"))
    .reset_index()
)
clusters = split.groupby("split")["cluster"].nunique().rename("clusters").reset_index()
rl = params.rl
run_seeds = {v: variant_seeds({"rl": rl}, v) for v in rl["variants"]}
columns = [
    "method",
    "score",
    "success_rate",
    "validity",
    "retention",
    "uniqueness",
    "novelty",
    "oracle_calls_inference",
    "oracle_calls_training",
]
curve = best_of_k.pivot_table(index="k", columns="policy", values="score").reset_index()
singles = best_of_k.groupby("policy", as_index=False)[["single_shot", "break_even_k"]].first()
text = f"""# Paper 19: AMORTIX, amortized scaffold decoration (scale `{scale}`)

A graph transformer decorates a scaffold atom by atom (new atom or ring closure, then bond order, masked by
valence; the scaffold is never modified), pretrained by behaviour cloning of corpus molecules and fine-tuned by
RL on training scaffolds with advantages {", ".join(rl["variants"])}: {rl["steps"]} steps of
{rl["batch_scaffolds"]} scaffolds x {rl["group_size"]} completions, Adam lr {rl["lr"]:g}, seeds
{"; ".join(f"{v} {seeds}" for v, seeds in run_seeds.items())}.
Inference decodes each held-out test scaffold once (greedy), with no oracle call. Rerun:
`snakemake -c2 results/{scale}/amortix/report.md`.

**The objective is a surrogate.** {oracle["score"]}, where P_EGFR and P_CDK2 are random forests (ECFP4) trained on
the DUD ligand sets shipped with RDKit ({oracle["ligands"]["egfr"]} EGFR, {oracle["ligands"]["cdk2"]} CDK2) against
{oracle["decoys"]} corpus molecules as decoys, in place of the paper's TDC GSK3B and JNK3 forests. Cross-validated
ROC AUC: {", ".join(f"{k} {v:.3f}" for k, v in oracle["cv_auc"].items())}. Success: {oracle["success"]}. On the
corpus: mean score {oracle["corpus_mean_score"]:.3f}, success rate {oracle["corpus_success_rate"]:.4f}. These are not
models of real kinase activity.

## Claims

{claims_markdown(claims)}

## Scaffold decoration on {params.test_scaffolds} held-out test scaffolds

Score: mean over scaffolds of the returned molecule's score (invalid = 0). Validity and uniqueness over all
generated candidates; novelty: returned molecules not in the training split. Oracle calls per scaffold at
inference; in training, RL samples plus validation calls. Best-of-K returns the best of the pretrained policy's
first K samples. Graph GA and per-instance RL run on the first {params.baseline_scaffolds} test scaffolds
(the baseline subset) with {params.graph_ga_budget} and {params.per_instance_budget}
oracle calls per scaffold.

{markdown_table(decoration[decoration["scaffold_set"] == "test"][columns])}

Baseline subset:

{markdown_table(decoration[decoration["scaffold_set"] == "baseline subset"][columns])}

## Training per advantage variant

{markdown_table(training)}

## Best-of-K sampling against single-shot policies

Mean best score over the first K samples per test scaffold:

{markdown_table(curve)}

Single-shot score of each policy and the smallest K at which the pretrained policy's best-of-K reaches it:

{markdown_table(singles)}

## PMO-lite (start structure `{params.pmo_start}`, budget {params.pmo_budget} calls)

{markdown_table(pmo)}

## Throughput: amortized inference against instance optimisation

{markdown_table(throughput)}

## Data

Corpus filter (molecules dropped per reason; the first failing reason counts):

{markdown_table(counts)}

Scaffold split by Butina clusters (Tanimoto distance cut {params.split_cutoff}), with the molecules that have
a demonstration:

{markdown_table(split_sizes.merge(clusters, on="split"))}

Oracle self-test:

{markdown_table(selftest)}

Pretraining (behaviour cloning, NLL per decision):

{markdown_table(pretrain)}

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
