"""Paper 03's claims decided on built evaluation tables shaped as the evaluation jobs write them: every claim and check
has a case where it holds, one where it fails and one where it is inconclusive (too few seeds, seeds that disagree, a
missing or duplicated run, a non-finite value, a null that passes too, a scale without the paper's data)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from conftest import ROOT
from neurips26.anadiffusion.claims import (
    MASK_FREE_JOBS,
    MASK_JOBS,
    PROXY_AGREEMENT,
    distance_from_interval,
    masks_at_inference,
    measure_claims,
    proxy_agreement,
)
from neurips26.anadiffusion.published import FD_REGIONS, PARTS, STRUCTURES, mean_over_parts
from neurips26.common.claims import Spread, decide, load_definitions

DEFINITIONS = load_definitions(ROOT / "config/claims/anadiffusion.yaml")
SEEDS = (0, 1, 2)
# raw FD per method, regions in FD_REGIONS order (whole, LH, RH, CB, seam)
FD = {
    "ldm": (1.00, 0.50, 0.50, 0.30, 0.20),
    "paste": (1.50, 0.60, 0.60, 0.40, 0.50),
    "ae_roundtrip": (1.10, 0.55, 0.55, 0.35, 0.25),  # the scaffold through the autoencoder, no diffusion
    "ana": (0.80, 0.40, 0.40, 0.20, 0.10),
    "ana_r7": (0.90, 0.45, 0.45, 0.25, 0.15),
    "ana_r15": (0.95, 0.45, 0.45, 0.25, 0.15),
}
JITTER = {"ldm": (0.0, 0.01, -0.01), "paste": (0.01, -0.01, 0.0), "ana": (-0.005, 0.005, 0.01),
          "ana_r7": (0.0, -0.01, 0.01), "ana_r15": (0.01, 0.0, -0.01), "ae_roundtrip": (0.005, -0.005, 0.0),
          "real": (0.0, 0.0, 0.0), "ana_separate": (0.01, -0.005, -0.005), "seg_cldm": (-0.01, 0.0, 0.01)}  # fmt: skip
BRAIN = 0.9  # the brain-only FD of every method: this share of its whole-volume FD unless `brain` overrides it
ABS_D = {"ldm": (0.30, 0.40, 0.30), "ana": (0.10, 0.20, 0.15)}  # ventricles, cerebellum, brainstem
# per edit of ana (every part unless overridden): the editing columns and C6's null
EDIT = dict(target_transfer=0.90, off_target_preservation=0.95, transfer_gain=0.15, off_target_drift=0.03,
            baseline_transfer=0.75, off_target_baseline=0.80)  # fmt: skip


def fd_table(values=FD, seeds=SEEDS, features=("rand3d",), scale=1.0, set_cell=None, drop=None, brain=None):
    """fd.parquet rows as evaluation.fd_table writes them (regions FD_REGIONS and brain; the real-vs-real reference
    rows, method real, on two subsets); ``set_cell`` = (method, seed, region, value), ``drop`` = (method, seed),
    ``brain`` = {method: brain-only FD}."""
    rows = []
    for f in features:
        for m, v in {**values, "real": (0.05,) * len(FD_REGIONS)}.items():
            for s in (0, 1) if m == "real" else seeds:
                whole = (v[0] + JITTER[m][s % 3]) * scale
                cells = [*zip(FD_REGIONS, v), ("brain", (brain or {}).get(m, BRAIN * whole / scale - JITTER[m][s % 3]))]
                for region, x in cells:
                    value = (x + JITTER[m][s % 3]) * scale
                    rows.append(dict(method=m, seed=s, region=region, features=f, value=value, low=0.5 * value,
                                     high=1.5 * value, n_real=32, n_generated=32))  # fmt: skip
    frame = pd.DataFrame(rows)
    if set_cell:
        m, s, region, value = set_cell
        frame.loc[(frame["method"] == m) & (frame["seed"] == s) & (frame["region"] == region), "value"] = value
    if drop:
        frame = frame[~((frame["method"] == drop[0]) & (frame["seed"] == drop[1]))]
    return frame


def cohen_table(values=ABS_D, seeds=SEEDS):
    rows = [dict(method=m, seed=s, structure=st, d=d + JITTER[m][s % 3], abs_d=d + JITTER[m][s % 3], low=0.0, high=1.0)
            for m, v in values.items() for s in seeds for st, d in zip(STRUCTURES, v)]  # fmt: skip
    return pd.DataFrame(rows)


NULLS = ("off_target_drift", "off_target_baseline")


def edit_table(seeds=SEEDS, edits=4, parts=PARTS, drop_column=None, method="ana", **override):
    """edit.parquet rows: `method`'s edits (ana's), ``override`` = column -> value or column -> {part: value}."""
    rows = []
    for s in seeds:
        for part in parts:
            for e in range(edits):
                cells = {}
                for column, base in EDIT.items():
                    value = override.get(column, base)
                    value = value.get(part, EDIT[column]) if isinstance(value, dict) else value
                    jitter = JITTER["ldm" if column in NULLS else method][s % 3]  # nulls spread apart
                    cells[column] = value + 0.1 * jitter * (1 + e)
                cells["locality_contrast"] = cells["transfer_gain"] - cells["off_target_drift"]
                rows.append(dict(method=method, seed=s, part=part, edit=e, recipient=e, donor=e + 1, **cells))
    frame = pd.DataFrame(rows)
    return frame.drop(columns=drop_column) if drop_column else frame


def conditioning_table(response=0.4, seeds=SEEDS, pairs=3):
    """evaluation/conditioning.parquet rows of the Seg. cLDM (evaluation.conditioning_table): per (seed, pair) the
    agreement with its own map and the other's; `response` their mean difference (0: the map is ignored)."""
    rows = [dict(seed=s, pair=k, recipient=2 * k, donor=2 * k + 1, disagreement_voxels=50,
                 own=0.5 + response / 2 + 0.05 * JITTER["seg_cldm"][s % 3] * (k + 1),
                 other=0.5 - response / 2, change=0.1 if response else 0.0)
            for s in seeds for k in range(pairs)]  # fmt: skip
    columns = ["seed", "pair", "recipient", "donor", "disagreement_voxels", "own", "other", "change"]
    return pd.DataFrame(rows, columns=columns).assign(response=lambda t: t["own"] - t["other"])


