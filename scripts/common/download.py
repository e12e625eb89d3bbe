"""Download one file by URL with a pinned hash into resources/ (the shared pooch helper)."""

from pathlib import Path

from neurips26.common.download import fetch
from neurips26.common.runtime import start_job

log = start_job(snakemake)
target = Path(snakemake.output[0])
path = fetch(snakemake.params.url, snakemake.params.known_hash, target.parent, fname=target.name)
log.info("downloaded %s", path)
