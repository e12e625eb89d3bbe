"""PMO-lite on one RDKit oracle: from the start structure, with one oracle budget each, (a) sampling the
pretrained policy (random), (b) amortized RL fine-tuning with Dr. GRPO, (c) the constrained graph GA, once
per seed of `pmo.seeds`; every method's oracle calls in order (unique molecules only, as in mol_opt), for the top-k
AUC."""

from neurips26.amortix import experiment
from neurips26.amortix.instances import pmo_lite
from neurips26.amortix.policy import load_policy_state
from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

params, wc = snakemake.params, snakemake.wildcards
log = start_job(snakemake, seed=params.seed)
config = experiment.env_config(params.env, params.max_heavy)
saved = load_policy_state(snakemake.input.policy)
loop_settings = loop.LoopSettings(
    checkpoint=loop.checkpoint_path(snakemake.output[0]),
    fingerprint=fingerprint(dict(snakemake.params), list(snakemake.input)),
    name=f"PMO-lite {wc.oracle}",
)
table = pmo_lite(saved, wc.oracle, params.pmo, config, params.pmo["seeds"], loop_settings)
write_parquet(table, snakemake.output[0], job_provenance(snakemake, params.seed))
loop.finish(loop_settings)