SEG_EDITS = pd.concat([edit_table(), edit_table(method="seg_cldm", transfer_gain=0.02)], ignore_index=True)
RESPONDS = conditioning_table()


def memorization_table(ratio=1.1, seeds=SEEDS, null=0.5):
    """memorization.parquet rows: ana's ratio and its null, the LDM's (`null`; None: no LDM rows)."""
    methods = (("ana", ratio),) + ((("ldm", null),) if null is not None else ())
    return pd.DataFrame([dict(method=m, seed=s, sample_median=1.0, held_out_median=1.0, ratio=r + JITTER[m][s % 3])
                         for m, r in methods for s in seeds])  # fmt: skip


def assets_table(inside=0.98, empty=False, reference=True, **scaffold):
    """Generated assets (the share `inside` of their foreground in their part's mask; `empty`: the first has none)
    with the scaffold counts of evaluation.scaffold_table (all as guaranteed unless `scaffold` sets one on the first
    row), and the real training crops (seed -1) as reference."""
    rows = [dict(seed=s, part=p, sample=i, foreground_voxels=100, inside_voxels=round(100 * inside),
                 placed_voxels=120, mismatched_voxels=0, asset_voxels=110, open_voxels=500, open_filled=0,
                 source="generated") for s in SEEDS for p in PARTS for i in range(2)]  # fmt: skip
    if empty:
        rows[0].update(foreground_voxels=0, inside_voxels=0, asset_voxels=0)
    rows[0].update(scaffold)
    if reference:
        rows += [dict(seed=-1, part=p, sample=i, foreground_voxels=100, inside_voxels=80 + i, source="train_crop")
                 for p in PARTS for i in range(3)]  # fmt: skip
    return pd.DataFrame(rows)


def traces_table(final=0.5, nan=False):
    rows = []
    for model in ("ae", "hemisphere", "cb", "whole"):
        for s in (0,) if model == "ae" else SEEDS:
            losses = np.linspace(1.0, final, 20)
            if nan and model == "cb":
                losses[-1] = np.nan
            rows += [dict(model=model, seed=s, step=i + 1, loss=x) for i, x in enumerate(losses)]
    return pd.DataFrame(rows)


def eval_volumes(untracked=(), scans=8, true=True):
    """volumes.parquet's real rows and the eval subjects table: the proxy tracks each structure's true volume
    (r about 0.99) except the ``untracked`` ones, whose proxy runs against it (r about -0.99); ``true`` False: a
    subjects table without true volumes (ADNI)."""
    truth = {s: 1000.0 * (k + 1) + 100.0 * np.arange(scans) for k, s in enumerate(STRUCTURES)}
    wobble = np.array([0.0, 30.0, -20.0, 10.0, -30.0, 20.0, -10.0, 0.0])[:scans]
    proxy = {s: 0.8 * (v[::-1] if s in untracked else v) + wobble for s, v in truth.items()}
    volumes = pd.DataFrame({"source": "real", "seed": 0, "sample": np.arange(scans), **proxy})
    ldm = volumes.assign(source="ldm", seed=1)  # generated rows are not the real scans
    subjects = pd.DataFrame({"subject": [f"eval-{i:04d}" for i in range(scans)], "group": "CN"})
    if true:
        subjects = subjects.assign(**{f"{s}_mm3": v for s, v in truth.items()})
    return pd.concat([ldm, volumes], ignore_index=True), subjects


EVAL_VOLUMES = eval_volumes()
A = "results/quick/anadiffusion"
SUBJECT_FILES = [f"{A}/data/train.npz", f"{A}/data/eval.npz"]


