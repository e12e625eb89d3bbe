"""Gather the jobs' tables: the runs with their divergence verdict (detected here from the curves, so that the
detector's settings never retrain), whether they failed to learn (the pilot's rule, against the unigram entropy of
the clean training stream) and proxies, the divergence rate per cell, the curves, diagnostics and throughput."""

import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.noisy_divergence.pilot import unigram_entropy_of_files
from neurips26.noisy_divergence.summary import divergence_table, runs_table

inp, out = snakemake.input, snakemake.output
log = start_job(snakemake)
frames = {
    t: pd.concat([pd.read_parquet(p) for p in inp[t]], ignore_index=True)
    for t in ("steps", "diag", "summary", "throughput")
}
unigram = unigram_entropy_of_files(list(inp.clean), snakemake.params.vocab_size)
log.info("unigram entropy of the clean training stream: %.4f nats", unigram)
runs = runs_table(frames["summary"], frames["steps"], frames["diag"], snakemake.params.divergence, unigram)
divergence = divergence_table(runs)
for r in divergence.itertuples():
    log.info(
        "%s qk=%s lr x%g %s: %d/%d diverged, %d failed to learn",
        r.shape,
        r.qk_norm,
        r.lr_multiplier,
        r.setting,
        r.k,
        r.n,
        r.failed_to_learn,
    )
prov = job_provenance(snakemake)
write_parquet(runs, out.runs, prov)
write_parquet(divergence, out.divergence, prov)
write_parquet(frames["steps"], out.curves, prov)
write_parquet(frames["diag"], out.diag, prov)
write_parquet(frames["throughput"], out.throughput, prov)
