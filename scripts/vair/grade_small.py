"""Every member of the small model solves the synthetic eval problems greedily and grades every eval item (verdict
constrained to 0-3; the unconstrained word kept for the invalid-verdict rate), as the harness's results rows."""

import pandas as pd
import torch

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.vair.artifacts import eval_split, with_dataset
from neurips26.vair.items import items_from_frame
from neurips26.vair.small_grading import grade_members
from neurips26.vair.training import unpack

log = start_job(snakemake)
ensemble, vocab, members = unpack(torch.load(snakemake.input.model, weights_only=True), "cpu")
items = eval_split(items_from_frame(pd.read_parquet(snakemake.input.item_table)))
results = grade_members(ensemble, vocab, members, items, snakemake.params.solve["max_new"])
rates = results.groupby(["member", "task"])["correct"].mean().unstack()
log.info("%d members on %d eval items; accuracy per member and task:\n%s", len(members), len(items), rates)
write_parquet(with_dataset(results, "synthetic"), snakemake.output.grades, job_provenance(snakemake))