# the evaluation job's record: the held-out and training splits with their label maps (K1's positive control at
# every scale) and the template
EVALUATE_RECORD = [
    ("evaluate", "eval", SUBJECT_FILES[1], "labels"),
    ("evaluate", "train", SUBJECT_FILES[0], "labels"),
    ("evaluate", "template", f"{A}/data/template.npz", ""),
]
QUICK_JOBS = ("sample", "edit", "evaluate")  # experiment.record_jobs at quick (seg_cldm off)
PAPER_JOBS = (*QUICK_JOBS, "seg_cldm")


def records(extra=(), jobs=("sample", "edit"), controls=EVALUATE_RECORD):
    """The input records of the sampling and editing jobs (artifacts.input_record): template and networks, and
    for the edits the samples; then the controls' rows (default the evaluation job's) and ``extra`` rows (job,
    input, path, subject_masks)."""
    rows = []
    for job in jobs:
        given = {
            "template": f"{A}/data/template.npz",
            "autoencoder": f"{A}/models/ae.pt",
            "whole": f"{A}/models/whole.pt",
        }
        given.update({"samples": f"{A}/samples/samples.npz"} if job == "edit" else {"cb": f"{A}/models/cb.pt"})
        rows += [dict(job=job, input=k, path=v, subject_masks="") for k, v in given.items()]
    return pd.DataFrame(rows + [dict(zip(("job", "input", "path", "subject_masks"), r)) for r in [*controls, *extra]])


INPUTS = records()
# the Seg. cLDM job's record: the training split with its label maps (per-subject data), as the job records it
SEG_CLDM_RECORD = [
    ("seg_cldm", "model", f"{A}/models/seg_cldm.pt", ""),
    ("seg_cldm", "train", SUBJECT_FILES[0], "labels"),
]


def decided(fd=None, cohen=None, edits=None, memo=None, assets=None, traces=None, inputs=INPUTS, dataset="synthbrain",
            volumes=EVAL_VOLUMES, jobs=QUICK_JOBS, conditioning=None):  # fmt: skip
    measured = measure_claims(
        fd_table() if fd is None else fd, cohen_table() if cohen is None else cohen,
        edit_table() if edits is None else edits, memorization_table() if memo is None else memo,
        assets_table() if assets is None else assets, traces_table() if traces is None else traces,
        inputs, SUBJECT_FILES, dataset, volumes=volumes[0], eval_subjects=volumes[1], expected_jobs=jobs,
        conditioning=conditioning_table(pairs=0) if conditioning is None else conditioning,
    )  # fmt: skip
    return decide(DEFINITIONS, measured).set_index("claim_id")


def changed(method, **regions):
    v = list(FD[method])
    for region, x in regions.items():
        v[FD_REGIONS.index(region)] = x
    return {**FD, method: tuple(v)}


def near_paper_fd(whole=36.0, seam=0.3):
    """Paper scale: MedicalNet FD of ana (raw, x 1e-4 of the page's numbers) on ADNI, seed spread 0.1 x 1e-4."""
    frame = fd_table(features=("medicalnet18",))
    for region, centre in (("whole", whole), ("seam", seam)):
        cells = (frame["method"] == "ana") & (frame["region"] == region)
        frame.loc[cells, "value"] = (centre + frame.loc[cells, "seed"].map({0: 0.0, 1: 0.01, 2: -0.01})) * 1e-4
    return frame


def near_paper_edits(transfer=0.95, preservation=0.94):
    return edit_table(target_transfer=transfer, off_target_preservation=preservation)


