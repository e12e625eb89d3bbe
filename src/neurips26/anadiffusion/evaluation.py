"""Paper 03's evaluation tables in long form (arXiv 2608.23014, Table 1, Table 2 and Fig. 4a), from the metrics of
:mod:`.features`, :mod:`.metrics`, :mod:`.segment` and :mod:`.editing`: everything here is arrays in, DataFrames out.

* Regions (:func:`regions`): ``whole`` (the whole volume), ``brain`` (inside the template brain only: the whole
  volume's FD without the background outside the brain), ``LH``, ``RH``, ``CB`` (the template's part masks) and
  ``seam`` (the template's seam band): population-level masks, the same for real and generated volumes.
* Real-vs-real reference (:func:`real_reference`): the same FD of disjoint subsets of the training volumes (each as
  large as the held-out set) against the held-out set, rows of method ``real``: the FD two real samples of that
  size reach, the floor no generator can be expected to beat.
* Frechet distance (:func:`fd_table`): per (method, seed, region) the FD between the features of the held-out real
  volumes and of as many generated volumes of that seed (the first ones; equal counts, so that the small-sample
  bias of the FD is the same for every method), with the subject-cluster bootstrap interval beside it.
* Regional volumes (:func:`volume_table`) by the one proxy segmenter, Cohen's d against the held-out reals
  (:func:`cohen_d_table`), editing scores (:func:`edit_table`), memorization (:func:`memorization_table`) and the
  part assets' share inside their template part (:func:`asset_table`, of the part models' quality; beside it the same
  of the real training crops, :func:`training_crops`), and what the assembly guarantees (:func:`scaffold_table`: the
  paste holds each part's asset only inside that part's template mask, background everywhere else).
* Whether the Seg. cLDM follows its conditioning (:func:`conditioning_table`): from the same noise, a sample with its
  own label map and one with another subject's, each compared with both maps where the two maps' brains differ.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import torch
from torch import nn

from . import editing, features, metrics, segment
from .assembly import BACKGROUND
from .template import Template
from .volumes import PART_LABELS, PARTS

__all__ = [
    "REGIONS",
    "asset_table",
    "cohen_d_table",
    "conditioning_table",
    "edit_table",
    "fd_table",
    "memorization_table",
    "real_reference",
    "regions",
    "scaffold_table",
    "training_crops",
    "volume_table",
]

REGIONS = ("whole", "brain", *features.REGIONS[1:])  # features.REGIONS with the brain-only whole beside `whole`


def real_subsets(training: np.ndarray, size: int) -> dict[tuple[str, int], np.ndarray]:
    """Disjoint consecutive subsets of `size` training volumes, as many as fit: {("real", k): volumes}, the
    generated-set form of :func:`fd_table` for the real-vs-real reference (:func:`real_reference`)."""
    count = len(training) // size if size > 0 else 0
    if count < 1:
        raise ValueError(f"real reference: {len(training)} training volumes hold no subset of {size}")
    return {("real", k): training[k * size : (k + 1) * size] for k in range(count)}


def real_reference(network: nn.Module, real: np.ndarray, training: np.ndarray, masks: Mapping[str, np.ndarray],
                   replicates: int, confidence: float, seed: int = 0,
                   device: str | torch.device = "cpu") -> pd.DataFrame:  # fmt: skip
    """Rows of method ``real`` (seed = subset index) in :func:`fd_table`'s form: the FD of each disjoint subset of
    the training volumes, as large as the held-out set `real`, against `real`: what two independent real samples of
    that size score (training subjects are independent of the held-out ones)."""
    return fd_table(network, real, real_subsets(training, len(real)), masks, replicates, confidence, seed,
                    device=device)  # fmt: skip


def regions(template: Template) -> dict[str, np.ndarray]:
    """The Frechet distance's regions (:data:`REGIONS`: the page's Table 1 columns, features.REGIONS, and ``brain``)
    as template masks (X, Y, Z)."""
    masks = {"whole": np.ones(template.shape, dtype=bool), "brain": np.asarray(template.brain, dtype=bool)}
    masks.update({part: template.part_mask(part) for part in PARTS})
    masks["seam"] = np.asarray(template.seam, dtype=bool)
    return {name: masks[name] for name in REGIONS}


def fd_table(
    network: nn.Module,
    real: np.ndarray,
    generated: Mapping[tuple[str, int], np.ndarray],
    masks: Mapping[str, np.ndarray],
    replicates: int,
    confidence: float,
    seed: int = 0,
    real_clusters: Sequence | None = None,
    device: str | torch.device = "cpu",
) -> pd.DataFrame:
    """Per (method, seed) of `generated` ({(method, seed): volumes (N, X, Y, Z)}) and region: the Frechet distance
    of the network's regional features to those of the `real` held-out volumes, with its subject-cluster bootstrap
    interval. Each generated set is cut to the real set's size. Features are computed on `device`."""
    n_real = len(real)
    real_features = features.regional_features(network, real, masks, device=device)
    name = getattr(network, "name", type(network).__name__)
    rows = []
    for (method, s), volumes in generated.items():
        if len(volumes) < n_real:
            raise ValueError(f"{method} seed {s}: {len(volumes)} samples, fewer than the {n_real} real volumes")
        gen_features = features.regional_features(network, volumes[:n_real], masks, device=device)
        fds = metrics.regional_frechet_distances(
            real_features, gen_features, real_clusters, None, replicates, confidence, seed
        )
        for region, interval in fds.items():
            rows.append({"method": method, "seed": int(s), "region": region, "features": name,
                         "value": interval.value, "low": interval.low, "high": interval.high,
                         "n_real": n_real, "n_generated": n_real})  # fmt: skip
    return pd.DataFrame(rows)


