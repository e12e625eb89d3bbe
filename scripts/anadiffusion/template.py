"""The MNI152 2009a template on paper 03's grid (from the nilearn wheel): T1, tissue maps, parts, regions, seam and
the part supports (sides rounded to params.support_multiple, what the configured networks need), as the arrays of
Template.as_arrays."""

from neurips26.anadiffusion.template import build_template
from neurips26.common.io import save_npz
from neurips26.common.runtime import start_job

grid = snakemake.params.grid
log = start_job(snakemake)
template = build_template(grid["voxel_mm"], tuple(grid["shape"]), grid["support_margin_mm"], grid["seam_mm"],
                          grid["ventricle_margin_mm"], snakemake.params.support_multiple)  # fmt: skip
supports = {p: (s.start, s.shape, s.mirrored) for p, s in template.supports.items()}
log.info("grid %s of %.1f mm: %d brain voxels, supports %s", template.shape, template.voxel_mm,
         int(template.brain.sum()), supports)  # fmt: skip
save_npz(snakemake.output.template, **template.as_arrays())
