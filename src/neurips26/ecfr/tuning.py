"""The pilot that chooses paper 11's quick-scale teacher, training steps and widths, on a draw of the synthetic set
that no claim scores (issue 40: the first pilots were read on the scored draws of seeds 0-1).

The tuning draw is the primary synthetic set drawn at its own data seed (``tuning.data_seed``; the data job's draw
``t<data seed>``), which the config checks keep apart from the scored draws (``data_seed + seed`` for every scored
seed). Every candidate, a (teacher, widths, steps) in the grid of the config's ``tuning`` block, trains each method in
the unified setting with the training seed ``tuning.seed`` (also kept apart from the scored seeds) and is scored on
the tuning draw's test images. The candidate picked is the one with the highest mean over the methods of the
class-mean image AUROC: the teacher, widths and steps are shared by ecfr, same_modal and CFM, so a pick on ecfr alone
would tune the comparisons towards the proposed method. Ties go to the earlier candidate of the grid (teachers,
widths and steps in the config's order).

Teachers: ``pretext`` (the quick teacher, pretrained on scikit-image's photographs with the config's teacher
settings: the teacher job's network when the widths are the config's) and ``random`` (the same network at its
fixed-seed initialisation, never trained). Widths are the teacher's three widths; the decoder mirrors them (stages
1-3 the teacher's widths reversed, stage 0 twice the widest), as the config checks require.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["TEACHERS", "Candidate", "candidate_config", "candidate_teacher", "candidates", "pick", "summary", "tune"]

TEACHERS = ("pretext", "random")


@dataclass(frozen=True)
class Candidate:
    teacher: str
    widths: tuple[int, int, int]
    steps: int

    @property
    def name(self) -> str:
        return f"{self.teacher} teacher, widths {'/'.join(map(str, self.widths))}, {self.steps} steps"


def candidates(tuning: dict) -> list[Candidate]:
    """The grid of the ``tuning`` block, teachers outermost, in the config's order."""
    unknown = [t for t in tuning["teachers"] if t not in TEACHERS]
    if unknown:
        raise ValueError(f"tuning.teachers {unknown} are unknown; known: {list(TEACHERS)}")
    return [
        Candidate(t, tuple(w), s)
        for t, w, s in itertools.product(tuning["teachers"], tuning["widths"], tuning["steps"])
    ]


def candidate_config(cfg: dict, candidate: Candidate) -> dict:
    """The run config (teacher, model, cfm, train blocks) of a candidate: the config's, with the candidate's teacher
    widths, the decoder mirroring them and its steps."""
    w = candidate.widths
    return {
        "teacher": {**cfg["teacher"], "widths": list(w)},
        "model": {**cfg["model"], "decoder": [2 * w[2], w[2], w[1], w[0]]},
        "cfm": cfg["cfm"],
        "train": {**cfg["train"], "steps": candidate.steps},
    }


def candidate_teacher(source: str, teacher: dict, log: Callable[[str], None] | None = None) -> dict:
    """The frozen teacher's weights: ``pretext`` pretrained with the teacher block's settings (as the teacher job
    does), ``random`` the same network at its seeded initialisation."""
    from .model import Backbone
    from .teacher import pretrain_teacher

    widths, blocks = tuple(teacher["widths"]), tuple(teacher["blocks"])
    if source == "random":
        return Backbone(widths, teacher["seed"], blocks).state_dict()
    if source != "pretext":
        raise ValueError(f"unknown teacher {source!r}; known: {list(TEACHERS)}")
    backbone, _ = pretrain_teacher(widths, blocks, 64, teacher["steps"], teacher["batch"], teacher["lr"],
                                   teacher["seed"], log=log)  # fmt: skip
    return backbone.state_dict()


def tune(cfg: dict, tuning: dict, methods: list[str], train: dict, test: dict, sigma: float, limit: float,
         log: Callable[[str], None] | None = None) -> pd.DataFrame:  # fmt: skip
    """Train and score every candidate and method on the tuning draw: one row per (candidate, method) with the
    class-mean i_auroc, p_auroc and aupro. ``train`` and ``test`` hold the prepared ``rgb`` and ``depth`` tensors and
    the ``cls`` labels (the test set also ``mask`` and ``defect``)."""
    from .evaluation import MEAN, run_metrics
    from .experiment import fit_run, score_run

    teachers: dict[tuple[str, tuple[int, int, int]], dict] = {}
    rows = []
    for c in candidates(tuning):
        run_cfg = candidate_config(cfg, c)
        key = (c.teacher, c.widths)
        if key not in teachers:
            teachers[key] = candidate_teacher(c.teacher, run_cfg["teacher"], log)
        for method in methods:
            states, _ = fit_run(method, "unified", tuning["seed"], train["rgb"], train["depth"], train["cls"],
                                run_cfg, teachers[key])  # fmt: skip
            maps = score_run(method, states, test["rgb"], test["depth"], test["cls"], run_cfg, teachers[key], sigma)
            scores = run_metrics(maps, test["mask"], test["cls"], test["defect"], limit)
            mean = next(r for r in scores if r["group"] == "class" and r["name"] == MEAN)
            rows.append({"candidate": c.name, "teacher": c.teacher, "widths": "/".join(map(str, c.widths)),
                         "steps": c.steps, "method": method, "i_auroc": mean["i_auroc"], "p_auroc": mean["p_auroc"],
                         "aupro": mean["aupro"]})  # fmt: skip
            if log:
                log(f"{c.name}, {method}: class-mean I-AUROC {mean['i_auroc']:.4f}")
    return pd.DataFrame(rows)


def pick(table: pd.DataFrame) -> pd.Series:
    """The candidate with the highest mean over methods of the class-mean I-AUROC (the first of the grid on a tie):
    its teacher, widths, steps and that mean (``criterion``)."""
    if table.empty or not np.isfinite(table["i_auroc"]).all():
        raise ValueError("the tuning table is empty or has non-finite I-AUROC values")
    means = table.groupby("candidate", sort=False).agg(
        teacher=("teacher", "first"), widths=("widths", "first"), steps=("steps", "first"),
        criterion=("i_auroc", "mean"),
    )  # fmt: skip
    return means.loc[means["criterion"].idxmax()]


def summary(table: pd.DataFrame, chosen: Candidate, data_seed: int, seed: int) -> str:
    """Markdown: the criterion, every candidate's I-AUROC per method and mean, the pick, and whether ``chosen`` (the
    config's scored settings) is the pick."""
    from neurips26.common.report import markdown_table

    best = pick(table)
    wide = table.pivot_table(index="candidate", columns="method", values="i_auroc", sort=False)
    wide = wide.assign(mean=wide.mean(axis=1)).reset_index()
    follows = best.name == chosen.name
    lines = [
        f"Tuning pilot on the synthetic set drawn at data seed {data_seed} (never scored), training seed {seed}: "
        "each candidate's unified class-mean I-AUROC per method on the tuning draw's test images, and their mean "
        "(the criterion; the first candidate of the grid on a tie).",
        "",
        markdown_table(wide),
        "",
        f"Pick: {best.name} (mean {best['criterion']:.4f}). The config scores {chosen.name}: "
        + ("the pick." if follows else "**not the pick**."),
    ]
    return "\n".join(lines) + "\n"
