"""One dataset of paper 17 as an .npz: a lifted manifold (smoke, quick; the reference's 3-D swiss roll at paper
scale) or the oil-flow archive's training split (paper), with a share of entries hidden for scoring."""

import numpy as np

from neurips26.common.runtime import start_job
from neurips26.gplvm_assvi.data import build_dataset, check_observations, manifold_surface, read_oil_archive

p = snakemake.params.dataset
log = start_job(snakemake)
if p["source"] == "oil_flow":
    arrays = read_oil_archive(snakemake.input.archive, p["missing"], p["data_seed"])
    surface = np.full((0, arrays["y"].shape[1]), np.nan)
else:
    arrays = build_dataset(p["kind"], p["n"], p["data_seed"], p["dim"], p["noise"], p["missing"], p["lift"])
    surface = manifold_surface(p["kind"], p["data_seed"], p["dim"], p["surface_points"], p["lift"])
check_observations(arrays["y"], arrays["mask"])
log.info(
    "%s: %d points x %d columns, %d entries hidden (%.1f%%); manifold sample of %d points",
    snakemake.wildcards.dataset,
    *arrays["y"].shape,
    int((~arrays["mask"]).sum()),
    100 * (~arrays["mask"]).mean(),
    len(surface),
)
np.savez(snakemake.output.data, **arrays)
np.save(snakemake.output.surface, surface)
