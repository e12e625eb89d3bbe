"""Write results/{scale}/bbo_pile/report.md: the dataset (black boxes, trajectories, tokens, throughput), the
training runs and the scaling fit, imitation (pooled and per optimizer with its margin's interval), the model as an
optimizer on held-out boxes (and claim B3's model seeds), claims, figures, runtimes and deviations."""

import re

import pandas as pd

from neurips26.bbo_pile.claims import imitation_margins, seed_differences
from neurips26.bbo_pile.evaluation import seed_method
from neurips26.common.io import read_provenance, write_text
from neurips26.common.provenance import provenance_line
from neurips26.common.report import claims_markdown, closing_sections, markdown_table
from neurips26.common.runtime import start_job

inp, params = snakemake.input, snakemake.params
log = start_job(snakemake)
scale = snakemake.wildcards.scale
DROP = ["git_commit", "config_hash", "seed"]
data, throughput, runs, scaling, table_regret, validity, imitation, claims = (
    pd.read_parquet(p).drop(columns=DROP, errors="ignore")
    for p in (
        inp.data,
        inp.throughput,
        inp.runs,
        inp.scaling,
        inp.table_regret,
        inp.validity,
        inp.imitation,
        inp.claims,
    )
)
fit, ev, b, seeds = scaling.iloc[0], params.evaluate, params.blackboxes, params.model_seeds
margins = imitation_margins(pd.read_parquet(inp.imitation_trajectories))
differences = seed_differences(pd.read_parquet(inp.regret), seeds["condition"])
losses = {params.seed: runs.loc[runs["run"] == seeds["run"], "val_loss"].iloc[0]}
losses |= {
    int(re.search(r"/seed(\d+)/training", p).group(1)): pd.read_parquet(p).sort_values("flops")["val_loss"].iloc[-1]
    for p in inp.seed_training
}
mean_difference = differences.mean(axis=0)
per_seed = pd.DataFrame(
    [
        {
            "model_seed": k,
            "final_val_loss": loss,
            "mean_regret_difference": mean_difference.get(
                seed_method(seeds["condition"], seeds["run"], k), float("nan")
            ),
        }
        for k, loss in sorted(losses.items())
    ]
)
per_seed["pairs"] = len(differences)
matrix = imitation.pivot_table(index="true_algo", columns="cond_algo", values="nll").reset_index()
models = pd.DataFrame([{"model": name, **m} for name, m in params.models.items()])
text = f"""# Paper 05: BBO-Pile, optimization trajectories and models that imitate optimizers (scale `{scale}`)

The workflow generates the dataset: BBOB functions {b["bbob"]["functions"]} (coco-experiment) in dimensions
{b["bbob"]["dims"]}, instances {b["bbob"]["instances"]}, and global-optimization functions {b["go"]["functions"]}
(dimensions {b["go"]["dims"]}, instances {b["go"]["instances"]}; instance 0 as defined, others randomly shifted and
rotated). Optimizers {params.optimizers} run {params.budget} trials per box and seed ({params.seeds}).
BBOB functions {b["eval_functions"]} are held out: their boxes never reach training and serve for validation loss,
imitation and optimization. Trajectories are serialised as in bbo-pile (optimizer token, search space,
quantised trials with Q = {params.tokenizer["q"]} bins, objective bins over the trajectory:
`{params.tokenizer["y_norm"]}`)
with a deterministic tokenizer, packed into rows of {params.context} tokens, and decoder-only models (Qwen3-style:
RMSNorm, RoPE, grouped-query attention, SwiGLU, tied embeddings) are trained at several sizes and token budgets.
Rerun: `snakemake -c2 results/{scale}/bbo_pile/report.md`.

## Claims

{claims_markdown(claims)}

## Dataset

Trajectories, tokens, dropped trials (non-finite values) and rejected trajectories (more than 20% non-finite) per
split, family and optimizer, with generation throughput (evaluations per second):

{markdown_table(data)}

## Training runs and the scaling fit

Models:

{markdown_table(models)}

Each run's last evaluation (FLOPs = 6 N D with N the non-embedding parameters and D the training tokens;
validation loss in nats per token on the held-out boxes' trajectories); `frontier`: the run has a point on the
compute-optimal frontier used for the fit:

{markdown_table(runs)}

Fit on the frontier (every evaluation of every run): L = {fit["a"]:.4g} C^{fit["b"]:.4f}, R^2 {fit["r2"]:.3f},
{int(fit["frontier"])} points; Spearman(FLOPs, final loss) over the runs {fit["spearman"]:.3f}. Without the
largest-compute run ({fit["holdout_run"]}): L = {fit["holdout_a"]:.4g} C^{fit["holdout_b"]:.4f}, which predicts
{fit["holdout_predicted"]:.4f} for its final loss {fit["holdout_actual"]:.4f} ({fit["holdout_rel_error"]:.1%} off).

## Imitation

Mean NLL per trial value token (nats) of the held-out boxes' trajectories of each true optimizer (rows) under
each conditioning token (columns), model `{ev["run"]}`:

{markdown_table(matrix)}

Per optimizer, the margin of its own token (mean NLL under the other tokens minus under its own, per trajectory)
with its 95% t interval over the trajectories (claim B2):

{markdown_table(margins)}

## The model as an optimizer on held-out boxes

Model `{ev["run"]}` conditioned on {ev["conditions"]} (constrained decoding) and {ev["free_conditions"]}
(unconstrained: a completion that does not parse is replaced by a uniform random trial), on {ev["boxes"]}
held-out boxes x seeds {ev["seeds"]}, at temperature {ev["temperature"]}, against the real optimizers' runs on the
same boxes. Normalised regret (min_t<=T y_t - f*) / (median RS y_1 - f*), f* the lowest value ever seen on the box
(all methods and random samples):

{markdown_table(table_regret)}

Claim B3's model seeds: run `{seeds["run"]}` trained with seeds {[params.seed, *seeds["seeds"]]}, each conditioned on
{seeds["condition"]} (constrained decoding) on the same boxes and seeds; final validation loss and mean normalised
regret at T = {params.budget} minus RS's over the (box, seed) pairs every seed has:

{markdown_table(per_seed)}

Validity of decoded trials (the evaluation run, and B3's model seeds as `...@{{run}}:seed{{k}}`):

{markdown_table(validity)}

Generation throughput:

{markdown_table(throughput)}

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
