"""MONAI's modules for paper 03's networks and schedules, imported with the optional packages none of them uses
hidden (:func:`neurips26.common.hidden_imports.import_hiding`): AutoencoderKL, DiffusionModelUNet, the DDPM/DDIM
schedulers and the MedicalNet ResNets need torch (and einops) only, so scipy, matplotlib, scikit-image,
scikit-learn, pytorch-ignite, optuna, pandas/pyarrow, nibabel, Pillow and the Hugging Face hub client, which MONAI's
package import would otherwise load, are not loaded by it (measured on 2 cores with torch already imported: MONAI's
import 2.2 s with nothing hidden, 1.2 s with scipy.signal/optimize, matplotlib, scikit-image and scikit-learn hidden,
0.37 s with the list below). A job that needs one of them imports it itself, as usual, before or after."""

from __future__ import annotations

from types import ModuleType

from neurips26.common.hidden_imports import import_hiding

__all__ = ["UNUSED_BY_OUR_NETWORKS", "monai_module"]

UNUSED_BY_OUR_NETWORKS = (
    # scipy as a whole where the job has not imported it, else its submodules that MONAI's import would load
    "scipy",
    "scipy.signal",
    "scipy.optimize",
    "scipy.ndimage",
    "scipy.sparse",
    "scipy.spatial",
    "scipy.linalg",
    "scipy.special",
    "scipy.stats",
    "scipy.interpolate",
    "matplotlib",
    "skimage",
    "sklearn",
    "ignite",
    "optuna",
    "pandas",
    "pyarrow",
    "nibabel",
    "PIL",
    "huggingface_hub",
    "requests",
    "urllib3",
)


def monai_module(name: str) -> ModuleType:
    """The MONAI module `name` (e.g. ``monai.networks.nets``), imported with :data:`UNUSED_BY_OUR_NETWORKS` hidden."""
    if not name.startswith("monai"):
        raise ValueError(f"monai_module imports MONAI's modules, not {name!r}")
    return import_hiding(name, UNUSED_BY_OUR_NETWORKS)
