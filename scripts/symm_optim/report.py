"""Write results/{scale}/symm_optim/report.md: the setup (corpus, models, optimizers per role), the symmetry
checks, the best-LR table of both sweeps with seed spreads and deltas, divergences, step times, claims, figures,
runtimes and deviations."""

import json

import pandas as pd

from neurips26.common.io import read_provenance, write_text
from neurips26.common.provenance import provenance_line
from neurips26.common.report import claims_markdown, closing_sections, markdown_table
from neurips26.common.runtime import start_job

inp, params = snakemake.input, snakemake.params
log = start_job(snakemake)
scale = snakemake.wildcards.scale
DROP = ["git_commit", "config_hash"]
claims, runs, best, step_time, equivariance, identities = (
    pd.read_parquet(p).drop(columns=DROP, errors="ignore")
    for p in (inp.claims, inp.runs, inp.best, inp.step_time, inp.equivariance, inp.identities)
)
corpus = params.corpus
if inp.corpus_meta:
    meta = json.loads(open(inp.corpus_meta).read())
    corpus_text = (
        f"the shared corpus `{meta['corpus']}` ({', '.join(meta['sources'])}: {meta['characters']:,} "
        f"characters; {meta['documents']['train']} training and {meta['documents']['val']} validation "
        f"documents, split by document), byte-level BPE with {meta['vocab_size']} tokens trained on the "
        f"training documents (tokenizers {meta['tokenizers_version']}): {meta['tokens']['train']:,} "
        f"training and {meta['tokens']['val']:,} validation tokens; text sha256 {meta['text_sha256'][:16]}"
    )
else:
    corpus_text = (
        f"`{corpus['name']}`, {corpus.get('train_shards')} training shards of 100M tokens and the validation shard"
    )
sizes = runs.groupby("arch")[["parameters", "parameters_vocab"]].first()
models = pd.DataFrame(
    [
        {
            "arch": a,
            **params.model[a],
            "parameters": sizes.loc[a, "parameters"],
            "vocabulary-indexed": sizes.loc[a, "parameters_vocab"],
        }
        for a in ("dense", "moe")
    ]
)
roles = pd.DataFrame([{"role": k, **{kk: str(vv) for kk, vv in v.items()}} for k, v in params.base.items()])
methods = pd.DataFrame(
    [{"method": m, "embedding": str(p["embedding"]), "lm_head": str(p["lm_head"])} for m, p in params.methods.items()]
)
routers = pd.DataFrame([{"router": m, "optimizer": str(p)} for m, p in params.routers.items()])
best_cols = [
    "arch",
    "method",
    "multiplier",
    "lr_embedding",
    "lr_lm_head",
    "lr_router",
    "val_loss_mean",
    "val_loss_sd",
    "seeds",
    "delta_mean",
    "delta_sd",
    "spikes",
    "at_grid_edge",
    "diverged_runs",
]
diverged = runs[runs["diverged"]][["arch", "method", "multiplier", "seed", "diverged_step", "diverged_kind"]]
broken = equivariance[~equivariance["expected"]].sort_values("rel_err")
expected = equivariance[equivariance["expected"]].groupby("optimizer")["rel_err"].max().reset_index()
t = params.train
text = f"""# Paper 07: symmetry-compatible optimizers for embeddings, LM heads and MoE routers (scale `{scale}`)

Small Qwen3-style language models (untied embedding and LM head, RMSNorm, rotary attention with q/k norms, SwiGLU;
the MoE variant routes each token to the top {params.model["moe"].get("top_k")} of
{params.model["moe"].get("n_experts")} experts, OLMoE-style) are pre-trained on {corpus_text}.
Each run takes {t["steps"]} steps of {t["batch_size"]} x {t["seq_len"]} tokens; matrix roles keep their learning
rate for the first {1 - t.get("cooldown_frac", 0.4):.0%} of the steps and then decay linearly to 0, vectors follow a
warmup-cosine schedule (the reference's schedules). Validation loss is measured every {t["eval_every"]} steps on
{t["eval_tokens"]} validation tokens. Two sweeps, each over learning-rate multipliers {params.lr_multipliers}:
the embedding + LM head optimizer on the dense model (seeds {params.seeds}) and the router optimizer on the MoE
(seeds {params.moe_seeds}). The best learning rate of a method is the grid point with the lowest mean final
validation loss; deltas are paired by seed against `{params.baseline}` (dense) and `{params.router_baseline}` (MoE).
Rerun: `snakemake -c2 results/{scale}/symm_optim/report.md`.

## Claims

{claims_markdown(claims)}

## Best learning rate per method (final validation loss, nats/token)

{markdown_table(best.reindex(columns=[c for c in best_cols if c in best.columns]))}

Runs that diverged (first non-finite loss, gradient or parameter, and its role):
{markdown_table(diverged) if len(diverged) else "none"}

## Optimizer step time, side by side on the same model

Median wall time of a whole optimizer step (`step`) and of the swept roles alone (`swept`: embedding + head, or
the router), and the ratio to the baseline's, stepped round-robin over {params.step_time_repeats} repeats:

{markdown_table(step_time)}

## Symmetry checks (float64)

Largest relative error of each update rule under the groups it should commute with (left/right permutations and
rotations, the router's shift `M + 1 v^T`):

{markdown_table(expected)}

Symmetries each rule should break, smallest error first:

{markdown_table(broken.head(12))}

Identities: {", ".join(f"{r.identity} {r.value:.1e}" for r in identities.itertuples())}.

## Setup

Models:

{markdown_table(models)}

Fixed optimizers of the other roles:

{markdown_table(roles)}

Embedding + LM head methods (learning rates are the grid centres):

{markdown_table(methods)}

Router methods:

{markdown_table(routers)}

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