def volume_table(
    sets: Mapping[tuple[str, int], np.ndarray], template: Template, csf_threshold: float = segment.ANATOMY_THRESHOLD
) -> pd.DataFrame:
    """Regional volumes (mm^3) of every volume of `sets` ({(source, seed): volumes (N, X, Y, Z)}; source ``real``
    or a method) by the SynthSeg proxy with the template's ROIs: one row per (source, seed, sample)."""
    rois = {"ventricles": template.ventricle_roi, "cerebellum": template.cerebellum, "brainstem": template.brainstem}
    frames = []
    for (source, s), volumes in sets.items():
        measured = segment.proxy_structure_volumes(volumes, rois, template.voxel_mm, csf_threshold)
        frame = pd.DataFrame({name: measured[name] for name in segment.STRUCTURES})
        frames.append(frame.assign(source=source, seed=int(s), sample=np.arange(len(volumes))))
    columns = ["source", "seed", "sample", *segment.STRUCTURES]
    return pd.concat(frames, ignore_index=True)[columns]


def cohen_d_table(volumes: pd.DataFrame, replicates: int, confidence: float, seed: int = 0) -> pd.DataFrame:
    """Per (method, seed, structure): Cohen's d of the generated volumes against the real ones (source ``real``),
    signed, its absolute value and the bootstrap interval of |d|. Where d is undefined (a zero pooled SD, fewer than
    three volumes a side) the row holds NaN and says why in ``note``."""
    real = volumes[volumes["source"] == "real"]
    rows = []
    for (method, s), group in volumes[volumes["source"] != "real"].groupby(["source", "seed"], sort=False):
        for structure in segment.STRUCTURES:
            row = {"method": method, "seed": int(s), "structure": structure, "n_real": len(real),
                   "n_generated": len(group), "note": ""}  # fmt: skip
            try:
                d = metrics.cohens_d(group[structure], real[structure])
                interval = metrics.bootstrap_cohens_d(
                    group[structure], real[structure], replicates=replicates, confidence=confidence, seed=seed
                )
                row.update(d=d, abs_d=abs(d), low=interval.low, high=interval.high)
            except ValueError as error:
                row.update(d=np.nan, abs_d=np.nan, low=np.nan, high=np.nan, note=str(error))
            rows.append(row)
    return pd.DataFrame(rows)


def edit_table(
    method: str,
    seed: int,
    part: str,
    original: np.ndarray,
    donor: np.ndarray,
    edited: np.ndarray,
    template: Template,
    recipients: Sequence[int],
    donors: Sequence[int],
    n_scales: int,
    kernel_size: int,
    dilation_voxels: int,
    device: str | torch.device = "cpu",
) -> pd.DataFrame:
    """The editing scores (editing.EditScores columns) of the edits of one (method, seed, part): one row per edit,
    with its recipient and donor sample indices and ``off_target_baseline`` = S(original, donor | off target), the
    resemblance of two brains off target (what off-target preservation must beat)."""
    target, brain = template.part_mask(part), np.asarray(template.brain, dtype=bool)
    scores = editing.editing_scores(original, donor, edited, target, brain, dilation_voxels=dilation_voxels,
                                    n_scales=n_scales, kernel_size=kernel_size, device=device)  # fmt: skip
    off = editing.off_target_mask(brain, target, dilation_voxels)
    frame = pd.DataFrame(scores.columns())
    frame["off_target_baseline"] = editing.masked_ms_ssim(original, donor, off, n_scales, kernel_size, device=device)
    frame.insert(0, "edit", np.arange(len(frame)))
    frame.insert(0, "part", part)
    frame.insert(0, "seed", int(seed))
    frame.insert(0, "method", method)
    return frame.assign(recipient=np.asarray(recipients), donor=np.asarray(donors))


