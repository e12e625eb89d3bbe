"""RA-OT's prediction on colour test pairs before and after the closed-form sliced duals, beside cold Sinkhorn to
the same marginal error: times per instance, per step, and cProfile's top functions (speed.profile_prediction)."""

from neurips26.amortized_ot.data import TASK_COST
from neurips26.amortized_ot.experiment import unpack
from neurips26.amortized_ot.method import FittedModel
from neurips26.amortized_ot.speed import PROFILE_PAIRS, profile_prediction
from neurips26.common.io import load_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
pairs = unpack(load_npz(snakemake.input.pairs), "test")
x, a, y, b = (pairs[k][:PROFILE_PAIRS] for k in "xayb")
tables = profile_prediction(
    FittedModel.from_dict(load_npz(snakemake.input.model)),
    x,
    a,
    y,
    b,
    TASK_COST["colour"],
    params.eps,
    params.evaluation["warm_tol"],
    params.evaluation["max_iter"],
    log=log,
)
for name, table in tables.items():
    write_parquet(table, snakemake.output[name], job_provenance(snakemake, params.seed))
