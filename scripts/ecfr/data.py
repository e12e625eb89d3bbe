"""One draw of a dataset of paper 11 as two .npz splits (train: normal images of every class; test: normal and defective
images with their masks) and a summary (images per class and split, invalid depth pixels): the procedural RGB +
depth set (smoke, quick) or MVTec 3D-AD / Eyecandies read from their registered archives (paper)."""

import numpy as np
import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.ecfr.data import check_classes, check_split, draw_seed, make_split

p = snakemake.params.dataset
name, draw = snakemake.wildcards.dataset, snakemake.wildcards.draw
log = start_job(snakemake)
if p["source"] == "synthetic":
    # a scored seed's own draw, or the tuning one (whose params carry no data_seed)
    classes, data_seed = p["classes"], draw_seed(draw, p.get("data_seed"))
    log.info("%s: draw %s, data seed %d", name, draw, data_seed)
    splits = {
        "train": make_split(classes, p["train_per_class"], 0, [], p["size"], p["invalid_depth"], 2 * data_seed),
        "test": make_split(classes, p["test_good_per_class"], p["test_per_defect"], p["defects"], p["size"],
                           p["invalid_depth"], 2 * data_seed + 1),
    }  # fmt: skip
else:
    from neurips26.ecfr import real

    reader = {"mvtec3d": real.read_mvtec3d, "eyecandies": real.read_eyecandies}[p["source"]]
    archive = snakemake.input.archive  # one archive (MVTec 3D-AD), or one per category (Eyecandies)
    archive = archive if isinstance(archive, str) else list(archive)
    splits = reader(archive, size=p["size"], classes=p.get("classes"), log=log.info)
check_classes(splits["train"], splits["test"], name)
rows = []
for split, arrays in splits.items():
    invalid = check_split(arrays, f"{name} {split}", train=split == "train")
    pixels = arrays["depth"].size
    log.info("%s %s: %d images, %d invalid depth pixels (%.3f%%), masked as 0 after normalisation", name, split,
             len(arrays["rgb"]), invalid, 100 * invalid / pixels)  # fmt: skip
    for (cls, defect), count in pd.Series(list(zip(arrays["cls"], arrays["defect"]))).value_counts(sort=False).items():
        keep = (arrays["cls"] == cls) & (arrays["defect"] == defect)
        rows.append({"dataset": name, "draw": draw, "split": split, "cls": cls, "defect": defect, "images": int(count),
                     "invalid_depth": int(np.isnan(arrays["depth"][keep]).sum()),
                     "pixels": int(arrays["depth"][keep].size)})  # fmt: skip
    np.savez(snakemake.output[split], **arrays)
write_parquet(pd.DataFrame(rows), snakemake.output.summary, job_provenance(snakemake))
