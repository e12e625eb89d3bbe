"""The small model's evaluation on the synthetic eval items, one model load and one grading pass: every member solves
the eval problems greedily and grades every eval item (verdict constrained to 0-3; the unconstrained word kept for
the invalid-verdict rate), as the harness's results rows; and the mechanism of the gap per member of the configured
regimes: linear probes per layer on the residual stream at the last solution word (controls against fooled VAIR
items), and answer patching N -> N+1 per layer against a same-size perturbation elsewhere."""

import pandas as pd
import torch

from neurips26.common.io import write_parquet
from neurips26.common.loop import job_device
from neurips26.common.runtime import job_provenance, start_job
from neurips26.vair.artifacts import eval_split, with_dataset
from neurips26.vair.decoding import grade
from neurips26.vair.items import items_from_frame, render
from neurips26.vair.mechanism import patch_members, probe_members
from neurips26.vair.small_grading import grade_members
from neurips26.vair.training import unpack

m = snakemake.params.mechanism
log = start_job(snakemake, seed=m["seed"])
device = job_device()
ensemble, vocab, members = unpack(torch.load(snakemake.input.model, weights_only=True, map_location="cpu"), device)
items = eval_split(items_from_frame(pd.read_parquet(snakemake.input.item_table)))
graded = grade(ensemble, vocab, [render(item) for item in items], hidden=True)  # the grades both parts read

results = grade_members(ensemble, vocab, members, items, snakemake.params.solve["max_new"], graded=graded)
rates = results.groupby(["member", "task"])["correct"].mean().unstack()
log.info("%d members on %d eval items (%s); accuracy per member and task:\n%s", len(members), len(items), device, rates)
prov = job_provenance(snakemake, m["seed"])
write_parquet(with_dataset(results, "synthetic"), snakemake.output.grades, prov)

probes = probe_members(ensemble, vocab, members, items, m["regimes"], m["test_share"], m["C"], m["seed"], graded)
patching = patch_members(ensemble, vocab, members, items, m["regimes"], m["seed"])
log.info("probes:\n%s\npatching:\n%s", probes.to_string(), patching.to_string())
write_parquet(probes, snakemake.output.probes, prov)
write_parquet(patching, snakemake.output.patching, prov)
