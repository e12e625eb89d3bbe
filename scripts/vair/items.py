"""The VAIR items of one dataset: per problem its gold solution (VAVR), arithmetic slips (IAIR) and one item per
applicable answer-preserving flaw (VAIR), split by problem; every item verified again by the step checker (the job
fails naming the first item whose labels the checker does not confirm) and counted beside the paper's counts."""

import numpy as np
import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.vair.artifacts import problems_from_frame, with_dataset
from neurips26.vair.checker import verify_item
from neurips26.vair.dataset import build_items, counts
from neurips26.vair.items import items_to_frame

p = dict(snakemake.params.settings)
log = start_job(snakemake, seed=p["seed"])
problems = problems_from_frame(pd.read_parquet(snakemake.input.problems))
items = build_items(problems, np.random.default_rng(p.pop("seed")), **p)
for item in items:
    verify_item(item)
table = with_dataset(counts(items), snakemake.wildcards.dataset)
log.info("%d items from %d problems, each verified by the checker:\n%s", len(items), len(problems), table.to_string())
prov = job_provenance(snakemake, snakemake.params.settings["seed"])
write_parquet(items_to_frame(items), snakemake.output.item_table, prov)
write_parquet(table, snakemake.output.counts, prov)
