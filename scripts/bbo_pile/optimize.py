"""The evaluation model as an optimizer on held-out black boxes: conditioned on one optimizer's token, each trial
decoded from the serialised history (constrained to the trial grammar, or free with a random fallback when the
completion does not parse), all runs batched per token step."""

import time

import pandas as pd

from neurips26.bbo_pile import experiment
from neurips26.bbo_pile.artifacts import load_decoder
from neurips26.bbo_pile.blackboxes import BlackBoxSpec, make_blackbox
from neurips26.bbo_pile.sampling import optimize_batch
from neurips26.bbo_pile.tokenizer import Vocabulary
from neurips26.common.io import write_parquet
from neurips26.common.loop import job_device
from neurips26.common.runtime import job_provenance, start_job

params, inp, wc = snakemake.params, snakemake.input, snakemake.wildcards
log = start_job(snakemake, seed=params.seed)
vocab = Vocabulary.from_json(open(inp.vocab).read())
model = load_decoder(inp.model, job_device())  # a GPU at paper scale (profiles/slurm)
boxes = experiment.eval_boxes(pd.read_parquet(inp.blackboxes), params.boxes)
problems, seeds, ids = [], [], []
for record in boxes.to_dict("records"):
    spec = BlackBoxSpec.from_record(record)
    for seed in params.eval_seeds:
        problems.append((make_blackbox(spec), list(spec.lo), list(spec.hi)))
        seeds.append(params.seed * 1000 + seed)
        ids.append((spec.bb_id, seed))
start = time.perf_counter()
runs = optimize_batch(
    model,
    vocab,
    wc.condition,
    problems,
    seeds,
    params.budget,
    context=params.context,
    constrained=wc.decoding == "constrained",
    temperature=params.temperature,
)
seconds = time.perf_counter() - start
rows = [
    {
        "bb_id": bb_id,
        "condition": wc.condition,
        "decoding": wc.decoding,
        "seed": seed,
        "trial": t,
        "x": run.x[t].tolist(),
        "y": float(run.y[t]),
        "valid_decode": bool(run.valid_decode[t]),
    }
    for (bb_id, seed), run in zip(ids, runs)
    for t in range(len(run.y))
]
table = pd.DataFrame(rows)
log.info(
    "%s (%s): %d runs x %d trials in %.1f s (%.1f trials/s), %.3f of decodes valid",
    wc.condition,
    wc.decoding,
    len(runs),
    params.budget,
    seconds,
    len(table) / seconds,
    table["valid_decode"].mean(),
)
write_parquet(table.assign(seconds=seconds), snakemake.output[0], job_provenance(snakemake, params.seed))
