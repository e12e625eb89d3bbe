"""An external model (an OpenAI-compatible server, or a causal LM in-process through transformers) solves the
problems of one dataset's eval items and grades every item with the paper's prompt (config/vair/prompts.yaml). The
run fails when more than 20% of its verdicts are unparseable (the message names the count); its replies are then
kept beside the log (<log>.replies.parquet) to be read."""

from pathlib import Path

import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.vair import hf_backend, http_backend, rehearsal
from neurips26.vair.artifacts import eval_split, math_items_from_frame, with_dataset
from neurips26.vair.grading import accuracy_table, check_results_unparseable, run_backend
from neurips26.vair.items import items_from_frame
from neurips26.vair.math_grading import math_results

log = start_job(snakemake)
name, dataset = snakemake.wildcards.backend, snakemake.wildcards.dataset
kind, options = snakemake.params.kind, dict(snakemake.params.options)
# the factories by name (not through the registry), so that the rules' library inputs hold both modules
factories = {"http": http_backend.make_http_backend, "hf": hf_backend.make_hf_backend}
frame = pd.read_parquet(snakemake.input.item_table)
with rehearsal.chat_server(options.get("base_url")) as base_url:  # the rehearsal's stub server, else as configured
    if base_url is not None:
        options["base_url"] = base_url
    backend = factories[kind](prompts=snakemake.input.prompts, name=name, **options)
    if dataset == "math":
        results = math_results(backend, math_items_from_frame(frame))
    else:
        results = run_backend(backend, eval_split(items_from_frame(frame)))
results = with_dataset(results, dataset)
replies = Path(snakemake.log[0]).with_suffix(".replies.parquet")
prov = job_provenance(snakemake)
write_parquet(results, replies, prov)
check_results_unparseable(results, {name: True})
log.info("%s on %s:\n%s", name, dataset, accuracy_table(results).to_string())
write_parquet(results, snakemake.output.grades, prov)
