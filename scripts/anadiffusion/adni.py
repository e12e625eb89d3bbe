"""One split ({split}: train or eval) of the user's ADNI T1 scans at paper scale: the folder checked file by file
against the user's manifest (sha256), the subjects split as the paper does (disjoint by subject; eval = its test
split), each scan preprocessed as the paper does (N4, skull strip, affine to MNI152, the template's grid, percentile
clip, [-1, 1]). ADNI gives no part masks: each scan's own part labels come from atlas-based segmentation (the
template's T1 registered to the scan by ANTs SyN, its part labels carried by nearest neighbour and cut to the scan's
brain: neurips26.anadiffusion.atlas); they train the part models (the encode job's crops) and condition the Seg.
cLDM baseline."""

import nibabel as nib
import numpy as np

from neurips26.anadiffusion.adni import ADNI_ACCESS, AdniDataError, check_manifest, preprocess_t1, split_subjects
from neurips26.anadiffusion.artifacts import save_split
from neurips26.anadiffusion.atlas import atlas_part_labels
from neurips26.anadiffusion.template import template_from_arrays
from neurips26.anadiffusion.volumes import check_parts, check_volumes
from neurips26.common.io import load_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job

p = snakemake.params
split = snakemake.wildcards.split
log = start_job(snakemake, p.split_seed)
template = template_from_arrays(load_npz(snakemake.input.template))
if not (p.adni_root and p.adni_manifest):
    raise AdniDataError(f"data.adni_root and data.adni_manifest must both be set at scale paper. {ADNI_ACCESS}")
manifest = check_manifest(p.adni_root, p.adni_manifest)
assignment = split_subjects(manifest["subject"], seed=p.split_seed)
wanted = {"train": "train", "eval": "test"}[split]
scans = manifest[manifest["subject"].map(assignment) == wanted].reset_index(drop=True)
volumes = np.stack([preprocess_t1(nib.load(str(path)), template, seed=p.split_seed) for path in scans["file"]])
check_volumes(volumes, template, where=f"ADNI {split} volumes")
labels = np.stack([atlas_part_labels(volume, template, seed=p.split_seed) for volume in volumes])
check_parts(labels, volumes > -1, where=f"ADNI {split} part labels (SyN atlas segmentation)")
log.info("ADNI %s: %d scans of %d subjects", split, len(scans), scans["subject"].nunique())
save_split(snakemake.output.volumes, volumes, labels)
write_parquet(scans.assign(split=split), snakemake.output.subjects, job_provenance(snakemake, p.split_seed))
