"""Paper 13's geometry job: the gradient measurements over the seeds of their blocks (alignment, bias_variance and
dimension on the train split of the dataset each names; the spectral sweep over every decay exponent a of the
synthetic teacher-student task), the checks of what the construction guarantees (SZO at kappa = 0 is weight
perturbation with the same draws, MeZO equals two-sided SPSA along the same directions, forward gradients are
unbiased) and MeZO's in-place step beside batched SPSA (extra tensor memory, best wall time). One job: each part is
seconds at quick scale, less than a job's start."""

import numpy as np
import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.spectral_zo import experiment
from neurips26.spectral_zo.checks import construction_checks
from neurips26.spectral_zo.estimators import set_probe_bound

MEASUREMENTS = {
    "alignment": experiment.alignment,
    "bias_variance": experiment.bias_variance_table,
    "dimension": experiment.dimension,
}
p, out = snakemake.params, snakemake.output
log = start_job(snakemake, 0)
prov = job_provenance(snakemake)
data = {section: dict(np.load(snakemake.input[section])) for section in MEASUREMENTS}
set_probe_bound(p.probe_bytes)  # one batched pass's probes within a share of the job's memory request
log.info("probe tensors of one batched pass bounded at %.0f MB", p.probe_bytes / 2**20)
for name, measure in MEASUREMENTS.items():
    block = p[name]
    rows = [row for seed in block["seeds"] for row in measure(p.methods[name], data[name], block, seed)]
    write_parquet(pd.DataFrame(rows), out[name], prov)
    log.info("%s: %d rows over seeds %s", name, len(rows), block["seeds"])
rows = [row for alpha in p.spectral["alphas"] for seed in p.spectral["seeds"]
        for row in experiment.spectral(p.methods["spectral"], p.spectral, float(alpha), seed)]  # fmt: skip
write_parquet(pd.DataFrame(rows), out.spectral, prov)
log.info("spectral: %d rows over a = %s", len(rows), p.spectral["alphas"])
checks = pd.DataFrame(construction_checks(data["alignment"], p.checks, p.alignment["hidden"]))
log.info("checks\n%s", checks.to_string())
write_parquet(checks, out.checks, prov)
cost = pd.DataFrame(experiment.cost(p.cost, p.cost["n_inputs"]))
log.info("cost\n%s", cost.to_string())
write_parquet(cost, out.cost, prov)
