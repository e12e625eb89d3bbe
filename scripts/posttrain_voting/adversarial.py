"""Hill-climbing for axiom violations per rule, axiom and beta; the NLHF monotonicity search against DPO's and the
computed bound; RLHF with a Bradley-Terry reward against DPO's closed form. Seeds are a loop inside the one job."""

import time

import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.posttrain_voting.experiment import adversarial_table, equivalence_table, threshold_table

p, out = snakemake.params, snakemake.output
log = start_job(snakemake)
prov = job_provenance(snakemake)
start = time.perf_counter()
adversarial = pd.concat([adversarial_table(p.adversarial, seed) for seed in p.seeds], ignore_index=True)
log.info("adversarial: %d searches, %d violated, %.1f s", len(adversarial), (~adversarial["holds"]).sum(),
         time.perf_counter() - start)  # fmt: skip
write_parquet(adversarial, out.adversarial, prov)
start = time.perf_counter()
threshold = threshold_table(p.threshold, p.seeds)
log.info("threshold: %d rows, %.1f s", len(threshold), time.perf_counter() - start)
write_parquet(threshold, out.threshold, prov)
equivalence = equivalence_table({"synthetic": p.synthetic, "equivalence": p.equivalence}, p.seeds)
log.info("RLHF-BT against DPO: largest gap %.2e", equivalence["gap"].max())
write_parquet(equivalence, out.equivalence, prov)
