"""The mechanism of the small model's gap, per member of the configured regimes, on the synthetic eval items:
linear probes per layer on the residual stream at the last solution word (controls against fooled VAIR items), and
answer patching N -> N+1 per layer against a same-size perturbation elsewhere."""

import pandas as pd
import torch

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.vair.artifacts import eval_split
from neurips26.vair.items import items_from_frame
from neurips26.vair.mechanism import patch_members, probe_members
from neurips26.vair.training import unpack

m = snakemake.params.mechanism
log = start_job(snakemake, seed=m["seed"])
ensemble, vocab, members = unpack(torch.load(snakemake.input.model, weights_only=True), "cpu")
items = eval_split(items_from_frame(pd.read_parquet(snakemake.input.item_table)))
probes = probe_members(ensemble, vocab, members, items, m["regimes"], m["test_share"], m["C"], m["seed"])
patching = patch_members(ensemble, vocab, members, items, m["regimes"], m["seed"])
log.info("probes:\n%s\npatching:\n%s", probes.to_string(), patching.to_string())
prov = job_provenance(snakemake, m["seed"])
write_parquet(probes, snakemake.output.probes, prov)
write_parquet(patching, snakemake.output.patching, prov)