ADNI = {"dataset": "adni"}
WORSE_VENTRICLES = cohen_table({**ABS_D, "ana": (0.50, 0.20, 0.15)})  # ana worse than the LDM on the ventricles only
VERDICT_CASES = [
    ("C1", "holds", {}),
    ("C1", "fails", {"fd": fd_table(changed("ana", whole=1.2))}),
    ("C1", "inconclusive", {"fd": fd_table(seeds=(0, 1))}),  # two seeds: fewer than min_runs
    ("C1", "inconclusive", {"fd": fd_table(set_cell=("ana", 2, "whole", 1.3))}),  # seeds disagree
    ("C1", "inconclusive", {"fd": fd_table(set_cell=("ana", 1, "whole", np.nan))}),
    ("C1", "inconclusive", {"fd": fd_table(drop=("ldm", 2))}),  # an unpaired seed
    ("C1", "inconclusive", {"fd": fd_table(changed("ana", whole=1.0))}),  # equal to the LDM: within the seed spread
    # a second feature network on which ana is worse: the worst network decides
    ("C1", "fails", {"fd": pd.concat([fd_table(), fd_table(changed("ana", whole=1.2), features=("pca32",))])}),
    ("C1", "holds", {"fd": fd_table(features=("rand3d", "pca32"))}),
    # the round trip of the scaffold without diffusion beats ana: the refinement adds nothing beyond it
    ("C1", "fails", {"fd": fd_table(changed("ae_roundtrip", whole=0.6))}),
    ("C1", "inconclusive", {"fd": fd_table(changed("ae_roundtrip", whole=0.8))}),  # ties ana
    ("C1", "inconclusive", {"fd": fd_table({k: v for k, v in FD.items() if k != "ae_roundtrip"})}),  # no null run
    ("C1", "fails", {"fd": fd_table(brain={"ana": 1.5})}),  # better on the whole volume, worse inside the brain
    ("C2", "holds", {}),
    ("C2", "fails", {"fd": fd_table(changed("ana", seam=0.3))}),  # one region worse than the LDM
    ("C2", "inconclusive", {"fd": fd_table(changed("ana", RH=0.5))}),  # equal in one region, better in the rest
    ("C2", "inconclusive", {"fd": fd_table({k: v for k, v in FD.items() if k != "ldm"})}),  # no LDM run
    ("C3", "holds", {}),
    ("C3", "fails", {"fd": fd_table(changed("ae_roundtrip", seam=0.05))}),
    ("C3", "holds", {"fd": fd_table(changed("paste", seam=0.05))}),  # the paste is reported, it does not decide
    ("C3", "inconclusive", {"fd": fd_table({k: v for k, v in FD.items() if k != "ae_roundtrip"})}),  # no null run
    ("C4", "holds", {}),
    ("C4", "fails", {"cohen": cohen_table({**ABS_D, "ana": (0.10, 0.20, 0.50)})}),  # brainstem worse
    ("C4", "inconclusive", {"cohen": cohen_table({**ABS_D, "ana": (0.10, 0.40, 0.15)})}),  # equal cerebellum
    ("C4", "inconclusive", {"cohen": cohen_table(seeds=(0,))}),
    # C10: the proxy does not measure the ventricles, so ana's worse ventricles do not decide C4; where it does, they do
    ("C4", "holds", {"cohen": WORSE_VENTRICLES, "volumes": eval_volumes(untracked=("ventricles",))}),
    ("C4", "fails", {"cohen": WORSE_VENTRICLES}),
    ("C4", "inconclusive", {"volumes": eval_volumes(untracked=STRUCTURES)}),  # no structure measured
    # ADNI (no true volumes): every structure decides, whatever the proxy
    ("C4", "fails", {"cohen": WORSE_VENTRICLES, "volumes": eval_volumes(untracked=STRUCTURES, true=False)}),
    ("C4", "inconclusive", {"volumes": eval_volumes(scans=2)}),  # too few scans to tell
    ("C10", "holds", {}),
    ("C10", "fails", {"volumes": eval_volumes(untracked=("ventricles",))}),
    ("C10", "inconclusive", {"volumes": eval_volumes(true=False)}),  # no ground truth (ADNI)
    ("C10", "inconclusive", {"volumes": (EVAL_VOLUMES[0], EVAL_VOLUMES[1].iloc[:-1])}),  # scans do not pair up
    ("C5", "holds", {}),
    ("C5", "fails", {"edits": edit_table(transfer_gain={"CB": -0.05})}),  # CB moves away from the donor
    # the null: the edit moves everything toward the donor as much off target as in the target
    ("C5", "inconclusive", {"edits": edit_table(off_target_drift=0.15)}),
    ("C5", "fails", {"edits": edit_table(off_target_drift=0.25)}),  # a global edit: more drift than transfer
    ("C5", "inconclusive", {"edits": edit_table(parts=("LH", "RH"))}),  # no CB edits
    ("C5", "holds", {"edits": edit_table(drop_column="off_target_drift")}),  # drift from gain - locality contrast
    ("C6", "holds", {}),
    ("C6", "fails", {"edits": edit_table(off_target_preservation={"RH": 0.85})}),
    # the null: two different brains are as alike off target as the edit is to its original
    ("C6", "inconclusive", {"edits": edit_table(off_target_baseline=0.95)}),
    ("C6", "fails", {"edits": edit_table(off_target_baseline=0.97)}),
    ("C6", "inconclusive", {"edits": edit_table(drop_column="off_target_baseline")}),  # the null not measured
    ("C6", "inconclusive", {"edits": edit_table(seeds=(0, 1))}),
    ("C7", "holds", {}),
    ("C7", "fails", {"fd": fd_table(changed("ana_r15", whole=0.6))}),  # r_inj = 15 is best
    ("C7", "inconclusive", {"fd": fd_table(changed("ana_r7", whole=0.8))}),  # r_inj = 7 ties
    ("C7", "inconclusive", {"fd": fd_table({k: v for k, v in FD.items() if k != "ana_r15"})}),
    ("C8", "holds", {}),
    ("C8", "fails", {"memo": memorization_table(ratio=0.3)}),  # samples sit on training scans
    ("C8", "inconclusive", {"memo": memorization_table(ratio=0.8)}),
    ("C8", "inconclusive", {"memo": memorization_table(seeds=(0, 1))}),
    ("C8", "inconclusive", {"memo": memorization_table(null=1.0)}),  # the LDM passes too: the null passes
    ("C8", "inconclusive", {"memo": memorization_table(null=None)}),  # no null measured
    # C11: ana's transfer gain against the Seg. cLDM's (paper scale), only where the baseline follows its maps
    ("C11", "holds", {"edits": SEG_EDITS, "conditioning": RESPONDS}),
    (
        "C11",
        "fails",
        {
            "edits": pd.concat([edit_table(), edit_table(method="seg_cldm", transfer_gain=0.30)]),
            "conditioning": RESPONDS,
        },
    ),  # fmt: skip
    (
        "C11",
        "inconclusive",
        {
            "edits": pd.concat([edit_table(), edit_table(method="seg_cldm", transfer_gain=0.15)]),
            "conditioning": RESPONDS,
        },
    ),  # a tie  # fmt: skip
    ("C11", "inconclusive", {"conditioning": RESPONDS}),  # not run (quick)
    ("C11", "inconclusive", {"edits": SEG_EDITS, "conditioning": conditioning_table(response=0.0)}),  # untrained
    ("C11", "inconclusive", {"edits": SEG_EDITS}),  # the conditioning check missing
    ("C12", "holds", {"fd": fd_table({**FD, "ana_separate": (0.90, 0.40, 0.40, 0.20, 0.05)})}),
    ("C12", "fails", {"fd": fd_table({**FD, "ana_separate": (0.60, 0.40, 0.40, 0.20, 0.05)})}),
    ("C12", "inconclusive", {"fd": fd_table({**FD, "ana_separate": (0.80, 0.40, 0.40, 0.20, 0.05)})}),  # a tie
    ("C12", "inconclusive", {}),  # not run (quick)
    ("C13", "holds", {"conditioning": RESPONDS}),
    ("C13", "fails", {"conditioning": conditioning_table(response=-0.3)}),  # follows the other map: inverted
    ("C13", "inconclusive", {"conditioning": conditioning_table(response=0.0)}),  # ignores its conditioning
    ("C13", "inconclusive", {}),  # not run (quick)
    ("C13", "inconclusive", {"conditioning": conditioning_table(seeds=(0,))}),
    ("P1", "holds", {"fd": near_paper_fd(whole=36.0), **ADNI}),
    ("P1", "fails", {"fd": near_paper_fd(whole=80.0), **ADNI}),  # far above the interval
    ("P1", "fails", {"fd": near_paper_fd(whole=5.0), **ADNI}),  # far below it
    ("P1", "inconclusive", {"fd": near_paper_fd(whole=59.6), **ADNI}),  # our interval straddles its end
    ("P1", "inconclusive", {}),  # quick: synthetic cohort, rand3d features
    ("P1", "inconclusive", {"fd": near_paper_fd()}),  # MedicalNet features on synthetic data
    ("P2", "holds", {"fd": near_paper_fd(seam=0.3), **ADNI}),
    ("P2", "fails", {"fd": near_paper_fd(seam=2.0), **ADNI}),
    ("P2", "inconclusive", {"fd": fd_table(), **ADNI}),  # ADNI scored with a proxy network
    ("P3", "holds", {"edits": near_paper_edits(preservation=0.94), **ADNI}),
    ("P3", "fails", {"edits": near_paper_edits(preservation=0.80), **ADNI}),
    ("P3", "inconclusive", {"edits": near_paper_edits(preservation=0.94)}),  # not ADNI
    ("P4", "holds", {"edits": near_paper_edits(transfer=0.95), **ADNI}),
    ("P4", "fails", {"edits": near_paper_edits(transfer=0.99 + 0.02), **ADNI}),  # far above
    ("P4", "inconclusive", {"edits": edit_table(parts=("LH",)), **ADNI}),  # parts missing
    ("K1", "holds", {}),
    ("K1", "fails", {"inputs": records([("sample", "cohort", SUBJECT_FILES[0], "")])}),  # a job reads the cohort
    ("K1", "fails", {"inputs": records([("edit", "masks", f"{A}/x.npz", "labels")])}),  # a per-subject label map
    ("K1", "inconclusive", {"inputs": records(jobs=(), controls=())}),
    ("K1", "inconclusive", {"inputs": records(jobs=("sample",))}),  # the editing job's record is missing
    ("K1", "inconclusive", {"inputs": records(controls=())}),  # the control's record is missing
    ("K1", "inconclusive", {"inputs": records([("other", "x", f"{A}/z.npz", "")])}),  # a job K1 does not name
    ("K1", "inconclusive", {"jobs": PAPER_JOBS}),  # the config runs the Seg. cLDM, its record is missing
    ("K1", "inconclusive", {"inputs": records(SEG_CLDM_RECORD)}),  # a record of a job the config does not run
    ("K1", "inconclusive", {"jobs": ("sample", "edit")}),  # no positive control configured
    ("K1", "holds", {"inputs": records(SEG_CLDM_RECORD), "jobs": PAPER_JOBS}),  # the baseline takes the masks
    # the baseline's masks went undetected: the detector is broken, so the check cannot hold
    ("K1", "fails", {"inputs": records([("seg_cldm", "model", f"{A}/models/seg_cldm.pt", "")]), "jobs": PAPER_JOBS}),
    # a control that reads a subject file whose masks the content detector missed: a path match is no detection
    ("K1", "fails", {"inputs": records([("seg_cldm", "train", SUBJECT_FILES[0], "")]), "jobs": PAPER_JOBS}),
    ("K1", "fails", {"inputs": records(controls=[("evaluate", "eval", SUBJECT_FILES[1], "")])}),
    ("K1", "inconclusive", {"inputs": records().drop(columns="subject_masks")}),
    # K2: the assembly's guarantee, read back from the paste and the assets, not the models' quality
    ("K2", "holds", {}),
    ("K2", "holds", {"assets": assets_table(inside=0.1)}),  # assets that spill out of their masks: C9's concern
    ("K2", "fails", {"assets": assets_table(mismatched_voxels=3)}),  # the paste is not the asset in its mask
    ("K2", "fails", {"assets": assets_table(open_filled=1)}),  # an open voxel is filled
    ("K2", "fails", {"assets": assets_table(empty=True)}),  # an asset with nothing above background
    ("K2", "inconclusive", {"assets": assets_table().drop(columns="mismatched_voxels")}),
    ("K2", "inconclusive", {"assets": assets_table(mismatched_voxels=np.nan)}),
    ("K2", "inconclusive", {"assets": pd.DataFrame(columns=["seed", "part", "sample", "mass"])}),
    ("C9", "holds", {}),
    ("C9", "fails", {"assets": assets_table(inside=0.8)}),
    ("C9", "fails", {"assets": assets_table(empty=True)}),
    ("C9", "holds", {"assets": assets_table(reference=False)}),  # the reference is shown, never decides
    ("C9", "inconclusive", {"assets": pd.DataFrame(columns=["seed", "part", "sample", "mass"])}),
    ("K3", "holds", {}),
    ("K3", "fails", {"traces": traces_table(final=1.2)}),
    ("K3", "inconclusive", {"traces": traces_table(nan=True)}),
]


