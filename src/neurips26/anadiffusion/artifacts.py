"""Paper 03's stored outputs: the template, the cohort splits, the networks, the samples and the edits, written and
read back in one place, and the record of what a generation job was given, file by file, with the per-subject mask
arrays each holds (the "no segmentation at inference" check, K1 of the claims, reads it).

* Networks: one torch file per network, ``{"kind", "size", "seeds", "states", "settings"}`` with one state dict per
  seed (the autoencoder's file holds its one seed), read with ``torch.load(weights_only=True)``.
* Samples (``samples.npz``): ``seeds`` (S,), ``volumes_<method>`` float32 (S, N, X, Y, Z) in [-1, 1] for every
  method, ``asset_<part>`` float32 (S, N, *support shape) (decoded part images in their support's frame) and the
  whole-brain sampling noise ``noise_start``, ``noise_injection`` (S, N, C, x, y, z), which an edit reuses.
* Edits (``edits.npz``): ``seeds`` (S,), ``parts``, ``recipients``, ``donors`` (K,) and ``edited_<method>`` float32
  (S, P, K, X, Y, Z): for seed s, part p and pair k, the recipient's sample with part p taken from the donor.
* The Seg. cLDM baseline's samples and edits (``seg_cldm.npz``, one file: its job takes the subjects' label maps):
  ``seeds``, ``conditioning_scans`` (N,) (the training scan whose label map conditions each sample: one per
  distinct subject), ``volumes_seg_cldm`` (S, N, X, Y, Z), ``parts``, ``recipients``, ``donors`` and
  ``edited_seg_cldm`` (S, P, K, X, Y, Z), laid out as the two files above, and ``swapped_seg_cldm`` (S, K, X, Y, Z):
  pair k's recipient noise with its donor's whole label map (the conditioning check).
"""

from __future__ import annotations

import json
import os
import re
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from neurips26.common.io import atomic_path, load_npz, save_npz

__all__ = [
    "input_record",
    "is_label_map",
    "job_inputs",
    "load_autoencoder",
    "load_denoisers",
    "load_edits",
    "load_network",
    "load_samples",
    "load_seg_cldms",
    "load_split",
    "save_network",
    "npz_arrays",
    "save_split",
    "subject_mask_arrays",
]


def save_split(path: str | Path, volumes: np.ndarray, labels: np.ndarray) -> None:
    """One split of the cohort: volumes float32 (N, X, Y, Z) in [-1, 1], part labels uint8 (N, X, Y, Z)."""
    volumes, labels = np.asarray(volumes, dtype=np.float32), np.asarray(labels, dtype=np.uint8)
    if volumes.ndim != 4 or volumes.shape != labels.shape:
        raise ValueError(f"a split needs volumes and labels of one shape (N, X, Y, Z): {volumes.shape}, {labels.shape}")
    save_npz(path, volumes=volumes, labels=labels)


