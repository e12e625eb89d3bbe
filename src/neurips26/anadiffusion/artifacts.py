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
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from neurips26.common.io import atomic_path, load_npz, save_npz

__all__ = [
    "input_record",
    "load_autoencoder",
    "load_denoisers",
    "load_edits",
    "load_network",
    "load_samples",
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


def load_samples(path: str | Path) -> dict[str, np.ndarray]:
    return load_npz(path)


def load_edits(path: str | Path) -> dict[str, np.ndarray]:
    return load_npz(path)


def npz_arrays(path: str | Path) -> dict[str, tuple[str, tuple[int, ...]]]:
    """The arrays of an ``.npz`` file as {name: (dtype string, shape)} (read from the headers, not the data); empty for
    files of other types (networks)."""
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
            out[member.removesuffix(".npy")] = (dtype.str, tuple(int(n) for n in shape))
    return out


def subject_mask_arrays(path: str | Path) -> list[str]:
    """The arrays of an ``.npz`` file that are per-subject masks: integer or boolean arrays with a subject axis in
    front of a 3-D grid (ndim >= 4; label maps such as a split's ``labels``). A population-level template mask is
    3-D and is not one; files of other types (networks) hold no arrays."""
    return sorted(
        name for name, (dtype, shape) in npz_arrays(path).items() if len(shape) >= 4 and np.dtype(dtype).kind in "biu"
    )


def input_record(job: str, inputs: Mapping[str, Sequence[str] | str]) -> pd.DataFrame:
    """What a generation job was given: one row per input file (job, input name, path, and the names of the
    per-subject mask arrays it holds, ``;``-joined, empty where none)."""
    rows = []
    for name, paths in inputs.items():
        for path in [paths] if isinstance(paths, str | Path) else paths:
            rows.append({"job": job, "input": name, "path": str(path),
                         "subject_masks": ";".join(subject_mask_arrays(path))})  # fmt: skip
    return pd.DataFrame(rows, columns=["job", "input", "path", "subject_masks"])
