"""The numbers AnaDiffusion publishes (arXiv 2608.23014; project page AnaDiffusion/AnaDiffusion.github.io, index.html:
Table 1, Table 2 and Fig. 4a), as data for the claims (P1-P4, the paper values) and the report's tables beside ours.

Table 1 and 2 print MedicalNet FID x 1e4 per region (WB whole brain, LH, RH, CB cerebellum-brainstem, Seam) with 95%
intervals from 5,000 subject-cluster bootstrap replicates against 291 held-out ADNI scans (the page gives the
intervals of AnaDiffusion's WB and Seam only, and the LDM's WB), and SynthSeg Cohen's |d| of the ventricles,
cerebellum and brainstem; Fig. 4a gives paired MS-SSIM over 100 donor-recipient edits per part.
"""

from __future__ import annotations

import pandas as pd

from neurips26.anadiffusion.segment import STRUCTURES

__all__ = ["EDITING", "EDIT_COLUMNS", "FD_HEADERS", "FD_REGIONS", "PAPER_INTERVALS", "PARTS", "STRUCTURES", "TABLE1",
           "TABLE2", "editing_frame", "mean_over_parts", "table1_frame", "table2_frame"]  # fmt: skip

FD_REGIONS = ("whole", "LH", "RH", "CB", "seam")  # our region names, in the order of the page's columns
FD_HEADERS = {"whole": "WB", "LH": "LH", "RH": "RH", "CB": "CB", "seam": "Seam"}
PARTS = ("LH", "RH", "CB")  # the edited parts (volumes.PARTS, which needs nibabel: not in the report env)
EDIT_COLUMNS = ("target_transfer", "off_target_preservation", "transfer_gain", "locality_contrast")

# Table 1: method -> (WB, LH, RH, CB, Seam) FID x 1e4 and (ventricles, cerebellum, brainstem) |d| (None: not given)
TABLE1 = {
    "VAE-GAN": ((134.400, 39.645, 20.415, 4.394, 0.808), (None, None, None)),
    "HA-GAN": ((339.306, 68.284, 74.447, 8.705, 2.218), (None, None, None)),
    "LDM": ((40.92, 7.10, 6.87, 1.68, 0.44), (0.184, 0.370, 0.222)),
    "Seg. cLDM": ((59.47, 14.54, 9.22, 1.45, 0.49), (0.421, 0.207, 0.178)),
    "MorphLDM": ((46.65, 8.56, 18.05, 2.23, 0.99), (0.131, 0.202, 0.357)),
    "ControlNet LDM": ((44.24, 8.30, 7.58, 1.24, 0.36), (0.301, 1.366, 1.311)),
    "Grid-based LDM": ((111.06, 22.65, 18.48, 2.20, 0.54), (0.427, 1.821, 1.235)),
    "AnaDiffusion": ((36.16, 6.21, 6.67, 1.06, 0.29), (0.144, 0.169, 0.185)),
}
# the 95% subject-cluster bootstrap intervals the page prints (FID x 1e4): (method, region) -> (low, high)
PAPER_INTERVALS = {
    ("AnaDiffusion", "whole"): (19.16, 59.61),
    ("AnaDiffusion", "seam"): (0.17, 0.46),
    ("LDM", "whole"): (26.71, 58.86),
}
# Table 2 (ablation, FID x 1e4): configuration -> (WB, LH, RH, CB, Seam); `ours` names our method of that setting
TABLE2 = {
    "separate hemisphere models (r_inj = 10)": ("ana_separate", (38.72, 5.59, 8.94, 0.89, 0.19)),
    "w/o latent injection (alpha = 0)": ("ldm", (52.27, 9.83, 8.52, 1.84, 0.55)),
    "full injection alpha = 1 (Ours, r_inj = 10)": ("ana", (36.16, 6.21, 6.67, 1.06, 0.29)),
    "r_inj = 7": ("ana_r7", (53.27, 9.31, 9.04, 1.75, 0.69)),
    "r_inj = 15": ("ana_r15", (51.66, 8.96, 9.52, 1.43, 0.31)),
}
# Fig. 4a (paired MS-SSIM, higher is better): (part, method) -> the four EDIT_COLUMNS
EDITING = {
    ("LH", "Ours"): (0.9427, 0.9371, 0.1627, 0.1207),
    ("LH", "Seg. cLDM"): (0.7952, 0.9487, 0.0152, -0.0078),
    ("RH", "Ours"): (0.9484, 0.9363, 0.1372, 0.1118),
    ("RH", "Seg. cLDM"): (0.8343, 0.9447, 0.0231, 0.0056),
    ("CB", "Ours"): (0.9618, 0.9496, 0.0752, 0.0313),
    ("CB", "Seg. cLDM"): (0.9151, 0.9512, 0.0285, -0.0207),
}


def table1_frame() -> pd.DataFrame:
    """Table 1 as published: one row per method, FID x 1e4 per region and |d| per structure (NaN where not given)."""
    rows = []
    for method, (fid, d) in TABLE1.items():
        row = {"method": method, **{FD_HEADERS[r]: v for r, v in zip(FD_REGIONS, fid)}}
        row.update({s: float("nan") if v is None else v for s, v in zip(STRUCTURES, d)})
        rows.append(row)
    return pd.DataFrame(rows)


def table2_frame() -> pd.DataFrame:
    """Table 2 as published: one row per configuration with our method of that setting (None: not built)."""
    return pd.DataFrame(
        [{"configuration": c, "ours": ours, **{FD_HEADERS[r]: v for r, v in zip(FD_REGIONS, fid)}}
         for c, (ours, fid) in TABLE2.items()]
    )  # fmt: skip


def editing_frame() -> pd.DataFrame:
    """Fig. 4a as published: one row per (part, method), the four editing columns."""
    return pd.DataFrame(
        [{"part": part, "method": method, **dict(zip(EDIT_COLUMNS, values))}
         for (part, method), values in EDITING.items()]
    )  # fmt: skip


def mean_over_parts(column: str, method: str = "Ours") -> float:
    """The published mean over LH, RH and CB of one editing column (P3, P4's paper values)."""
    values = [v[EDIT_COLUMNS.index(column)] for (part, m), v in EDITING.items() if m == method]
    return sum(values) / len(values)
