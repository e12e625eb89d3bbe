"""Value every coalition of one data set's players with every measure, by one estimator (each coalition once)."""

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.fairness_audit import experiment
from neurips26.fairness_audit.artifacts import load_audit_data
from neurips26.fairness_audit.coalitions import coalition_values

params, w = snakemake.params, snakemake.wildcards
seed, measures = params.seed, params.measures
log = start_job(snakemake, seed=seed)
data, _ = load_audit_data(snakemake.input.data, snakemake.input.meta)
players = list(data.players)
masks = experiment.coalition_masks(len(players), params.shapley["method"], params.shapley["permutations"], seed)
frame = coalition_values(
    [data.block(p) for p in players], data.a, data.y, measures, w.estimator, seed=seed, coalitions=masks, names=players
)
rate, seconds = frame.attrs["coalitions_per_second"], frame.attrs["seconds"]
log.info(
    "%s / %s: %d coalitions x %d measures in %.1f s (%.1f coalitions/s); %d clipped, %d below -tol",
    w.dataset,
    w.estimator,
    frame["mask"].nunique(),
    len(measures),
    seconds,
    rate,
    int(frame["clipped"].sum()),
    int(frame["negative"].sum()),
)
frame = frame.assign(dataset=w.dataset, estimator=w.estimator, coalitions_per_second=rate, seconds=seconds)
frame.attrs = {}
write_parquet(frame, snakemake.output[0], job_provenance(snakemake, seed))