@pytest.mark.parametrize(
    "claim_id, expected, scenario", VERDICT_CASES, ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(VERDICT_CASES)]
)
def test_claim_verdict_in_scenario(claim_id, expected, scenario):
    table = decided(**scenario)
    assert table.loc[claim_id, "verdict"] == expected, table.loc[claim_id, "note"]


def test_the_values_are_the_paired_differences_stated():
    table = decided()
    jitter = np.mean(JITTER["ana"]) - np.mean(JITTER["ldm"])
    # the worst of whole and brain against the better null per seed (ldm: the round trip is worse here); brain is
    # BRAIN x the whole-volume values, so its difference is the smaller one
    assert np.isclose(table.loc["C1", "value"], BRAIN * (0.80 - 1.00 + jitter))
    assert "ae_roundtrip" in table.loc["C1", "note"] and "real-vs-real FD" in table.loc["C1", "note"]
    # the worst region against the LDM: seam and LH, RH, CB all -0.1 apart; seam is the largest after the jitter
    assert np.isclose(table.loc["C2", "value"], -0.10 + jitter)
    assert np.isclose(table.loc["C3", "value"], 0.10 - 0.25 + np.mean(JITTER["ana"]) - np.mean(JITTER["ae_roundtrip"]))
    assert "- paste" in table.loc["C3", "note"]  # the second null, reported
    # the better null decides per seed: a round trip better than the LDM becomes C1's reference
    closer = decided(fd=fd_table(changed("ae_roundtrip", whole=0.9)))
    rt = np.mean(JITTER["ana"]) - np.mean(JITTER["ae_roundtrip"])
    assert np.isclose(closer.loc["C1", "value"], BRAIN * (0.80 - 0.90 + rt))
    c8 = decided(memo=memorization_table(null=1.0)).loc["C8"]
    assert c8["verdict"] == "inconclusive" and np.isclose(c8["null_value"], np.mean(1.0 + np.array(JITTER["ldm"])))
    assert "null without the mechanism passes too" in c8["note"]
    assert np.isclose(table.loc["C4", "value"], 0.15 - 0.30 + jitter)  # brainstem, the worst structure
    assert np.isclose(table.loc["C5", "value"], 0.15 - 0.03, atol=1e-3)  # gain minus drift
    assert np.isclose(table.loc["C6", "value"], 0.95 - 0.90, atol=1e-3)  # preservation minus max(0.80, 0.9)
    r7 = np.array(FD["ana_r7"][0]) + np.array(JITTER["ana_r7"])
    r15 = np.array(FD["ana_r15"][0]) + np.array(JITTER["ana_r15"])
    ana = 0.80 + np.array(JITTER["ana"])
    assert np.isclose(table.loc["C7", "value"], np.mean(ana - np.minimum(r7, r15)))
    assert table.loc["C1", "runs"] == 3 and table.loc["C1", "min_runs"] == 3
    assert not table["reconstruction"].any()  # the paper was found