def load_split(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    arrays = load_npz(path)
    return arrays["volumes"], arrays["labels"]


def save_network(path: str | Path, kind: str, size: str, seeds: Sequence[int], states: Sequence[dict],
                 settings: Mapping | None = None) -> None:  # fmt: skip
    """Write the trained weights of one network (one state dict per seed) atomically."""
    import torch

    if len(states) != len(seeds):
        raise ValueError(f"{kind}: {len(states)} state dicts for seeds {list(seeds)}")
    payload = {
        "kind": kind,
        "size": size,
        "seeds": [int(s) for s in seeds],
        "states": [{k: v.detach().cpu() for k, v in state.items()} for state in states],
        "settings": json.dumps(dict(settings or {})),
    }
    with atomic_path(path) as tmp:
        torch.save(payload, tmp)


def load_network(path: str | Path, kind: str, seeds: Sequence[int] | None = None) -> dict:
    """The file of :func:`save_network`, checked to hold network `kind` and (when given) exactly `seeds`."""
    import torch

    payload = torch.load(path, map_location="cpu", weights_only=True)
    if payload.get("kind") != kind:
        raise ValueError(f"{path} holds the network {payload.get('kind')!r}, not {kind!r}: rerun its training rule")
    if seeds is not None and payload["seeds"] != [int(s) for s in seeds]:
        raise ValueError(f"{path} holds the seeds {payload['seeds']}, not {list(seeds)}: rerun its training rule")
    payload["settings"] = json.loads(payload["settings"])
    return payload


def load_autoencoder(path: str | Path):
    """The trained autoencoder of :func:`save_network` (kind ``autoencoder``), built at its size, in eval mode."""
    from .model import AUTOENCODERS, build_autoencoder

    stored = load_network(path, "autoencoder")
    autoencoder = build_autoencoder(AUTOENCODERS[stored["size"]])
    autoencoder.load_state_dict(stored["states"][0])
    return autoencoder.eval()


def load_denoisers(path: str | Path, kind: str, seeds: Sequence[int]) -> list:
    """The trained denoiser `kind` of every seed of `seeds` (in that order), built at its size, in eval mode."""
    from .model import DENOISERS, build_denoiser

    stored = load_network(path, kind, seeds)
    settings = stored["settings"]
    nets = []
    for state in stored["states"]:
        net = build_denoiser(DENOISERS[stored["size"]], settings["latent_channels"], settings["sides"])
        net.load_state_dict(state)
        nets.append(net.eval())
    return nets


def load_seg_cldms(path: str | Path, seeds: Sequence[int]) -> list:
    """The trained segmentation-conditioned LDM (kind ``seg_cldm``, :func:`.seg_cldm.build_seg_cldm`) of every seed
    of `seeds` (in that order), built at its size, in eval mode."""
    from .model import DENOISERS
    from .seg_cldm import build_seg_cldm

    stored = load_network(path, "seg_cldm", seeds)
    nets = []
    for state in stored["states"]:
        net = build_seg_cldm(DENOISERS[stored["size"]], stored["settings"]["latent_channels"])
        net.load_state_dict(state)
        nets.append(net.eval())
    return nets


def load_samples(path: str | Path) -> dict[str, np.ndarray]:
    return load_npz(path)


def load_edits(path: str | Path) -> dict[str, np.ndarray]:
    return load_npz(path)


def npz_arrays(path: str | Path) -> dict[str, tuple[str, tuple[int, ...]]]:
    """The arrays of an ``.npz`` file as {name: (dtype string, shape)} (read from the headers, not the data); empty for
    files of other types (networks)."""
    return {name: (dtype.str, shape) for name, (dtype, shape, _) in _npz_heads(path).items()}


def _npz_heads(path: str | Path, head: int = 0) -> dict[str, tuple[np.dtype, tuple[int, ...], np.ndarray | None]]:
    """{name: (dtype, shape, the first `head` elements or None)} of an ``.npz`` file's arrays, read from the stream
    (never the whole array)."""
    path = Path(path)
    if path.suffix != ".npz":
        return {}
    out = {}
    with zipfile.ZipFile(path) as archive:
        for member in archive.namelist():
            with archive.open(member) as f:
                version = np.lib.format.read_magic(f)
                read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
                shape, _, dtype = read(f)
                values = None
                if head and dtype.kind in "biuf" and not dtype.hasobject:
                    count = min(int(np.prod(shape)), head)
                    values = np.frombuffer(f.read(count * dtype.itemsize), dtype=dtype, count=count)
            out[member.removesuffix(".npy")] = (dtype, tuple(int(n) for n in shape), values)
    return out


MASK_LEVELS = 16  # a float array with at most this many distinct, integral values (in its head) is a label map
HEAD = 1 << 20  # elements of an array read to decide whether it is a label map
MASK_NAME = re.compile(r"mask|label|seg|parc|aseg", re.IGNORECASE)  # a table column that holds a segmentation


def is_label_map(dtype: np.dtype, shape: Sequence[int], values: np.ndarray | None) -> bool:
    """Whether an array of `dtype` and `shape` (with `values`, its first elements, when read) is a mask or label map:
    at least two dimensions and boolean, integer, or float with two to :data:`MASK_LEVELS` distinct integral
    values. A volume of intensities has many distinct values (a constant float array, e.g. an empty volume, holds no
    segmentation); a float mask (0/1 or a label map stored as float) is caught; a 1-D array (seeds, indices) is not
    a map."""
    dtype = np.dtype(dtype)
    if len(shape) < 2 or dtype.kind not in "biuf":
        return False
    if dtype.kind in "biu":
        return True
    if values is None or values.size == 0:
        return False
    distinct = np.unique(values)
    return 2 <= len(distinct) <= MASK_LEVELS and bool(np.all(np.isfinite(distinct) & (distinct == np.round(distinct))))


def _tensors(obj, prefix: str = ""):
    import torch

    if isinstance(obj, torch.Tensor):
        yield prefix, obj
    elif isinstance(obj, Mapping):
        for key, value in obj.items():
            yield from _tensors(value, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(obj, list | tuple):
        for i, value in enumerate(obj):
            yield from _tensors(value, f"{prefix}[{i}]")


def subject_mask_arrays(path: str | Path, population: bool = False) -> list[str]:
    """The arrays of a file that are masks or label maps (:func:`is_label_map`), of any dtype and dimension from two
    up: ``.npz`` arrays (read from the stream: the header and the first :data:`HEAD` elements), tensors of a torch
    file (``weights_only`` load), NIfTI images (``.nii``, ``.nii.gz``) and the columns of a parquet table whose
    name says segmentation (:data:`MASK_NAME`; a table holds no grid). With `population` (the template's file) a
    map of at most 3 dimensions is the population-level template's (its masks, its affine), not a subject's; a map
    with a subject axis (ndim >= 4) still is listed. Other file types hold no arrays."""
    path = Path(path)
    name = path.name
    if name.endswith(".npz"):
        found = [(key, dtype, shape, values) for key, (dtype, shape, values) in _npz_heads(path, HEAD).items()]
    elif name.endswith(".pt") or name.endswith(".pth"):
        import torch

        payload = torch.load(path, map_location="cpu", weights_only=True)
        found = [(key, np.dtype(str(t.dtype).removeprefix("torch.").replace("bfloat16", "float32")), tuple(t.shape),
                  t.flatten()[:HEAD].float().numpy() if t.is_floating_point() else None)
                 for key, t in _tensors(payload)]  # fmt: skip
    elif name.endswith(".nii") or name.endswith(".nii.gz"):
        import nibabel

        image = nibabel.load(path)
        data = np.asanyarray(image.dataobj)
        found = [("image", data.dtype, data.shape, data.reshape(-1)[:HEAD])]
    elif name.endswith(".parquet"):
        import pyarrow.parquet as pq

        return sorted(column for column in pq.read_schema(path).names if MASK_NAME.search(column))
    else:
        return []
    return sorted(
        key for key, dtype, shape, values in found
        if is_label_map(dtype, shape, values) and not (population and len(shape) <= 3)
    )  # fmt: skip


PATH_SUFFIXES = (".npz", ".npy", ".pt", ".pth", ".parquet", ".nii", ".nii.gz", ".csv", ".tsv", ".json", ".h5")


def _path_like(value: str) -> bool:
    return Path(value).is_file() or ("/" in value and value.endswith(PATH_SUFFIXES))


def _param_paths(value, name: str):
    if isinstance(value, str | Path):
        if _path_like(str(value)):
            yield name, str(value)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _param_paths(item, f"{name}.{key}")
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _param_paths(item, name)


def job_inputs(inputs, params=None) -> dict[str, list[str]]:
    """Every file a job was given, by name: each item of its inputs (``snakemake.input``: named entries under their
    names, any unnamed one as ``input<i>``; a mapping or list works too) and every path-like string in its params
    (``params.<name>[.<key>]``: a string naming an existing file or a path with a data file's suffix). Nothing is
    left out by hand: the record is the job's whole interface to files."""
    out: dict[str, list[str]] = {}
    named = dict(inputs.items()) if hasattr(inputs, "items") else {}
    seen = set()
    for key, value in named.items():
        paths = [str(value)] if isinstance(value, str | Path) else [str(v) for v in value]
        out.setdefault(key, []).extend(paths)
        seen.update(paths)
    if not isinstance(inputs, Mapping):
        for i, value in enumerate(inputs):
            if str(value) not in seen:
                out.setdefault(f"input{i}", []).append(str(value))
    if params is not None:
        for key, value in params.items() if hasattr(params, "items") else []:
            for label, path in _param_paths(value, f"params.{key}"):
                out.setdefault(label, []).append(path)
    return out


def input_record(job: str, inputs: Mapping[str, Sequence[str] | str],
                 population_files: Sequence[str | Path] = ()) -> pd.DataFrame:  # fmt: skip
    """What a generation job was given: one row per input file (job, input name, path, and the names of the mask or
    label arrays it holds, :func:`subject_mask_arrays`, ``;``-joined, empty where none). A file that is one of
    `population_files` (by path: the template rule's output, whatever the job calls its input) may hold
    population-level masks of up to 3 dimensions."""
    population = {os.path.normpath(str(p)) for p in population_files}
    rows = []
    for name, paths in inputs.items():
        for path in [paths] if isinstance(paths, str | Path) else paths:
            masks = subject_mask_arrays(path, population=os.path.normpath(str(path)) in population)
            rows.append({"job": job, "input": name, "path": str(path), "subject_masks": ";".join(masks)})
    return pd.DataFrame(rows, columns=["job", "input", "path", "subject_masks"])
