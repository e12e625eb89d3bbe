"""Paper 03's config at one scale, read as the rules need it: the methods and their injections, the denoisers a part
layout trains, the edit pairs, and the checks the schema cannot express (run when the workflow is parsed, before any
job; this module imports no torch, so that parsing stays cheap).

Methods (the ``method`` column of every table; arXiv 2608.23014, project page, Tables 1 and 2):

* ``ldm``: the monolithic whole-brain latent diffusion model, no scaffold. Its sample is the injection with
  alpha = 0 from the same noise (:mod:`.diffusion`), so it is one run, counted once. With alpha = 1 the injection
  replaces the trajectory (the steps before it are skipped): an injected method is paired with ldm by the
  whole-brain denoiser's weights (and the seed's noise draw), but starts from the injection noise, not ldm's z_T.
* ``paste``: the naive composite of the decoded part assets at the template supports, without refinement.
* ``ae_roundtrip``: that composite encoded and decoded by the autoencoder, no diffusion: the null of the refinement
  (what the injection and whole-brain denoising add beyond the autoencoder's round trip of the scaffold).
* every other method is a named injection of the config's ``injections`` block: ``{r_inj, alpha}`` (DDIM steps
  remaining at the injection, strength), e.g. ``ana`` (the paper's default r_inj = 10, alpha = 1) and the r_inj
  ablation ``ana_r7``, ``ana_r15``. An injection may name its own ``part_model`` (the part layout whose models make
  its assets; default ``denoiser.part_model``): ``ana_separate`` (``separate``: one model per hemisphere, Table 2's
  ablation) is generated from the same part noise and refined by the same whole-brain model as ``ana``.
* ``seg_cldm`` (config key ``seg_cldm: true``): the segmentation-conditioned LDM, the paper's editing baseline
  (:mod:`.seg_cldm`), trained at the denoiser block's size and budget and sampled and edited by its own job,
  because it needs each subject's label map at inference; it is not in ``methods`` (what the sampling job makes).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

__all__ = [
    "BASELINES",
    "DENOISERS_OF",
    "SEG_CLDM",
    "check_config",
    "denoiser_steps",
    "denoisers",
    "edit_pairs",
    "injection_layouts",
    "injections",
    "layouts",
    "methods",
    "noise_seed",
    "seg_cldm",
    "record_jobs",
    "RECORD_JOBS",
]

BASELINES = ("ldm", "paste", "ae_roundtrip")
SEG_CLDM = "seg_cldm"  # the method name of the segmentation-conditioned LDM (its own jobs, not in `methods`)
# the denoisers each part layout trains (model.denoiser_names, without importing torch; a test keeps them equal)
DENOISERS_OF = {"shared_side_cond": ("cb", "hemisphere", "whole"), "separate": ("cb", "lh", "rh", "whole")}
# the factor by which each size's autoencoder, then its U-Net, divide an image side (model.AUTOENCODERS, DENOISERS)
SIZE_FACTORS = {"smoke": (2, 2), "quick": (2, 2), "paper": (4, 4)}


def support_multiple(cfg: Mapping) -> int:
    """The multiple every side of the grid and of each part's support must be for the configured networks: the
    autoencoder's factor (``autoencoder.size``) times the U-Net's 2^(levels - 1) (``denoiser.size``): 4 at smoke and
    quick scale, 16 at paper scale (model.latent_shape refuses any other side)."""
    ae_size, unet_size = cfg["autoencoder"]["size"], cfg["denoiser"]["size"]
    for block, size in (("autoencoder", ae_size), ("denoiser", unet_size)):
        if size not in SIZE_FACTORS:
            raise ValueError(f"{block}.size {size!r} is not one of {sorted(SIZE_FACTORS)}")
    return SIZE_FACTORS[ae_size][0] * SIZE_FACTORS[unet_size][1]


def methods(cfg: Mapping) -> list[str]:
    """The methods the sampling job generates, in the config's order."""
    return list(cfg["methods"])


def injections(cfg: Mapping) -> dict[str, tuple[int, float]]:
    """Every injected method of the config: name -> (r_inj, alpha)."""
    return {
        name: (int(cfg["injections"][name]["r_inj"]), float(cfg["injections"][name]["alpha"]))
        for name in cfg["methods"]
        if name not in BASELINES
    }


