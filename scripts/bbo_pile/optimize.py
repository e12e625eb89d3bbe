"""The evaluation model as an optimizer on held-out black boxes: conditioned on one optimizer's token, each trial
decoded from the serialised history (constrained to the trial grammar, or free with a random fallback when the
completion does not parse), all runs batched per token step."""

import time

import pandas as pd

from neurips26.bbo_pile import experiment
from neurips26.bbo_pile.artifacts import load_decoder
from neurips26.bbo_pile.sampling import optimize_boxes
from neurips26.bbo_pile.vocabulary import Vocabulary
from neurips26.common.io import write_parquet
from neurips26.common.loop import job_device
from neurips26.common.runtime import job_provenance, start_job

params, inp, wc = snakemake.params, snakemake.input, snakemake.wildcards
log = start_job(snakemake, seed=params.seed)
vocab = Vocabulary.from_json(open(inp.vocab).read())
model = load_decoder(inp.model, job_device(), seed=params.seed)  # a GPU at paper scale (profiles/slurm)
boxes = experiment.eval_boxes(pd.read_parquet(inp.blackboxes), params.boxes)
start = last = time.perf_counter()


def progress(done: int, budget: int) -> None:
    """A line a minute (and at the last trial): a paper-scale job decodes for hours."""
    global last
    now = time.perf_counter()
    if now - last >= 60 or done == budget:
        rate = done / (now - start)
        log.info("%s (%s): trial %d/%d, %.2f trials/s, ETA %.0f s", wc.condition, wc.decoding, done, budget, rate,
                 (budget - done) / rate)  # fmt: skip
        last = now


table = optimize_boxes(
    model,
    vocab,
    wc.condition,
    boxes,
    params.eval_seeds,
    params.seed,
    params.budget,
    constrained=wc.decoding == "constrained",
    context=params.context,
    temperature=params.temperature,
    progress=progress,
)
seconds = time.perf_counter() - start
log.info(
    "%s (%s): %d runs x %d trials in %.1f s (%.1f trials/s), %.3f of decodes valid",
    wc.condition,
    wc.decoding,
    len(boxes) * len(params.eval_seeds),
    params.budget,
    seconds,
    len(table) / seconds,
    table["valid_decode"].mean(),
)
write_parquet(table.assign(seconds=seconds), snakemake.output[0], job_provenance(snakemake, params.seed))