CONDITIONING_COLUMNS = ("seed", "pair", "recipient", "donor", "disagreement_voxels", "own", "other", "response",
                        "change")  # fmt: skip


def conditioning_table(seed: int, originals: np.ndarray, swapped: np.ndarray, recipient_maps: np.ndarray,
                       donor_maps: np.ndarray, threshold: float, recipients: Sequence[int] = (),
                       donors: Sequence[int] = ()) -> pd.DataFrame:  # fmt: skip
    """Does a label-conditioned model follow its conditioning? Per pair k: `originals[k]` was sampled from the
    recipient's noise with the recipient's map, `swapped[k]` from the SAME noise with the donor's map (volumes
    (K, X, Y, Z) in [-1, 1]; maps (K, X, Y, Z), 0 background). On the voxels where the two maps' brains (label > 0)
    disagree, ``own`` is the share where a sample's brain (voxels above `threshold`: our segmenter) agrees with the
    map it was conditioned on, averaged over the two samples, ``other`` the share where it agrees with the other
    map, ``response`` = own - other (in [-1, 1]; exactly 0 for a model that ignores its conditioning, whose two
    samples are then one), and ``change`` the mean |swapped - original| over all voxels. NaN where the maps' brains
    do not differ."""
    originals, swapped = np.asarray(originals, dtype=np.float64), np.asarray(swapped, dtype=np.float64)
    recipient_maps, donor_maps = np.asarray(recipient_maps) > 0, np.asarray(donor_maps) > 0
    if not (originals.shape == swapped.shape == recipient_maps.shape == donor_maps.shape) or originals.ndim != 4:
        raise ValueError(f"originals {originals.shape}, swapped {swapped.shape}, maps {recipient_maps.shape} and "
                         f"{donor_maps.shape}: need one shape (K, X, Y, Z)")  # fmt: skip
    rows = []
    for k in range(len(originals)):
        differ = recipient_maps[k] != donor_maps[k]
        count = int(differ.sum())
        a, b = originals[k][differ] > threshold, swapped[k][differ] > threshold
        r, d = recipient_maps[k][differ], donor_maps[k][differ]
        own = float(((a == r).mean() + (b == d).mean()) / 2) if count else np.nan
        other = float(((a == d).mean() + (b == r).mean()) / 2) if count else np.nan
        rows.append({"seed": int(seed), "pair": k, "recipient": int(recipients[k]) if len(recipients) else k,
                     "donor": int(donors[k]) if len(donors) else k, "disagreement_voxels": count, "own": own,
                     "other": other, "response": own - other,
                     "change": float(np.abs(swapped[k] - originals[k]).mean())})  # fmt: skip
    return pd.DataFrame(rows, columns=list(CONDITIONING_COLUMNS))


def memorization_table(
    generated: Mapping[tuple[str, int], np.ndarray], held_out: np.ndarray, training: np.ndarray
) -> pd.DataFrame:
    """Per (method, seed): the median distance of its samples to their nearest training volume, that of the held-out
    real volumes, and their ratio (metrics.memorization), on the flattened volumes; as many samples as held-out
    volumes."""
    rows = []
    for (method, s), volumes in generated.items():
        result = metrics.memorization(volumes[: len(held_out)], held_out, training)
        rows.append({"method": method, "seed": int(s), "sample_median": result.sample_median,
                     "held_out_median": result.held_out_median, "ratio": result.ratio})  # fmt: skip
    return pd.DataFrame(rows)


def asset_table(
    assets: Mapping[str, np.ndarray], seeds: Sequence[int], template: Template, threshold: float
) -> pd.DataFrame:
    """Per (seed, part, sample) of the decoded part assets ({part: (S, N, *support shape)}, in their support's frame):
    ``foreground_voxels`` (the asset's voxels above `threshold`) and ``inside_voxels`` (those the part's template
    mask, cropped to the support in that frame, holds), and the same as mass above background, ``mass`` (sum of
    (x + 1) / 2, clipped at 0, over the support) and ``mass_inside``."""
    rows = []
    for part, images in assets.items():
        inside = template.supports[part].crop(template.part_mask(part))
        images = np.asarray(images, dtype=np.float64)  # (S, N, *shape)
        foreground, mass = images > threshold, np.clip((images + 1.0) / 2.0, 0.0, None)
        counts = [(x.reshape(*x.shape[:2], -1).sum(-1), (x * inside).reshape(*x.shape[:2], -1).sum(-1))
                  for x in (foreground, mass)]  # fmt: skip
        (total, held), (weight, weight_inside) = counts
        for i, s in enumerate(seeds):
            rows.extend({"seed": int(s), "part": part, "sample": n, "foreground_voxels": int(total[i, n]),
                         "inside_voxels": int(held[i, n]), "mass": float(weight[i, n]),
                         "mass_inside": float(weight_inside[i, n])} for n in range(images.shape[1]))  # fmt: skip
    return pd.DataFrame(rows)