def test_the_hard_claims_state_their_null_inside_the_value():
    """C5's null is the off-target drift: with a drift of 0.05 the value is the gain beyond it, not the gain."""
    table = decided(edits=edit_table(off_target_drift=0.05))
    assert np.isclose(table.loc["C5", "value"], 0.15 - 0.05, atol=1e-3)
    assert "null" in table.loc["C5", "note"]
    # a drift below 0 gives no credit: the value is the gain itself (beyond max(drift, 0))
    assert np.isclose(decided(edits=edit_table(off_target_drift=-0.05)).loc["C5", "value"], 0.15, atol=1e-3)
    kinds = {d.claim_id: d.kind for d in DEFINITIONS}
    assert kinds["C1"] == kinds["C3"] == kinds["C5"] == "hard"
    assert kinds["K1"] == kinds["K2"] == kinds["K3"] == "check"
    assert kinds["C9"] == "info"


def test_asset_share_is_information_with_the_real_crops_beside_and_k2_counts_what_breaks_the_assembly():
    """C9 keeps the threshold 0.95 fixed before any result; the real crops' share is its reference in the note, not
    its null (a null that passes would turn holds into inconclusive). K2 counts the open voxels once per paste."""
    by_id = {d.claim_id: d for d in DEFINITIONS}
    assert (by_id["C9"].comparison, by_id["C9"].threshold) == (">=", 0.95)
    assert (by_id["K2"].comparison, by_id["K2"].threshold) == ("<=", 0.0)
    table = decided(assets=assets_table(inside=0.5))
    row = table.loc["C9"]
    assert row["verdict"] == "fails" and row["value"] == pytest.approx(0.5) and np.isnan(row["null_value"])
    assert "real training crops (9): CB 0.800 / 0.810" in row["note"]
    opened = assets_table()
    opened.loc[(opened["seed"] == 0) & (opened["sample"] == 0), "open_filled"] = 7  # one paste, three part rows
    k2 = decided(assets=opened).loc["K2"]
    assert k2["value"] == 7 and k2["verdict"] == "fails" and "7 open voxels" in k2["note"]