def injection_layouts(cfg: Mapping) -> dict[str, str]:
    """The injected methods whose assets come from another part layout than ``denoiser.part_model``: name -> layout
    (``part_model`` of the injection)."""
    main = cfg["denoiser"]["part_model"]
    return {
        name: cfg["injections"][name]["part_model"]
        for name in injections(cfg)
        if cfg["injections"][name].get("part_model", main) != main
    }


def layouts(cfg: Mapping) -> list[str]:
    """The part layouts the sampling job generates assets with: ``denoiser.part_model`` first, then those its
    injections name."""
    return list(dict.fromkeys([cfg["denoiser"]["part_model"], *injection_layouts(cfg).values()]))


def denoisers(cfg: Mapping) -> list[str]:
    """The denoisers one training job each (seeds batched inside it): the part models of every layout the methods
    use (a model two layouts share, ``cb``, once) and ``whole`` last."""
    names = [name for layout in layouts(cfg) for name in DENOISERS_OF[layout] if name != "whole"]
    return [*dict.fromkeys(names), "whole"]


# the separate hemisphere models of Table 2's ablation: each learns one side, where the shared model learns both
SEPARATE_HEMISPHERES = ("lh", "rh")


def denoiser_steps(denoiser: Mapping, name: str) -> int:
    """The training steps of denoiser `name` under the config's denoiser block: ``steps`` for every model but the
    separate hemisphere models (lh, rh), which get half each (at least 1), so that the two together make as many
    updates as the shared hemisphere model, which learns both sides in ``steps`` (the ablation then changes the
    model layout, not the training budget; each of them sees half the crops the shared model sees)."""
    steps = int(denoiser["steps"])
    return max(1, steps // 2) if name in SEPARATE_HEMISPHERES else steps


def seg_cldm(cfg: Mapping) -> bool:
    """Whether the scale trains, samples and edits the segmentation-conditioned LDM baseline (``seg_cldm``)."""
    return bool(cfg.get("seg_cldm", False))


# the jobs that record their inputs for K1 (claims.MASK_FREE_JOBS and MASK_JOBS), by the record's job name = the rule
# name after ``anadiffusion_``: sampling and editing (no per-subject mask allowed), the evaluation (its positive
# control at every scale: it reads the splits with their labels) and the Seg. cLDM's job where the scale runs it
RECORD_JOBS = ("sample", "edit", "evaluate", SEG_CLDM)


def record_jobs(cfg: Mapping) -> list[str]:
    """The jobs of :data:`RECORD_JOBS` the config runs, each of which must leave an input record for K1."""
    return [job for job in RECORD_JOBS if job != SEG_CLDM or seg_cldm(cfg)]


def edit_pairs(cfg: Mapping) -> list[tuple[int, int]]:
    """The (recipient, donor) sample indices of the edits, the same for every seed and part."""
    return [(int(r), int(d)) for r, d in cfg["edit"]["pairs"]]


def noise_seed(sampling_seed: int, seed: int) -> int:
    """The seed of one training seed's sampling noise (every method of that seed shares it): a SeedSequence of
    (sampling.seed, seed), so that seeds draw independent noise and a change of either draws anew."""
    import numpy as np

    return int(np.random.SeedSequence([int(sampling_seed), int(seed)]).generate_state(1)[0])


def _check_unique(name: str, values) -> None:
    values = list(values)
    if len(set(map(str, values))) != len(values):
        raise ValueError(f"{name} repeat: {values}")


def check_config(cfg: Mapping) -> None:
    """What the schema cannot say, so that a job would not refuse it later: repeated seeds, methods or edit pairs;
    an unknown method (neither a baseline nor a named injection); an injection with r_inj outside [1, DDIM steps] or
    alpha outside [0, 1]; a grid side the networks cannot halve (the autoencoder, then the U-Net: a multiple of
    :func:`support_multiple`, 4 at smoke and quick scale, 16 at paper scale); fewer samples than real held-out
    volumes where both are known (the Frechet distances compare equal counts); an edit whose donor is its recipient
    or names a sample not generated; an edit method that is not generated."""
    for key in ("seeds", "methods"):
        _check_unique(key, cfg[key])
    if SEG_CLDM in cfg["methods"] or SEG_CLDM in cfg["injections"] or SEG_CLDM in cfg["edit"]["methods"]:
        raise ValueError(
            f"{SEG_CLDM} is the segmentation-conditioned baseline, made by its own jobs: set `seg_cldm: true`, "
            "not a method or injection of that name"
        )
    unknown = [m for m in cfg["methods"] if m not in BASELINES and m not in cfg["injections"]]
    if unknown:
        raise ValueError(
            f"methods {unknown} are unknown: a method is a baseline {list(BASELINES)} or a named injection of "
            f"`injections` {sorted(cfg['injections'])}"
        )
    steps = cfg["sampling"]["ddim_steps"]
    for name, spec in cfg["injections"].items():
        r_inj, alpha = spec["r_inj"], spec["alpha"]
        if not (isinstance(r_inj, int) and 1 <= r_inj <= steps):
            raise ValueError(
                f"injections.{name}.r_inj = {r_inj!r} must be an integer in [1, {steps}] (sampling.ddim_steps)"
            )
        if not (isinstance(alpha, (int, float)) and math.isfinite(alpha) and 0 <= alpha <= 1):
            raise ValueError(f"injections.{name}.alpha = {alpha!r} must lie in [0, 1]")
        layout = spec.get("part_model", cfg["denoiser"]["part_model"])
        if layout not in DENOISERS_OF:
            raise ValueError(f"injections.{name}.part_model = {layout!r} is not one of {sorted(DENOISERS_OF)}")
    if steps > cfg["schedule"]["num_train_timesteps"]:
        raise ValueError(
            f"sampling.ddim_steps = {steps} exceeds schedule.num_train_timesteps = "
            f"{cfg['schedule']['num_train_timesteps']}"
        )
    ae_size, unet_size = cfg["autoencoder"]["size"], cfg["denoiser"]["size"]
    multiple = support_multiple(cfg)
    bad = [side for side in cfg["data"]["shape"] if side % multiple]
    if bad:
        raise ValueError(
            f"data.shape {cfg['data']['shape']}: sides {bad} are not multiples of {multiple} (the {ae_size} "
            f"autoencoder divides the image by {SIZE_FACTORS[ae_size][0]}, the {unet_size} U-Net its latent by "
            f"{SIZE_FACTORS[unet_size][1]})"
        )
    n_eval = cfg["data"].get("eval")
    if n_eval is not None and cfg["sampling"]["samples"] != n_eval:
        raise ValueError(
            f"sampling.samples = {cfg['sampling']['samples']} differs from data.eval = {n_eval}: the Frechet "
            "distances compare as many generated as held-out real volumes"
        )
    pairs = edit_pairs(cfg)
    _check_unique("edit.pairs", pairs)
    for k, (recipient, donor) in enumerate(pairs):
        if recipient == donor:
            raise ValueError(f"edit.pairs[{k}]: donor {donor} is its own recipient; an edit needs another sample")
        for name, index in (("recipient", recipient), ("donor", donor)):
            if not 0 <= index < cfg["sampling"]["samples"]:
                raise ValueError(
                    f"edit.pairs[{k}]: {name} {index} is not among the {cfg['sampling']['samples']} samples per seed"
                )
    missing = [m for m in cfg["edit"]["methods"] if m not in cfg["methods"]]
    if missing:
        raise ValueError(f"edit.methods {missing} are not among the generated methods {cfg['methods']}")
    refine = cfg["edit"]["methods"]
    if [m for m in refine if m not in BASELINES and m not in cfg["injections"]]:
        raise ValueError(f"edit.methods {refine}: each must be paste, ae_roundtrip or a named injection")
    if "ldm" in refine:
        raise ValueError("edit.methods: ldm has no part assets to swap; edit paste or an injection")
    other = sorted(set(refine) & set(injection_layouts(cfg)))
    if other:
        raise ValueError(
            f"edit.methods {other}: their assets come from another part layout than denoiser.part_model "
            f"({cfg['denoiser']['part_model']}), and the edit job swaps the assets the sampling job keeps, that "
            "layout's"
        )
