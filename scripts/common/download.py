"""Download one registered file into resources/, checked against its pinned hash or its lock (first fetch: locked)."""

from neurips26.common.locking import fetch_source
from neurips26.common.runtime import start_job
from neurips26.common.sources import Source

log = start_job(snakemake)
path = fetch_source(
    Source(**snakemake.params.source), snakemake.output[0], snakemake.params.lock, mirror=snakemake.params.mirror
)
log.info("downloaded %s", path)