def test_the_worst_item_decides_and_names_itself():
    note = decided(fd=fd_table(changed("ana", CB=0.35))).loc["C2", "note"]
    assert "worst CB (rand3d)" in note


def test_duplicated_runs_and_non_finite_values_are_named_never_dropped():
    doubled = pd.concat([fd_table(), fd_table()[lambda f: (f["method"] == "ana") & (f["seed"] == 1)]])
    assert "several rows for seeds [1]" in decided(fd=doubled).loc["C1", "note"]
    row = decided(fd=fd_table(set_cell=("ldm", 0, "whole", np.inf))).loc["C1"]
    assert row["verdict"] == "inconclusive" and "seed 0: inf" in row["note"]


def test_the_published_numbers_are_the_project_pages():
    """Table 1: AnaDiffusion WB 36.16 [19.16, 59.61], Seam 0.29 [0.17, 0.46]; Fig. 4a's means over parts."""
    by_id = {d.claim_id: d for d in DEFINITIONS}
    assert by_id["P1"].paper_value == pytest.approx(36.16) and by_id["P2"].paper_value == pytest.approx(0.29)
    assert by_id["P3"].paper_value == pytest.approx(mean_over_parts("off_target_preservation"), abs=1e-4)
    assert by_id["P4"].paper_value == pytest.approx(mean_over_parts("target_transfer"), abs=1e-4)
    assert by_id["C1"].paper_value == pytest.approx((36.16 - 40.92) * 1e-4)
    assert by_id["C7"].paper_value == pytest.approx((36.16 - 51.66) * 1e-4)
    row = decided(fd=near_paper_fd(whole=36.0), dataset="adni").loc["P1"]
    assert row["value"] == 0.0 and "medicalnet18" in row["note"]


@pytest.mark.parametrize(
    "ours, expected",
    [((40.0, 39.0, 41.0), (0.0, 0.0, 0.0)),  # inside the published interval
     ((65.0, 64.0, 68.0), (5.39, 4.39, 8.39)),  # above it: the gap, then the farther end
     ((15.0, 13.0, 17.0), (4.16, 2.16, 6.16)),  # below it
     ((59.0, 58.0, 60.0), (0.0, 0.0, 0.39))],  # straddling its upper end
)  # fmt: skip
def test_distance_from_interval_is_two_sided(ours, expected):
    m = distance_from_interval("P1", Spread(*ours, runs=3), 19.16, 59.61, "")
    assert (m.value, m.low, m.high) == pytest.approx(expected, abs=0.005)


