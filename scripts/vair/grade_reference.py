"""The model-free graders (the step checker, the answer-only grader, a random grader) on the eval items of one
dataset, as the harness's results rows."""

import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.vair.artifacts import eval_split, with_dataset
from neurips26.vair.backends import make_backend
from neurips26.vair.grading import accuracy_table, run_backend
from neurips26.vair.items import items_from_frame

seed = snakemake.params.reference["random_seed"]
log = start_job(snakemake, seed=seed)
items = eval_split(items_from_frame(pd.read_parquet(snakemake.input.item_table)))
backends = [make_backend("rule"), make_backend("answer_only"), make_backend("random", seed=seed)]
results = pd.concat([run_backend(backend, items) for backend in backends], ignore_index=True)
log.info("%d eval items:\n%s", len(items), accuracy_table(results).to_string())
write_parquet(
    with_dataset(results, snakemake.wildcards.dataset), snakemake.output.grades, job_provenance(snakemake, seed)
)
