"""The black-box catalog: BBOB problems and shifted/rotated global-optimization functions, split by black box
(held-out BBOB functions for evaluation), checked disjoint before it is written."""

from neurips26.bbo_pile import experiment
from neurips26.bbo_pile.catalog import check_split
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
boxes = experiment.blackbox_catalog(params.blackboxes)
check_split(boxes)
for (family, split), rows in boxes.groupby(["family", "split"]):
    log.info("%s %s: %d black boxes, dims %s", family, split, len(rows), sorted(rows["dim"].unique()))
write_parquet(boxes, snakemake.output[0], job_provenance(snakemake, params.seed))
