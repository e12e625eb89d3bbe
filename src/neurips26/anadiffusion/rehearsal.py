"""Paper 03's rehearsal: what it cuts from the paper block, and why most of its paper-scale DAG cannot run in one yet.

The cuts keep every shape (the 1.5 mm 128^3 grid, the paper-size autoencoder and U-Nets, MedicalNet ResNet-10): 2
training steps of micro-batch 1 (and 2 for the memory extrapolation) per network, the largest seed, 4 samples per
seed and method, one edit pair per part, 10 bootstrap replicates. The user's ADNI folder and manifest are replaced
by fixture paths.

What cannot run (``not_rehearsed``), and why:

* ``anadiffusion_adni``: the paper's preprocessing (N4 and the affine registration by ANTsPy, skull stripping by
  HD-BET) and the part labels by SyN atlas registration (``neurips26.anadiffusion.atlas``) run in the rule's own
  env (envs/adni.yaml), but HD-BET fetches its network weights on first use and the rehearsal has no ADNI scans
  (fixture paths only); ``neurips26.anadiffusion.adni`` imports those packages only when called and names them
  when missing. The manifest check itself is unit-tested (tests/test_anadiffusion_adni.py).
* every rule downstream of it (the autoencoder, the latents, the denoisers (the separate hemisphere models of the
  ablation and the Seg. cLDM baseline among them), the baseline's sampling and editing, our sampling, editing,
  evaluation and the report side) reads the ADNI splits the job above writes; with no split they have nothing to
  read. (The supports are rounded to the multiple the paper-size networks take, 16: ``experiment.support_multiple``.)
"""

from __future__ import annotations

from neurips26.common.rehearsal import Plan, largest

__all__ = ["ADNI_MANIFEST_FIXTURE", "ADNI_ROOT_FIXTURE", "PLAN"]

ADNI_ROOT_FIXTURE = "fixtures/anadiffusion/adni"
ADNI_MANIFEST_FIXTURE = "fixtures/anadiffusion/adni_manifest.csv"
_DOWNSTREAM = "reads the ADNI splits that anadiffusion_adni writes, which the rehearsal cannot run (see above)"


def _training_work(block: str):
    """Examples through a network (forward and backward) per job: steps x batch, every seed of the job."""

    def work(cfg: dict, wildcards: dict) -> float:
        seeds = 1 if block == "autoencoder" else len(cfg["seeds"])
        return cfg[block]["steps"] * cfg[block]["batch"] * seeds

    return work


PLAN = Plan(
    budgets={
        "autoencoder.steps": 2,
        "autoencoder.batch": 1,
        "denoiser.steps": 2,
        "denoiser.batch": 1,
        "sampling.samples": 4,
        "edit.pairs": lambda pairs: pairs[:1],
        "evaluate.bootstrap": 10,
    },
    sweeps={"seeds": largest},
    micro_batch=("autoencoder.batch", "denoiser.batch"),
    fixture_paths={"data.adni_root": ADNI_ROOT_FIXTURE, "data.adni_manifest": ADNI_MANIFEST_FIXTURE},
    work={
        "anadiffusion_train_ae": _training_work("autoencoder"),
        "anadiffusion_train_denoiser": _training_work("denoiser"),
        # its samples, its edits (3 parts per pair) and the conditioning check's whole-map swap per pair, every seed
        "anadiffusion_seg_cldm": lambda cfg, wc: (
            (cfg["sampling"]["samples"] + 4 * len(cfg["edit"]["pairs"])) * len(cfg["seeds"])
        ),
        # DDIM steps of every method over the samples of every seed (the part models' and the whole-brain model's)
        "anadiffusion_sample": lambda cfg, wc: cfg["sampling"]["samples"] * len(cfg["seeds"]),
        "anadiffusion_edit": lambda cfg, wc: len(cfg["edit"]["pairs"]) * len(cfg["seeds"]),
        # features of every sample and the held-out reals; the bootstrap's replicates
        "anadiffusion_evaluate": lambda cfg, wc: cfg["sampling"]["samples"] * len(cfg["seeds"]),
    },
    not_rehearsed={
        "anadiffusion_adni": (
            "the paper's preprocessing (ANTsPy N4 and affine registration, HD-BET skull stripping; envs/adni.yaml) "
            "needs ADNI scans, which the rehearsal has as fixture paths only, and HD-BET's weights (fetched on use)"
        ),
        **{
            f"anadiffusion_{step}": _DOWNSTREAM
            for step in (
                "train_ae",
                "encode",
                "train_denoiser",
                "seg_cldm",
                "sample",
                "edit",
                "evaluate",
                "tables",
                "claims",
                "figures",
                "report",
            )  # fmt: skip
        },
    },
    note=(
        "2 steps of micro-batch 1 (and 2) per network at the paper's shapes, the largest seed, 4 samples, one edit "
        "pair per part; not runnable yet: ADNI preprocessing needs the scans and HD-BET's weights"
    ),
)
