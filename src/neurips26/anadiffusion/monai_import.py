"""MONAI's modules for paper 03's networks and schedules, imported with the optional packages none of them uses
hidden (:func:`neurips26.common.hidden_imports.import_hiding`): AutoencoderKL, DiffusionModelUNet, the DDPM/DDIM
schedulers and the MedicalNet ResNets need torch (and einops) only, so scipy.signal, scipy.optimize, matplotlib,
scikit-image and scikit-learn, which MONAI's package import would otherwise load, are not loaded (about 1.5 s of
its 3 s import in each network job)."""

from __future__ import annotations

from types import ModuleType

from neurips26.common.hidden_imports import import_hiding

__all__ = ["UNUSED_BY_OUR_NETWORKS", "monai_module"]

UNUSED_BY_OUR_NETWORKS = ("scipy.signal", "scipy.optimize", "matplotlib", "skimage", "sklearn")


def monai_module(name: str) -> ModuleType:
    """The MONAI module `name` (e.g. ``monai.networks.nets``), imported with :data:`UNUSED_BY_OUR_NETWORKS` hidden."""
    if not name.startswith("monai"):
        raise ValueError(f"monai_module imports MONAI's modules, not {name!r}")
    return import_hiding(name, UNUSED_BY_OUR_NETWORKS)
