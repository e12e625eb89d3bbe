"""Sample every trained flow (Euler ODE) on the same source points; W2 to the target, straightness."""

from neurips26.amortized_ot.evaluation import evaluate_flows
from neurips26.amortized_ot.experiment import pack
from neurips26.common.io import save_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
cfg = params.cfm
samples, table = evaluate_flows(
    list(snakemake.input.flows), cfg["eval_samples"], cfg["ode_steps"], cfg["batch_size"], params.seed, log
)
save_npz(snakemake.output.samples, **pack(samples))
write_parquet(table, snakemake.output.metrics, job_provenance(snakemake, params.seed))