def test_no_mask_check_flags_subject_files_and_mask_arrays_but_not_the_template():
    assert masks_at_inference(INPUTS[INPUTS["job"] != "evaluate"], SUBJECT_FILES) == []
    extra = [("edit", "eval", "./" + SUBJECT_FILES[1], "labels"), ("sample", "x", f"{A}/y.npz", None)]
    found = masks_at_inference(records(extra, controls=()), SUBJECT_FILES)
    assert found == [f"edit: ./{SUBJECT_FILES[1]} (per-subject data)", f"edit: ./{SUBJECT_FILES[1]} holds labels"]
    note = decided(inputs=records(extra)).loc["K1", "note"]
    assert "sample (5 inputs), edit (5 inputs)" in note and "holds labels" in note
    assert "not run at this scale: seg_cldm" in note


def test_the_no_mask_check_names_its_jobs_and_its_controls_detections():
    table = decided(inputs=records(SEG_CLDM_RECORD), jobs=PAPER_JOBS)
    assert table.loc["K1", "value"] == 0 and table.loc["K1", "verdict"] == "holds"
    note = table.loc["K1", "note"]
    assert "sample (4 inputs), edit (4 inputs)" in note and ": none found" in note
    assert f"control seg_cldm (takes the subjects' masks by design): {SUBJECT_FILES[0]} holds labels" in note
    assert f"control evaluate (takes the subjects' masks by design): {SUBJECT_FILES[1]} holds labels" in note
    assert set(MASK_FREE_JOBS) == {"sample", "edit"} and set(MASK_JOBS) == {"evaluate", "seg_cldm"}
    broken = decided(inputs=records(controls=[("evaluate", "eval", SUBJECT_FILES[1], "")]))
    assert broken.loc["K1", "value"] == 1 and "broken detector" in broken.loc["K1", "note"]
    missing = decided(jobs=PAPER_JOBS).loc["K1", "note"]
    assert "no record of the configured jobs ['seg_cldm']" in missing


def test_proxy_agreement_is_the_correlation_on_the_real_scans_and_c4_names_what_it_leaves_out():
    volumes, subjects = eval_volumes(untracked=("ventricles",))
    found = proxy_agreement(volumes, subjects)
    real = volumes[volumes["source"] == "real"]
    for s in STRUCTURES:
        assert found[s] == pytest.approx(np.corrcoef(real[s], subjects[f"{s}_mm3"])[0, 1])
    assert found["ventricles"] < PROXY_AGREEMENT <= min(found["cerebellum"], found["brainstem"])
    assert proxy_agreement(*eval_volumes(true=False)) is None
    table = decided(volumes=(volumes, subjects))
    c10, c4 = table.loc["C10"], table.loc["C4"]
    assert c10["value"] == pytest.approx(found["ventricles"]) and c10["runs"] == 8
    assert "C4 reads the structures at r >= 0.5 (ours): cerebellum, brainstem" in c10["note"]
    assert "ventricles left out" in c4["note"] and "worst ventricles" not in c4["note"]
    # the worst of the structures kept: brainstem (0.15 - 0.30), as with all three
    assert c4["value"] == pytest.approx(decided().loc["C4", "value"])
    assert "the proxy segmenter measures" in decided(volumes=eval_volumes(untracked=STRUCTURES)).loc["C4", "note"]


def test_the_baseline_claims_give_the_papers_numbers_beside_ours():
    c11 = decided(edits=SEG_EDITS, conditioning=RESPONDS).loc["C11"]
    assert c11["value"] == pytest.approx(0.15 - 0.02, abs=0.01)
    assert "LH: ours" in c11["note"] and "(paper 0.1627 vs 0.0152, +0.1475)" in c11["note"]
    assert "untrained" in decided(edits=SEG_EDITS, conditioning=conditioning_table(response=0.0)).loc["C11", "note"]
    c12 = decided(fd=fd_table({**FD, "ana_separate": (0.90, 0.40, 0.40, 0.20, 0.05)})).loc["C12"]
    assert c12["value"] == pytest.approx(-0.1, abs=0.02)
    assert "Table 2: 36.16 - 38.72 = -2.56 x 1e-4" in c12["note"] and "Seam +0.05" in c12["note"]
    assert "not run at this scale" in decided().loc["C12", "note"]
    c13 = decided(conditioning=RESPONDS).loc["C13"]
    assert c13["value"] == pytest.approx(0.4, abs=0.01) and "with its own map" in c13["note"]


def test_c6_says_when_its_null_never_decides():
    quick = decided().loc["C6", "note"]  # the null 0.80 is below 0.9 on every (part, seed)
    assert "the null is above 0.9 on 0 of 9 (part, seed) means: the level 0.9 decides, never the null" in quick
    above = decided(edits=edit_table(off_target_baseline={"CB": 0.93})).loc["C6", "note"]
    assert "the null is above 0.9 on 3 of 9 (part, seed) means" in above and "never the null" not in above
