"""The circuits of one scale: the seeded generator (smoke, quick) or AnalogGenie's netlists from the locked
archive, every file checked against its git blob SHA-1 first (paper); then the stratified train/test split."""

import pandas as pd

from neurips26.analogtobi import dataset
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

p = snakemake.params.data
log = start_job(snakemake)
if p["source"] == "generator":
    kept = dataset.generated_dataset(p["n_circuits"], p["weights"], p["seed"], p["max_devices"])
    rejects = pd.DataFrame(columns=dataset.REJECT_COLUMNS)
else:
    kept, rejects = dataset.read_archive(
        snakemake.input.archive, snakemake.input.manifest, snakemake.input.types, p["reference_bjt_filter"]
    )
    log.info("every netlist of the manifest matches its git blob hash")
    if p["max_devices"]:
        large = kept["n_devices"] > p["max_devices"]
        rejects = pd.concat([rejects, kept[large].assign(stage="size", reason=f"more than {p['max_devices']} devices")[
            dataset.REJECT_COLUMNS]], ignore_index=True)  # fmt: skip
        kept = kept[~large]
kept = kept.assign(split=dataset.stratified_split(kept, p["test_fraction"], p["seed"]))
for t, group in kept.groupby("type"):
    log.info("%s: %d circuits (%d test)", t, len(group), int((group["split"] == "test").sum()))
for stage, group in rejects.groupby("stage"):
    log.info("rejected at %s: %d", stage, len(group))
prov = job_provenance(snakemake)
write_parquet(kept.reset_index(drop=True), snakemake.output.circuits, prov)
write_parquet(rejects, snakemake.output.rejects, prov)