def training_crops(volumes: np.ndarray, labels: np.ndarray, template: Template) -> dict[str, np.ndarray]:
    """The real counterpart of the part assets: each training subject's volume (N, X, Y, Z) with the voxels outside
    its own part (``labels``, 0 background, 1 LH, 2 RH, 3 CB) set to background -1, cropped to the part's template
    support in its frame ({part: (1, N, *support shape)}, a leading axis of one 'seed' as :func:`asset_table` takes),
    as the part models' training crops are made (``assembly.part_training_crops``)."""
    volumes, labels = np.asarray(volumes), np.asarray(labels)
    if volumes.shape != labels.shape or volumes.ndim != 4:
        raise ValueError(f"volumes {volumes.shape} and labels {labels.shape} must be one (N, X, Y, Z) shape")
    return {part: support.crop(np.where(labels == PART_LABELS[part], volumes, BACKGROUND))[None]
            for part, support in template.supports.items()}  # fmt: skip


def scaffold_table(
    paste: np.ndarray,
    assets: Mapping[str, np.ndarray],
    seeds: Sequence[int],
    template: Template,
    open_voxels: np.ndarray | None = None,
) -> pd.DataFrame:
    """What the assembly guarantees, read back from the sampling job's outputs: per (seed, part, sample), with
    ``paste`` (S, N, X, Y, Z) the naive paste (the scaffold, clipped to [-1, 1]) and ``assets`` {part: (S, N,
    *support shape)} the decoded part assets in their support's frame and `open_voxels` the layout's open voxels
    (bool (X, Y, Z), assembly.open_voxels; none when omitted): ``placed_voxels`` (the part's template mask less the
    open voxels: where the assembly writes it),
    ``mismatched_voxels`` (voxels of that mask where the paste is not the asset, clipped and put back in template
    orientation), ``asset_voxels`` (voxels of that mask where the asset is above background -1: 0 is an empty asset)
    and, per (seed, sample), repeated on each part's row, ``open_voxels`` (voxels outside every placement) and
    ``open_filled`` (those where the paste is not background -1: the open voxels are left to the whole-brain
    model; the open voxels are among them)."""
    paste = np.asarray(paste)
    open_ = np.zeros(template.shape, bool) if open_voxels is None else np.asarray(open_voxels, dtype=bool)
    if open_.shape != template.shape:
        raise ValueError(f"open_voxels of shape {open_.shape}, not the template grid {template.shape}")
    if paste.ndim != 5 or paste.shape[2:] != template.shape or paste.shape[0] != len(seeds):
        raise ValueError(
            f"paste of shape {paste.shape}: expected ({len(seeds)}, N, {', '.join(map(str, template.shape))})"
        )
    if set(assets) != set(template.supports):
        raise ValueError(f"assets of parts {sorted(assets)}, the template has {sorted(template.supports)}")
    covered = np.zeros(template.shape, bool)
    per_part = {}
    for part, support in template.supports.items():
        mask = template.part_mask(part) & ~open_
        covered |= mask
        placed = support.place(np.asarray(assets[part]), template.shape, fill=np.nan)[..., mask]  # (S, N, voxels)
        per_part[part] = (int(mask.sum()), (np.clip(placed, BACKGROUND, 1.0) != paste[..., mask]).sum(-1),
                          (placed > BACKGROUND).sum(-1))  # fmt: skip
    open_filled = (paste[..., ~covered] != BACKGROUND).sum(-1)
    rows = []
    for part, (placed_voxels, mismatched, filled) in per_part.items():
        for i, s in enumerate(seeds):
            rows.extend({"seed": int(s), "part": part, "sample": n, "placed_voxels": placed_voxels,
                         "mismatched_voxels": int(mismatched[i, n]), "asset_voxels": int(filled[i, n]),
                         "open_voxels": int((~covered).sum()), "open_filled": int(open_filled[i, n])}
                        for n in range(paste.shape[1]))  # fmt: skip
    return pd.DataFrame(rows)
